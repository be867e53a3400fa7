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
#include "trace-engine/types.h"
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
   * still in the input's window: until the next trace_reader_next(). For a
   * record read on after its contents (raw images), its contents only. */
  const unsigned char* last_bytes;
  size_t last_size;
  /* The warning about the record last returned (trace_reader_warning()). */
  bool warned;
  trace_reader_error_t warning;
  char warning_text[200];
  /* The record before the one being framed has a size field past its
   * contents: the frame may be inside the records it swallowed, and damage
   * found there names it too (archives only). */
  bool after_oversized;
  uint64_t oversized_offset, oversized_extra;
  uint32_t oversized_type;
  /* A raw image's segments (raw_frame.c): a stretch of damaged data being
   * skipped word by word from run_offset (run_reason: why its first word
   * was no record), and the record found after it, which the next call
   * returns (the stretch is reported first). */
  bool in_run;
  bool run_past_end; /* its first word: a record running past the segment's end */
  uint64_t run_offset;
  char run_reason[160];
  bool pending;
  trace_record_t pending_record;
  const unsigned char* pending_bytes;
  size_t pending_size;
  /* What raw_frame.c left out and cut (trace recover reports it). */
  uint64_t damaged_runs, damaged_bytes, trimmed_records;
  /* A blob chain being put back together (blob_chain.c): the raw bytes of
   * its records, and its payload. */
  unsigned char* chain_raw;
  unsigned char* chain_data;
  size_t chain_raw_capacity, chain_data_capacity;
};

/* How decode__record takes a record; reader.c picks the policy. */
typedef enum decode_policy {
  /* An archive: words the header does not describe are skipped (a reader
   * warning, FXT lets newer writers append fields); a record that fails is
   * skipped by its size, as FXT says. */
  DECODE_LENIENT,
  /* A raw image's segments, which fxtrace's own engine wrote: words after
   * the contents are allowed (the reader reads on right after the contents:
   * a size field too large is damage); a record that fails, or whose
   * arguments hold extra words, is not taken and changes no reader state. */
  DECODE_TRIM,
  /* The same while resynchronizing after damage: no extra word at all. */
  DECODE_STRICT,
  /* The scan of a raw image's buffer (recover.c): where the contents end,
   * with DECODE_TRIM's checks; references are not resolved (the tables are
   * those of the read that comes later) and nothing changes. */
  DECODE_MEASURE,
} decode_policy_t;

/* Where a record's contents end, against its size field. */
typedef struct decode_extent {
  size_t content_words;   /* header included: what the header describes */
  size_t arg_extra_words; /* inside arguments, past their own contents */
} decode_extent_t;

/* Decodes the record of `words` words at `bytes` (any alignment; all of it
 * available), at archive offset `offset`, into *record, and measures it
 * (*extent; meaningful for TRACE_READ_RECORD). Returns TRACE_READ_RECORD,
 * TRACE_READ_SKIPPED (with the reason set via reader__fail) or
 * TRACE_READ_ERROR (fatal: out of memory). Metadata, initialization, string
 * and thread records also update the reader's state (under DECODE_TRIM and
 * DECODE_STRICT only when the record is taken). */
int decode__record(trace_reader_t* r, const unsigned char* bytes, size_t words, uint64_t offset,
                   decode_policy_t policy, trace_record_t* record, decode_extent_t* extent);

/* The next record as it is in the input: trace_reader_next() without
 * putting blob chains back together. */
int reader__next_record(trace_reader_t* r, trace_record_t* record);

/* A large blob record that a continuation follows (fxt/fxt_blob_chain.h:
 * exactly FXT_MAX_RECORD_WORDS long). */
bool blob_chain__is_head(const trace_record_t* record);

/* Reads the continuations of the head just returned in *record (which stays
 * the current record: its bytes are reader__record_bytes()) and makes
 * *record the whole blob: its payload, size_words and bytes are the
 * chain's. A chain cut short (a missing or unreadable continuation, or one
 * past READER_MAX_DECODED_BYTES) gives the bytes found with a warning; the
 * record that ended it is read next. TRACE_READ_RECORD; TRACE_READ_ERROR
 * when out of memory. */
int blob_chain__assemble(trace_reader_t* r, trace_record_t* record);

/* Sets the reader's error text for the record at `offset`; returns `result`. */
int reader__fail(trace_reader_t* r, int result, uint64_t offset, const char* fmt, ...)
    __attribute__((format(printf, 4, 5)));

/* reader__fail with TRACE_READ_ERROR, which every later call returns. */
int reader__fatal(trace_reader_t* r, uint64_t offset, const char* fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* Sets the warning of the record about to be returned (offset: the record's). */
void reader__warn(trace_reader_t* r, uint64_t offset, const char* fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* Makes the scratch hold every string of a record of `record_bytes`. */
bool reader__reserve_scratch(trace_reader_t* r, size_t record_bytes);

/* The largest record decoded: the engine's largest large record, which is
 * also above any normal record. Larger records are skipped by their size. */
#define READER_MAX_DECODED_BYTES TRACE_ENCODED_INLINE_LARGE_RECORD_MAX_SIZE

/* One result from a raw image's streamed saves or buffer records
 * (raw_frame.c): a record (its contents: a size field past them is read on
 * after them, with a warning), TRACE_READ_SKIPPED for a stretch of damaged
 * data skipped word by word up to the next record that checks, or
 * TRACE_READ_ERROR; 0 when the segment has ended. */
int raw_frame__next(trace_reader_t* r, trace_record_t* record);

/* The bytes of the record the last trace_reader_next() returned or skipped
 * (trace recover copies them): false when they are not at hand (a record
 * too large to decode, skipped without being read whole). For a record of a
 * raw image read on after its contents, *size is that of its contents (its
 * header still holds the larger size). Valid until the next
 * trace_reader_next(). */
bool reader__record_bytes(const trace_reader_t* r, const unsigned char** bytes, size_t* size);

#endif /* FXTRACE_READER_READER_INTERNAL_H_ */
