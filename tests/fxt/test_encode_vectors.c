/* Byte-exact vectors for the FXT encoder (src/fxt/fxt_encode.h).
 *
 * Every expected word below was computed by hand from the bit layouts in
 * FXT.md (§6, §8, §10), not by running the encoder; the comment next to each
 * header lists its fields as "bits: value". Stream words are written as
 * sw("text"): the text's bytes, zero-padded, in little-endian order (§1).
 * §12's worked examples are compared as raw bytes, exactly as printed there.
 *
 * Each writer call is also checked to return p + words, to agree with its
 * *_words() function, to zero the padding itself (the buffer is pre-filled
 * with a sentinel) and to write nothing past the record. */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fxt/fxt_encode.h"
#include "test.h"

#define SENTINEL UINT64_C(0xA5A5A5A5A5A5A5A5)

enum { BUF_WORDS = 64 };

typedef struct buf {
  uint64_t w[BUF_WORDS];
} buf_t;

static uint64_t* fresh(buf_t* b) {
  for (size_t i = 0; i < BUF_WORDS; i++) b->w[i] = SENTINEL;
  return b->w;
}

static uint64_t sw(const char* s) {
  uint64_t w = 0;
  memcpy(&w, s, strnlen(s, 8));
  return w;
}

static void expect_record(int line, const uint64_t* p, size_t words, const uint64_t* end,
                          const uint64_t* want, size_t n) {
  if (words != n) TEST_FAIL("line %d: *_words() says %zu, expected %zu", line, words, n);
  if (end != p + n) TEST_FAIL("line %d: writer returned p + %td, expected p + %zu", line, end - p, n);
  for (size_t i = 0; i < n; i++)
    if (p[i] != want[i])
      TEST_FAIL("line %d: word %zu is 0x%016" PRIx64 ", expected 0x%016" PRIx64, line, i, p[i],
                want[i]);
  if (n < BUF_WORDS && p[n] != SENTINEL) TEST_FAIL("line %d: wrote past the record", line);
}

/* EXPECT_WORDS(p, words, writer_call, expected words...) */
#define EXPECT_WORDS(p, words, end, ...)                                     \
  do {                                                                       \
    const uint64_t want_[] = {__VA_ARGS__};                                  \
    expect_record(__LINE__, (p), (words), (end), want_, sizeof want_ / 8u); \
  } while (0)

/* ---- §12 worked examples, byte for byte ---- */

static void test_12_1_magic(void) {
  static const uint8_t want[] = {0x10, 0x00, 0x04, 0x46, 0x78, 0x54, 0x16, 0x00};
  buf_t b;
  uint64_t* p = fresh(&b);
  ASSERT_TRUE(fxt_write_magic_record(p) == p + 1);
  ASSERT_BYTES_EQ(p, want, sizeof want);
  ASSERT_EQ(p[1], SENTINEL);
  ASSERT_EQ(FXT_MAGIC_RECORD, 0x0016547846040010);
}

static void test_12_2_initialization(void) {
  static const uint8_t want[] = {0x21, 0, 0, 0, 0, 0, 0, 0, 0x00, 0xca, 0x9a, 0x3b, 0, 0, 0, 0};
  buf_t b;
  uint64_t* p = fresh(&b);
  ASSERT_TRUE(fxt_write_initialization_record(p, 1000000000u) == p + 2);
  ASSERT_BYTES_EQ(p, want, sizeof want);
  ASSERT_EQ(p[2], SENTINEL);
}

