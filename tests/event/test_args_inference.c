/* C11 argument inference (<trace/event.h>, docs/instrumentation.md): for
 * every supported C type, the plain value and its TA_* form build identical
 * trace_arg_t arrays, through the same macro the event macros expand to
 * (TRACE_INTERNAL_EVENT_ARGS); and each type gets the FXT argument type the
 * table promises. Also: which strings are interned (literals only), and that
 * each argument expression is evaluated exactly once. No engine needed. */
#include <limits.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include "test.h"
#include "trace/event.h"

typedef struct captured {
  size_t count;
  trace_arg_t args[TRACE_MAX_ARGS];
} captured_t;

/* Receives the (args, num_args) pair exactly as a write helper would. */
static captured_t capture(trace_arg_t* args, size_t num_args) {
  captured_t c;
  memset(&c, 0, sizeof(c));
  c.count = num_args;
  for (size_t i = 0; i < num_args; i++) c.args[i] = args[i];
  return c;
}

#define BUILD(...) capture(TRACE_INTERNAL_EVENT_ARGS(_, ##__VA_ARGS__))

/* Same type and the same bytes in the member the type selects (the rest
 * of the union and the padding inside a string ref are unspecified); for a
 * string, the same ref: encoding, and the same pointer (inline) or the same
 * literal text (unregistered literal). Same name. */
static bool same_value(const trace_arg_value_t* a, const trace_arg_value_t* b) {
  if (a->type != b->type) return false;
  switch (a->type) {
    case TRACE_ARG_NULL: return true;
    case TRACE_ARG_INT32: return a->int32_value == b->int32_value;
    case TRACE_ARG_UINT32: return a->uint32_value == b->uint32_value;
    case TRACE_ARG_INT64: return a->int64_value == b->int64_value;
    case TRACE_ARG_UINT64: return a->uint64_value == b->uint64_value;
    case TRACE_ARG_DOUBLE: return memcmp(&a->double_value, &b->double_value, sizeof(double)) == 0;
    case TRACE_ARG_POINTER: return a->pointer_value == b->pointer_value;
    case TRACE_ARG_KOID: return a->koid_value == b->koid_value;
    case TRACE_ARG_BOOL: return a->bool_value == b->bool_value;
    case TRACE_ARG_STRING: {
      const trace_string_ref_t *x = &a->string_value_ref, *y = &b->string_value_ref;
      if (x->encoded_value != y->encoded_value) return false;
      if (x->encoded_value != 0 || x->inline_string == NULL || y->inline_string == NULL)
        return x->inline_string == y->inline_string;
      return strcmp(x->inline_string, y->inline_string) == 0; /* two copies of a literal */
    }
    default: return false;
  }
}

static void assert_same_arg(const trace_arg_t* a, const trace_arg_t* b, int line) {
  if (a->value.type != b->value.type)
    TEST_FAIL("line %d: types differ: %d vs %d", line, (int)a->value.type, (int)b->value.type);
  if (!same_value(&a->value, &b->value))
    TEST_FAIL("line %d: values differ (type %d)", line, (int)a->value.type);
  if (a->name_ref.encoded_value != b->name_ref.encoded_value ||
      strcmp(a->name_ref.inline_string, b->name_ref.inline_string) != 0)
    TEST_FAIL("line %d: names differ", line);
}

/* The inferred value of `value`, the explicit form `ta`, and the expected
 * FXT type: one argument each, compared byte for byte. */
#define CHECK(plain, ta, expected_type)                                  \
  do {                                                                   \
    captured_t inferred_ = BUILD("v", plain);                            \
    captured_t explicit_ = BUILD("v", ta);                               \
    ASSERT_EQ(inferred_.count, 1u);                                      \
    ASSERT_EQ(explicit_.count, 1u);                                      \
    ASSERT_EQ(inferred_.args[0].value.type, (expected_type));            \
    assert_same_arg(&inferred_.args[0], &explicit_.args[0], __LINE__);   \
    ASSERT_EQ(inferred_.args[0].name_ref.encoded_value, 0u);             \
    ASSERT_STREQ(inferred_.args[0].name_ref.inline_string, "v");         \
  } while (0)

