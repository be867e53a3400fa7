/* TRACE_BLOB_ATTACHMENT and TRACE_BLOB_EVENT of every size class through the
 * engine and back through libtrace-reader (docs/event-formats.md, "Large
 * blobs"): a blob whose large record would reach 4095 words is written as a
 * chain (a 4095-word head, then small blob records of 32000 bytes, the last
 * shorter), no record of which is 4096 words or more, and the reader gives
 * it back whole, byte for byte, as one large record; the instant after each
 * blob is read. The largest blob accepted is computed here from the
 * documented layout; one byte more is dropped and counted, as is a blob
 * larger than the buffer. In each buffering mode. Then chains cut short: the
 * bytes found come back with a warning and the record after is read; and a
 * chain whose name is inline in every record (`trace merge` writes them so),
 * long enough that the reader's copy of it moves, comes back whole. */
#include <stdint.h>

#include "../engine/harness.h"
#include "fxt/fxt_blob_chain.h"
#include "fxt/fxt_format.h"
#include "trace-reader/reader.h"
#include "trace/event.h"

enum { MAX_RECORD = 4095, PIECE = 32000, RESERVATION_WORDS = 32768 };

static size_t words_for(size_t bytes) { return (bytes + 7) / 8; }

/* The documented layout, for a blob whose large record without payload takes
 * `meta` words (string refs in the table: 3 for an attachment; 4 plus the
 * arguments' words for a blob event of a registered thread). */
static size_t chain_words(size_t meta, size_t size) {
  if (meta + words_for(size) < MAX_RECORD) return meta + words_for(size);
  size_t head = (MAX_RECORD - meta) * 8;
  if (size <= head) return MAX_RECORD + 1; /* the head, then an empty continuation */
  size_t rest = size - head;
  return MAX_RECORD + rest / PIECE * (1 + PIECE / 8) + 1 + words_for(rest % PIECE);
}

static size_t largest_accepted(size_t meta) {
  size_t size = (MAX_RECORD - meta) * 8 + 7 * (size_t)PIECE;
  while (chain_words(meta, size + 1) <= RESERVATION_WORDS) size++;
  return size;
}

static uint8_t g_blob[1 << 18];
static void fill(void) {
  for (size_t i = 0; i < sizeof(g_blob); i++) g_blob[i] = (uint8_t)(i * 131 + (i >> 9));
}

enum { META_ATTACHMENT = 3, META_EVENT = 5 /* one int32 argument */ };

static void emit(size_t size) {
  TRACE_BLOB_ATTACHMENT("blob", "attachment", g_blob, size);
  TRACE_INSTANT("blob", "after-attachment", TRACE_SCOPE_THREAD, "size", (uint64_t)size);
  TRACE_BLOB_EVENT("blob", "event", g_blob, size, "k", (int32_t)7);
  TRACE_INSTANT("blob", "after-event", TRACE_SCOPE_THREAD, "size", (uint64_t)size);
}

static bool accepted(size_t meta, size_t size) {
  return chain_words(meta, size) <= RESERVATION_WORDS;
}

