// C++17 argument inference (<trace/event.h>, docs/instrumentation.md): every
// supported C++ type gives the same trace_arg_t as its TA_* form, through the
// macro the event macros expand to (TRACE_INTERNAL_EVENT_ARGS), with the FXT
// type API.md §4 prescribes: integers by size and signedness, enums by
// underlying type, bool, floating, C strings, char arrays, std::string,
// std::string_view, pointers, nullptr, trace_arg_value_t. No engine needed.
#include <climits>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "test.h"
#include "trace/event.h"

namespace {

struct Captured {
  size_t count = 0;
  trace_arg_t args[TRACE_MAX_ARGS] = {};
};

Captured Capture(trace_arg_t* args, size_t num_args) {
  Captured c;
  c.count = num_args;
  for (size_t i = 0; i < num_args; i++) c.args[i] = args[i];
  return c;
}

#define BUILD(...) Capture(TRACE_INTERNAL_EVENT_ARGS(_, ##__VA_ARGS__))

// Same type and the same bytes in the member the type selects (the rest of
// the union and the padding inside a string ref are unspecified); for a
// string, the same ref: encoding, and the same pointer (inline) or the same
// literal text (unregistered literal). Same name.
bool SameValue(const trace_arg_value_t& a, const trace_arg_value_t& b) {
  if (a.type != b.type) return false;
  switch (a.type) {
    case TRACE_ARG_NULL: return true;
    case TRACE_ARG_INT32: return a.int32_value == b.int32_value;
    case TRACE_ARG_UINT32: return a.uint32_value == b.uint32_value;
    case TRACE_ARG_INT64: return a.int64_value == b.int64_value;
    case TRACE_ARG_UINT64: return a.uint64_value == b.uint64_value;
    case TRACE_ARG_DOUBLE: return memcmp(&a.double_value, &b.double_value, sizeof(double)) == 0;
    case TRACE_ARG_POINTER: return a.pointer_value == b.pointer_value;
    case TRACE_ARG_KOID: return a.koid_value == b.koid_value;
    case TRACE_ARG_BOOL: return a.bool_value == b.bool_value;
    case TRACE_ARG_STRING: {
      const trace_string_ref_t& x = a.string_value_ref;
      const trace_string_ref_t& y = b.string_value_ref;
      if (x.encoded_value != y.encoded_value) return false;
      if (x.encoded_value != 0 || x.inline_string == nullptr || y.inline_string == nullptr)
        return x.inline_string == y.inline_string;
      return strcmp(x.inline_string, y.inline_string) == 0;  // two copies of a literal
    }
    default: return false;
  }
}

void AssertSameArg(const trace_arg_t& a, const trace_arg_t& b, int line) {
  if (a.value.type != b.value.type)
    TEST_FAIL("line %d: types differ: %d vs %d", line, (int)a.value.type, (int)b.value.type);
  if (!SameValue(a.value, b.value))
    TEST_FAIL("line %d: values differ (type %d)", line, (int)a.value.type);
  if (a.name_ref.encoded_value != b.name_ref.encoded_value ||
      strcmp(a.name_ref.inline_string, b.name_ref.inline_string) != 0)
    TEST_FAIL("line %d: names differ", line);
}

bool IsInline(const Captured& c) {
  return trace_is_inline_string_ref(&c.args[0].value.string_value_ref);
}
bool IsEmpty(const Captured& c) {
  return trace_is_empty_string_ref(&c.args[0].value.string_value_ref);
}

#define CHECK(plain, ta, expected_type)                              \
  do {                                                               \
    Captured inferred_ = BUILD("v", plain);                          \
    Captured explicit_ = BUILD("v", ta);                             \
    ASSERT_EQ(inferred_.count, 1u);                                  \
    ASSERT_EQ(explicit_.count, 1u);                                  \
    ASSERT_EQ(inferred_.args[0].value.type, (expected_type));        \
    AssertSameArg(inferred_.args[0], explicit_.args[0], __LINE__);   \
  } while (0)

void TestIntegers() {
  int8_t i8 = INT8_MIN;
  int16_t i16 = INT16_MIN;
  int32_t i32 = INT32_MIN;
  int64_t i64 = INT64_MIN;
  uint8_t u8 = UINT8_MAX;
  uint16_t u16 = UINT16_MAX;
  uint32_t u32 = UINT32_MAX;
  uint64_t u64 = UINT64_MAX;
  long l = LONG_MIN;
  unsigned long ul = ULONG_MAX;
  long long ll = LLONG_MIN;
  unsigned long long ull = ULLONG_MAX;
  size_t sz = SIZE_MAX;
  ptrdiff_t pd = PTRDIFF_MIN;
  char c = 'x';
  signed char sc = -3;
  unsigned char uc = 200;
  wchar_t wc = L'w';
  char16_t c16 = u'q';
  char32_t c32 = U'z';
  CHECK(i8, TA_INT32(i8), TRACE_ARG_INT32);
  CHECK(i16, TA_INT32(i16), TRACE_ARG_INT32);
  CHECK(i32, TA_INT32(i32), TRACE_ARG_INT32);
  CHECK(i64, TA_INT64(i64), TRACE_ARG_INT64);
  CHECK(u8, TA_UINT32(u8), TRACE_ARG_UINT32);
  CHECK(u16, TA_UINT32(u16), TRACE_ARG_UINT32);
  CHECK(u32, TA_UINT32(u32), TRACE_ARG_UINT32);
  CHECK(u64, TA_UINT64(u64), TRACE_ARG_UINT64);
  CHECK(ll, TA_INT64(ll), TRACE_ARG_INT64);
  CHECK(ull, TA_UINT64(ull), TRACE_ARG_UINT64);
  static_assert(sizeof(long) == 8 && sizeof(size_t) == 8, "the checks below assume LP64");
  CHECK(l, TA_INT64(l), TRACE_ARG_INT64);
  CHECK(ul, TA_UINT64(ul), TRACE_ARG_UINT64);
  CHECK(sz, TA_UINT64(sz), TRACE_ARG_UINT64);
  CHECK(pd, TA_INT64(pd), TRACE_ARG_INT64);
  if (std::is_signed_v<char>)
    CHECK(c, TA_INT32(c), TRACE_ARG_INT32);
  else
    CHECK(c, TA_UINT32(c), TRACE_ARG_UINT32);
  CHECK(sc, TA_INT32(sc), TRACE_ARG_INT32);
  CHECK(uc, TA_UINT32(uc), TRACE_ARG_UINT32);
  CHECK(c16, TA_UINT32(c16), TRACE_ARG_UINT32);
  CHECK(c32, TA_UINT32(c32), TRACE_ARG_UINT32);
  if (std::is_signed_v<wchar_t>)
    CHECK(wc, TA_INT32(wc), TRACE_ARG_INT32);
  else
    CHECK(wc, TA_UINT32(wc), TRACE_ARG_UINT32);
  // literals follow the C++ rules (API.md §4)
  CHECK(77, TA_INT32(77), TRACE_ARG_INT32);
  CHECK(77U, TA_UINT32(77), TRACE_ARG_UINT32);
  CHECK(77L, TA_INT64(77), TRACE_ARG_INT64);
  CHECK(77UL, TA_UINT64(77), TRACE_ARG_UINT64);
  CHECK(77., TA_DOUBLE(77), TRACE_ARG_DOUBLE);
  const int ci = -9;
  volatile uint64_t vu = 10;
  CHECK(ci, TA_INT32(-9), TRACE_ARG_INT32);
  CHECK(vu, TA_UINT64(10), TRACE_ARG_UINT64);
  ASSERT_EQ(BUILD("v", i64).args[0].value.int64_value, INT64_MIN);
  ASSERT_EQ(BUILD("v", u64).args[0].value.uint64_value, UINT64_MAX);
}

enum PlainEnum { kPlainA = 3 };
enum class SmallEnum : uint8_t { kA = 200 };
enum class SignedEnum : int16_t { kNeg = -7 };
enum class WideEnum : int64_t { kBig = INT64_C(1) << 40 };
enum class UWideEnum : uint64_t { kBig = UINT64_MAX };

void TestEnums() {
  CHECK(kPlainA, TA_UINT32(3), TRACE_ARG_UINT32);  // underlying type unsigned int (GCC, Clang)
  CHECK(SmallEnum::kA, TA_UINT32(200), TRACE_ARG_UINT32);
  CHECK(SignedEnum::kNeg, TA_INT32(-7), TRACE_ARG_INT32);
  CHECK(WideEnum::kBig, TA_INT64(INT64_C(1) << 40), TRACE_ARG_INT64);
  CHECK(UWideEnum::kBig, TA_UINT64(UINT64_MAX), TRACE_ARG_UINT64);
}

void TestBoolAndFloating() {
  bool t = true;
  float f = 1.5f;
  double d = -2.25;
  long double ld = 3.5L;
  CHECK(t, TA_BOOL(true), TRACE_ARG_BOOL);
  CHECK(false, TA_BOOL(false), TRACE_ARG_BOOL);
  CHECK(1 < 2, TA_BOOL(true), TRACE_ARG_BOOL);  // a bool in C++, unlike C
  CHECK(f, TA_DOUBLE(1.5), TRACE_ARG_DOUBLE);
  CHECK(d, TA_DOUBLE(-2.25), TRACE_ARG_DOUBLE);
  CHECK(ld, TA_DOUBLE(3.5), TRACE_ARG_DOUBLE);
}

struct Thing {
  int x;
};
char g_mutable_array[16] = "mutable";

void TestStrings() {
  char buf[16] = "abc";  // a char array: up to its first NUL
  const char* cp = buf;
  char* p = buf;
  CHECK(cp, TA_STRING(cp), TRACE_ARG_STRING);
  CHECK(p, TA_STRING(p), TRACE_ARG_STRING);
  CHECK(buf, TA_STRING(buf), TRACE_ARG_STRING);
  CHECK(g_mutable_array, TA_STRING(g_mutable_array), TRACE_ARG_STRING);
  Captured c = BUILD("v", buf);
  ASSERT_TRUE(trace_is_inline_string_ref(&c.args[0].value.string_value_ref));
  ASSERT_EQ(trace_inline_string_ref_length(&c.args[0].value.string_value_ref), 3u);
  // an unterminated char array: its whole extent, never past it
  char raw[4] = {'w', 'x', 'y', 'z'};
  c = BUILD("v", raw);
  ASSERT_EQ(trace_inline_string_ref_length(&c.args[0].value.string_value_ref), 4u);
  CHECK(raw, TA_CHAR_ARRAY(raw, 4), TRACE_ARG_STRING);
  // literals are interned; the trailing NUL is not part of the value
  CHECK("literal", TA_STRING_LITERAL("literal"), TRACE_ARG_STRING);
  c = BUILD("v", "literal");
  ASSERT_EQ(c.args[0].value.string_value_ref.encoded_value, 0u);
  ASSERT_STREQ(c.args[0].value.string_value_ref.inline_string, "literal");
  // never interned: anything whose bytes or address can change
  constexpr char local_constexpr[] = "constexpr on the stack";
  ASSERT_TRUE(IsInline(BUILD("v", buf)));
  ASSERT_TRUE(
      IsInline(BUILD("v", g_mutable_array)));
  ASSERT_TRUE(
      IsInline(BUILD("v", local_constexpr)));
  ASSERT_TRUE(IsInline(BUILD("v", cp)));
  // std::string and std::string_view: inline, (data, size), NULs included
  std::string s("str\0ing", 7);
  std::string_view sv("view");
  CHECK(s, TA_CHAR_ARRAY(s.data(), 7), TRACE_ARG_STRING);
  CHECK(s, TA_STRING(s), TRACE_ARG_STRING);
  CHECK(sv, TA_CHAR_ARRAY(sv.data(), sv.size()), TRACE_ARG_STRING);
  CHECK(sv, TA_STRING(sv), TRACE_ARG_STRING);
  const std::string& cs = s;
  CHECK(cs, TA_CHAR_ARRAY(s.data(), 7), TRACE_ARG_STRING);
  c = BUILD("v", s);
  ASSERT_TRUE(c.args[0].value.string_value_ref.inline_string == s.data());
  ASSERT_EQ(trace_inline_string_ref_length(&c.args[0].value.string_value_ref), 7u);
  std::string empty;
  ASSERT_TRUE(IsEmpty(BUILD("v", empty)));
  // NULL char pointers: the empty string
  const char* null_string = nullptr;
  CHECK(null_string, TA_STRING(null_string), TRACE_ARG_STRING);
  ASSERT_TRUE(
      IsEmpty(BUILD("v", null_string)));
}

int SomeFunction(int x) { return x; }

void TestPointersAndNull() {
  int x = 0;
  Thing thing{1};
  void* vp = &x;
  const void* cvp = &thing;
  Thing* tp = &thing;
  const Thing* ctp = &thing;
  unsigned char* bytes = reinterpret_cast<unsigned char*>(&x);
  int arr[3] = {};
  int (*fp)(int) = SomeFunction;
  CHECK(vp, TA_POINTER(vp), TRACE_ARG_POINTER);
  CHECK(cvp, TA_POINTER(cvp), TRACE_ARG_POINTER);
  CHECK(tp, TA_POINTER(tp), TRACE_ARG_POINTER);
  CHECK(ctp, TA_POINTER(ctp), TRACE_ARG_POINTER);
  CHECK(&thing, TA_POINTER(&thing), TRACE_ARG_POINTER);
  CHECK(bytes, TA_POINTER(bytes), TRACE_ARG_POINTER);
  CHECK(arr, TA_POINTER(arr), TRACE_ARG_POINTER);
  CHECK(fp, TA_POINTER(fp), TRACE_ARG_POINTER);
  CHECK(SomeFunction, TA_POINTER(&SomeFunction), TRACE_ARG_POINTER);
  CHECK(nullptr, TA_NULL(), TRACE_ARG_NULL);
  ASSERT_EQ(BUILD("v", tp).args[0].value.pointer_value, reinterpret_cast<uintptr_t>(&thing));
}

void TestPassthrough() {
  trace_arg_value_t v = TA_KOID(99);
  const trace_arg_value_t cv = TA_INT64(-5);
  CHECK(v, TA_KOID(99), TRACE_ARG_KOID);
  CHECK(cv, TA_INT64(-5), TRACE_ARG_INT64);
  CHECK(TA_NULL(), TA_NULL(), TRACE_ARG_NULL);
}

int evaluations = 0;
int Counted(int v) {
  evaluations++;
  return v;
}

void TestManyAndOnce() {
  Captured c = BUILD();
  ASSERT_EQ(c.count, 0u);
  c = BUILD("a1", Counted(1), "a2", Counted(2), "a3", Counted(3), "a4", Counted(4), "a5",
            Counted(5), "a6", Counted(6), "a7", Counted(7), "a8", Counted(8), "a9", Counted(9),
            "a10", Counted(10), "a11", Counted(11), "a12", Counted(12), "a13", Counted(13),
            "a14", Counted(14), "a15", Counted(15));
  ASSERT_EQ(evaluations, 15);
  ASSERT_EQ(c.count, 15u);
  for (int k = 0; k < 15; k++) {
    ASSERT_EQ(c.args[k].value.type, TRACE_ARG_INT32);
    ASSERT_EQ(c.args[k].value.int32_value, k + 1);
  }
  int i = 0;
  c = BUILD("i", i++);
  ASSERT_EQ(i, 1);
  ASSERT_EQ(c.args[0].value.int32_value, 0);
}

}  // namespace

int main() {
  TestIntegers();
  TestEnums();
  TestBoolAndFloating();
  TestStrings();
  TestPointersAndNull();
  TestPassthrough();
  TestManyAndOnce();
  printf("ok\n");
  return 0;
}