static void test_integers(void) {
  int8_t i8 = INT8_MIN;
  int16_t i16 = INT16_MIN;
  int32_t i32 = INT32_MIN;
  int64_t i64 = INT64_MIN;
  uint8_t u8 = UINT8_MAX;
  uint16_t u16 = UINT16_MAX;
  uint32_t u32 = UINT32_MAX;
  uint64_t u64 = UINT64_MAX;
  signed char sc = -5;
  unsigned char uc = 250;
  short s = -300;
  unsigned short us = 60000;
  int i = -70000;
  unsigned u = 4000000000u;
  long l = LONG_MIN;
  unsigned long ul = ULONG_MAX;
  long long ll = LLONG_MIN;
  unsigned long long ull = ULLONG_MAX;
  size_t sz = SIZE_MAX;
  ptrdiff_t pd = PTRDIFF_MIN;
  CHECK(i8, TA_INT32(i8), TRACE_ARG_INT32);
  CHECK(i16, TA_INT32(i16), TRACE_ARG_INT32);
  CHECK(i32, TA_INT32(i32), TRACE_ARG_INT32);
  CHECK(i64, TA_INT64(i64), TRACE_ARG_INT64);
  CHECK(u8, TA_UINT32(u8), TRACE_ARG_UINT32);
  CHECK(u16, TA_UINT32(u16), TRACE_ARG_UINT32);
  CHECK(u32, TA_UINT32(u32), TRACE_ARG_UINT32);
  CHECK(u64, TA_UINT64(u64), TRACE_ARG_UINT64);
  CHECK(sc, TA_INT32(sc), TRACE_ARG_INT32);
  CHECK(uc, TA_UINT32(uc), TRACE_ARG_UINT32);
  CHECK(s, TA_INT32(s), TRACE_ARG_INT32);
  CHECK(us, TA_UINT32(us), TRACE_ARG_UINT32);
  CHECK(i, TA_INT32(i), TRACE_ARG_INT32);
  CHECK(u, TA_UINT32(u), TRACE_ARG_UINT32);
  CHECK(ll, TA_INT64(ll), TRACE_ARG_INT64);
  CHECK(ull, TA_UINT64(ull), TRACE_ARG_UINT64);
  /* long, size_t and ptrdiff_t by their width (LP64: 64 bits) */
  if (sizeof(long) == 8) {
    CHECK(l, TA_INT64(l), TRACE_ARG_INT64);
    CHECK(ul, TA_UINT64(ul), TRACE_ARG_UINT64);
  } else {
    CHECK(l, TA_INT32(l), TRACE_ARG_INT32);
    CHECK(ul, TA_UINT32(ul), TRACE_ARG_UINT32);
  }
  if (sizeof(size_t) == 8) {
    CHECK(sz, TA_UINT64(sz), TRACE_ARG_UINT64);
    CHECK(pd, TA_INT64(pd), TRACE_ARG_INT64);
  } else {
    CHECK(sz, TA_UINT32(sz), TRACE_ARG_UINT32);
    CHECK(pd, TA_INT32(pd), TRACE_ARG_INT32);
  }
  /* the values survive: spot checks of the widest and narrowest */
  ASSERT_EQ(BUILD("v", i64).args[0].value.int64_value, INT64_MIN);
  ASSERT_EQ(BUILD("v", u64).args[0].value.uint64_value, UINT64_MAX);
  ASSERT_EQ(BUILD("v", i8).args[0].value.int32_value, -128);
  ASSERT_EQ(BUILD("v", uc).args[0].value.uint32_value, 250u);
  /* plain char follows the platform's signedness */
  char c = (char)-56;
  if (CHAR_MIN < 0) {
    CHECK(c, TA_INT32(c), TRACE_ARG_INT32);
    ASSERT_EQ(BUILD("v", c).args[0].value.int32_value, -56);
  } else {
    CHECK(c, TA_UINT32(c), TRACE_ARG_UINT32);
    ASSERT_EQ(BUILD("v", c).args[0].value.uint32_value, 200u);
  }
  /* integer constants: int, unsigned, long, unsigned long (LP64) */
  CHECK(77, TA_INT32(77), TRACE_ARG_INT32);
  CHECK(77u, TA_UINT32(77u), TRACE_ARG_UINT32);
  CHECK(77ll, TA_INT64(77), TRACE_ARG_INT64);
  CHECK(77ull, TA_UINT64(77), TRACE_ARG_UINT64);
  /* const and volatile objects: lvalue conversion drops the qualifiers */
  const int ci = 9;
  volatile unsigned long long vu = 10;
  CHECK(ci, TA_INT32(9), TRACE_ARG_INT32);
  CHECK(vu, TA_UINT64(10), TRACE_ARG_UINT64);
}

enum small_enum { SMALL_A, SMALL_B = 7 };
enum signed_enum { SIGNED_NEG = -1, SIGNED_POS = 3 };

