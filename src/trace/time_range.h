/* Not part of the public API: `--time-range=START,END` of `trace summary`,
 * `trace convert` and `trace dump`: which records fall inside a window given
 * in seconds from the trace's start.
 *
 * The trace's start (the origin) is the time of the first timestamped
 * record in archive order (an event, a context switch or wakeup, a log
 * record or a large blob event): it is known as soon as that record is read,
 * so filtering streams. A record is kept when its own timestamp (a complete
 * event's beginning) lies in [origin + START, origin + END]; records without
 * a timestamp (metadata, strings, threads, objects, blobs) are always kept.
 * Thread-safety: a time_range_t is used by one thread at a time. */
#ifndef FXTRACE_TRACE_TIME_RANGE_H_
#define FXTRACE_TRACE_TIME_RANGE_H_

#include <stdbool.h>
#include <stdint.h>

#include "trace-reader/reader.h"

typedef struct time_range {
  bool active;        /* an option was given */
  uint64_t start_ns;  /* from the origin */
  uint64_t end_ns;    /* from the origin, inclusive; UINT64_MAX: to the end */
  bool have_origin;   /* set by the first timestamped record */
  uint64_t origin_ns; /* its time in ns */
} time_range_t;

/* Parses "START,END" (decimal seconds, at most nine decimals; either side may
 * be empty: "2," from 2 s on, ",0.5" the first half second) into *out.
 * 0, or -1 when malformed or START > END. */
int time_range__parse(const char* text, time_range_t* out);

/* Notes the origin at the first timestamped record; then true when the
 * record is inside the range (always true when the range is not active). */
bool time_range__keep(time_range_t* range, const trace_record_t* record);

/* True when `ns` (absolute) is inside the range, once the origin is known
 * (always true when the range is not active; a time before the origin
 * counts as offset 0). */
bool time_range__contains(const time_range_t* range, uint64_t ns);

#endif /* FXTRACE_TRACE_TIME_RANGE_H_ */
