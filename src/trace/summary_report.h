/* Not part of the public API: prints the figures of `trace summary` as a
 * table for people or as JSON for scripts (schema in docs/summary.md).
 * Thread-safety: not thread-safe (sorting uses static state); the `trace`
 * client calls it once, from main. */
#ifndef FXTRACE_TRACE_SUMMARY_REPORT_H_
#define FXTRACE_TRACE_SUMMARY_REPORT_H_

#include <stdbool.h>
#include <stdio.h>

#include "trace/summary.h"

typedef enum summary_sort {
  SORT_DEFAULT = 0,
  /* durations */
  SORT_COUNT,
  SORT_TOTAL,
  SORT_MEAN,
  SORT_MAX,
  SORT_P50,
  SORT_P90,
  SORT_P99,
  SORT_NAME,
  /* threads */
  SORT_BUSY,
  SORT_CPU,
  SORT_WAIT,
  SORT_SWITCHES,
  SORT_TID,
} summary_sort_t;

typedef struct summary_report_options {
  size_t top;          /* rows per table; 0: all */
  summary_sort_t sort; /* applies to the table that has the field */
  bool json;
} summary_report_options_t;

/* "count", "total", ... -> the field; SORT_DEFAULT when unknown. */
summary_sort_t summary_report__parse_sort(const char* name);
/* The accepted names, for error messages. */
extern const char summary_report__sort_names[];

/* Writes the report; false on a write error or out of memory. */
bool summary_report__write(FILE* out, const summary_t* s, const summary_report_options_t* o,
                           const trace_reader_stats_t* stats);

#endif /* FXTRACE_TRACE_SUMMARY_REPORT_H_ */