static void test_12_3_inline_instant(void) {
  static const uint8_t want[] = {
      0x94, 0x00, 0x10, 0x00, 0x03, 0x80, 0x05, 0x80, /* header */
      0xe8, 0x03, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, /* timestamp = 1000 */
      0x34, 0x12, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, /* process koid */
      0x78, 0x56, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, /* thread koid */
      0x63, 0x61, 0x74, 0x00, 0x00, 0x00, 0x00, 0x00, /* "cat" */
      0x68, 0x65, 0x6c, 0x6c, 0x6f, 0x00, 0x00, 0x00, /* "hello" */
      0x21, 0x00, 0x01, 0x80, 0x2a, 0x00, 0x00, 0x00, /* int32 arg header */
      0x78, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, /* "x" */
      0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, /* scope = thread */
  };
  trace_thread_ref_t th = trace_make_inline_thread_ref(0x1234, 0x5678);
  trace_string_ref_t cat = trace_make_inline_c_string_ref("cat");
  trace_string_ref_t name = trace_make_inline_c_string_ref("hello");
  trace_arg_t arg = trace_make_arg(trace_make_inline_c_string_ref("x"),
                                   trace_make_int32_arg_value(42));
  buf_t b;
  uint64_t* p = fresh(&b);
  size_t n = fxt_event_record_words(FXT_EVENT_INSTANT, &th, &cat, &name, &arg, 1);
  ASSERT_EQ(n, 9);
  uint64_t* end = fxt_write_event_record(p, n, FXT_EVENT_INSTANT, 1000, &th, &cat, &name, &arg, 1,
                                         TRACE_SCOPE_THREAD);
  ASSERT_TRUE(end == p + 9);
  ASSERT_BYTES_EQ(p, want, sizeof want);
  ASSERT_EQ(p[0], 0x8005800300100094);
  ASSERT_EQ(p[6], 0x0000002A80010021);
  ASSERT_EQ(p[9], SENTINEL);
}

static void test_12_4_indexed_instant(void) {
  buf_t b;
  uint64_t* p = fresh(&b);
  EXPECT_WORDS(p, fxt_string_record_words(3), fxt_write_string_record(p, 1, "cat", 3),
               0x0000000300010022, sw("cat"));
  static const uint8_t string_bytes[] = {0x22, 0, 0x01, 0, 0x03, 0, 0, 0,
                                         0x63, 0x61, 0x74, 0, 0, 0, 0, 0};
  ASSERT_BYTES_EQ(p, string_bytes, sizeof string_bytes);
  p = fresh(&b);
  EXPECT_WORDS(p, 3, fxt_write_thread_record(p, 1, 0x1234, 0x5678), 0x0000000000010033, 0x1234,
               0x5678);

  trace_thread_ref_t th = trace_make_indexed_thread_ref(1);
  trace_string_ref_t cat = trace_make_indexed_string_ref(1);
  trace_string_ref_t name = trace_make_indexed_string_ref(2);
  trace_arg_t arg = trace_make_arg(trace_make_indexed_string_ref(3),
                                   trace_make_int32_arg_value(42));
  size_t n = fxt_event_record_words(FXT_EVENT_INSTANT, &th, &cat, &name, &arg, 1);
  p = fresh(&b);
  EXPECT_WORDS(p, n,
               fxt_write_event_record(p, n, FXT_EVENT_INSTANT, 1000, &th, &cat, &name, &arg, 1,
                                      TRACE_SCOPE_THREAD),
               0x0002000101100044, 1000, 0x0000002A00030011, 0);
  static const uint8_t header_bytes[] = {0x44, 0x00, 0x10, 0x01, 0x01, 0x00, 0x02, 0x00};
  ASSERT_BYTES_EQ(p, header_bytes, sizeof header_bytes);
}

static void test_12_5_single_words(void) {
  buf_t b;
  uint64_t* p = fresh(&b);
  EXPECT_WORDS(p, fxt_provider_info_words(0), fxt_write_provider_info_record(p, 1, "", 0),
               0x0000000000110010);
  p = fresh(&b);
  EXPECT_WORDS(p, fxt_provider_info_words(3), fxt_write_provider_info_record(p, 1, "foo", 3),
               0x0030000000110020, sw("foo"));
  p = fresh(&b);
  EXPECT_WORDS(p, 1, fxt_write_provider_section_record(p, 1), 0x0000000000120010);
  p = fresh(&b);
  EXPECT_WORDS(p, 1, fxt_write_provider_event_record(p, 1, FXT_PROVIDER_EVENT_BUFFER_OVERFLOW),
               0x0000000000130010);
  trace_arg_t b_true = trace_make_arg(trace_make_indexed_string_ref(1),
                                      trace_make_bool_arg_value(true));
  p = fresh(&b);
  EXPECT_WORDS(p, fxt_arg_words(&b_true), fxt_put_arg(p, &b_true), 0x0000000100010019);
  trace_arg_t minus_one = trace_make_arg(trace_make_indexed_string_ref(1),
                                         trace_make_int32_arg_value(-1));
  p = fresh(&b);
  EXPECT_WORDS(p, fxt_arg_words(&minus_one), fxt_put_arg(p, &minus_one), 0xFFFFFFFF00010011);
}

