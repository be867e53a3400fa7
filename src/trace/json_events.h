/* Not part of the public API: turns decoded FXT records into Chrome Trace
 * Event JSON objects, one call per record, as docs/convert-json.md lays out.
 * Memory stays bounded: the state kept across records is the list of
 * providers with an unreported buffer overflow, the synthetic ids of the
 * koids that are no Linux ids (json_koids.h) and the text of one duration
 * begin held back (with the flows after it). */
#ifndef FXTRACE_TRACE_JSON_EVENTS_H_
#define FXTRACE_TRACE_JSON_EVENTS_H_

#include <stdint.h>

#include "trace-reader/formats.h"
#include "trace-reader/reader.h"
#include "trace/json_koids.h"
#include "trace/json_systrace.h"
#include "trace/json_writer.h"

typedef struct pending_overflow {
  uint32_t provider_id;
  char provider_name[256];
} pending_overflow_t;

enum { MAX_PENDING_OVERFLOWS = 64 };

typedef struct json_converter {
  json_writer_t* out; /* borrowed */
  uint64_t events;    /* JSON objects written */
  uint64_t last_ts_ns;
  pending_overflow_t pending[MAX_PENDING_OVERFLOWS];
  unsigned num_pending;
  /* What Chrome JSON cannot hold, reported once at the end. */
  uint64_t omitted_blobs, omitted_objects, omitted_scheduling;
  uint64_t omitted_counter_args, unplaced_threads, overflows;
  uint64_t omitted_counters;   /* counters without a finite numeric argument */
  trace_format_set_t* formats; /* typed-event formats seen so far (docs/event-formats.md) */
  json_systrace_t systrace;    /* kernel data: the systemTraceEvents string */
  json_koids_t koids;          /* pid/tid values of koids >= 2^32 */
  /* A duration begin held back, with the flows after it on its thread at its
   * timestamp, until the next event shows whether its end follows at that
   * timestamp: the pair is then written as a complete event of duration 0
   * (docs/convert-json.md). NULL until the first begin. */
  struct json_held* held;
} json_converter_t;

/* What closes the text written up to a json__boundary() (after the header
 * or a whole event, inside traceEvents) into a valid JSON document: written
 * after a file is cut there (a full disk). */
#define JSON_CLOSING_AFTER_CUT "\n]}\n"

/* Writes `{"displayTimeUnit":"ns","traceEvents":[`. */
void json_converter__begin(json_converter_t* c, json_writer_t* out);
/* Converts one record (records JSON cannot hold are only counted). */
void json_converter__record(json_converter_t* c, const trace_record_t* record);
/* Emits still-pending overflow instants and closes the document. */
void json_converter__end(json_converter_t* c);

#endif /* FXTRACE_TRACE_JSON_EVENTS_H_ */
