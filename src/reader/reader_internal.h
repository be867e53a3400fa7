/* Not part of the public API: the reader object and the record decoder that
 * reader.c drives. */
#ifndef FXTRACE_READER_READER_INTERNAL_H_
#define FXTRACE_READER_READER_INTERNAL_H_

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "reader/input.h"
#include "reader/providers.h"
#include "reader/recover.h"
#include "trace-reader/reader.h"

struct trace_reader {
  input_t input;  /* the source */
  input_t* in;    /* records are framed from here: &input, or a raw image's segment */
  recover_t* raw; /* the input is a raw trace buffer, read as its archive */
  provider_set_t providers;
  trace_reader_options_t options;
  bool seen_first;  /* the first record has been examined */
  int final_result; /* TRACE_READ_END or TRACE_READ_ERROR once reached; else 1 */
  bool truncated;
  bool raw_seen;  /* the input starts with a raw trace buffer's magic */
  bool recovered; /* ... and its header was usable: raw is being read */
  trace_reader_stats_t stats;
  trace_reader_error_t error;
  char error_text[256];
  /* Scratch for NUL-terminated copies of inline strings and for unaligned
   * payloads; sized per record: at most twice the record plus a little. */
  char* scratch;
  size_t scratch_capacity, scratch_used;
  /* The bytes of the record last returned (or skipped), while they are
   * still in the input's window: until the next trace_reader_next(). */
  const unsigned char* last_bytes;
  size_t last_size;
};

/* Decodes the record of `words` words at `bytes` (any alignment; all of it
 * available), at archive offset `offset`, into *record. Returns
 * TRACE_READ_RECORD, TRACE_READ_SKIPPED (with the reason set via
 * reader__fail) or TRACE_READ_ERROR (fatal: out of memory). Metadata records
 * also update the provider state. */
int decode__record(trace_reader_t* r, const unsigned char* bytes, size_t words, uint64_t offset,
                   trace_record_t* record);

/* Sets the reader's error text for the record at `offset`; returns `result`. */
int reader__fail(trace_reader_t* r, int result, uint64_t offset, const char* fmt, ...)
    __attribute__((format(printf, 4, 5)));

/* The bytes of the record the last trace_reader_next() returned or skipped
 * (trace recover copies them): false when they are not at hand (a record
 * too large to decode, skipped without being read whole). Valid until the
 * next trace_reader_next(). */
bool reader__record_bytes(const trace_reader_t* r, const unsigned char** bytes, size_t* size);

#endif /* FXTRACE_READER_READER_INTERNAL_H_ */