/* ---- metadata, initialization, string, thread ---- */

static void test_metadata(void) {
  buf_t b;
  uint64_t* p = fresh(&b);
  /* 0..3: 0, 4..15: size 2, 16..19: 1, 20..51: id 0x2a, 52..59: length 8;
   * an 8-byte name needs no padding */
  EXPECT_WORDS(p, fxt_provider_info_words(8), fxt_write_provider_info_record(p, 0x2a, "provider", 8),
               0x0080000002A10020, sw("provider"));
  p = fresh(&b);
  /* id 0xdeadbeef fills all 32 bits of 20..51; length 2 at 52..59 */
  EXPECT_WORDS(p, fxt_provider_info_words(2), fxt_write_provider_info_record(p, 0xdeadbeef, "ab", 2),
               0x002DEADBEEF10020, sw("ab"));
  p = fresh(&b);
  /* 16..19: 2 (section), 20..51: id 7 */
  EXPECT_WORDS(p, 1, fxt_write_provider_section_record(p, 7), 0x0000000000720010);
  p = fresh(&b);
  /* 16..19: 3 (event), 20..51: id 3, 52..55: event id 5 */
  EXPECT_WORDS(p, 1, fxt_write_provider_event_record(p, 3, 5), 0x0050000000330010);
  p = fresh(&b);
  EXPECT_WORDS(p, 1, fxt_write_magic_record(p), 0x0016547846040010);
}

static void test_provider_name_truncated(void) {
  char name[300];
  memset(name, 'n', sizeof name);
  static uint64_t big[40];
  for (size_t i = 0; i < 40; i++) big[i] = SENTINEL;
  /* 255 bytes -> 32 stream words; length field 0xff at 52..59, size 33 */
  ASSERT_EQ(fxt_provider_info_words(sizeof name), 33);
  ASSERT_TRUE(fxt_write_provider_info_record(big, 1, name, sizeof name) == big + 33);
  ASSERT_EQ(big[0], 0x0FF0000000110210);
  ASSERT_EQ(big[32], 0x006E6E6E6E6E6E6E); /* 7 bytes of 'n', one pad byte */
  ASSERT_EQ(big[33], SENTINEL);
}

static void test_initialization_string_thread(void) {
  buf_t b;
  uint64_t* p = fresh(&b);
  /* type 1, size 2; 19.2 MHz */
  EXPECT_WORDS(p, 2, fxt_write_initialization_record(p, 19200000), 0x0000000000000021, 19200000);
  p = fresh(&b);
  /* type 2, size 3, 16..30: index 0x7fff, 32..46: length 12 */
  EXPECT_WORDS(p, fxt_string_record_words(12), fxt_write_string_record(p, 0x7fff, "hello world!", 12),
               0x0000000C7FFF0032, sw("hello wo"), sw("rld!"));
  p = fresh(&b);
  /* type 3, size 3, 16..23: index 0xff */
  EXPECT_WORDS(p, 3, fxt_write_thread_record(p, 0xff, 0x1111, 0x2222), 0x0000000000FF0033, 0x1111,
               0x2222);
}

/* ---- arguments (§10), one at a time ---- */

static void expect_arg(int line, trace_arg_t arg, const uint64_t* want, size_t n) {
  buf_t b;
  uint64_t* p = fresh(&b);
  expect_record(line, p, fxt_arg_words(&arg), fxt_put_arg(p, &arg), want, n);
}

#define EXPECT_ARG(name, value, ...)                                                    \
  do {                                                                                  \
    const uint64_t want_[] = {__VA_ARGS__};                                             \
    expect_arg(__LINE__, trace_make_arg((name), (value)), want_, sizeof want_ / 8u);    \
  } while (0)

