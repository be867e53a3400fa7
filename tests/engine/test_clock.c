/* The engine clock (clock.h): both sources, forced through FXTRACE_CLOCK,
 * agree with CLOCK_MONOTONIC, never go backwards on one thread, and the TSC
 * conversion exported for ftrace is the hot path's line. No speed asserts. */
#include <time.h>

#include "engine/clock.h"
#include "test.h"

/* |now_ns - CLOCK_MONOTONIC| must stay under this (50 us): generous against
 * the measured calibration error (well under 1 us) so that a loaded machine
 * does not fail the test, tight enough to catch a wrong rate or base. */
#define TOLERANCE_NS 50000

static int64_t abs64(int64_t v) { return v < 0 ? -v : v; }

/* Offset of now_ns from the midpoint of a CLOCK_MONOTONIC bracket around it,
 * from the tightest of a few tries (a preempted try has a wide bracket). */
static int64_t offset_from_monotonic(void) {
  uint64_t best_width = UINT64_MAX;
  int64_t offset = 0;
  for (int i = 0; i < 50; i++) {
    uint64_t t0 = trace_clock__monotonic_ns();
    uint64_t ns = trace_clock__now_ns();
    uint64_t t1 = trace_clock__monotonic_ns();
    if (t1 - t0 < best_width) {
      best_width = t1 - t0;
      offset = (int64_t)(ns - (t0 + (t1 - t0) / 2));
    }
  }
  return offset;
}

static void check_monotonic_reads(void) {
  uint64_t prev = trace_clock__now_ns();
  for (int i = 0; i < 1000000; i++) {
    uint64_t now = trace_clock__now_ns();
    if (now < prev) TEST_FAIL("read %d went back: %" PRIu64 " < %" PRIu64, i, now, prev);
    prev = now;
  }
}

static void check_agreement(const char* source) {
  int64_t at_init = offset_from_monotonic();
  nanosleep(&(struct timespec){0, 200000000}, NULL);
  int64_t after = offset_from_monotonic();
  fprintf(stderr,
          "%s: offset from CLOCK_MONOTONIC %" PRId64 " ns at init, %" PRId64 " ns 200 ms later\n",
          source, at_init, after);
  ASSERT_TRUE(abs64(at_init) < TOLERANCE_NS);
  ASSERT_TRUE(abs64(after) < TOLERANCE_NS);
}

#if defined(__x86_64__)
static void check_tsc_to_ns(void) {
  /* A converted TSC read lies between two hot-path reads around it. */
  for (int i = 0; i < 1000; i++) {
    uint64_t a = trace_clock__now_ns();
    uint64_t b = trace_clock__tsc_to_ns(__rdtsc());
    uint64_t c = trace_clock__now_ns();
    ASSERT_TRUE(a <= b && b <= c);
  }
  /* It is the same line, including before the calibration anchor (ftrace
   * events older than init): monotonic and ~linear across base_tsc. */
  uint64_t hz = trace_clock__tsc_hz();
  ASSERT_TRUE(hz > 1000000 && hz < 100000000000ull);
  uint64_t base = trace_clock__params.base_tsc;
  uint64_t prev = trace_clock__tsc_to_ns(base - 2 * hz);
  for (uint64_t t = base - 2 * hz; t < base + 2 * hz; t += hz / 7 + 1) {
    uint64_t ns = trace_clock__tsc_to_ns(t);
    ASSERT_TRUE(ns >= prev);
    prev = ns;
  }
  ASSERT_EQ(trace_clock__tsc_to_ns(base), trace_clock__params.base_ns);
  int64_t second = (int64_t)(trace_clock__tsc_to_ns(base + hz) - trace_clock__params.base_ns);
  int64_t before = (int64_t)(trace_clock__params.base_ns - trace_clock__tsc_to_ns(base - hz));
  ASSERT_TRUE(abs64(second - 1000000000) <= 1);
  ASSERT_TRUE(abs64(before - 1000000000) <= 1);
}
#endif

static void run(const char* source) {
  setenv("FXTRACE_CLOCK", source, 1);
  int rc = trace_clock__init();
#if !defined(__x86_64__)
  if (strcmp(source, "tsc") == 0) { /* no TSC: refused, monotonic used */
    ASSERT_EQ(rc, -1);
    ASSERT_STREQ(trace_clock__source_name(), "monotonic");
    return;
  }
#endif
  ASSERT_EQ(rc, 0);
  ASSERT_STREQ(trace_clock__source_name(), source);
  ASSERT_EQ(trace_clock__ticks_per_second(), 1000000000u);
  check_agreement(source);
  check_monotonic_reads();
  if (strcmp(source, "tsc") == 0) {
#if defined(__x86_64__)
    fprintf(stderr, "tsc: %" PRIu64 " Hz, shift %u\n", trace_clock__tsc_hz(),
            trace_clock__params.shift);
    check_tsc_to_ns();
#endif
  } else {
    ASSERT_EQ(trace_clock__tsc_hz(), 0);
    ASSERT_EQ(trace_clock__tsc_to_ns(12345), 0);
  }
}

int main(void) {
  /* Usable before init: CLOCK_MONOTONIC. */
  ASSERT_STREQ(trace_clock__source_name(), "monotonic");
  ASSERT_TRUE(abs64(offset_from_monotonic()) < TOLERANCE_NS);

  run("tsc");
  run("monotonic");

  /* An unknown value is reported and the automatic choice still works. */
  setenv("FXTRACE_CLOCK", "hpet", 1);
  ASSERT_EQ(trace_clock__init(), -1);
  ASSERT_TRUE(abs64(offset_from_monotonic()) < TOLERANCE_NS);
  unsetenv("FXTRACE_CLOCK");
  ASSERT_EQ(trace_clock__init(), 0);
  fprintf(stderr, "automatic choice: %s\n", trace_clock__source_name());
  ASSERT_TRUE(abs64(offset_from_monotonic()) < TOLERANCE_NS);
  return 0;
}