/* Reads the archive: every blob whole, then the instant after it. */
static void check_archive(const uint8_t* fxt, size_t length, const size_t* sizes, size_t n) {
  trace_reader_t* r = trace_reader_open_memory(fxt, length, NULL);
  ASSERT_TRUE(r != NULL);
  trace_record_t rec;
  int rc;
  size_t next = 0;    /* index into the expected sequence: 4 items per size */
  size_t records = 0; /* returned */
  while ((rc = trace_reader_next(r, &rec)) != TRACE_READ_END) {
    ASSERT_MSG(rc == TRACE_READ_RECORD, "rc %d at %llu: %s", rc,
               (unsigned long long)trace_reader_error(r).offset, trace_reader_error(r).message);
    records++;
    trace_reader_error_t w;
    ASSERT_MSG(!trace_reader_warning(r, &w), "warning at %llu: %s", (unsigned long long)w.offset,
               w.message);
    if (rec.type == 15) {
      ASSERT_TRUE(next < 4 * n);
      size_t size = sizes[next / 4];
      bool attachment = next % 4 == 0;
      ASSERT_MSG(next % 4 == 0 || next % 4 == 2, "blob at position %zu", next);
      ASSERT_EQ(rec.large.blob_format, attachment ? 1u : 0u);
      ASSERT_STREQ(rec.large.category.data, "blob");
      ASSERT_STREQ(rec.large.name.data, attachment ? "attachment" : "event");
      ASSERT_MSG(rec.large.size == size, "blob of %zu bytes read back as %zu", size,
                 rec.large.size);
      ASSERT_TRUE(size == 0 || memcmp(rec.large.data, g_blob, size) == 0);
      ASSERT_EQ(rec.size_words, chain_words(attachment ? META_ATTACHMENT : META_EVENT, size));
      if (!attachment) {
        ASSERT_EQ(rec.large.args.count, 1u);
        ASSERT_STREQ(rec.large.args.items[0].name.data, "k");
        ASSERT_EQ(rec.large.args.items[0].int32_value, 7);
        ASSERT_TRUE(rec.large.ticks != 0);
      }
      next++;
    } else if (rec.type == 4) {
      ASSERT_TRUE(next < 4 * n);
      size_t size = sizes[next / 4];
      /* the blob before was dropped: its instant comes at once */
      if (next % 2 == 0 && !accepted(next % 4 == 0 ? META_ATTACHMENT : META_EVENT, size)) next++;
      ASSERT_MSG(next % 2 == 1, "instant at position %zu (size %zu)", next, size);
      ASSERT_STREQ(rec.event.name.data, next % 4 == 1 ? "after-attachment" : "after-event");
      ASSERT_EQ(rec.event.args.items[0].uint64_value, size);
      next++;
    } else {
      ASSERT_MSG(rec.type != 5, "a blob record (%zu bytes) outside a chain", rec.blob.size);
    }
  }
  ASSERT_EQ(next, 4 * n);
  ASSERT_EQ(trace_reader_stats(r).records, records);
  trace_reader_close(r);
}

/* No record of the archive is 4096 words or more by its 12-bit size field,
 * which frames every record as its own size says. */
static void check_twelve_bit_framing(const uint8_t* fxt, size_t length) {
  size_t pos = 0;
  while (pos + 8 <= length) {
    uint64_t h;
    memcpy(&h, fxt + pos, 8);
    uint64_t twelve = FXT_GET(h, 4, 15);
    uint64_t real = (h & 15) == 15 ? FXT_GET(h, 4, 35) : twelve;
    ASSERT_MSG(twelve == real && twelve != 0, "record at %zu: 12-bit size %llu, size %llu", pos,
               (unsigned long long)twelve, (unsigned long long)real);
    pos += real * 8;
  }
  ASSERT_EQ(pos, length);
}

static size_t g_sizes[64];
static size_t g_count;

static void add(size_t size) { g_sizes[g_count++] = size; }

static void test_mode(trace_buffering_mode_t mode, size_t buffer) {
  harness_t h;
  ASSERT_EQ(harness_start(&h, mode, buffer, NULL), 0);
  for (size_t i = 0; i < g_count; i++) emit(g_sizes[i]);
  harness_stop(&h);
  size_t dropped = 0;
  for (size_t i = 0; i < g_count; i++)
    dropped += !accepted(META_ATTACHMENT, g_sizes[i]) + !accepted(META_EVENT, g_sizes[i]);
  ASSERT_MSG(h.stats.records_dropped == dropped, "mode %d: %llu dropped, expected %zu", mode,
             (unsigned long long)h.stats.records_dropped, dropped);
  size_t n;
  const uint8_t* fxt = harness_archive(&h, &n);
  check_twelve_bit_framing(fxt, n);
  check_archive(fxt, n, g_sizes, g_count);
  harness_free(&h);
}

/* A blob larger than the rolling buffer: dropped and counted, and what
 * follows is written. */
