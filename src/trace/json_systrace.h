/* Not part of the public API: `trace convert`'s kernel data. Scheduling
 * records (context switches, wakeups) and the kernel provider's wakeup
 * instants become lines of ftrace's text format, emitted at the end of the
 * document as the STRING "systemTraceEvents" (Perfetto's and Chrome's JSON
 * importers parse it as systrace; READERS.md). The lines go to a temporary
 * file while the conversion streams, so memory stays bounded. */
#ifndef FXTRACE_TRACE_JSON_SYSTRACE_H_
#define FXTRACE_TRACE_JSON_SYSTRACE_H_

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "trace-reader/reader.h"
#include "trace/json_koids.h"
#include "trace/json_writer.h"

typedef struct json_systrace {
  FILE* tmp; /* escaped string content, NULL until the first line */
  uint64_t lines;
  bool failed;
  json_koids_t* koids; /* borrowed: the converter's pid/tid ids (json_koids.h) */
} json_systrace_t;

/* Scheduling record (any sub-type): one sched_switch or sched_waking line. */
void json_systrace__scheduling(json_systrace_t* s, const trace_record_t* r);

/* An instant: a kernel:sched sched_waking/sched_wakeup/sched_wakeup_new of the
 * kernel provider becomes a line too; other events are ignored. */
void json_systrace__instant(json_systrace_t* s, const trace_record_t* r);

/* With at least one line: writes `],\n"systemTraceEvents":"..."` (closing
 * the traceEvents array); otherwise `]`. Frees the temporary file. */
void json_systrace__finish(json_systrace_t* s, json_writer_t* out);

#endif /* FXTRACE_TRACE_JSON_SYSTRACE_H_ */
