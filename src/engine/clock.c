/* Timestamp source selection and TSC calibration (see clock.h). */
#include "engine/clock.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#if defined(__x86_64__)
#include <cpuid.h>
#endif

trace_clock_params_t trace_clock__params; /* zero: use_tsc false */

/* 2^e and round-half-up for the non-negative doubles used here, without
 * libm (the engine should not pull it in for init alone). */
static double pow2(unsigned e) {
  double v = 1.0;
  while (e--) v *= 2.0;
  return v;
}
static uint64_t round_u64(double v) { return (uint64_t)(v + 0.5); }

/* Calibration: CAL_SAMPLES points CAL_GAP_NS apart, each the tightest of
 * CAL_TRIES brackets. */
enum { CAL_SAMPLES = 21, CAL_TRIES = 16 };
#define CAL_GAP_NS 1000000L

uint64_t trace_clock__ticks_per_second(void) { return 1000000000u; }

uint64_t trace_clock__monotonic_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts); /* vDSO on x86_64: no syscall */
  return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

const char* trace_clock__source_name(void) {
  return trace_clock__params.use_tsc ? "tsc" : "monotonic";
}

uint64_t trace_clock__tsc_hz(void) {
  const trace_clock_params_t* p = &trace_clock__params;
  if (!p->use_tsc) return 0;
  return round_u64(1e9 * pow2(p->shift) / (double)p->mult);
}

uint64_t trace_clock__tsc_to_ns(uint64_t tsc) {
  if (!trace_clock__params.use_tsc) return 0;
  return trace_clock__tsc_line(&trace_clock__params, tsc);
}

#if defined(__x86_64__)
/* CPUID 0x80000007 EDX bit 8: the TSC runs at a constant rate in all
 * P-/C-states (Intel and AMD both report it there). */
static bool cpu_has_invariant_tsc(void) {
  unsigned a, b, c, d;
  if (!__get_cpuid(0x80000007u, &a, &b, &c, &d)) return false;
  return (d >> 8) & 1u;
}

/* The kernel keeps "tsc" as clocksource only after checking the TSC is stable
 * and synchronized across CPUs; trusting it across threads needs that. */
static bool kernel_uses_tsc(void) {
  FILE* f = fopen("/sys/devices/system/clocksource/clocksource0/current_clocksource", "re");
  if (!f) return false;
  char buf[32] = {0};
  bool ok = fgets(buf, sizeof buf, f) && strcmp(buf, "tsc\n") == 0;
  fclose(f);
  return ok;
}

typedef struct {
  uint64_t tsc, ns;
} cal_point_t;

/* One (TSC, CLOCK_MONOTONIC) pair: the TSC read (fenced so it stays inside
 * the bracket) against the bracket's midpoint, from the narrowest of several
 * tries. Returns the bracket width in ns: the point's error is <= width / 2. */
static uint64_t cal_sample(cal_point_t* out) {
  uint64_t best = UINT64_MAX;
  for (int i = 0; i < CAL_TRIES; i++) {
    uint64_t t0 = trace_clock__monotonic_ns();
    _mm_lfence();
    uint64_t tsc = __rdtsc();
    _mm_lfence();
    uint64_t t1 = trace_clock__monotonic_ns();
    if (t1 >= t0 && t1 - t0 < best) {
      best = t1 - t0;
      out->tsc = tsc;
      out->ns = t0 + (t1 - t0) / 2;
    }
  }
  return best;
}

/* Least-squares line ns = f(tsc) through the samples (more robust than two
 * end points: the slope error shrinks with the number of samples), written
 * as base/mult/shift. Returns false when the data is implausible. */
static bool calibrate(trace_clock_params_t* p) {
  cal_point_t pt[CAL_SAMPLES];
  for (int i = 0; i < CAL_SAMPLES; i++) {
    if (i) nanosleep(&(struct timespec){0, CAL_GAP_NS}, NULL);
    if (cal_sample(&pt[i]) > 100000) return false; /* never a tight bracket */
    if (i && (pt[i].tsc <= pt[i - 1].tsc || pt[i].ns <= pt[i - 1].ns)) return false;
  }
  /* Centre on the first point: the offsets stay small enough for doubles. */
  double mx = 0, my = 0;
  for (int i = 0; i < CAL_SAMPLES; i++) {
    mx += (double)(pt[i].tsc - pt[0].tsc);
    my += (double)(pt[i].ns - pt[0].ns);
  }
  mx /= CAL_SAMPLES;
  my /= CAL_SAMPLES;
  double sxx = 0, sxy = 0;
  for (int i = 0; i < CAL_SAMPLES; i++) {
    double dx = (double)(pt[i].tsc - pt[0].tsc) - mx;
    double dy = (double)(pt[i].ns - pt[0].ns) - my;
    sxx += dx * dx;
    sxy += dx * dy;
  }
  double slope = sxy / sxx;                         /* ns per tick */
  if (!(slope > 1e-3 && slope < 1e3)) return false; /* 1 MHz .. 1 THz */
  /* Largest shift keeping mult < 2^62 (and shift <= 63). */
  unsigned shift = 0;
  while (shift < 63 && slope * pow2(shift + 1) < pow2(62)) shift++;
  p->shift = shift;
  p->mult = (int64_t)round_u64(slope * pow2(shift));
  /* Anchor on the last sample (read just before init returns, so later reads
   * are past it): its fitted time, not its measured one. */
  const cal_point_t* last = &pt[CAL_SAMPLES - 1];
  double fitted = my + slope * ((double)(last->tsc - pt[0].tsc) - mx);
  p->base_tsc = last->tsc;
  p->base_ns = pt[0].ns + round_u64(fitted);
  return true;
}
#endif

int trace_clock__init(void) {
  const char* force = getenv("FXTRACE_CLOCK");
  bool want_tsc, forced = force && *force;
  int result = 0;
  if (forced && strcmp(force, "tsc") == 0) {
    want_tsc = true;
  } else if (forced && strcmp(force, "monotonic") == 0) {
    want_tsc = false;
  } else {
    if (forced) result = -1; /* unknown value: automatic choice */
    forced = false;
#if defined(__x86_64__)
    want_tsc = cpu_has_invariant_tsc() && kernel_uses_tsc();
#else
    want_tsc = false;
#endif
  }

  trace_clock_params_t p = {0};
  if (want_tsc) {
#if defined(__x86_64__)
    if (calibrate(&p))
      p.use_tsc = true;
    else if (forced)
      result = -1;
#else
    result = -1;
#endif
  }
  trace_clock__params = p;
  return result;
}