static trace_string_ref_t idx(trace_string_index_t i) { return trace_make_indexed_string_ref(i); }
static trace_string_ref_t lit(const char* s) { return trace_make_inline_c_string_ref(s); }

static void test_args_scalar(void) {
  /* null: type 0, size 1, name 3 at 16..31 */
  EXPECT_ARG(idx(3), trace_make_null_arg_value(), 0x0000000000030010);
  /* null, inline name: size 2, name 0x8003 */
  EXPECT_ARG(lit("nil"), trace_make_null_arg_value(), 0x0000000080030020, sw("nil"));
  /* int32 -5 in 32..63 as two's complement */
  EXPECT_ARG(idx(3), trace_make_int32_arg_value(-5), 0xFFFFFFFB00030011);
  EXPECT_ARG(idx(3), trace_make_int32_arg_value(INT32_MIN), 0x8000000000030011);
  /* uint32: type 2 */
  EXPECT_ARG(idx(3), trace_make_uint32_arg_value(0xFEEDFACE), 0xFEEDFACE00030012);
  /* bool: type 9, only bit 32 */
  EXPECT_ARG(idx(3), trace_make_bool_arg_value(true), 0x0000000100030019);
  EXPECT_ARG(idx(3), trace_make_bool_arg_value(false), 0x0000000000030019);
  EXPECT_ARG(lit("flag"), trace_make_bool_arg_value(true), 0x0000000180040029, sw("flag"));
}

static void test_args_word_values(void) {
  /* int64: type 3, size 2, value word after the header */
  EXPECT_ARG(idx(3), trace_make_int64_arg_value(-2), 0x0000000000030023, 0xFFFFFFFFFFFFFFFE);
  /* uint64, inline name: type 4, size 3; name stream comes before the value */
  EXPECT_ARG(lit("u64"), trace_make_uint64_arg_value(0x0123456789ABCDEF), 0x0000000080030034,
             sw("u64"), 0x0123456789ABCDEF);
  /* double: type 5, IEEE-754 binary64 bits */
  EXPECT_ARG(idx(3), trace_make_double_arg_value(1.5), 0x0000000000030025, 0x3FF8000000000000);
  EXPECT_ARG(idx(3), trace_make_double_arg_value(-0.1), 0x0000000000030025, 0xBFB999999999999A);
  /* pointer: type 7 */
  EXPECT_ARG(idx(3), trace_make_pointer_arg_value(0xDEADBEEF), 0x0000000000030027, 0xDEADBEEF);
  /* koid: type 8, inline name "process" (7 bytes, 1 word) */
  EXPECT_ARG(lit("process"), trace_make_koid_arg_value(0x1234), 0x0000000080070038, sw("process"),
             0x1234);
}

static void test_args_string_and_blob(void) {
  /* string: type 6, size 1, value ref 4 at 32..47 */
  EXPECT_ARG(idx(3), trace_make_string_arg_value(idx(4)), 0x0000000400030016);
  /* inline name 0x8001 and inline value 0x8005: size 3, name stream first */
  EXPECT_ARG(lit("s"), trace_make_string_arg_value(lit("value")), 0x0000800580010036, sw("s"),
             sw("value"));
  /* a 9-byte inline value takes 2 words */
  EXPECT_ARG(idx(3), trace_make_string_arg_value(lit("123456789")), 0x0000800900030036,
             sw("12345678"), sw("9"));
  /* empty value: ref 0, no stream */
  EXPECT_ARG(idx(3), trace_make_string_arg_value(trace_make_empty_string_ref()),
             0x0000000000030016);
  /* blob: type 10, size 3, 32..63: 11 bytes, zero-padded stream */
  EXPECT_ARG(idx(3), trace_make_blob_arg_value("hello blob!", 11), 0x0000000B0003003A,
             sw("hello bl"), sw("ob!"));
  /* blob, inline name: header, name stream, then the payload */
  EXPECT_ARG(lit("bb"), trace_make_blob_arg_value("12345678", 8), 0x000000088002003A, sw("bb"),
             sw("12345678"));
}

/* ---- events (§8.5): every event type, and arguments inside a record ---- */

/* Header of the event used below: thread ref 1 (24..31), category ref 1
 * (32..47), name ref 2 (48..63), no arguments. */
