/* ns per timestamp read: the engine clock on each source against a bare
 * clock_gettime(CLOCK_MONOTONIC) called here, plus the TSC line's offset
 * from CLOCK_MONOTONIC over a few seconds (the calibration's rate error).
 * Prints only; nothing is asserted.
 *
 * The reads are timed in rounds (ROUNDS, each row once per round, in turn),
 * so that a slow phase of a shared machine hits every row alike; each row
 * is the median over the rounds, and "engine / clock_gettime" is the median
 * of the rounds' own ratios (the issue 20 target: at most 1.05). */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "engine/clock.h"

enum { READS = 2000000, ROUNDS = 15 };

/* clock_gettime itself, as a program calls it (libc, then the vDSO). */
static uint64_t libc_monotonic_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static double ns_per_read(uint64_t (*read)(void)) {
  uint64_t sink = 0, t0 = libc_monotonic_ns();
  for (int i = 0; i < READS; i++) sink += read();
  uint64_t t1 = libc_monotonic_ns();
  __asm__ volatile("" : : "r"(sink));
  return (double)(t1 - t0) / READS;
}

static uint64_t engine_read(void) { return trace_clock__now_ns(); }

static int by_value(const void* a, const void* b) {
  double x = *(const double*)a, y = *(const double*)b;
  return x < y ? -1 : x > y;
}
static double median(double* v, int n) {
  qsort(v, (size_t)n, sizeof(*v), by_value);
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/* now_ns minus the midpoint of the tightest CLOCK_MONOTONIC bracket. */
static int64_t offset(void) {
  uint64_t best = UINT64_MAX;
  int64_t off = 0;
  for (int i = 0; i < 100; i++) {
    uint64_t a = libc_monotonic_ns(), ns = trace_clock__now_ns(), b = libc_monotonic_ns();
    if (b - a < best) best = b - a, off = (int64_t)(ns - (a + (b - a) / 2));
  }
  return off;
}

int main(void) {
  /* rows: clock_gettime, engine monotonic, engine tsc (if available) */
  double libc[ROUNDS], mono[ROUNDS], tsc[ROUNDS], ratio[ROUNDS];
  setenv("FXTRACE_CLOCK", "tsc", 1);
  int have_tsc = trace_clock__init() == 0;
  trace_clock_params_t tsc_params = trace_clock__params;
  setenv("FXTRACE_CLOCK", "monotonic", 1);
  trace_clock__init();
  trace_clock_params_t mono_params = trace_clock__params;
  for (int r = 0; r < ROUNDS; r++) {
    libc[r] = ns_per_read(libc_monotonic_ns);
    trace_clock__params = mono_params;
    mono[r] = ns_per_read(engine_read);
    ratio[r] = mono[r] / libc[r];
    if (have_tsc) {
      trace_clock__params = tsc_params;
      tsc[r] = ns_per_read(engine_read);
    }
  }
  printf("clock_gettime(CLOCK_MONOTONIC): %.1f ns/read\n", median(libc, ROUNDS));
  printf("engine clock, monotonic:        %.1f ns/read (engine / clock_gettime: %.3f)\n",
         median(mono, ROUNDS), median(ratio, ROUNDS));
  if (!have_tsc) {
    printf("engine clock, tsc: unavailable\n");
    return 0;
  }
  trace_clock__params = tsc_params;
  int64_t off0 = offset();
  printf("engine clock, tsc:              %.1f ns/read (%" PRIu64 " Hz)\n", median(tsc, ROUNDS),
         trace_clock__tsc_hz());
  for (int s = 1; s <= 5; s++) {
    uint64_t t0 = libc_monotonic_ns();
    while (libc_monotonic_ns() - t0 < 1000000000u) nanosleep(&(struct timespec){0, 50000000}, NULL);
    int64_t off = offset();
    printf("tsc offset from CLOCK_MONOTONIC after ~%d s: %" PRId64 " ns (%.2f ppm since init)\n", s,
           off, (double)(off - off0) / (s * 1e3));
  }
  return 0;
}
