/* Not part of the public API: the ordered view of FXT archives
 * (docs/ordered-view.md). It reads one or more archives through
 * libtrace-reader and returns their records in time order, as a k-way merge:
 *
 *   - the sort key is a record's timestamp in ns (its provider's tick rate
 *     applied; a complete duration's is its beginning), then its input (in
 *     the order the inputs were added), then its position in its input's
 *     file order: ties keep file order;
 *   - records without a timestamp (metadata, initialization, strings,
 *     threads, objects, blobs) come out right before the first record of
 *     their input that follows them in file order (or at the end, after
 *     every timestamped record, when none does): always before the records
 *     that may refer to them, and otherwise as late as that allows;
 *   - each record is resolved by the reader in file order, where its string
 *     and thread references mean what they meant there; the view keeps the
 *     resolved record (strings inline, its provider as it was then), so
 *     nothing depends on the tables at the time the record comes out.
 *
 * Memory is bounded whatever the archives' length: records wait in a buffer
 * of at most options.memory_bytes (one record more when a single record is
 * larger); when it is full, its records are sorted and written as a run to
 * an unlinked temporary file in TMPDIR, and the runs are merged, at most
 * options.fan_in at a time, each through a 64 KiB read buffer. The bound,
 * all inputs together: memory_bytes + (fan_in + inputs + 1) x 64 KiB, the
 * buffers growing only to hold a record larger than that (a resolved record
 * is at most about 1.1 MiB), plus one copy of each provider name per change
 * of a provider's name or tick rate, plus the readers' own tables.
 *
 *     ordered_t* o = ordered__open(NULL);
 *     ordered__add_input(o, reader);            // read when the first record is asked for
 *     ordered_record_t r;
 *     int rc;
 *     while ((rc = ordered__next(o, &r)) == ORDERED_RECORD) use(&r.record);
 *     if (rc == ORDERED_ERROR) report(ordered__error(o));   // the view's own failure
 *     if (ordered__input_failed(o, 0)) report(trace_reader_error(reader));
 *     ordered__close(o);
 *
 * Every input is read to its end (or to a fatal error: the records before it
 * are ordered and returned, ordered__input_failed() tells) before the first
 * record is returned. Pipes and compressed inputs need no special handling:
 * each input is read exactly once.
 * Thread-safety: an ordered_t is used by one thread at a time. */
#ifndef FXTRACE_ORDERED_ORDERED_H_
#define FXTRACE_ORDERED_ORDERED_H_

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "trace-reader/reader.h"

/* Results of ordered__next() and ordered__load(). */
enum { ORDERED_ERROR = -1, ORDERED_END = 0, ORDERED_RECORD = 1 };

#define ORDERED_DEFAULT_MEMORY ((size_t)64 << 20)
#define ORDERED_MIN_MEMORY ((size_t)4 << 10)
#define ORDERED_DEFAULT_FAN_IN 64u
#define ORDERED_IO_BYTES ((size_t)64 << 10)

typedef struct ordered_options {
  /* Bytes of records (with their sort entries) held in memory before a run
   * is written to the temporary file. 0: ORDERED_DEFAULT_MEMORY; values
   * below ORDERED_MIN_MEMORY count as that. */
  size_t memory_bytes;
  /* Runs merged at once (0: ORDERED_DEFAULT_FAN_IN; at least 2): more runs
   * are merged in passes through the temporary file first. */
  unsigned fan_in;
  /* Directory of the temporary file; NULL: $TMPDIR, else /tmp. */
  const char* tmpdir;
  /* Called for every record an input's reader skips (TRACE_READ_SKIPPED),
   * while the inputs are read; may be NULL. */
  void (*on_skip)(void* context, size_t input, const trace_reader_error_t* error);
  /* Called for every record an input's reader returns, in file order, right
   * after it is read (so that trace_reader_warning() of `reader` speaks of
   * it); may be NULL. */
  void (*on_record)(void* context, size_t input, const trace_reader_t* reader);
  void* context;
} ordered_options_t;

