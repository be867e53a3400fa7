/* Review 12: buffer_scan__save_prefixes against buffer_scan__save_runs on
 * random, partly hostile streaming segments (zero headers, metadata records,
 * provisional and committed large records, records that do not fit their
 * chunk or the segment), with emitters modelled on the manager's
 * (archive__emit_run, archive__emit_prefix: copy first, frame in the copy).
 * Static segments: both saves must archive the same bytes with the same
 * counts. A segment changed during the save (as a provider may): what is
 * archived stays whole non-metadata records, each source byte at most once,
 * in buffer order. */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/buffer_header.h"
#include "engine/buffer_scan.h"
#include "test.h"
#include "trace-engine/types.h"

typedef struct out {
  uint8_t* data;
  size_t len, cap;
  uint64_t records, rejected;
  const uint8_t* last_end; /* end of the last source range archived */
  bool overlap;            /* a source range began before the previous one ended */
  uint8_t* mutate;         /* non-NULL: the segment, changed after each copy */
  size_t mutate_len;
  uint64_t rng;
} out_t;

static uint64_t next(uint64_t* s) {
  *s ^= *s << 13;
  *s ^= *s >> 7;
  *s ^= *s << 17;
  return *s;
}

static void note_source(out_t* o, const uint8_t* p, size_t n) {
  if (n == 0) return;
  if (o->last_end && p < o->last_end) o->overlap = true;
  o->last_end = p + n;
}

static void append(out_t* o, const void* p, size_t n) {
  if (n == 0) return; /* o->data may still be NULL */
  if (o->len + n > o->cap) {
    o->cap = (o->len + n) * 2;
    o->data = realloc(o->data, o->cap);
    ASSERT_TRUE(o->data != NULL);
  }
  memcpy(o->data + o->len, p, n);
  o->len += n;
}

/* the provider writing meanwhile: a few random words of the segment */
static void scribble(out_t* o) {
  if (!o->mutate) return;
  for (int i = 0; i < 4; i++) {
    size_t at = (size_t)(next(&o->rng) % (o->mutate_len / 8)) * 8;
    uint64_t w = next(&o->rng);
    if (w % 3 == 0) w = 0;
    memcpy(o->mutate + at, &w, 8);
  }
}

static bool record_ok(const uint8_t* copy, size_t bytes) {
  uint64_t header;
  memcpy(&header, copy, 8);
  return header != 0 && fxt_record_words(header) * 8 == bytes && (header & 0xf) != 0;
}

static int emit_record(out_t* o, const uint8_t* p, size_t bytes) {
  uint8_t* copy = malloc(bytes);
  ASSERT_TRUE(copy != NULL);
  memcpy(copy, p, bytes);
  scribble(o);
  if (bytes < 8 || bytes % 8 || !record_ok(copy, bytes)) {
    o->rejected++;
  } else {
    note_source(o, p, bytes);
    append(o, copy, bytes);
    o->records++;
  }
  free(copy);
  return 0;
}

static int emit_each(out_t* o, const uint8_t* p, size_t bytes) {
  size_t pos = 0;
  while (pos + 8 <= bytes) {
    uint64_t header;
    memcpy(&header, p + pos, 8);
    size_t size = (size_t)fxt_record_words(header) * 8;
    if (header == 0 || size == 0 || size > bytes - pos) {
      o->rejected++;
      return 0;
    }
    emit_record(o, p + pos, size);
    pos += size;
  }
  return 0;
}

/* archive__emit_run, without the output queue */
static int emit_run(void* arg, const void* data, size_t bytes) {
  out_t* o = arg;
  const uint8_t* p = data;
  if (bytes % 8 || bytes > (256u << 10)) return emit_each(o, p, bytes);
  uint8_t* copy = malloc(bytes);
  ASSERT_TRUE(copy != NULL);
  memcpy(copy, p, bytes);
  scribble(o);
  size_t good = 0;
  while (good < bytes) {
    uint64_t header;
    memcpy(&header, copy + good, 8);
    size_t size = (size_t)fxt_record_words(header) * 8;
    if (header == 0 || size == 0 || size > bytes - good || (header & 0xf) == 0) break;
    good += size;
    o->records++;
  }
  note_source(o, p, good);
  append(o, copy, good);
  free(copy);
  return good == bytes ? 0 : emit_each(o, p + good, bytes - good);
}

/* archive__emit_prefix, without the output queue */
static int64_t emit_prefix(void* arg, const void* data, size_t max, uint64_t* records) {
  out_t* o = arg;
  *records = 0;
  if (max % 8 || max > (256u << 10)) return 0;
  uint8_t* copy = malloc(max);
  ASSERT_TRUE(copy != NULL);
  memcpy(copy, data, max);
  scribble(o);
  size_t good = 0;
  while (good + 8 <= max) {
    uint64_t header;
    memcpy(&header, copy + good, 8);
    if (!buffer_scan__is_plain_record(header, max - good)) break;
    good += (size_t)fxt_record_words(header) * 8;
    (*records)++;
  }
  o->records += *records;
  note_source(o, data, good);
  append(o, copy, good);
  free(copy);
  return (int64_t)good;
}

