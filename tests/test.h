/* Not part of the public API: the tests' assertion macros. A failed
 * assertion prints both operands with file and line and exits non-zero, so
 * ctest (one process per test) reports it. */
#ifndef FXTRACE_TESTS_TEST_H_
#define FXTRACE_TESTS_TEST_H_

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* 1 in a ThreadSanitizer build (GCC's __SANITIZE_THREAD__, clang's
 * __has_feature), else 0: a few tests measure what TSan's shadow memory
 * changes (page faults) or do what it reports by design. */
#if defined(__SANITIZE_THREAD__)
#define TEST_UNDER_TSAN 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define TEST_UNDER_TSAN 1
#endif
#endif
#ifndef TEST_UNDER_TSAN
#define TEST_UNDER_TSAN 0
#endif

#define TEST_FAIL(...)                                                \
  do {                                                                \
    fprintf(stderr, "%s:%d: assertion failed: ", __FILE__, __LINE__); \
    fprintf(stderr, __VA_ARGS__);                                     \
    fputc('\n', stderr);                                              \
    exit(1);                                                          \
  } while (0)

/* A condition with a message of its own (printf format). */
#define ASSERT_MSG(cond, ...)            \
  do {                                   \
    if (!(cond)) TEST_FAIL(__VA_ARGS__); \
  } while (0)

#define ASSERT_TRUE(x)             \
  do {                             \
    if (!(x)) TEST_FAIL("%s", #x); \
  } while (0)

#define ASSERT_EQ(a, b)                                                                          \
  do {                                                                                           \
    uint64_t a_ = (uint64_t)(a), b_ = (uint64_t)(b);                                             \
    if (a_ != b_)                                                                                \
      TEST_FAIL("%s == %s (0x%" PRIx64 " vs 0x%" PRIx64 ", %" PRId64 " vs %" PRId64 ")", #a, #b, \
                a_, b_, (int64_t)a_, (int64_t)b_);                                               \
  } while (0)

#define ASSERT_STREQ(a, b)                                                             \
  do {                                                                                 \
    const char *a_ = (a), *b_ = (b);                                                   \
    if (strcmp(a_, b_) != 0) TEST_FAIL("%s == %s (\"%s\" vs \"%s\")", #a, #b, a_, b_); \
  } while (0)

/* Compares n bytes and prints the first difference as hex. */
#define ASSERT_BYTES_EQ(a, b, n)                                                            \
  do {                                                                                      \
    const unsigned char *a_ = (const unsigned char *)(a), *b_ = (const unsigned char *)(b); \
    for (size_t i_ = 0; i_ < (size_t)(n); i_++)                                             \
      if (a_[i_] != b_[i_])                                                                 \
        TEST_FAIL("%s == %s: byte %zu differs (%02x vs %02x)", #a, #b, i_, a_[i_], b_[i_]); \
  } while (0)

#endif /* FXTRACE_TESTS_TEST_H_ */
