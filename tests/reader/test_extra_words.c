/* Issue 19, point 1, in libtrace-reader: every record is measured against
 * its size field. Words past what the header describes (after the record's
 * contents, or inside an argument past its own) come with one warning per
 * record, trace_reader_warning(), naming the record's offset and how many
 * words were skipped; the record itself is returned, and reading goes on
 * after its size (FXT lets a reader skip what it does not understand). A
 * word after an instant's arguments is its scope only when it is 0, 1 or 2.
 * Damage found right after such a record also names it, and a record that
 * runs past the input is reported at its own offset, not the input's end.
 * For every record type with a body, a size one word too large warns. */
#include <string.h>

#include "fxt/fxt_buffer.h"
#include "fxt/fxt_encode.h"
#include "test.h"
#include "trace-reader/reader.h"

static void magic(fxt_buffer_t* b) { fxt_write_magic_record(fxt_buffer_reserve(b, 1)); }

/* An instant with one int32 argument "a" and its scope word; `extra`
 * words of `fill` after it, covered by its size field. Returns its offset. */
static size_t instant(fxt_buffer_t* b, size_t extra, uint64_t fill) {
  size_t at = b->count * 8;
  trace_thread_ref_t thread = trace_make_inline_thread_ref(1, 2);
  trace_string_ref_t cat = trace_make_inline_c_string_ref("c");
  trace_string_ref_t name = trace_make_inline_c_string_ref("n");
  trace_arg_t arg =
      trace_make_arg(trace_make_inline_c_string_ref("a"), trace_make_int32_arg_value(5));
  size_t words = fxt_event_record_words(FXT_EVENT_INSTANT, &thread, &cat, &name, &arg, 1);
  uint64_t* p = fxt_buffer_reserve(b, words + extra);
  uint64_t* end =
      fxt_write_event_record(p, words, FXT_EVENT_INSTANT, 7, &thread, &cat, &name, &arg, 1, 0);
  end[-1] = 2; /* the scope word: global */
  for (size_t i = 0; i < extra; i++) end[i] = fill;
  p[0] = (p[0] & ~FXT_FIELD(0xfff, 4, 15)) | FXT_FIELD(words + extra, 4, 15);
  return at;
}

static void expect_record(trace_reader_t* r, trace_record_t* rec) {
  int rc = trace_reader_next(r, rec);
  ASSERT_MSG(rc == TRACE_READ_RECORD, "result %d: %s", rc, trace_reader_error(r).message);
}

static void test_record_level(void) {
  fxt_buffer_t b = {0};
  magic(&b);
  size_t plain = instant(&b, 0, 0);
  size_t damaged = instant(&b, 3, UINT64_C(0x1234567890abcdef));
  size_t after = instant(&b, 0, 0);
  trace_reader_t* r = trace_reader_open_memory(b.words, b.count * 8, NULL);
  trace_record_t rec;
  trace_reader_error_t w;
  expect_record(r, &rec);
  ASSERT_TRUE(!trace_reader_warning(r, &w));
  expect_record(r, &rec);
  ASSERT_EQ(rec.offset, plain);
  ASSERT_TRUE(!trace_reader_warning(r, &w));
  ASSERT_TRUE(rec.event.has_scope && rec.event.scope == 2);
  expect_record(r, &rec);
  ASSERT_EQ(rec.offset, damaged);
  ASSERT_TRUE(trace_reader_warning(r, &w));
  ASSERT_EQ(w.offset, damaged);
  ASSERT_MSG(strstr(w.message, "3 words skipped") != NULL, "%s", w.message);
  ASSERT_TRUE(rec.event.has_scope && rec.event.scope == 2 && rec.event.args.count == 1);
  expect_record(r, &rec); /* read on after its size */
  ASSERT_EQ(rec.offset, after);
  ASSERT_TRUE(!trace_reader_warning(r, &w)); /* once per record */
  ASSERT_EQ(trace_reader_next(r, &rec), TRACE_READ_END);
  ASSERT_EQ(trace_reader_stats(r).records_skipped, 0);
  trace_reader_close(r);
  fxt_buffer_free(&b);
}

/* A word after the arguments that is not 0, 1 or 2 is no scope word. */
static void test_scope_word(void) {
  fxt_buffer_t b = {0};
  magic(&b);
  size_t at = instant(&b, 0, 0);
  ASSERT_EQ(at, 8);
  b.words[b.count - 1] = 7; /* the scope word */
  trace_reader_t* r = trace_reader_open_memory(b.words, b.count * 8, NULL);
  trace_record_t rec;
  trace_reader_error_t w;
  expect_record(r, &rec);
  expect_record(r, &rec);
  ASSERT_TRUE(!rec.event.has_scope && rec.event.scope == 0);
  ASSERT_TRUE(trace_reader_warning(r, &w) && strstr(w.message, "1 words skipped"));
  trace_reader_close(r);
  fxt_buffer_free(&b);
}

