/* Not part of the public API: the ordered view's state, shared by its parts
 * (docs/ordered-view.md):
 *   record_codec  a resolved record's stored form
 *   provider_list an input's provider versions
 *   slab          the memory buffer records wait in, sorted into runs
 *   entry_sort    the sort of a run's entries
 *   spill         the temporary file runs are written to
 *   cursor        reading a run (from memory or the file) record by record
 *   merge         merge passes and the final k-way merge
 *   ordered       the API: inputs, loading, next
 * Thread-safety: as ordered.h. */
#ifndef FXTRACE_ORDERED_ORDERED_INTERNAL_H_
#define FXTRACE_ORDERED_ORDERED_INTERNAL_H_

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ordered/ordered.h"
#include "ordered/provider_list.h"
#include "ordered/record_codec.h"

/* A record waiting in the slab: its key, and where it is, as the distance
 * from the slab's end to the record's start (so that growing the slab,
 * which moves the records to the new end, changes no entry), with
 * ORDERED_ENTRY_UNTIMED set for an untimed record (so that splitting a run
 * touches no record). */
typedef struct ordered_entry {
  uint64_t ns, seq, off;
} ordered_entry_t;

#define ORDERED_ENTRY_UNTIMED ((uint64_t)1 << 63)

/* Records in an order: a run's timestamped records sorted by time, or a
 * stretch of an input's untimed records in file order. */
typedef struct ordered_source {
  bool in_memory;
  uint64_t off, len;              /* in the temporary file */
  const ordered_entry_t* entries; /* in memory: into the slab, in order */
  size_t count;
} ordered_source_t;

typedef struct ordered_sources {
  ordered_source_t* items;
  size_t count, capacity;
} ordered_sources_t;

typedef struct ordered_cursor {
  const ordered_rec_t* rec; /* the current record; NULL past the end */
  ordered_source_t src;
  size_t next;        /* in memory: the next entry */
  uint64_t pos;       /* in the file: the next byte to read */
  unsigned char* buf; /* in the file: bytes read; [at, have) not consumed yet */
  size_t cap, at, have;
} ordered_cursor_t;

typedef struct ordered_input {
  trace_reader_t* reader;
  ordered_clock_t clock; /* applied to every timestamp (ordered__set_input_clock) */
  ordered_providers_t providers;
  bool failed;     /* its reader ended on TRACE_READ_ERROR */
  bool have_first; /* first_ns: its first timestamped record in file order */
  uint64_t first_ns;
  uint64_t records;
  ordered_sources_t untimed; /* in file order */
  /* the final merge: a cursor walking `untimed` */
  size_t untimed_next;
  ordered_cursor_t cursor;
} ordered_input_t;

/* One buffer of at most memory_bytes: sort entries grow from its start,
 * records from its end, and the space between is kept free for the sort's
 * scratch (one entry per record). */
typedef struct ordered_slab {
  unsigned char* base;
  size_t capacity;
  size_t count;   /* entries */
  size_t records; /* bytes of records at the end */
} ordered_slab_t;

typedef struct ordered_spill {
  int fd; /* -1 until the first run is written */
  uint64_t written;
  unsigned char* buf; /* ORDERED_IO_BYTES of writes not done yet */
  size_t used;
} ordered_spill_t;

enum { ORDERED_OPEN, ORDERED_MERGING, ORDERED_DONE, ORDERED_FAILED };

struct ordered {
  ordered_options_t opt;
  ordered_input_t* inputs;
  size_t input_count, input_capacity;
  int state;
  char error[256];
  ordered_slab_t slab;
  ordered_spill_t spill;
  ordered_sources_t runs; /* every input's timestamped records, in sorted runs */
  /* the final merge */
  ordered_cursor_t* cursors; /* one per run */
  ordered_cursor_t** heap;   /* cursors not at their end, earliest record first */
  size_t heap_count;
  ordered_cursor_t* pending; /* the cursor of the record returned last: advanced next */
  bool pending_in_heap;      /* it is the heap's top (else an input's untimed cursor) */
  ordered_stats_t stats;
  size_t held; /* bytes held now, for stats.peak_bytes */
};

/* Records the view's failure (the first message wins) and puts it in state
 * ORDERED_FAILED; returns false. */
bool ordered__fail(ordered_t* o, const char* format, ...) __attribute__((format(printf, 2, 3)));

/* The memory the view holds for records and buffers grew by `grown` and
 * shrank by `shrunk` bytes (stats.peak_bytes follows). */
void ordered__hold(ordered_t* o, size_t grown, size_t shrunk);

/* Appends a source; false (and the view failed) when out of memory. */
bool ordered__sources_add(ordered_t* o, ordered_sources_t* list, const ordered_source_t* source);

#endif /* FXTRACE_ORDERED_ORDERED_INTERNAL_H_ */
