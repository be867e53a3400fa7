/* Not part of the public API: use <trace/event.h>. Building the argument
 * arrays of the event macros: item counting, the 15-pair and even-count
 * checks, name/value pairs, the TA_* value makers, and type inference
 * (_Generic in C11, overloads in C++17). docs/instrumentation.md has the
 * inference tables.
 *
 * Every macro here expands to expressions only; nothing is evaluated unless
 * the event macro around it has found its category enabled. */
#ifndef TRACE_INTERNAL_EVENT_ARGS_H_
#define TRACE_INTERNAL_EVENT_ARGS_H_

#include "trace/internal/event_helpers.h"

#ifdef __cplusplus
#if __cplusplus < 201703L
#error "<trace/event.h> in C++ needs C++17 or later"
#endif
#include <cstddef>
#include <cstdint>
#include <type_traits>
#if defined(__has_include)
#if __has_include(<string>)
#include <string>
#define TRACE_INTERNAL_HAVE_STD_STRING 1
#endif
#if __has_include(<string_view>)
#include <string_view>
#define TRACE_INTERNAL_HAVE_STD_STRING_VIEW 1
#endif
#endif
#endif

/* ---- preprocessor utilities ------------------------------------------------ */

#define TRACE_INTERNAL_CAT(a, b) TRACE_INTERNAL_CAT_(a, b)
#define TRACE_INTERNAL_CAT_(a, b) a##b
#define TRACE_INTERNAL_UNIQUE(prefix) TRACE_INTERNAL_CAT(prefix, __COUNTER__)

#ifdef __cplusplus
#define TRACE_INTERNAL_STATIC_ASSERT(cond, message) static_assert(cond, message)
#else
#define TRACE_INTERNAL_STATIC_ASSERT(cond, message) _Static_assert(cond, message)
#endif

/* The number of items (names plus values) in a variadic list, 0 to 30, or
 * 100 for 31 to 64 items (so that only the "too many" check fires).
 *
 * Empty lists: call it as TRACE_INTERNAL_NUM_ITEMS(_, ##__VA_ARGS__) from a
 * macro that has named parameters before its `...`. GCC and Clang delete the
 * comma before ##__VA_ARGS__ when the variadic part is *missing* (not when it
 * is passed on empty), so every layer between a public macro and this one
 * forwards its list as `, ##__VA_ARGS__`. */
#define TRACE_INTERNAL_NUM_ITEMS(dummy, ...)                                                   \
  TRACE_INTERNAL_NUM_ITEMS_(dummy, ##__VA_ARGS__, 100, 100, 100, 100, 100, 100, 100, 100, 100, \
                            100, 100, 100, 100, 100, 100, 100, 100, 100, 100, 100, 100, 100,  \
                            100, 100, 100, 100, 100, 100, 100, 100, 100, 100, 100, 100, 30,   \
                            29, 28, 27, 26, 25, 24, 23, 22, 21, 20, 19, 18, 17, 16, 15, 14,   \
                            13, 12, 11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1, 0)
#define TRACE_INTERNAL_NUM_ITEMS_(_0, _1, _2, _3, _4, _5, _6, _7, _8, _9, _10, _11, _12, _13, \
    _14, _15, _16, _17, _18, _19, _20, _21, _22, _23, _24, _25, _26, _27, _28, _29, _30, _31,  \
    _32, _33, _34, _35, _36, _37, _38, _39, _40, _41, _42, _43, _44, _45, _46, _47, _48, _49,  \
    _50, _51, _52, _53, _54, _55, _56, _57, _58, _59, _60, _61, _62, _63, _64, n, ...) n

/* Compile-time checks on an item count; a declaration without its final
 * semicolon. The messages are what a user sees. */
#define TRACE_INTERNAL_CHECK_ITEMS(n)                                                          \
  TRACE_INTERNAL_STATIC_ASSERT((n) % 2 == 0,                                                   \
                               "trace: event arguments must be \"name\", value pairs: "        \
                               "an odd number of items was given");                            \
  TRACE_INTERNAL_STATIC_ASSERT((n) / 2 <= TRACE_MAX_ARGS,                                      \
                               "trace: too many event arguments: at most TRACE_MAX_ARGS (15) " \
                               "name/value pairs")