static uint64_t event_header(unsigned size, unsigned event_type) {
  return UINT64_C(0x0002000101000004) | (uint64_t)size << 4 | (uint64_t)event_type << 16;
}

static size_t write_event(uint64_t* p, unsigned event_type, uint64_t payload, uint64_t** end) {
  trace_thread_ref_t th = trace_make_indexed_thread_ref(1);
  trace_string_ref_t cat = idx(1), name = idx(2);
  size_t n = fxt_event_record_words(event_type, &th, &cat, &name, NULL, 0);
  *end = fxt_write_event_record(p, n, event_type, 0x100, &th, &cat, &name, NULL, 0, payload);
  return n;
}

static void test_event_types(void) {
  static const struct {
    unsigned type;
    uint64_t header; /* written out in full, not via event_header() */
    bool has_payload;
  } cases[] = {
      {FXT_EVENT_INSTANT, 0x0002000101000034, true},           /* scope word */
      {FXT_EVENT_COUNTER, 0x0002000101010034, true},           /* counter id */
      {FXT_EVENT_DURATION_BEGIN, 0x0002000101020024, false},   /* no payload */
      {FXT_EVENT_DURATION_END, 0x0002000101030024, false},     /* no payload */
      {FXT_EVENT_DURATION_COMPLETE, 0x0002000101040034, true}, /* end time */
      {FXT_EVENT_ASYNC_BEGIN, 0x0002000101050034, true},       /* async id */
      {FXT_EVENT_ASYNC_INSTANT, 0x0002000101060034, true},
      {FXT_EVENT_ASYNC_END, 0x0002000101070034, true},
      {FXT_EVENT_FLOW_BEGIN, 0x0002000101080034, true},        /* flow id */
      {FXT_EVENT_FLOW_STEP, 0x0002000101090034, true},
      {FXT_EVENT_FLOW_END, 0x00020001010A0034, true},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    buf_t b;
    uint64_t* p = fresh(&b);
    uint64_t* end;
    uint64_t payload = cases[i].type == FXT_EVENT_INSTANT ? TRACE_SCOPE_GLOBAL : 0xA0 + i;
    size_t n = write_event(p, cases[i].type, payload, &end);
    ASSERT_EQ(cases[i].header, event_header(cases[i].has_payload ? 3 : 2, cases[i].type));
    if (cases[i].has_payload)
      EXPECT_WORDS(p, n, end, cases[i].header, 0x100, payload);
    else
      EXPECT_WORDS(p, n, end, cases[i].header, 0x100);
  }
}

static void test_event_inline_thread(void) {
  trace_thread_ref_t th = trace_make_inline_thread_ref(0x10, 0x20);
  trace_string_ref_t cat = idx(1), name = idx(2);
  buf_t b;
  uint64_t* p = fresh(&b);
  size_t n = fxt_event_record_words(FXT_EVENT_DURATION_COMPLETE, &th, &cat, &name, NULL, 0);
  /* size 5 (header, ts, pid, tid, end time), type 4, thread ref 0 */
  EXPECT_WORDS(p, n,
               fxt_write_event_record(p, n, FXT_EVENT_DURATION_COMPLETE, 0x100, &th, &cat, &name,
                                      NULL, 0, 0x200),
               0x0002000100040054, 0x100, 0x10, 0x20, 0x200);
}

static void test_event_with_args(void) {
  trace_thread_ref_t th = trace_make_indexed_thread_ref(2);
  trace_string_ref_t cat = lit("c"), name = idx(5);
  trace_arg_t args[] = {
      trace_make_arg(lit("a"), trace_make_int32_arg_value(-1)),
      trace_make_arg(idx(3), trace_make_double_arg_value(1.5)),
      trace_make_arg(idx(3), trace_make_string_arg_value(lit("v"))),
  };
  buf_t b;
  uint64_t* p = fresh(&b);
  size_t n = fxt_event_record_words(FXT_EVENT_COUNTER, &th, &cat, &name, args, 3);
  EXPECT_WORDS(p, n,
               fxt_write_event_record(p, n, FXT_EVENT_COUNTER, 0x1000, &th, &cat, &name, args, 3,
                                      0x77),
               /* 0..3: 4, 4..15: size 10, 16..19: counter, 20..23: 3 args,
                * 24..31: thread 2, 32..47: cat 0x8001, 48..63: name 5 */
               0x00058001023100A4, 0x1000, sw("c"),
               0xFFFFFFFF80010021, sw("a"),          /* int32 -1, inline name */
               0x0000000000030025, 0x3FF8000000000000, /* double 1.5 */
               0x0000800100030026, sw("v"),          /* string, inline value */
               0x77);                                /* counter id */
}

