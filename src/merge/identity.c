/* Each host's identity in the merged archive (docs/merge.md#identity):
 * process and thread koids moved into a range of their own, CPU numbers
 * moved into lanes of their own. */
#include "fxt/fxt_format.h"
#include "merge/merge.h"
#include "reader/reader_internal.h"

uint64_t merge__koid(const merge_host_t* h, uint64_t koid, merge_counts_t* c) {
  if (koid == 0) return 0; /* "none" (and the idle thread) stays itself */
  if (koid >= MERGE_KOID_STRIDE) {
    c->high_koids++;
    return koid;
  }
  return koid + h->koid_base;
}

/* From the record's header: the reader hands every record of every input
 * here in file order while the ordered view loads, before the first record
 * is written, so every host's CPU count is known when lanes are given. */
void merge__note_cpu(const struct trace_reader* reader, uint32_t* cpu_count) {
  const unsigned char* bytes;
  size_t size;
  if (!reader__record_bytes(reader, &bytes, &size) || size < 8) return;
  uint64_t header = 0;
  for (int i = 7; i >= 0; i--) header = header << 8 | bytes[i];
  if (FXT_GET(header, 0, 3) != FXT_RECORD_SCHEDULING) return;
  uint64_t cpu = FXT_GET(header, 60, 63) == FXT_SCHED_LEGACY_CONTEXT_SWITCH
                     ? FXT_GET(header, 16, 23)
                     : FXT_GET(header, 20, 35);
  if (cpu + 1 > *cpu_count) *cpu_count = (uint32_t)cpu + 1;
}
