/* ns per timestamp read: the engine clock on each source against a bare
 * clock_gettime(CLOCK_MONOTONIC), plus the TSC line's offset from
 * CLOCK_MONOTONIC over a few seconds (the calibration's rate error).
 * Prints only; nothing is asserted. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "engine/clock.h"

enum { READS = 20000000 };

static double ns_per_read(uint64_t (*read)(void)) {
  uint64_t sink = 0, t0 = trace_clock__monotonic_ns();
  for (int i = 0; i < READS; i++) sink += read();
  uint64_t t1 = trace_clock__monotonic_ns();
  __asm__ volatile("" : : "r"(sink));
  return (double)(t1 - t0) / READS;
}

static uint64_t engine_read(void) { return trace_clock__now_ns(); }
static uint64_t monotonic_read(void) { return trace_clock__monotonic_ns(); }

/* now_ns minus the midpoint of the tightest CLOCK_MONOTONIC bracket. */
static int64_t offset(void) {
  uint64_t best = UINT64_MAX;
  int64_t off = 0;
  for (int i = 0; i < 100; i++) {
    uint64_t a = trace_clock__monotonic_ns(), ns = trace_clock__now_ns(),
             b = trace_clock__monotonic_ns();
    if (b - a < best) best = b - a, off = (int64_t)(ns - (a + (b - a) / 2));
  }
  return off;
}

int main(void) {
  printf("clock_gettime(CLOCK_MONOTONIC): %.1f ns/read\n", ns_per_read(monotonic_read));
  setenv("FXTRACE_CLOCK", "monotonic", 1);
  trace_clock__init();
  printf("engine clock, monotonic:        %.1f ns/read\n", ns_per_read(engine_read));
  setenv("FXTRACE_CLOCK", "tsc", 1);
  if (trace_clock__init() != 0) {
    printf("engine clock, tsc: unavailable\n");
    return 0;
  }
  int64_t off0 = offset();
  printf("engine clock, tsc:              %.1f ns/read (%" PRIu64 " Hz)\n",
         ns_per_read(engine_read), trace_clock__tsc_hz());
  for (int s = 1; s <= 5; s++) {
    uint64_t t0 = trace_clock__monotonic_ns();
    while (trace_clock__monotonic_ns() - t0 < 1000000000u)
      nanosleep(&(struct timespec){0, 50000000}, NULL);
    int64_t off = offset();
    printf("tsc offset from CLOCK_MONOTONIC after ~%d s: %" PRId64 " ns (%.2f ppm since init)\n", s,
           off, (double)(off - off0) / (s * 1e3));
  }
  return 0;
}