/* ---- name/value pairs -------------------------------------------------------
 * One trace_arg_t: the name in the "unregistered literal" form the helpers
 * register (event_helpers.h); "" name makes a non-literal name a compile
 * error. `maker` turns the value into a trace_arg_value_t. */
#ifdef __cplusplus
#define TRACE_INTERNAL_ARG(maker, name_literal, value) \
  trace_make_arg(trace_internal_make_literal_ref("" name_literal), maker(value))
#else
/* In C, an initializer for the element. The value is the maker's inlined
 * return value; the makers assign it field by field (types.h, "argument
 * values"), so GCC and Clang store the type and the value straight into the
 * array: no temporaries copied with wide loads over narrow stores, whose
 * store-forwarding stalls cost ~6 ns per event with two arguments. */
#define TRACE_INTERNAL_ARG(maker, name_literal, arg_value)                                \
  {                                                                                       \
    .name_ref = {.encoded_value = TRACE_ENCODED_STRING_REF_EMPTY,                        \
                 .inline_string = "" name_literal},                                       \
    .value = maker(arg_value)                                                             \
  }
#endif

#define TRACE_INTERNAL_PAIRS_1(m, n1, v1) TRACE_INTERNAL_ARG(m, n1, v1)
#define TRACE_INTERNAL_PAIRS_2(m, n1, v1, ...) \
  TRACE_INTERNAL_ARG(m, n1, v1), TRACE_INTERNAL_PAIRS_1(m, __VA_ARGS__)
#define TRACE_INTERNAL_PAIRS_3(m, n1, v1, ...) \
  TRACE_INTERNAL_ARG(m, n1, v1), TRACE_INTERNAL_PAIRS_2(m, __VA_ARGS__)
#define TRACE_INTERNAL_PAIRS_4(m, n1, v1, ...) \
  TRACE_INTERNAL_ARG(m, n1, v1), TRACE_INTERNAL_PAIRS_3(m, __VA_ARGS__)
#define TRACE_INTERNAL_PAIRS_5(m, n1, v1, ...) \
  TRACE_INTERNAL_ARG(m, n1, v1), TRACE_INTERNAL_PAIRS_4(m, __VA_ARGS__)
#define TRACE_INTERNAL_PAIRS_6(m, n1, v1, ...) \
  TRACE_INTERNAL_ARG(m, n1, v1), TRACE_INTERNAL_PAIRS_5(m, __VA_ARGS__)
#define TRACE_INTERNAL_PAIRS_7(m, n1, v1, ...) \
  TRACE_INTERNAL_ARG(m, n1, v1), TRACE_INTERNAL_PAIRS_6(m, __VA_ARGS__)
#define TRACE_INTERNAL_PAIRS_8(m, n1, v1, ...) \
  TRACE_INTERNAL_ARG(m, n1, v1), TRACE_INTERNAL_PAIRS_7(m, __VA_ARGS__)
#define TRACE_INTERNAL_PAIRS_9(m, n1, v1, ...) \
  TRACE_INTERNAL_ARG(m, n1, v1), TRACE_INTERNAL_PAIRS_8(m, __VA_ARGS__)
#define TRACE_INTERNAL_PAIRS_10(m, n1, v1, ...) \
  TRACE_INTERNAL_ARG(m, n1, v1), TRACE_INTERNAL_PAIRS_9(m, __VA_ARGS__)
#define TRACE_INTERNAL_PAIRS_11(m, n1, v1, ...) \
  TRACE_INTERNAL_ARG(m, n1, v1), TRACE_INTERNAL_PAIRS_10(m, __VA_ARGS__)
#define TRACE_INTERNAL_PAIRS_12(m, n1, v1, ...) \
  TRACE_INTERNAL_ARG(m, n1, v1), TRACE_INTERNAL_PAIRS_11(m, __VA_ARGS__)
#define TRACE_INTERNAL_PAIRS_13(m, n1, v1, ...) \
  TRACE_INTERNAL_ARG(m, n1, v1), TRACE_INTERNAL_PAIRS_12(m, __VA_ARGS__)
#define TRACE_INTERNAL_PAIRS_14(m, n1, v1, ...) \
  TRACE_INTERNAL_ARG(m, n1, v1), TRACE_INTERNAL_PAIRS_13(m, __VA_ARGS__)