static void test_larger_than_buffer(void) {
  harness_t h;
  ASSERT_EQ(harness_start(&h, TRACE_BUFFERING_MODE_CIRCULAR, 1 << 17, NULL), 0);
  TRACE_BLOB_ATTACHMENT("blob", "attachment", g_blob, 100000);
  TRACE_INSTANT("blob", "after-attachment", TRACE_SCOPE_THREAD, "size", (uint64_t)100000);
  harness_stop(&h);
  ASSERT_EQ(h.stats.records_dropped, 1);
  size_t n;
  const uint8_t* fxt = harness_archive(&h, &n);
  trace_reader_t* r = trace_reader_open_memory(fxt, n, NULL);
  trace_record_t rec;
  int rc, instants = 0;
  while ((rc = trace_reader_next(r, &rec)) == TRACE_READ_RECORD) {
    ASSERT_TRUE(rec.type != 15);
    instants += rec.type == 4;
  }
  ASSERT_EQ(rc, TRACE_READ_END);
  ASSERT_EQ(instants, 1);
  trace_reader_close(r);
  harness_free(&h);
}

/* One 40000-byte attachment, then the instant; the archive cut or changed
 * after the head: the head comes back with what was found and a warning,
 * and the record after it is read as itself. */
static void test_cut_chains(void) {
  harness_t h;
  ASSERT_EQ(harness_start(&h, TRACE_BUFFERING_MODE_ONESHOT, 1 << 20, NULL), 0);
  TRACE_BLOB_ATTACHMENT("blob", "attachment", g_blob, 40000);
  TRACE_INSTANT("blob", "after-attachment", TRACE_SCOPE_THREAD, "size", (uint64_t)40000);
  harness_stop(&h);
  size_t n;
  const uint8_t* fxt = harness_archive(&h, &n);
  /* find the head and its one continuation */
  size_t pos = 0, head = 0;
  while (pos < n) {
    uint64_t hd;
    memcpy(&hd, fxt + pos, 8);
    if ((hd & 15) == 15) head = pos;
    pos += ((hd & 15) == 15 ? FXT_GET(hd, 4, 35) : FXT_GET(hd, 4, 15)) * 8;
  }
  ASSERT_TRUE(head != 0);
  size_t cont = head + MAX_RECORD * 8;
  uint64_t ch;
  memcpy(&ch, fxt + cont, 8);
  ASSERT_EQ(ch & 15, 5u);
  size_t cont_bytes = FXT_GET(ch, 4, 15) * 8;
  size_t head_payload = (MAX_RECORD - META_ATTACHMENT) * 8;
  ASSERT_EQ(FXT_GET(ch, 32, 46), 40000 - head_payload);

  uint8_t* copy = malloc(n);
  ASSERT_TRUE(copy != NULL);
  for (int variant = 0; variant < 3; variant++) {
    size_t m = n;
    memcpy(copy, fxt, n);
    if (variant == 0) { /* the continuation left out */
      memmove(copy + cont, copy + cont + cont_bytes, n - cont - cont_bytes);
      m = n - cont_bytes;
    } else if (variant == 1) { /* another name (the empty one) */
      uint64_t other = ch & ~(UINT64_C(0xffff) << 16);
      memcpy(copy + cont, &other, 8);
    } else { /* the archive ends after the head */
      m = cont;
    }
    trace_reader_t* r = trace_reader_open_memory(copy, m, NULL);
    trace_record_t rec;
    int rc;
    bool saw_head = false, saw_orphan = false, saw_instant = false;
    while ((rc = trace_reader_next(r, &rec)) == TRACE_READ_RECORD) {
      trace_reader_error_t w;
      bool warned = trace_reader_warning(r, &w);
      if (rec.type == 15) {
        saw_head = true;
        ASSERT_MSG(warned && strstr(w.message, "the rest is missing"), "variant %d: %s", variant,
                   warned ? w.message : "no warning");
        ASSERT_EQ(w.offset, head);
        ASSERT_EQ(rec.large.size, head_payload);
        ASSERT_TRUE(memcmp(rec.large.data, g_blob, head_payload) == 0);
        ASSERT_EQ(rec.size_words, MAX_RECORD);
      } else {
        ASSERT_TRUE(!warned);
      }
      saw_orphan |= rec.type == 5;
      saw_instant |= rec.type == 4;
    }
    ASSERT_EQ(rc, TRACE_READ_END);
    ASSERT_TRUE(saw_head);
    ASSERT_EQ(saw_orphan, variant == 1); /* read as itself */
    ASSERT_EQ(saw_instant, variant != 2);
    trace_reader_close(r);
  }
  free(copy);
  harness_free(&h);
}

