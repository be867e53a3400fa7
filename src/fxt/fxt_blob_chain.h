/* Not part of the public API: a large blob (TRACE_BLOB_EVENT,
 * TRACE_BLOB_ATTACHMENT) of any size the engine takes, written as records
 * that every FXT reader frames right (docs/event-formats.md, "Large blobs").
 *
 * Why: FXT.md §6 gives a large record (type 15) a 32-bit size, but readers
 * that know only the 12-bit size field (Perfetto's importer and Tracy,
 * READERS.md) take bits 4..15 of it for every record. That is right only
 * while the record is under 4096 words; past that they read the blob's bytes
 * as records (or stop at a size of 0). So no record here exceeds
 * FXT_MAX_RECORD_WORDS, and a blob that does not fit one large record is cut
 * into a chain:
 *   - the head: the large blob record (format 0 or 1) with all of its
 *     metadata and the first bytes of the payload, exactly
 *     FXT_MAX_RECORD_WORDS (4095) words long;
 *   - continuations: small blob records (type 5, TRACE_BLOB_TYPE_DATA)
 *     with the head's name ref, each holding the next FXT_BLOB_CHAIN_PIECE
 *     (32000, the small blob API limit) bytes, the last one fewer (maybe 0).
 * FXT.md §8.6: blob records with the same name add chunks to one logical
 * blob. The chain rule, which is all a reader needs: a large blob record of
 * exactly 4095 words is followed by a continuation, and a continuation of
 * exactly FXT_BLOB_CHAIN_PIECE bytes by another one. A blob whose large
 * record is shorter is that one record, as before.
 *
 * The writer reserves the whole chain at once (its records are contiguous
 * in the buffer and in the archive) and commits the continuations first and
 * the head last: whoever sees the head committed sees the whole chain. */
#ifndef FXTRACE_FXT_BLOB_CHAIN_H_
#define FXTRACE_FXT_BLOB_CHAIN_H_

#include <stdbool.h>

#include "fxt/fxt_encode.h"

#define FXT_BLOB_CHAIN_PIECE ((size_t)TRACE_MAX_BLOB_SIZE)

typedef struct fxt_blob_chain {
  size_t head_words; /* the head record: FXT_MAX_RECORD_WORDS when pieces > 0 */
  size_t head_bytes; /* payload bytes in the head */
  size_t name_words; /* the inline name, repeated in every continuation */
  size_t pieces;     /* continuation records; 0: the blob is one large record */
  size_t words;      /* the whole chain */
} fxt_blob_chain_t;

/* Plans a blob of `size` bytes whose large record without payload (header
 * to size word included) is `meta_words` long. False when no chain holds it:
 * the metadata leaves no payload room in a head, or a continuation cannot
 * hold a whole piece beside a long inline name. The caller still checks
 * `words` against the largest reservation. */
static inline bool fxt_blob_chain_plan(fxt_blob_chain_t* c, size_t meta_words,
                                       const trace_string_ref_t* name, size_t size) {
  memset(c, 0, sizeof(*c));
  if (size > UINT32_MAX) return false;
  c->name_words = fxt_string_ref_words(name);
  if (meta_words + fxt_words_for_bytes(size) < FXT_MAX_RECORD_WORDS) {
    c->head_words = c->words = meta_words + fxt_words_for_bytes(size);
    c->head_bytes = size;
    return true;
  }
  size_t piece_words = 1u + c->name_words + fxt_words_for_bytes(FXT_BLOB_CHAIN_PIECE);
  if (meta_words >= FXT_MAX_RECORD_WORDS || piece_words > FXT_MAX_RECORD_WORDS) return false;
  size_t room = (FXT_MAX_RECORD_WORDS - meta_words) * 8u;
  c->head_words = FXT_MAX_RECORD_WORDS; /* meta + words(head_bytes): room, or size's words */
  c->head_bytes = size < room ? size : room;
  size_t rest = size - c->head_bytes;
  size_t full = rest / FXT_BLOB_CHAIN_PIECE;
  c->pieces = full + 1u; /* the last is short, maybe empty, and ends the chain */
  c->words = c->head_words + full * piece_words + 1u + c->name_words +
             fxt_words_for_bytes(rest % FXT_BLOB_CHAIN_PIECE);
  return true;
}

/* Writes the continuations of a planned chain at `p` (right after the head)
 * from `rest`, the payload past the head's bytes; each is committed as it is
 * written. Returns the end of the chain. */
static inline uint64_t* fxt_write_blob_chain_continuations(uint64_t* p, const fxt_blob_chain_t* c,
                                                           const trace_string_ref_t* name,
                                                           const void* rest, size_t rest_size) {
  const unsigned char* data = rest;
  for (size_t i = 0; i < c->pieces; i++) {
    size_t n = rest_size < FXT_BLOB_CHAIN_PIECE ? rest_size : FXT_BLOB_CHAIN_PIECE;
    p = fxt_write_blob_record(p, fxt_blob_record_words(name, n), TRACE_BLOB_TYPE_DATA, name, data,
                              n);
    data += n;
    rest_size -= n;
  }
  return p;
}

#endif /* FXTRACE_FXT_BLOB_CHAIN_H_ */
