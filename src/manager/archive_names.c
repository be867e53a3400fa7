/* The archive's names section (docs/manager.md, "The names section"):
 * Perfetto and other readers keep the last name they read for a koid, so
 * after the providers' records the manager writes the names it learned
 * (names.h) under its own provider id 0, "trace_manager". Written at each
 * stop and at terminate when records were written since the last section;
 * reusable by whatever else ends an archive's stretch of records. */
#include <string.h>

#include "anchor/clock_anchor.h"
#include "fxt/fxt_encode.h"
#include "manager/manager_internal.h"

enum { MANAGER_PROVIDER_ID = 0 };
static const char kManagerName[] = "trace_manager";

static bool append(void* arg, const void* data, size_t bytes) {
  return output__append(arg, data, bytes);
}

/* The section into `o`: a provider-info record for id 0 when `first`, else
 * a provider-section record, then the names. */
static bool write_section(manager_t* m, names_t* names, output_t* o, bool first) {
  names__refresh_from_proc(names, clock_anchor__monotonic_ns());
  uint64_t words[8];
  uint64_t* end = first ? fxt_write_provider_info_record(words, MANAGER_PROVIDER_ID, kManagerName,
                                                         sizeof(kManagerName) - 1)
                        : fxt_write_provider_section_record(words, MANAGER_PROVIDER_ID);
  if (!output__append(o, words, (size_t)(end - words) * 8)) return false;
  uint64_t records = 0;
  bool ok = names__write_section(names, append, o, &records);
  names_stats_t st = names__stats(names);
  LOGI(m, "names section: %llu records (%llu processes, %llu threads known)",
       (unsigned long long)records, (unsigned long long)st.processes,
       (unsigned long long)st.threads);
  if (st.not_kept)
    LOGW(m,
         "names section: %llu processes and threads past the first %u were not kept: they "
         "keep the names the providers gave them",
         (unsigned long long)st.not_kept, (unsigned)NAMES_MAX_ENTRIES);
  return ok && !o->failed;
}

bool archive__write_names(manager_t* m, session_t* s) {
  if (s->out->failed) return false;
  if (!s->names || !s->names_due) return true; /* nothing new to name */
  s->names_due = false;
  bool first = !s->names_info_written;
  s->names_info_written = true;
  return write_section(m, s->names, s->out, first);
}

bool archive__write_names_to(manager_t* m, session_t* s, output_t* o) {
  if (o->failed) return false;
  return !s->names || write_section(m, s->names, o, true);
}