typedef struct ordered_record {
  /* As the reader returned it, with its provider as it was at that point;
   * strings, blobs and the provider are borrowed until the next
   * ordered__next() or ordered__close(). */
  trace_record_t record;
  size_t input; /* 0 for the first input added */
  uint64_t seq; /* its position among its input's records (0, 1, ...) */
  bool timed;   /* it has a timestamp: ns is the sort key */
  uint64_t ns;  /* its timestamp in ns (0 when !timed) */
} ordered_record_t;

typedef struct ordered_stats {
  uint64_t records;       /* records read from all inputs */
  uint64_t runs;          /* sorted runs written to the temporary file (0: all in memory) */
  uint64_t spilled_bytes; /* bytes written to the temporary file, merge passes included */
  uint64_t merge_passes;  /* merges of fan_in runs into one, before the final merge */
  size_t peak_bytes;      /* the most memory held at once for records and I/O buffers */
} ordered_stats_t;

/* The record's timestamp in ns, with its provider's tick rate: the view's
 * sort key (a complete duration's is its beginning), and what --time-range
 * compares. The same exact conversion as the tools' timestamp__ticks_to_ns(),
 * so records come out in the order of the times the tools print. false: it
 * has none. */
bool ordered__record_ns(const trace_record_t* record, uint64_t* ns);

typedef struct ordered ordered_t;

/* options may be NULL (the defaults). NULL when out of memory. */
ordered_t* ordered__open(const ordered_options_t* options);

/* Adds an input, before the first ordered__load() or ordered__next(). The
 * reader stays the caller's: it must outlive the view, and tells the
 * input's stats, error and recovery afterwards. false when out of memory or
 * too late. */
bool ordered__add_input(ordered_t* o, trace_reader_t* reader);

/* Adds shift_ns to every timestamp of input `input` (its sort key, `ns`
 * and ordered__input_first_ns()), before the first ordered__load(): puts
 * inputs recorded on different clocks on one timeline (`trace merge`). The
 * records themselves keep their ticks. false when too late or no such
 * input. */
bool ordered__set_input_shift(ordered_t* o, size_t input, uint64_t shift_ns);

/* A linear map from an input's clock onto the output's timeline:
 *   out = ns + shift_ns + (ns - origin_ns) x drift_ppb / 10^9
 * (a shift that may be negative, and a rate correction around origin_ns;
 * `trace record --host`, docs/multi-host.md). A result below 0 is 0. */
typedef struct ordered_clock {
  int64_t shift_ns;
  uint64_t origin_ns;
  double drift_ppb; /* |drift_ppb| < 10^9, so the map keeps the order; fractional */
} ordered_clock_t;

uint64_t ordered__clock_map(const ordered_clock_t* c, uint64_t ns);

/* Like ordered__set_input_shift(), with the linear map `clock`. */
bool ordered__set_input_clock(ordered_t* o, size_t input, const ordered_clock_t* clock);

/* Reads every input and sorts (ordered__next() does it when it has not been
 * done). ORDERED_END when done, ORDERED_ERROR when the view failed (out of
 * memory, the temporary file cannot be written): ordered__error() says why. */
int ordered__load(ordered_t* o);

/* The next record in time order into *out: ORDERED_RECORD, ORDERED_END
 * after the last one, or ORDERED_ERROR (ordered__error()); after END or
 * ERROR every later call returns the same. */
int ordered__next(ordered_t* o, ordered_record_t* out);

/* The view's own failure, "" if none. */
const char* ordered__error(const ordered_t* o);

/* After loading: the input's reader ended on TRACE_READ_ERROR (its records
 * before the error are in the view). */
bool ordered__input_failed(const ordered_t* o, size_t input);

/* After loading: the time of the input's first timestamped record in file
 * order, which is not always its earliest; false when it has none. */
bool ordered__input_first_ns(const ordered_t* o, size_t input, uint64_t* ns);

ordered_stats_t ordered__stats(const ordered_t* o);

/* Closes the view and its temporary file; not the readers. NULL is fine. */
void ordered__close(ordered_t* o);

#endif /* FXTRACE_ORDERED_ORDERED_H_ */