static void test_inline_name_chain(void) {
  enum { SIZE = 200000 };
  trace_string_ref_t cat = trace_make_inline_c_string_ref("blob");
  trace_string_ref_t name = trace_make_inline_c_string_ref("attachment");
  fxt_blob_chain_t chain;
  ASSERT_TRUE(fxt_blob_chain_plan(&chain, fxt_large_blob_attachment_record_words(&cat, &name, 0),
                                  &name, SIZE));
  ASSERT_TRUE(chain.pieces >= 3); /* past the reader's first 64 KiB of copy */
  uint64_t* words = calloc(1 + chain.words, 8);
  ASSERT_TRUE(words != NULL);
  fxt_write_magic_record(words);
  fxt_write_blob_chain_continuations(words + 1 + chain.head_words, &chain, &name,
                                     g_blob + chain.head_bytes, SIZE - chain.head_bytes);
  fxt_write_large_blob_attachment_record(words + 1, chain.head_words, &cat, &name, g_blob,
                                         chain.head_bytes);
  trace_reader_t* r = trace_reader_open_memory(words, (1 + chain.words) * 8, NULL);
  trace_record_t rec;
  int rc, blobs = 0;
  while ((rc = trace_reader_next(r, &rec)) == TRACE_READ_RECORD) {
    trace_reader_error_t w;
    ASSERT_MSG(!trace_reader_warning(r, &w), "%s", w.message);
    if (rec.type != 15) continue;
    blobs++;
    ASSERT_EQ(rec.large.size, (size_t)SIZE);
    ASSERT_TRUE(memcmp(rec.large.data, g_blob, SIZE) == 0);
    ASSERT_EQ(rec.size_words, chain.words);
  }
  ASSERT_EQ(rc, TRACE_READ_END);
  ASSERT_EQ(blobs, 1);
  trace_reader_close(r);
  free(words);
}

int main(void) {
  fill();
  test_inline_name_chain();
  size_t head_a = (MAX_RECORD - META_ATTACHMENT) * 8;
  size_t single_a = (MAX_RECORD - 1 - META_ATTACHMENT) * 8; /* the largest one-record blob */
  add(0);
  add(1024);
  add(single_a - 1);
  add(single_a);     /* 4094 words: one record */
  add(single_a + 1); /* 4095 words: the head, then an empty continuation */
  add(head_a);
  add(head_a + 1);
  add(40000);
  add(head_a + PIECE - 1);
  add(head_a + PIECE); /* the second piece full: a third, empty */
  add(head_a + PIECE + 1);
  add(100000);
  add(largest_accepted(META_EVENT));
  add(largest_accepted(META_ATTACHMENT));
  add(largest_accepted(META_ATTACHMENT) + 1); /* dropped */
  add(sizeof(g_blob));                        /* dropped */
  printf("largest accepted: attachment %zu bytes, blob event with one argument %zu bytes\n",
         largest_accepted(META_ATTACHMENT), largest_accepted(META_EVENT));
  ASSERT_EQ(largest_accepted(META_ATTACHMENT), 262056);
  test_mode(TRACE_BUFFERING_MODE_ONESHOT, 8 << 20);
  test_mode(TRACE_BUFFERING_MODE_CIRCULAR, 16 << 20);
  test_mode(TRACE_BUFFERING_MODE_STREAMING, 16 << 20);
  test_larger_than_buffer();
  test_cut_chains();
  printf("ok\n");
  return 0;
}
