/* Putting a large blob cut into a chain of records (fxt/fxt_blob_chain.h)
 * back together, so that every reader user (dump, convert, summary, the
 * ordered view, trace recover) gets the blob whole, as one large record.
 *
 * The chain rule needs no look-ahead past the chain: the head (a large blob
 * record of exactly FXT_MAX_RECORD_WORDS words) and every continuation of
 * exactly FXT_BLOB_CHAIN_PIECE bytes announce one more continuation. Before
 * a continuation is read, its header (and inline name) are checked in the
 * input without taking the record: a record that is no continuation of this
 * blob ends the chain there (cut short: a writer that died, damage, or an
 * archive of another writer whose large record happens to be that long) and
 * is read next as itself. The head's bytes and payload are copied first:
 * reading on moves the input's window and reuses the decoder's scratch,
 * and the head is decoded again from its copy at the end. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fxt/fxt_blob_chain.h"
#include "fxt/fxt_format.h"
#include "reader/reader_internal.h"

bool blob_chain__is_head(const trace_record_t* record) {
  return record->type == FXT_RECORD_LARGE && record->large.large_type == FXT_LARGE_BLOB &&
         record->size_words == FXT_MAX_RECORD_WORDS;
}

static bool grow(unsigned char** buf, size_t* capacity, size_t need) {
  if (*capacity >= need) return true;
  size_t n = *capacity ? *capacity : 65536;
  while (n < need) n *= 2;
  unsigned char* grown = realloc(*buf, n);
  if (!grown) return false;
  *buf = grown;
  *capacity = n;
  return true;
}

/* The head's name ref and, when inline, where its bytes are in the head. */
typedef struct chain_name {
  uint32_t ref;
  /* where its inline bytes are in r->chain_raw: an offset, as the copy
   * moves when a continuation grows it */
  size_t inline_at;
  size_t inline_words;
} chain_name_t;

static chain_name_t head_name(const unsigned char* head) {
  uint64_t f;
  memcpy(&f, head + 8, 8);
  uint32_t category = (uint32_t)FXT_GET(f, 0, 15);
  chain_name_t n = {(uint32_t)FXT_GET(f, 16, 31), 0, 0};
  size_t at = 2 + ((category & 0x8000u) ? fxt_words_for_bytes(category & 0x7fffu) : 0);
  if (n.ref & 0x8000u) {
    n.inline_at = at * 8;
    n.inline_words = fxt_words_for_bytes(n.ref & 0x7fffu);
  }
  return n;
}

/* Whether the next record in the input is a continuation of the blob named
 * `name` (then NULL, and *size is its payload's), else why not (into
 * `why`). Takes nothing. */
static const char* peek_continuation(trace_reader_t* r, const chain_name_t* name, size_t* size_out,
                                     char* why, size_t why_size) {
  if (r->pending || r->in_run) return "damaged data follows";
  input_t* in = r->in;
  ptrdiff_t have = input__ensure(in, 8);
  if (have < 8) return "the input ends";
  uint64_t h;
  memcpy(&h, in->buf + in->start, 8);
  size_t size = (size_t)FXT_GET(h, 32, 46);
  size_t words = (size_t)FXT_GET(h, 4, 15);
  if (FXT_GET(h, 0, 3) != FXT_RECORD_BLOB || FXT_GET(h, 48, 55) != TRACE_BLOB_TYPE_DATA ||
      FXT_GET(h, 16, 31) != name->ref || size > FXT_BLOB_CHAIN_PIECE ||
      words != 1 + name->inline_words + fxt_words_for_bytes(size)) {
    snprintf(why, why_size, "the %s record at offset %llu is no continuation",
             trace_record_type_name((uint32_t)FXT_GET(h, 0, 3)), (unsigned long long)in->offset);
    return why;
  }
  have = input__ensure(in, words * 8);
  if (have < 0 || (size_t)have < words * 8) return "the input ends inside its next record";
  if (name->inline_words && memcmp(in->buf + in->start + 8, r->chain_raw + name->inline_at,
                                   name->inline_words * 8) != 0) {
    snprintf(why, why_size, "the blob record at offset %llu has another name",
             (unsigned long long)in->offset);
    return why;
  }
  *size_out = size;
  return NULL;
}

int blob_chain__assemble(trace_reader_t* r, trace_record_t* record) {
  const unsigned char* bytes;
  size_t raw = 0;
  if (!reader__record_bytes(r, &bytes, &raw) || raw != FXT_MAX_RECORD_WORDS * 8) return 1;
  uint64_t offset = record->offset;
  if (!grow(&r->chain_raw, &r->chain_raw_capacity, raw) ||
      !grow(&r->chain_data, &r->chain_data_capacity, record->large.size))
    return reader__fatal(r, offset, "out of memory");
  memcpy(r->chain_raw, bytes, raw);
  memcpy(r->chain_data, record->large.data, record->large.size);
  size_t data = record->large.size;
  bool head_warned = r->warned;
  trace_reader_error_t head_warning = r->warning;
  char head_warning_text[sizeof(r->warning_text)];
  memcpy(head_warning_text, r->warning_text, sizeof(head_warning_text));
  chain_name_t name = head_name(r->chain_raw);

  char why_text[160];
  const char* why = NULL;
  size_t pieces = 0;
  for (bool more = true; more;) {
    size_t size = 0;
    why = peek_continuation(r, &name, &size, why_text, sizeof(why_text));
    if (why) break;
    if (data + size > READER_MAX_DECODED_BYTES) {
      why = "longer than the reader puts together (the rest follows as blob records)";
      break;
    }
    trace_record_t piece;
    int rc = reader__next_record(r, &piece);
    const unsigned char* piece_bytes;
    size_t piece_raw;
    if (rc != TRACE_READ_RECORD || !reader__record_bytes(r, &piece_bytes, &piece_raw)) {
      snprintf(why_text, sizeof(why_text), "its next record is unreadable (%.60s)",
               trace_reader_error(r).message);
      why = why_text;
      break;
    }
    r->stats.records--; /* the chain is one record */
    pieces++;
    if (!grow(&r->chain_raw, &r->chain_raw_capacity, raw + piece_raw) ||
        !grow(&r->chain_data, &r->chain_data_capacity, data + piece.blob.size))
      return reader__fatal(r, offset, "out of memory");
    memcpy(r->chain_raw + raw, piece_bytes, piece_raw);
    memcpy(r->chain_data + data, piece.blob.data, piece.blob.size);
    raw += piece_raw;
    data += piece.blob.size;
    more = piece.blob.size == FXT_BLOB_CHAIN_PIECE;
  }

  /* the head again, from its copy: its strings were in the scratch */
  decode_extent_t extent;
  int rc = decode__record(r, r->chain_raw, FXT_MAX_RECORD_WORDS, offset, DECODE_LENIENT, record,
                          &extent);
  if (rc != TRACE_READ_RECORD) return reader__fatal(r, offset, "out of memory");
  record->size_words = raw / 8;
  record->large.data = r->chain_data;
  record->large.size = data;
  r->last_bytes = r->chain_raw;
  r->last_size = raw;
  r->warned = head_warned;
  r->warning = head_warning;
  memcpy(r->warning_text, head_warning_text, sizeof(head_warning_text));
  if (head_warned) r->warning.message = r->warning_text;
  if (why)
    reader__warn(r, offset,
                 "blob '%.40s' cut short, the rest is missing (%zu bytes in %zu records): %s",
                 record->large.name.data, data, pieces + 1, why);
  return TRACE_READ_RECORD;
}