/* An argument whose size covers a word past its value. */
static void test_argument_level(void) {
  fxt_buffer_t b = {0};
  magic(&b);
  size_t at = b.count * 8;
  trace_thread_ref_t thread = trace_make_inline_thread_ref(1, 2);
  trace_string_ref_t cat = trace_make_inline_c_string_ref("c");
  trace_string_ref_t name = trace_make_inline_c_string_ref("n");
  trace_arg_t arg =
      trace_make_arg(trace_make_inline_c_string_ref("a"), trace_make_int64_arg_value(-5));
  size_t words = fxt_event_record_words(FXT_EVENT_COUNTER, &thread, &cat, &name, &arg, 1);
  uint64_t* p = fxt_buffer_reserve(&b, words + 1);
  fxt_write_event_record(p, words, FXT_EVENT_COUNTER, 7, &thread, &cat, &name, &arg, 1, 42);
  /* header, ticks, 2 thread words, cat, name; the argument: header, name, value; counter id */
  uint64_t* a = p + 6;
  p[words] = p[words - 1]; /* the counter id moves down a word */
  p[words - 1] = 0;        /* the argument's extra word */
  a[0] = (a[0] & ~FXT_FIELD(0xfff, 4, 15)) | FXT_FIELD(4, 4, 15);
  p[0] = (p[0] & ~FXT_FIELD(0xfff, 4, 15)) | FXT_FIELD(words + 1, 4, 15);
  trace_reader_t* r = trace_reader_open_memory(b.words, b.count * 8, NULL);
  trace_record_t rec;
  trace_reader_error_t w;
  expect_record(r, &rec);
  expect_record(r, &rec);
  ASSERT_EQ(rec.event.args.count, 1);
  ASSERT_EQ(rec.event.args.items[0].int64_value, -5);
  ASSERT_EQ(rec.event.payload, 42);
  ASSERT_TRUE(trace_reader_warning(r, &w));
  ASSERT_EQ(w.offset, at);
  ASSERT_MSG(strstr(w.message, "1 of them inside its arguments") != NULL, "%s", w.message);
  trace_reader_close(r);
  fxt_buffer_free(&b);
}

/* Damage right after a record with a size too large names that record. */
static void test_hint(void) {
  fxt_buffer_t b = {0};
  magic(&b);
  size_t damaged = instant(&b, 1, UINT64_C(0x1234567890abcdef)); /* not a scope */
  size_t zero = b.count * 8;
  *fxt_buffer_reserve(&b, 1) = 0; /* a zero header: fatal */
  instant(&b, 0, 0);
  trace_reader_t* r = trace_reader_open_memory(b.words, b.count * 8, NULL);
  trace_record_t rec;
  expect_record(r, &rec);
  expect_record(r, &rec);
  ASSERT_EQ(rec.offset, damaged);
  ASSERT_EQ(trace_reader_next(r, &rec), TRACE_READ_ERROR);
  trace_reader_error_t e = trace_reader_error(r);
  ASSERT_EQ(e.offset, zero);
  char want[64];
  snprintf(want, sizeof(want), "record at offset %zu before it", damaged);
  ASSERT_MSG(strstr(e.message, want) != NULL, "%s", e.message);
  trace_reader_close(r);
  fxt_buffer_free(&b);
}

/* Reads to the end; the error must name `offset` and say truncated. */
static void expect_truncated_at(const fxt_buffer_t* b, size_t offset) {
  trace_reader_t* r = trace_reader_open_memory(b->words, b->count * 8, NULL);
  trace_record_t rec;
  int rc;
  while ((rc = trace_reader_next(r, &rec)) == TRACE_READ_RECORD) {
  }
  ASSERT_EQ(rc, TRACE_READ_ERROR);
  ASSERT_MSG(trace_reader_error(r).offset == offset, "error at %llu, not %zu: %s",
             (unsigned long long)trace_reader_error(r).offset, offset,
             trace_reader_error(r).message);
  ASSERT_TRUE(trace_reader_truncated(r));
  trace_reader_close(r);
}

/* A record past the end of the input: the error names the record. */
static void test_past_end(void) {
  fxt_buffer_t b = {0};
  magic(&b);
  instant(&b, 0, 0);
  size_t last = instant(&b, 0, 0);
  b.words[last / 8] |= FXT_FIELD(0xfff, 4, 15);
  expect_truncated_at(&b, last);
  fxt_buffer_free(&b);
  /* a large record whose 32-bit size runs far past the end: skipped unread */
  magic(&b);
  instant(&b, 0, 0);
  size_t large = b.count * 8;
  *fxt_buffer_reserve(&b, 1) = 15 | (UINT64_C(1) << 30) << 4;
  instant(&b, 0, 0);
  expect_truncated_at(&b, large);
  fxt_buffer_free(&b);
}

int main(void) {
  test_record_level();
  test_scope_word();
  test_argument_level();
  test_hint();
  test_past_end();
  printf("ok\n");
  return 0;
}