static void test_enums(void) {
  /* a C enum is compatible with int or unsigned int: 32-bit either way */
  enum small_enum e = SMALL_B;
  enum signed_enum n = SIGNED_NEG;
  captured_t ce = BUILD("v", e);
  ASSERT_TRUE(ce.args[0].value.type == TRACE_ARG_INT32 ||
              ce.args[0].value.type == TRACE_ARG_UINT32);
  ASSERT_EQ(ce.args[0].value.uint32_value, 7u);
  CHECK(n, TA_INT32(n), TRACE_ARG_INT32);
  ASSERT_EQ(BUILD("v", n).args[0].value.int32_value, -1);
}

static void test_bool_and_floating(void) {
  bool t = true, f = false;
  float fl = 1.5f;
  double d = -2.25;
  long double ld = 3.5L;
  CHECK(t, TA_BOOL(true), TRACE_ARG_BOOL);
  CHECK(f, TA_BOOL(false), TRACE_ARG_BOOL);
  CHECK((bool)7, TA_BOOL(1), TRACE_ARG_BOOL);
  CHECK(fl, TA_DOUBLE(1.5), TRACE_ARG_DOUBLE);
  CHECK(d, TA_DOUBLE(-2.25), TRACE_ARG_DOUBLE);
  CHECK(ld, TA_DOUBLE(3.5), TRACE_ARG_DOUBLE);
  CHECK(0.5, TA_DOUBLE(0.5), TRACE_ARG_DOUBLE);
  ASSERT_TRUE(BUILD("v", fl).args[0].value.double_value == 1.5);
  /* C's `true` is the int 1 (before C23): inferred as INT32, see the docs */
  CHECK(true, TA_INT32(1), TRACE_ARG_INT32);
}

struct some_struct {
  int x;
};
static char g_mutable_array[16] = "mutable";
static const char g_const_array[] = "const array";

static void test_strings(void) {
  /* char* and const char*: copied inline, borrowing the pointer */
  char stack_buf[16] = "stack";
  char* heap = (char*)malloc(8);
  ASSERT_TRUE(heap != NULL);
  memcpy(heap, "heap", 5);
  const char* cp = stack_buf;
  char* p = stack_buf;
  CHECK(cp, TA_STRING(cp), TRACE_ARG_STRING);
  CHECK(p, TA_STRING(p), TRACE_ARG_STRING);
  CHECK(heap, TA_STRING(heap), TRACE_ARG_STRING);
  CHECK(stack_buf, TA_STRING(stack_buf), TRACE_ARG_STRING);
  CHECK(g_mutable_array, TA_STRING(g_mutable_array), TRACE_ARG_STRING);
  CHECK(g_const_array, TA_STRING(g_const_array), TRACE_ARG_STRING);
  captured_t c = BUILD("v", stack_buf);
  ASSERT_TRUE(trace_is_inline_string_ref(&c.args[0].value.string_value_ref));
  ASSERT_EQ(trace_inline_string_ref_length(&c.args[0].value.string_value_ref), 5u);
  ASSERT_TRUE(c.args[0].value.string_value_ref.inline_string == stack_buf);
  c = BUILD("v", TA_CHAR_ARRAY(stack_buf, 3));
  ASSERT_EQ(trace_inline_string_ref_length(&c.args[0].value.string_value_ref), 3u);
  /* a string literal, written at the call site, is interned: the value is
   * left as an unregistered literal (encoded 0, the literal's address), the
   * TA_STRING_LITERAL form */
  CHECK("literal", TA_STRING_LITERAL("literal"), TRACE_ARG_STRING);
  c = BUILD("v", "literal");
  ASSERT_EQ(c.args[0].value.string_value_ref.encoded_value, 0u);
  ASSERT_STREQ(c.args[0].value.string_value_ref.inline_string, "literal");
  /* ...but never anything whose bytes can change or whose address can be
   * reused: a stack buffer, the heap, a mutable static array, or pointers
   * to them (this is the safety property of the interning rule; it holds
   * for every compiler and -O level the tests are built with) */
  const char* const to_static = g_mutable_array;
  ASSERT_TRUE(trace_is_inline_string_ref(&BUILD("v", stack_buf).args[0].value.string_value_ref));
  ASSERT_TRUE(trace_is_inline_string_ref(&BUILD("v", heap).args[0].value.string_value_ref));
  ASSERT_TRUE(
      trace_is_inline_string_ref(&BUILD("v", g_mutable_array).args[0].value.string_value_ref));
  ASSERT_TRUE(trace_is_inline_string_ref(&BUILD("v", to_static).args[0].value.string_value_ref));
  ASSERT_TRUE(trace_is_inline_string_ref(&BUILD("v", cp).args[0].value.string_value_ref));
  /* NULL char pointers: the empty string, never a crash */
  const char* null_string = NULL;
  char* null_mutable = NULL;
  CHECK(null_string, TA_STRING(null_string), TRACE_ARG_STRING);
  CHECK(null_mutable, TA_STRING(NULL), TRACE_ARG_STRING);
  c = BUILD("v", null_string);
  ASSERT_TRUE(trace_is_empty_string_ref(&c.args[0].value.string_value_ref));
  ASSERT_TRUE(c.args[0].value.string_value_ref.inline_string == NULL);
  c = BUILD("v", (const char*)NULL); /* a null constant: also empty */
  ASSERT_TRUE(trace_is_empty_string_ref(&c.args[0].value.string_value_ref));
  ASSERT_TRUE(c.args[0].value.string_value_ref.inline_string == NULL);
  /* an empty string: the empty ref */
  CHECK(stack_buf + 5, TA_STRING(""), TRACE_ARG_STRING);
  free(heap);
}