/* ---- blob, userspace object, kernel object ---- */

static void test_blob(void) {
  buf_t b;
  uint64_t* p = fresh(&b);
  trace_string_ref_t name = idx(6);
  size_t n = fxt_blob_record_words(&name, 10);
  /* type 5, size 3, 16..31: name 6, 32..46: 10 bytes, 48..55: type 1 (data) */
  EXPECT_WORDS(p, n, fxt_write_blob_record(p, n, TRACE_BLOB_TYPE_DATA, &name, "0123456789", 10),
               0x0001000A00060035, sw("01234567"), sw("89"));
  p = fresh(&b);
  name = lit("lbr");
  n = fxt_blob_record_words(&name, 8);
  /* name 0x8003 inline, 8 bytes, type 2 (last branch) */
  EXPECT_WORDS(p, n,
               fxt_write_blob_record(p, n, TRACE_BLOB_TYPE_LAST_BRANCH, &name, "ABCDEFGH", 8),
               0x0002000880030035, sw("lbr"), sw("ABCDEFGH"));
}

static void test_userspace_object(void) {
  trace_thread_ref_t proc = trace_make_inline_thread_ref(1234, 999);
  trace_string_ref_t name = lit("obj");
  trace_arg_t arg = trace_make_arg(idx(3), trace_make_uint32_arg_value(9));
  buf_t b;
  uint64_t* p = fresh(&b);
  size_t n = fxt_userspace_object_record_words(&proc, &name, &arg, 1);
  /* type 6, size 5, 16..23: process ref 0, 24..39: name 0x8003, 40..43: 1 arg;
   * an inline process adds ONE word, the process koid (never the tid) */
  EXPECT_WORDS(p, n, fxt_write_userspace_object_record(p, n, 0xCAFEF00D, &proc, &name, &arg, 1),
               0x0000018003000056, 0xCAFEF00D, 1234, sw("obj"), 0x0000000900030012);
  proc = trace_make_indexed_thread_ref(5);
  name = idx(7);
  p = fresh(&b);
  n = fxt_userspace_object_record_words(&proc, &name, NULL, 0);
  /* size 2, process ref 5, name 7 */
  EXPECT_WORDS(p, n, fxt_write_userspace_object_record(p, n, 0x1000, &proc, &name, NULL, 0),
               0x0000000007050026, 0x1000);
}

static void test_kernel_object(void) {
  trace_string_ref_t name = lit("main");
  trace_arg_t arg = trace_make_arg(lit("process"), trace_make_koid_arg_value(0x1234));
  buf_t b;
  uint64_t* p = fresh(&b);
  size_t n = fxt_kernel_object_record_words(&name, &arg, 1);
  /* type 7, size 6, 16..23: thread (2), 24..39: name 0x8004, 40..43: 1 arg */
  EXPECT_WORDS(p, n,
               fxt_write_kernel_object_record(p, n, 0x5678, FXT_KOBJ_THREAD, &name, &arg, 1),
               0x0000018004020067, 0x5678, sw("main"), 0x0000000080070038, sw("process"), 0x1234);
  name = idx(9);
  p = fresh(&b);
  n = fxt_kernel_object_record_words(&name, NULL, 0);
  /* size 2, process (1), name 9 */
  EXPECT_WORDS(p, n, fxt_write_kernel_object_record(p, n, 0x1234, FXT_KOBJ_PROCESS, &name, NULL, 0),
               0x0000000009010027, 0x1234);
}

/* ---- scheduling (§8.9) ---- */