#define TRACE_INTERNAL_PAIRS_15(m, n1, v1, ...) \
  TRACE_INTERNAL_ARG(m, n1, v1), TRACE_INTERNAL_PAIRS_14(m, __VA_ARGS__)

/* TRACE_INTERNAL_ARGS(maker, n, items...) expands to the two trailing
 * parameters of every trace_internal_write_* helper: `trace_arg_t* args,
 * size_t num_args`. The array is a temporary that lives until the end of the
 * enclosing full expression (C++) or block (C compound literal), so the call
 * must be in the same expression or block. Counts the checks reject expand
 * to no arguments, so that only the static_assert message is reported. */
#define TRACE_INTERNAL_ARGS(maker, n, ...) TRACE_INTERNAL_CAT(TRACE_INTERNAL_ARGS_, n)(maker, ##__VA_ARGS__)
#define TRACE_INTERNAL_NO_ARGS (trace_arg_t*)0, (size_t)0
#ifdef __cplusplus
#define TRACE_INTERNAL_ARG_ARRAY(count, ...) (::trace_internal::ArgArray<count>{{__VA_ARGS__}}.data())
#else
#define TRACE_INTERNAL_ARG_ARRAY(count, ...) ((trace_arg_t[count]){__VA_ARGS__})
#endif
#define TRACE_INTERNAL_ARGS_0(m, ...) TRACE_INTERNAL_NO_ARGS
#define TRACE_INTERNAL_ARGS_2(m, ...) \
  TRACE_INTERNAL_ARG_ARRAY(1, TRACE_INTERNAL_PAIRS_1(m, __VA_ARGS__)), (size_t)1
#define TRACE_INTERNAL_ARGS_4(m, ...) \
  TRACE_INTERNAL_ARG_ARRAY(2, TRACE_INTERNAL_PAIRS_2(m, __VA_ARGS__)), (size_t)2
#define TRACE_INTERNAL_ARGS_6(m, ...) \
  TRACE_INTERNAL_ARG_ARRAY(3, TRACE_INTERNAL_PAIRS_3(m, __VA_ARGS__)), (size_t)3
#define TRACE_INTERNAL_ARGS_8(m, ...) \
  TRACE_INTERNAL_ARG_ARRAY(4, TRACE_INTERNAL_PAIRS_4(m, __VA_ARGS__)), (size_t)4
#define TRACE_INTERNAL_ARGS_10(m, ...) \
  TRACE_INTERNAL_ARG_ARRAY(5, TRACE_INTERNAL_PAIRS_5(m, __VA_ARGS__)), (size_t)5
#define TRACE_INTERNAL_ARGS_12(m, ...) \
  TRACE_INTERNAL_ARG_ARRAY(6, TRACE_INTERNAL_PAIRS_6(m, __VA_ARGS__)), (size_t)6
#define TRACE_INTERNAL_ARGS_14(m, ...) \
  TRACE_INTERNAL_ARG_ARRAY(7, TRACE_INTERNAL_PAIRS_7(m, __VA_ARGS__)), (size_t)7
#define TRACE_INTERNAL_ARGS_16(m, ...) \
  TRACE_INTERNAL_ARG_ARRAY(8, TRACE_INTERNAL_PAIRS_8(m, __VA_ARGS__)), (size_t)8
#define TRACE_INTERNAL_ARGS_18(m, ...) \
  TRACE_INTERNAL_ARG_ARRAY(9, TRACE_INTERNAL_PAIRS_9(m, __VA_ARGS__)), (size_t)9
#define TRACE_INTERNAL_ARGS_20(m, ...) \
  TRACE_INTERNAL_ARG_ARRAY(10, TRACE_INTERNAL_PAIRS_10(m, __VA_ARGS__)), (size_t)10
#define TRACE_INTERNAL_ARGS_22(m, ...) \
  TRACE_INTERNAL_ARG_ARRAY(11, TRACE_INTERNAL_PAIRS_11(m, __VA_ARGS__)), (size_t)11
#define TRACE_INTERNAL_ARGS_24(m, ...) \
  TRACE_INTERNAL_ARG_ARRAY(12, TRACE_INTERNAL_PAIRS_12(m, __VA_ARGS__)), (size_t)12
#define TRACE_INTERNAL_ARGS_26(m, ...) \
  TRACE_INTERNAL_ARG_ARRAY(13, TRACE_INTERNAL_PAIRS_13(m, __VA_ARGS__)), (size_t)13