static int some_function(int x) { return x; }

static void test_pointers(void) {
  int x = 0;
  struct some_struct st = {1};
  void* vp = &x;
  const void* cvp = &st;
  int* ip = &x;
  struct some_struct* sp = &st;
  const volatile struct some_struct* cvsp = &st;
  unsigned char* bytes = (unsigned char*)&x; /* not a string: only char* is */
  int arr[3] = {0};
  CHECK(vp, TA_POINTER(vp), TRACE_ARG_POINTER);
  CHECK(cvp, TA_POINTER(cvp), TRACE_ARG_POINTER);
  CHECK(ip, TA_POINTER(ip), TRACE_ARG_POINTER);
  CHECK(sp, TA_POINTER(sp), TRACE_ARG_POINTER);
  CHECK(cvsp, TA_POINTER(cvsp), TRACE_ARG_POINTER);
  CHECK(&st, TA_POINTER(&st), TRACE_ARG_POINTER);
  CHECK(bytes, TA_POINTER(bytes), TRACE_ARG_POINTER);
  CHECK(arr, TA_POINTER(arr), TRACE_ARG_POINTER);
  CHECK(NULL, TA_POINTER(0), TRACE_ARG_POINTER);
  CHECK(some_function, TA_POINTER(some_function), TRACE_ARG_POINTER);
  ASSERT_EQ(BUILD("v", sp).args[0].value.pointer_value, (uintptr_t)&st);
}

static void test_passthrough(void) {
  /* every TA_* form is a trace_arg_value_t and passes through unchanged */
  trace_arg_value_t v = TA_KOID(12345);
  CHECK(v, TA_KOID(12345), TRACE_ARG_KOID);
  CHECK(TA_NULL(), TA_NULL(), TRACE_ARG_NULL);
  ASSERT_EQ(BUILD("v", TA_KOID(12345)).args[0].value.koid_value, 12345u);
  ASSERT_EQ(BUILD("v", TA_INT64(-1)).args[0].value.int64_value, -1);
  ASSERT_EQ(BUILD("v", TA_UINT32(7)).args[0].value.type, TRACE_ARG_UINT32);
}

static int evaluations;
static int counted(int v) {
  evaluations++;
  return v;
}

static void test_many_and_once(void) {
  /* 0 and 15 pairs; each value expression evaluated exactly once; order
   * and names kept */
  captured_t c = BUILD();
  ASSERT_EQ(c.count, 0u);
  evaluations = 0;
  c = BUILD("a1", counted(1), "a2", counted(2), "a3", counted(3), "a4", counted(4), "a5",
            counted(5), "a6", counted(6), "a7", counted(7), "a8", counted(8), "a9", counted(9),
            "a10", counted(10), "a11", counted(11), "a12", counted(12), "a13", counted(13),
            "a14", counted(14), "a15", counted(15));
  ASSERT_EQ(evaluations, 15);
  ASSERT_EQ(c.count, 15u);
  for (int k = 0; k < 15; k++) {
    char name[8];
    snprintf(name, sizeof(name), "a%d", k + 1);
    ASSERT_STREQ(c.args[k].name_ref.inline_string, name);
    ASSERT_EQ(c.args[k].value.type, TRACE_ARG_INT32);
    ASSERT_EQ(c.args[k].value.int32_value, k + 1);
  }
  int i = 0;
  c = BUILD("i", i++);
  ASSERT_EQ(i, 1);
  ASSERT_EQ(c.args[0].value.int32_value, 0);
  const char* strings[2] = {"x", "y"};
  const char** sp = strings;
  c = BUILD("s", *sp++);
  ASSERT_TRUE(sp == strings + 1);
  ASSERT_STREQ(c.args[0].value.string_value_ref.inline_string, "x");
}

int main(void) {
  test_integers();
  test_enums();
  test_bool_and_floating();
  test_strings();
  test_pointers();
  test_passthrough();
  test_many_and_once();
  printf("ok\n");
  return 0;
}