static void test_legacy_context_switch(void) {
  trace_thread_ref_t out = trace_make_indexed_thread_ref(1);
  trace_thread_ref_t in = trace_make_inline_thread_ref(0x10, 0x11);
  buf_t b;
  uint64_t* p = fresh(&b);
  size_t n = fxt_legacy_context_switch_record_words(&out, &in);
  /* type 8, size 4, 16..23: cpu 3, 24..27: state 3, 28..35: out ref 1,
   * 36..43: in ref 0, 44..51: prio 0x14, 52..59: prio 0x1f, 60..63: 0 */
  EXPECT_WORDS(p, n,
               fxt_write_legacy_context_switch_record(p, n, 0x999, 3, FXT_THREAD_BLOCKED, &out,
                                                      &in, 0x14, 0x1f),
               0x01F1400013030048, 0x999, 0x10, 0x11);
  out = trace_make_inline_thread_ref(0x20, 0x21);
  in = trace_make_indexed_thread_ref(0xab);
  p = fresh(&b);
  n = fxt_legacy_context_switch_record_words(&out, &in);
  /* cpu 0xff, state 5, out ref 0 (inline), in ref 0xab, priorities 0 */
  EXPECT_WORDS(p, n,
               fxt_write_legacy_context_switch_record(p, n, 0x999, 0xff, FXT_THREAD_DEAD, &out,
                                                      &in, 0, 0),
               0x00000AB005FF0048, 0x999, 0x20, 0x21);
}

static void test_context_switch_and_wakeup(void) {
  trace_arg_t weight = trace_make_arg(lit("incoming_weight"), trace_make_int32_arg_value(7));
  buf_t b;
  uint64_t* p = fresh(&b);
  size_t n = fxt_context_switch_record_words(&weight, 1);
  /* type 8, size 7, 16..19: 1 arg, 20..35: cpu 0x1234, 36..39: state 2,
   * 60..63: sub-type 1 */
  EXPECT_WORDS(p, n,
               fxt_write_context_switch_record(p, n, 0x999, 0x1234, FXT_THREAD_SUSPENDED, 0x100,
                                               0x200, &weight, 1),
               0x1000002123410078, 0x999, 0x100, 0x200,
               0x00000007800F0031, sw("incoming"), sw("_weight")); /* int32, 15-byte name */
  trace_arg_t w = trace_make_arg(idx(3), trace_make_int32_arg_value(100));
  p = fresh(&b);
  n = fxt_thread_wakeup_record_words(&w, 1);
  /* type 8, size 4, 16..19: 1 arg, 20..35: cpu 7, 60..63: sub-type 2 */
  EXPECT_WORDS(p, n, fxt_write_thread_wakeup_record(p, n, 0x999, 7, 0x300, &w, 1),
               0x2000000000710048, 0x999, 0x300, 0x0000006400030011);
}

/* ---- log (§8.10) ---- */

static void test_log(void) {
  trace_thread_ref_t th = trace_make_inline_thread_ref(0x10, 0x11);
  buf_t b;
  uint64_t* p = fresh(&b);
  size_t n = fxt_log_record_words(&th, 9);
  /* type 9, size 6, 16..30: length 9, 32..39: thread ref 0 */
  EXPECT_WORDS(p, n, fxt_write_log_record(p, n, 0x55, &th, "hello log", 9), 0x0000000000090069,
               0x55, 0x10, 0x11, sw("hello lo"), sw("g"));
  th = trace_make_indexed_thread_ref(0x42);
  p = fresh(&b);
  n = fxt_log_record_words(&th, 1);
  /* size 3, length 1, thread ref 0x42 */
  EXPECT_WORDS(p, n, fxt_write_log_record(p, n, 0x55, &th, "x", 1), 0x0000004200010039, 0x55,
               sw("x"));
}

/* ---- large blob (§8.11) ---- */