#define TRACE_INTERNAL_ARGS_28(m, ...) \
  TRACE_INTERNAL_ARG_ARRAY(14, TRACE_INTERNAL_PAIRS_14(m, __VA_ARGS__)), (size_t)14
#define TRACE_INTERNAL_ARGS_30(m, ...) \
  TRACE_INTERNAL_ARG_ARRAY(15, TRACE_INTERNAL_PAIRS_15(m, __VA_ARGS__)), (size_t)15
/* Rejected counts: odd, or more than 15 pairs (100). */
#define TRACE_INTERNAL_ARGS_1(m, ...) TRACE_INTERNAL_NO_ARGS
#define TRACE_INTERNAL_ARGS_3(m, ...) TRACE_INTERNAL_NO_ARGS
#define TRACE_INTERNAL_ARGS_5(m, ...) TRACE_INTERNAL_NO_ARGS
#define TRACE_INTERNAL_ARGS_7(m, ...) TRACE_INTERNAL_NO_ARGS
#define TRACE_INTERNAL_ARGS_9(m, ...) TRACE_INTERNAL_NO_ARGS
#define TRACE_INTERNAL_ARGS_11(m, ...) TRACE_INTERNAL_NO_ARGS
#define TRACE_INTERNAL_ARGS_13(m, ...) TRACE_INTERNAL_NO_ARGS
#define TRACE_INTERNAL_ARGS_15(m, ...) TRACE_INTERNAL_NO_ARGS
#define TRACE_INTERNAL_ARGS_17(m, ...) TRACE_INTERNAL_NO_ARGS
#define TRACE_INTERNAL_ARGS_19(m, ...) TRACE_INTERNAL_NO_ARGS
#define TRACE_INTERNAL_ARGS_21(m, ...) TRACE_INTERNAL_NO_ARGS
#define TRACE_INTERNAL_ARGS_23(m, ...) TRACE_INTERNAL_NO_ARGS
#define TRACE_INTERNAL_ARGS_25(m, ...) TRACE_INTERNAL_NO_ARGS
#define TRACE_INTERNAL_ARGS_27(m, ...) TRACE_INTERNAL_NO_ARGS
#define TRACE_INTERNAL_ARGS_29(m, ...) TRACE_INTERNAL_NO_ARGS
#define TRACE_INTERNAL_ARGS_100(m, ...) TRACE_INTERNAL_NO_ARGS

/* ---- TA_* value makers --------------------------------------------------- */

#define TRACE_INTERNAL_TA_NULL() (trace_make_null_arg_value())
#define TRACE_INTERNAL_TA_BOOL(b) (trace_make_bool_arg_value((b) ? true : false))
#define TRACE_INTERNAL_TA_INT32(v) (trace_make_int32_arg_value((int32_t)(v)))
#define TRACE_INTERNAL_TA_UINT32(v) (trace_make_uint32_arg_value((uint32_t)(v)))
#define TRACE_INTERNAL_TA_INT64(v) (trace_make_int64_arg_value((int64_t)(v)))
#define TRACE_INTERNAL_TA_UINT64(v) (trace_make_uint64_arg_value((uint64_t)(v)))
#define TRACE_INTERNAL_TA_DOUBLE(v) (trace_make_double_arg_value((double)(v)))
#define TRACE_INTERNAL_TA_CHAR_ARRAY(ptr, len) \
  (trace_make_string_arg_value(trace_make_inline_string_ref((ptr), (size_t)(len))))
#define TRACE_INTERNAL_TA_STRING_LITERAL(lit) \
  (trace_make_string_arg_value(trace_internal_make_literal_ref("" lit)))
#define TRACE_INTERNAL_TA_POINTER(p) (trace_make_pointer_arg_value((uintptr_t)(p)))
#define TRACE_INTERNAL_TA_KOID(k) (trace_make_koid_arg_value((trace_koid_t)(k)))
#ifdef __cplusplus
#define TRACE_INTERNAL_TA_STRING(s) (::trace_internal::MakeStringArgValue(s))
#else
#define TRACE_INTERNAL_TA_STRING(s) \
  (trace_make_string_arg_value(trace_make_inline_c_string_ref(s)))
#endif

/* ---- inference, shared helpers ----------------------------------------- */

