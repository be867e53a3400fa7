/* Not part of the public API: a resolved record as the ordered view keeps
 * it, in memory and in its temporary file: a fixed header (the sort key)
 * followed by the trace_record_t's fields for its type, with every string
 * and blob inline. It refers to nothing outside itself but its input's
 * provider versions (provider_list.h), so it can be read back in any order.
 * Thread-safety: pure functions. */
#ifndef FXTRACE_ORDERED_RECORD_CODEC_H_
#define FXTRACE_ORDERED_RECORD_CODEC_H_

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "trace-reader/reader.h"

enum { ORDERED_REC_TIMED = 1 };

/* 8-byte aligned wherever it is stored; `size` is a multiple of 8, so
 * records laid end to end stay aligned. */
typedef struct ordered_rec {
  uint64_t ns;       /* the sort key: timestamp in ns, 0 when untimed */
  uint64_t seq;      /* position among its input's records, in file order */
  uint32_t size;     /* bytes, this header included */
  uint32_t provider; /* index into its input's provider versions */
  uint32_t input;
  uint32_t flags; /* ORDERED_REC_TIMED */
} ordered_rec_t;

/* Time order: (ns, input, seq). Untimed records are not compared by this
 * (see merge.c). */
static inline bool ordered__rec_before(const ordered_rec_t* a, const ordered_rec_t* b) {
  if (a->ns != b->ns) return a->ns < b->ns;
  if (a->input != b->input) return a->input < b->input;
  return a->seq < b->seq;
}

/* Bytes the record takes, header included (a multiple of 8). */
size_t ordered__rec_size(const trace_record_t* record);

/* Writes the record after the header at dst (ordered__rec_size() bytes,
 * 8-byte aligned); header->size must be that size. */
void ordered__rec_write(void* dst, const ordered_rec_t* header, const trace_record_t* record);

/* The record stored at rec, into *out: its strings and blobs point into
 * rec's bytes (each string NUL-terminated). out->provider is left NULL for
 * the caller. false when the stored record does not fit its size (a damaged
 * temporary file). */
bool ordered__rec_read(const ordered_rec_t* rec, trace_record_t* out);

#endif /* FXTRACE_ORDERED_RECORD_CODEC_H_ */