static void test_large_blob_event(void) {
  trace_string_ref_t cat = idx(1), name = lit("blob");
  trace_thread_ref_t th = trace_make_inline_thread_ref(0x10, 0x11);
  trace_arg_t arg = trace_make_arg(idx(3), trace_make_bool_arg_value(true));
  buf_t b;
  uint64_t* p = fresh(&b);
  size_t n = fxt_large_blob_event_record_words(&cat, &name, &th, &arg, 1, 12);
  EXPECT_WORDS(p, n,
               fxt_write_large_blob_event_record(p, n, &cat, &name, 0x999, &th, &arg, 1,
                                                 "0123456789AB", 12),
               /* type 15, 4..35: size 10, 36..39: large type 0, 40..43: format 0 */
               0x00000000000000AF,
               /* 0..15: cat 1, 16..31: name 0x8004, 32..35: 1 arg, 36..43: thread 0 */
               0x0000000180040001, sw("blob"),
               0x999, 0x10, 0x11,  /* timestamp after the strings, then pid, tid */
               0x0000000100030019, /* bool arg */
               12, sw("01234567"), sw("89AB"));
  cat = lit("c");
  name = idx(2);
  th = trace_make_indexed_thread_ref(0xc3);
  p = fresh(&b);
  n = fxt_large_blob_event_record_words(&cat, &name, &th, NULL, 0, 1);
  EXPECT_WORDS(p, n,
               fxt_write_large_blob_event_record(p, n, &cat, &name, 5, &th, NULL, 0, "z", 1),
               0x000000000000006F,                 /* size 6, format 0 */
               0x00000C3000028001, sw("c"),        /* cat 0x8001, name 2, thread 0xc3 */
               5, 1, sw("z"));
}

static void test_large_blob_attachment(void) {
  trace_string_ref_t cat = idx(1), name = lit("file.txt");
  buf_t b;
  uint64_t* p = fresh(&b);
  size_t n = fxt_large_blob_attachment_record_words(&cat, &name, 3);
  /* type 15, size 5, 40..43: format 1; format header: cat 1, name 0x8008 */
  EXPECT_WORDS(p, n, fxt_write_large_blob_attachment_record(p, n, &cat, &name, "abc", 3),
               0x000001000000005F, 0x0000000080080001, sw("file.txt"), 3, sw("abc"));
}

/* A record bigger than the 12-bit size field allows: the large header's
 * 32-bit size must carry it. */
static void test_large_blob_over_4095_words(void) {
  enum { SIZE = 40000, WORDS = 3 + 1 + SIZE / 8 }; /* 5004 = 0x138c */
  char* data = malloc(SIZE);
  uint64_t* p = malloc((WORDS + 1) * sizeof(uint64_t));
  ASSERT_TRUE(data && p);
  for (size_t i = 0; i < SIZE; i++) data[i] = (char)(i * 7u);
  for (size_t i = 0; i <= WORDS; i++) p[i] = SENTINEL;
  trace_string_ref_t cat = lit("att"), name = idx(2);
  size_t n = fxt_large_blob_attachment_record_words(&cat, &name, SIZE);
  ASSERT_EQ(n, WORDS);
  ASSERT_TRUE(fxt_write_large_blob_attachment_record(p, n, &cat, &name, data, SIZE) == p + WORDS);
  ASSERT_EQ(p[0], 0x00000100000138CF); /* 4..35: 0x138c, 40..43: format 1 */
  ASSERT_EQ(p[1], 0x0000000000028003); /* cat 0x8003, name 2 */
  ASSERT_EQ(p[2], sw("att"));
  ASSERT_EQ(p[3], SIZE);
  ASSERT_BYTES_EQ(p + 4, data, SIZE);
  ASSERT_EQ(p[WORDS], SENTINEL);
  free(p);
  free(data);
}

int main(void) {
  test_12_1_magic();
  test_12_2_initialization();
  test_12_3_inline_instant();
  test_12_4_indexed_instant();
  test_12_5_single_words();
  test_metadata();
  test_provider_name_truncated();
  test_initialization_string_thread();
  test_args_scalar();
  test_args_word_values();
  test_args_string_and_blob();
  test_event_types();
  test_event_inline_thread();
  test_event_with_args();
  test_blob();
  test_userspace_object();
  test_kernel_object();
  test_legacy_context_switch();
  test_context_switch_and_wakeup();
  test_log();
  test_large_blob_event();
  test_large_blob_attachment();
  test_large_blob_over_4095_words();
  puts("test_encode_vectors: ok");
  return 0;
}