#ifdef __cplusplus
extern "C" {
#endif

/* Integers by width: up to 32 bits → INT32/UINT32, else INT64/UINT64. */
static inline trace_arg_value_t trace_internal_arg_from_signed(int64_t value, size_t size) {
  return size <= 4 ? trace_make_int32_arg_value((int32_t)value)
                   : trace_make_int64_arg_value(value);
}
static inline trace_arg_value_t trace_internal_arg_from_unsigned(uint64_t value, size_t size) {
  return size <= 4 ? trace_make_uint32_arg_value((uint32_t)value)
                   : trace_make_uint64_arg_value(value);
}

/* A char pointer: interned (literal ref, registered by the helper) when the
 * compiler proved it points to a string literal, else copied inline (NULL →
 * the empty string). */
static inline trace_arg_value_t trace_internal_arg_from_c_string(const char* string,
                                                                 int is_literal) {
  return trace_make_string_arg_value(is_literal ? trace_internal_make_literal_ref(string)
                                                : trace_make_inline_c_string_ref(string));
}

#ifdef __cplusplus
} /* extern "C" */
#endif

/* Whether a char pointer or array expression is a string literal. Both GCC
 * and Clang answer 1 only for (pointers to the start of) string literals and
 * null pointer constants, and 0 for every array or pointer variable, const or
 * not, static or not (checked by tests/event/test_args_inference.c on each
 * compiler and optimisation level the project builds with). The argument is
 * not evaluated. */
#define TRACE_INTERNAL_IS_LITERAL(v) __builtin_constant_p(v)

#ifndef __cplusplus
/* ---- C11 inference with _Generic ---------------------------------------------
 * _Generic selects a function, which is then called once with (value,
 * is_literal): the value is evaluated exactly once, and only the selected
 * function has to accept its type. The controlling expression undergoes
 * lvalue conversion (C17 DR 481, GCC >= 7, Clang), so char arrays select
 * char*. Types not listed take the pointer branch; a static assertion makes
 * anything that is not a pointer there (structs, unions, complex, __int128)
 * a compile error that says to use a TA_* macro. */

static inline trace_arg_value_t trace_internal_arg_from_value(trace_arg_value_t v, int lit) {
  (void)lit;
  return v;
}
static inline trace_arg_value_t trace_internal_arg_from_bool(bool v, int lit) {
  (void)lit;
  return trace_make_bool_arg_value(v);
}
static inline trace_arg_value_t trace_internal_arg_from_char(char v, int lit) {
  (void)lit;
  return (char)-1 < 0 ? trace_internal_arg_from_signed(v, sizeof(v))
                      : trace_internal_arg_from_unsigned((unsigned char)v, sizeof(v));
}
#define TRACE_INTERNAL_C_INTEGER_MAKER(suffix, type, kind, wide)                             \
  static inline trace_arg_value_t trace_internal_arg_from_##suffix(type v, int lit) {        \
    (void)lit;                                                                              \
    return trace_internal_arg_from_##kind((wide)v, sizeof(v));                              \
  }
TRACE_INTERNAL_C_INTEGER_MAKER(schar, signed char, signed, int64_t)
TRACE_INTERNAL_C_INTEGER_MAKER(uchar, unsigned char, unsigned, uint64_t)
TRACE_INTERNAL_C_INTEGER_MAKER(short, short, signed, int64_t)
TRACE_INTERNAL_C_INTEGER_MAKER(ushort, unsigned short, unsigned, uint64_t)
TRACE_INTERNAL_C_INTEGER_MAKER(int, int, signed, int64_t)
TRACE_INTERNAL_C_INTEGER_MAKER(uint, unsigned int, unsigned, uint64_t)
TRACE_INTERNAL_C_INTEGER_MAKER(long, long, signed, int64_t)
TRACE_INTERNAL_C_INTEGER_MAKER(ulong, unsigned long, unsigned, uint64_t)
TRACE_INTERNAL_C_INTEGER_MAKER(llong, long long, signed, int64_t)
TRACE_INTERNAL_C_INTEGER_MAKER(ullong, unsigned long long, unsigned, uint64_t)
#undef TRACE_INTERNAL_C_INTEGER_MAKER
static inline trace_arg_value_t trace_internal_arg_from_double(double v, int lit) {
  (void)lit;
  return trace_make_double_arg_value(v);
}
static inline trace_arg_value_t trace_internal_arg_from_long_double(long double v, int lit) {
  (void)lit;
  return trace_make_double_arg_value((double)v);
}
static inline trace_arg_value_t trace_internal_arg_from_string(const char* v, int lit) {
  return trace_internal_arg_from_c_string(v, lit);
}
static inline trace_arg_value_t trace_internal_arg_from_pointer(const volatile void* v, int lit) {
  (void)lit;
  return trace_make_pointer_arg_value((uintptr_t)v);
}

