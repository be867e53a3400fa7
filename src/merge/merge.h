/* Not part of the public API: `trace merge` (docs/merge.md), archives of
 * several hosts on one timeline. Its parts:
 *   anchor_scan   an input's wall-clock anchor (or its earliest timestamp)
 *   identity      each host's koids, CPU lanes and names in the output
 *   record_write  an ordered record, re-encoded for the output
 *   cmd_merge     the command: options, inputs, the ordered view, output
 * Thread-safety: single-threaded. */
#ifndef FXTRACE_MERGE_MERGE_H_
#define FXTRACE_MERGE_MERGE_H_

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ordered/ordered.h"

/* Process and thread koids below this are pids and tids (Linux's pid_max is
 * at most 2^22); host i's are moved up by i x MERGE_KOID_STRIDE, so hosts
 * never collide, in 32 bits too (Perfetto keeps only 32 bits of a koid). */
#define MERGE_KOID_STRIDE ((uint64_t)1 << 22)
#define MERGE_MAX_INPUTS 1024u

typedef struct merge_anchor {
  bool found;
  uint64_t trace_ns;       /* the anchor's timestamp, in ns of its clock */
  uint64_t realtime_ns;    /* CLOCK_REALTIME at that instant */
  uint64_t uncertainty_ns; /* the window the pair was taken in */
  char hostname[65];       /* "" when the anchor named none */
  bool have_first;         /* first_ns: the earliest timestamp (align by first) */
  uint64_t first_ns;
} merge_anchor_t;

/* Reads `path` (plain or compressed) up to its first "start" anchor or, with
 * `earliest`, to its end for its earliest timestamp too. false after
 * printing why (cannot open, damaged before the anchor). */
bool merge__scan_anchor(const char* path, bool earliest, merge_anchor_t* out);

typedef struct merge_host {
  const char* name;      /* borrowed */
  ordered_clock_t clock; /* its timestamps onto the output's timeline */
  uint64_t koid_base;
  uint32_t cpu_base, cpu_count; /* its lanes: cpu_base .. cpu_base + cpu_count - 1 */
} merge_host_t;

typedef struct merge_counts {
  uint64_t records, written;
  uint64_t high_koids;    /* koids >= MERGE_KOID_STRIDE kept as they were */
  uint64_t lanes_widened; /* legacy context switches written as context switches */
  uint64_t lanes_lost;    /* scheduling records past CPU lane 65535: left out */
  uint64_t too_large;     /* records that do not fit once re-encoded: left out */
  uint64_t truncated;     /* strings cut to the inline limit */
} merge_counts_t;

/* run: the merge proper, for `trace merge` and `trace record --host`. */
typedef struct merge_job {
  const char* cmd;    /* for messages: "merge", "record" */
  const char* output; /* "-": standard output */
  int codec;          /* compress_codec_t of the output */
  size_t order_memory;
  size_t count;
  const char* const* paths;  /* the inputs */
  const char* const* labels; /* each input in messages (its path, "host db1") */
  const char* const* notes;  /* each input's alignment, printed after its name */
  merge_host_t* hosts;       /* name and clock set; koids and lanes set here */
  /* written right after the magic record (whole records, their own
   * provider selected: the writer selects its own again) */
  const void* preamble;
  size_t preamble_bytes;
} merge_job_t;

/* Opens the inputs, merges them into the output and reports (each input's
 * line, counts, damage). EXIT_OK, or EXIT_FAILED after saying why; an
 * input damaged part-way has its records before the damage merged, and
 * fails the job. */
int merge__run(const merge_job_t* job);

/* identity */
uint64_t merge__koid(const merge_host_t* h, uint64_t koid, merge_counts_t* c);
/* Notes the highest CPU of the record the reader just returned (on_record). */
void merge__note_cpu(const struct trace_reader* reader, uint32_t* cpu_count);

/* record_write: the writer's state */
typedef struct merge_writer merge_writer_t;
typedef bool (*merge_sink_fn)(void* context, const void* data, size_t bytes);

merge_writer_t* merge__writer_open(const merge_host_t* hosts, size_t count, merge_sink_fn sink,
                                   void* context);
/* Writes the magic record. */
bool merge__writer_start(merge_writer_t* w);
/* One record of the ordered view. false: the sink failed or out of memory. */
bool merge__write_record(merge_writer_t* w, const ordered_record_t* r);
merge_counts_t merge__writer_counts(const merge_writer_t* w);
void merge__writer_close(merge_writer_t* w);

#endif /* FXTRACE_MERGE_MERGE_H_ */