/* Fills a segment of `bytes` (chunks of `chunk`) at random. */
static void fill(uint8_t* seg, size_t bytes, size_t chunk, uint64_t* rng) {
  memset(seg, 0, bytes);
  for (size_t c = 0; c < bytes; c += chunk) {
    if (next(rng) % 8 == 0) continue; /* an empty chunk */
    size_t pos = c;
    while (pos + 8 <= c + chunk) {
      uint64_t r = next(rng) % 100, header, words;
      size_t room = (c + chunk - pos) / 8;
      if (r < 70) { /* a plain record, mostly fitting */
        words = 1 + next(rng) % (next(rng) % 10 == 0 ? 4095 : 24);
        header = (1 + next(rng) % 14) | words << 4 | (next(rng) & ~UINT64_C(0xffff));
      } else if (r < 76) { /* metadata */
        words = 1 + next(rng) % 4;
        header = words << 4 | (next(rng) & ~UINT64_C(0xffff));
      } else if (r < 82) { /* a provisional header, maybe over several chunks */
        words = 1 + next(rng) % (next(rng) % 2 ? room : 3 * chunk / 8);
        header = buffer__provisional_header(words);
      } else if (r < 88) { /* a committed large record */
        words = 1 + next(rng) % (next(rng) % 2 ? room : 3 * chunk / 8);
        header = 15 | (words & 0xffffffffu) << 4 | (next(rng) % 15) << 36;
      } else if (r < 92) { /* the end of the chunk's data */
        break;
      } else if (r < 96) { /* a zero header, then more */
        pos += 8;
        continue;
      } else { /* garbage */
        header = next(rng);
        words = fxt_record_words(header);
      }
      memcpy(seg + pos, &header, 8);
      for (uint64_t w = 1; w < words && pos + w * 8 + 8 <= bytes && w < 64; w++) {
        uint64_t body = next(rng) | 1;
        memcpy(seg + pos + w * 8, &body, 8);
      }
      if (words == 0) break;
      pos += words * 8;
    }
  }
}

static void check_framed(const out_t* o) {
  size_t pos = 0;
  while (pos + 8 <= o->len) {
    uint64_t header;
    memcpy(&header, o->data + pos, 8);
    size_t size = (size_t)fxt_record_words(header) * 8;
    ASSERT_TRUE(header != 0 && size != 0 && size <= o->len - pos && (header & 0xf) != 0);
    pos += size;
  }
  ASSERT_EQ(pos, o->len);
}

int main(void) {
  enum { SIZE = 1u << 20 };
  static uint64_t words[SIZE / 8];
  uint8_t* buffer = (uint8_t*)words;
  trace_buffer_geometry_t g;
  ASSERT_EQ(buffer__compute_geometry(TRACE_BUFFERING_MODE_STREAMING, SIZE, &g), 0);
  trace_buffer_header_t* h = (trace_buffer_header_t*)buffer;
  uint8_t* seg = buffer + sizeof(*h) + g.durable_size;
  uint64_t rng = 0x9e3779b97f4a7c15u;
  size_t prefixed = 0;
  for (int round = 0; round < 400; round++) {
    buffer_header__init(h, TRACE_BUFFERING_MODE_STREAMING, SIZE, &g);
    fill(seg, g.rolling_size, g.chunk_size, &rng);
    out_t a = {0}, b = {0};
    buffer_scan_stats_t sa, sb;
    ASSERT_EQ(buffer_scan__save_runs(buffer, SIZE, 0, 0, 0, emit_run, &a, &sa), 0);
    ASSERT_EQ(buffer_scan__save_prefixes(buffer, SIZE, 0, 0, 0, emit_run, emit_prefix, &b, &sb), 0);
    if (a.len != b.len || (a.len && memcmp(a.data, b.data, a.len) != 0) || a.records != b.records ||
        a.rejected != b.rejected || sa.records != sb.records || sa.bytes != sb.bytes ||
        sa.bad_records != sb.bad_records) {
      fprintf(stderr,
              "round %d: runs %zu bytes %llu/%llu records %llu rejected %llu bad; "
              "prefixes %zu bytes %llu/%llu records %llu rejected %llu bad\n",
              round, a.len, (unsigned long long)a.records, (unsigned long long)sa.records,
              (unsigned long long)a.rejected, (unsigned long long)sa.bad_records, b.len,
              (unsigned long long)b.records, (unsigned long long)sb.records,
              (unsigned long long)b.rejected, (unsigned long long)sb.bad_records);
      ASSERT_TRUE(false);
    }
    ASSERT_TRUE(!a.overlap && !b.overlap);
    check_framed(&b);
    prefixed += b.len > 0;
    free(a.data);
    free(b.data);
    /* the same segment, written during the save */
    out_t c = {0};
    c.mutate = seg;
    c.mutate_len = g.rolling_size;
    c.rng = rng | 1;
    ASSERT_EQ(buffer_scan__save_prefixes(buffer, SIZE, 0, 0, 0, emit_run, emit_prefix, &c, &sb), 0);
    ASSERT_TRUE(!c.overlap);
    check_framed(&c);
    free(c.data);
  }
  ASSERT_TRUE(prefixed > 0);
  printf("400 random segments: prefixes and runs archived the same (%zu with data)\n", prefixed);
  return 0;
}
