/* Not part of the public API: the figures of `trace summary`, accumulated
 * one record at a time (docs/summary.md). Memory grows with the number of
 * distinct providers, (category, name) pairs, counter series, threads and
 * CPUs, and with the durations open at a time — never with the number of
 * records.
 * Thread-safety: a summary_t is used by one thread at a time. */
#ifndef FXTRACE_TRACE_SUMMARY_H_
#define FXTRACE_TRACE_SUMMARY_H_

#include <stdbool.h>
#include <stdint.h>

#include "trace-reader/reader.h"
#include "trace/summary_hist.h"
#include "trace/summary_table.h"
#include "trace/time_range.h"

/* A (category, name) of durations: value of summary_t.durations. */
typedef struct summary_duration {
  const char* category; /* into the entry's key; not NUL-terminated */
  uint32_t category_length;
  const char* name;
  uint32_t name_length;
  uint64_t complete, pairs, async; /* instances of each kind */
  uint64_t total_ns;
  uint64_t slowest_ts_ns, slowest_pid, slowest_tid; /* the longest instance */
  summary_hist_t hist;                              /* count, min, max, percentiles */
} summary_duration_t;

/* A counter series: one numeric argument of a (category, name, id). */
typedef struct summary_counter {
  const char* category;
  uint32_t category_length;
  const char* name;
  uint32_t name_length;
  const char* series; /* the argument's name */
  uint32_t series_length;
  uint64_t id;
  uint64_t samples;
  double min, max, sum;
} summary_counter_t;

typedef struct summary_open {
  summary_duration_t* duration;
  uint64_t begin_ns;
} summary_open_t;

typedef struct summary_interval {
  uint64_t begin_ns, end_ns;
} summary_interval_t;

enum { SUMMARY_MAX_DEPTH = 256, SUMMARY_MAX_INTERVALS = 1024, SUMMARY_NAME_MAX = 64 };

typedef struct summary_thread {
  uint64_t pid, tid;
  char name[SUMMARY_NAME_MAX]; /* from its thread kernel object, "" if none */
  uint64_t durations;          /* durations counted on it */
  /* duration begins awaiting their end */
  summary_open_t* stack;
  uint32_t depth, stack_capacity;
  uint32_t depth_overflow; /* begins past SUMMARY_MAX_DEPTH awaiting their end */
  /* time inside top-level durations: the union of its duration intervals.
   * The last SUMMARY_MAX_INTERVALS disjoint pieces are kept to merge later
   * ones into (an enclosing duration arrives after the ones it encloses);
   * busy_ns already includes them. */
  summary_interval_t* intervals;
  uint32_t interval_count, interval_capacity;
  uint64_t busy_ns;
  /* scheduling */
  bool on_cpu, runnable;
  uint64_t runnable_since_ns;
  uint64_t cpu_ns, switches;
  summary_hist_t wait; /* runnable to running, ns */
} summary_thread_t;

typedef struct summary_provider {
  uint32_t id;
  char name[256];
  uint64_t records;
  uint64_t overflows; /* buffer-overflow events: records were dropped */
  bool have_time;
  uint64_t start_ns, end_ns;
} summary_provider_t;

typedef struct summary_cpu {
  bool known;                /* a context switch was seen on it */
  summary_thread_t* current; /* NULL: idle (thread 0) */
  uint64_t since_ns;
} summary_cpu_t;

/* A host's clock as `trace record --host` measured it (its fxtrace:clock
 * "host" record, docs/multi-host.md#metadata). */
#define SUMMARY_MAX_HOSTS 64
typedef struct summary_host {
  char name[SUMMARY_NAME_MAX];
  int64_t offset_ns; /* the host's clock minus the recording host's, at the start */
  uint64_t uncertainty_ns;
  int64_t drift_ppb;
  int64_t measured_ppb;
  int rate_applied; /* 1 applied, 0 measured but not significant, -1 no end exchange */
} summary_host_t;

typedef struct summary {
  time_range_t range;
  summary_table_t durations, counters, threads, providers, async;
  summary_cpu_t* cpus;
  uint32_t cpu_count;
  uint64_t records; /* read (inside the range when one is given) */
  bool have_time;
  uint64_t start_ns, end_ns;     /* of the records counted */
  uint64_t last_ns;              /* the latest time read, for running slices at the end */
  bool sched;                    /* context switches were seen */
  uint64_t unmatched_ends;       /* duration ends with no begin on their thread */
  uint64_t unmatched_async_ends; /* async ends with no begin */
  uint64_t too_deep;             /* begins past SUMMARY_MAX_DEPTH, not counted */
  uint64_t merged_away;          /* intervals pushed out of a thread's window */
  bool out_of_memory;
  summary_host_t hosts[SUMMARY_MAX_HOSTS];
  size_t host_count;
  uint64_t hosts_omitted; /* host records past SUMMARY_MAX_HOSTS: counted, not listed */
  char* key;              /* scratch for building keys */
  size_t key_capacity;
} summary_t;

/* range may be NULL (the whole trace). false when out of memory. */
bool summary__init(summary_t* s, const time_range_t* range);
/* The trace's start for --time-range, when the caller knows it before the
 * records come (they come in time order, so the first timestamped record
 * in archive order may come later); else the first timestamped record
 * summary__record() sees is the start. */
void summary__set_origin(summary_t* s, uint64_t origin_ns);
/* One record; the figures that pair records (begin and end, async begin
 * and end, switch-in and switch-out) need them in time order. */
void summary__record(summary_t* s, const trace_record_t* record);
/* At the end of the archive: threads still on a CPU run to its end;
 * durations still open are counted in open_durations()/open_async(). */
void summary__finish(summary_t* s);
uint64_t summary__open_durations(const summary_t* s);
void summary__free(summary_t* s);

#endif /* FXTRACE_TRACE_SUMMARY_H_ */