/* The type table, once: F(suffix) for each listed type, `other` for the rest. */
#define TRACE_INTERNAL_C_GENERIC(v, F, other)                                         \
  _Generic((v),                                                                       \
      trace_arg_value_t: F(value), _Bool: F(bool), char: F(char), signed char: F(schar), \
      unsigned char: F(uchar), short: F(short), unsigned short: F(ushort), int: F(int), \
      unsigned int: F(uint), long: F(long), unsigned long: F(ulong),                  \
      long long: F(llong), unsigned long long: F(ullong), float: F(double),           \
      double: F(double), long double: F(long_double), char*: F(string),               \
      const char*: F(string), default: other)
#define TRACE_INTERNAL_C_MAKER(suffix) trace_internal_arg_from_##suffix
#define TRACE_INTERNAL_C_LISTED(suffix) 1
/* __builtin_classify_type: 5 is GCC's and Clang's pointer_type_class. */
#define TRACE_INTERNAL_C_CHECK_VALUE(v)                                                     \
  (void)sizeof(struct {                                                                     \
    _Static_assert(TRACE_INTERNAL_C_GENERIC(v, TRACE_INTERNAL_C_LISTED,                     \
                                            __builtin_classify_type(v) == 5),               \
                   "trace: cannot infer the argument type of this value; wrap it in a TA_* " \
                   "macro (TA_INT32, TA_STRING, TA_POINTER, ...)");                         \
    int trace_internal_unused;                                                              \
  })

#define TRACE_INTERNAL_MAKE_VALUE(v)                                                        \
  (TRACE_INTERNAL_C_CHECK_VALUE(v),                                                         \
   TRACE_INTERNAL_C_GENERIC(v, TRACE_INTERNAL_C_MAKER, trace_internal_arg_from_pointer)(    \
       (v), TRACE_INTERNAL_IS_LITERAL(v)))
/* TRACE_DURATION keeps its values until the scope ends; in C that needs
 * nothing more (strings are borrowed, see docs/instrumentation.md). */
#define TRACE_INTERNAL_MAKE_SCOPED_VALUE(v) TRACE_INTERNAL_MAKE_VALUE(v)

#else /* __cplusplus */
/* ---- C++17 inference ----------------------------------------------------- */

