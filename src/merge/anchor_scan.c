/* An input's wall-clock anchor: the first instant event in category
 * "fxtrace:clock" named "start" (anchor/clock_anchor.h), found by reading
 * the archive from its start; `trace record` and file mode write it among
 * the first records, so this reads a few records. For --align=first the
 * whole archive is read for its earliest timestamp. */
#include <string.h>
#include <unistd.h>

#include "anchor/clock_anchor.h"
#include "merge/merge.h"
#include "trace/cli.h"

static bool is(const trace_reader_string_t* s, const char* text) {
  return s->length == strlen(text) && memcmp(s->data, text, s->length) == 0;
}

static void take_anchor(const trace_record_t* r, merge_anchor_t* out) {
  uint64_t ns;
  if (!ordered__record_ns(r, &ns)) return;
  bool have_realtime = false;
  for (size_t i = 0; i < r->event.args.count; i++) {
    const trace_reader_arg_t* a = &r->event.args.items[i];
    if (is(&a->name, "realtime_ns") && a->type == TRACE_ARG_UINT64) {
      out->realtime_ns = a->uint64_value;
      have_realtime = true;
    } else if (is(&a->name, "uncertainty_ns") && a->type == TRACE_ARG_UINT64) {
      out->uncertainty_ns = a->uint64_value;
    } else if (is(&a->name, "hostname") && a->type == TRACE_ARG_STRING) {
      size_t n = a->string_value.length < sizeof(out->hostname) - 1 ? a->string_value.length
                                                                    : sizeof(out->hostname) - 1;
      memcpy(out->hostname, a->string_value.data, n);
      out->hostname[n] = '\0';
    }
  }
  if (!have_realtime) return;
  out->found = true;
  out->trace_ns = ns;
}

bool merge__scan_anchor(const char* path, bool earliest, merge_anchor_t* out) {
  memset(out, 0, sizeof(*out));
  int fd = cli__open_input("merge", path);
  if (fd < 0) return false;
  trace_reader_t* reader = trace_reader_open_fd(fd, NULL);
  if (!reader) {
    cli__error("merge", "out of memory");
    close(fd);
    return false;
  }
  bool ok = true;
  trace_record_t r;
  for (;;) {
    int rc = trace_reader_next(reader, &r);
    if (rc == TRACE_READ_END) break;
    if (rc == TRACE_READ_SKIPPED) continue;
    if (rc == TRACE_READ_ERROR) {
      trace_reader_error_t e = trace_reader_error(reader);
      /* an archive cut short still merges up to its damage; one that is
       * not an archive at all does not */
      if (e.offset == 0 || (!out->found && !out->have_first)) {
        cli__error("merge", "%s: not a readable FXT archive: %s", path, e.message);
        ok = false;
      }
      break;
    }
    uint64_t ns;
    if (earliest && ordered__record_ns(&r, &ns) && (!out->have_first || ns < out->first_ns)) {
      out->have_first = true;
      out->first_ns = ns;
    }
    if (!out->found && r.type == FXT_RECORD_EVENT && r.event.event_type == 0 &&
        is(&r.event.category, CLOCK_ANCHOR_CATEGORY) && is(&r.event.name, "start")) {
      take_anchor(&r, out);
      if (out->found && !earliest) break;
    }
  }
  trace_reader_close(reader);
  close(fd);
  return ok;
}