namespace trace_internal {

template <size_t N>
struct ArgArray {
  trace_arg_t args[N];
  trace_arg_t* data() { return args; }
};

template <typename T>
struct AlwaysFalse : std::false_type {};

template <typename T>
struct IsOwningString : std::false_type {};
template <typename T>
struct IsStringView : std::false_type {};
#ifdef TRACE_INTERNAL_HAVE_STD_STRING
template <typename Traits, typename Alloc>
struct IsOwningString<std::basic_string<char, Traits, Alloc>> : std::true_type {};
#endif
#ifdef TRACE_INTERNAL_HAVE_STD_STRING_VIEW
template <typename Traits>
struct IsStringView<std::basic_string_view<char, Traits>> : std::true_type {};
#endif

template <typename T>
inline constexpr bool kIsChar = std::is_same_v<std::remove_cv_t<T>, char>;

/* The inferred trace_arg_value_t of `value` (API.md §4). is_literal comes
 * from TRACE_INTERNAL_IS_LITERAL at the call site. */
template <typename T>
inline trace_arg_value_t MakeArgValue(const T& value, bool is_literal = false) {
  using D = std::remove_cv_t<T>;
  if constexpr (std::is_same_v<D, trace_arg_value_t>) {
    return value;
  } else if constexpr (std::is_same_v<D, std::nullptr_t>) {
    return trace_make_null_arg_value();
  } else if constexpr (std::is_same_v<D, bool>) {
    return trace_make_bool_arg_value(value);
  } else if constexpr (std::is_enum_v<D>) {
    return MakeArgValue(static_cast<std::underlying_type_t<D>>(value));
  } else if constexpr (std::is_integral_v<D>) {
    static_assert(sizeof(D) <= 8, "trace: integers wider than 64 bits cannot be traced");
    if constexpr (std::is_signed_v<D>) {
      return trace_internal_arg_from_signed(static_cast<int64_t>(value), sizeof(D));
    } else {
      return trace_internal_arg_from_unsigned(static_cast<uint64_t>(value), sizeof(D));
    }
  } else if constexpr (std::is_floating_point_v<D>) {
    return trace_make_double_arg_value(static_cast<double>(value));
  } else if constexpr (std::is_array_v<D> && kIsChar<std::remove_extent_t<D>>) {
    // A literal is interned; a char buffer is copied up to its first NUL
    // (or its whole extent): the trailing NUL of a literal is never part of
    // the value.
    if (is_literal) return trace_make_string_arg_value(trace_internal_make_literal_ref(value));
    size_t length = 0;
    while (length < std::extent_v<D> && value[length] != '\0') ++length;
    return trace_make_string_arg_value(trace_make_inline_string_ref(value, length));
  } else if constexpr (std::is_array_v<D>) {
    return trace_make_pointer_arg_value(reinterpret_cast<uintptr_t>(&value[0]));
  } else if constexpr (std::is_pointer_v<D> && kIsChar<std::remove_pointer_t<D>>) {
    return trace_internal_arg_from_c_string(value, is_literal);
  } else if constexpr (std::is_pointer_v<D>) {
    return trace_make_pointer_arg_value(reinterpret_cast<uintptr_t>(value));
  } else if constexpr (std::is_function_v<D>) {
    return trace_make_pointer_arg_value(reinterpret_cast<uintptr_t>(&value));
  } else if constexpr (IsOwningString<D>::value || IsStringView<D>::value) {
    return trace_make_string_arg_value(trace_make_inline_string_ref(value.data(), value.size()));
  } else {
    static_assert(AlwaysFalse<D>::value,
                  "trace: cannot infer the argument type of this value; wrap it in a TA_* macro "
                  "(TA_INT32, TA_STRING, TA_POINTER, ...)");
    return trace_make_null_arg_value();
  }
}

/* TRACE_DURATION: the value is kept until the scope ends, and a string value
 * is borrowed, so a temporary std::string would dangle. */
template <typename T>
inline trace_arg_value_t MakeScopedArgValue(T&& value, bool is_literal) {
  static_assert(!(IsOwningString<std::remove_cv_t<std::remove_reference_t<T>>>::value &&
                  !std::is_lvalue_reference_v<T>),
                "trace: TRACE_DURATION keeps string arguments by reference until the scope "
                "ends; a temporary std::string would dangle: store it in a variable first");
  return MakeArgValue(value, is_literal);
}

/* TA_STRING: an inline copy of a C string, std::string or std::string_view. */
inline trace_arg_value_t MakeStringArgValue(const char* string) {
  return trace_make_string_arg_value(trace_make_inline_c_string_ref(string));
}
#ifdef TRACE_INTERNAL_HAVE_STD_STRING
template <typename Traits, typename Alloc>
inline trace_arg_value_t MakeStringArgValue(const std::basic_string<char, Traits, Alloc>& s) {
  return trace_make_string_arg_value(trace_make_inline_string_ref(s.data(), s.size()));
}
#endif
#ifdef TRACE_INTERNAL_HAVE_STD_STRING_VIEW
template <typename Traits>
inline trace_arg_value_t MakeStringArgValue(std::basic_string_view<char, Traits> s) {
  return trace_make_string_arg_value(trace_make_inline_string_ref(s.data(), s.size()));
}
#endif

}  // namespace trace_internal

#define TRACE_INTERNAL_MAKE_VALUE(v) \
  (::trace_internal::MakeArgValue((v), TRACE_INTERNAL_IS_LITERAL(v)))
#define TRACE_INTERNAL_MAKE_SCOPED_VALUE(v) \
  (::trace_internal::MakeScopedArgValue((v), TRACE_INTERNAL_IS_LITERAL(v)))

#endif /* __cplusplus */

#endif /* TRACE_INTERNAL_EVENT_ARGS_H_ */
