/* bench_lttng: the LTTng-UST side of the engine benchmark (bench/README.md).
 * The same scenarios and payloads as bench_fxtrace, through the fxbench
 * tracepoint provider (lttng/fxbench_tp.h). The session (discard mode,
 * per-UID buffers, the fxbench events but `off` enabled) is set up by
 * bench/run; this program checks that it sees it: an enabled scenario whose
 * tracepoint is not enabled exits with status 3 instead of timing a no-op.
 *
 *   scenario     per iteration
 *   off          fxbench:off (2 x int64), never enabled
 *   instant0     fxbench:instant0
 *   instant2     fxbench:instant2 (2 x int64)
 *   instant_str  fxbench:instant_str (a 16-character string)
 *   duration     fxbench:dur_begin + fxbench:dur_end (counted as one event)
 *   paced        fxbench:instant2, paced: --rate events/s per thread in 1 ms
 *                bursts (the sustained-streaming scenario; harness.h)
 *
 * Events lost and bytes per event are read by bench/run from the session
 * after `lttng stop`; this program prints the number of tracepoint calls it
 * made (`calls=`, warm-up included) so that they can be related. */
#include "fxbench_tp.h"
#include "harness.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

/* Not const: the compiler must not fold its length (fxtrace copies it too). */
char g_bench_string[17] = "0123456789abcdef";

static void loop_off(uint64_t n, int t, void* arg) {
  (void)arg;
  for (uint64_t i = 0; i < n; i++) lttng_ust_tracepoint(fxbench, off, (int64_t)i, (int64_t)t);
}

static void loop_instant0(uint64_t n, int t, void* arg) {
  (void)t, (void)arg;
  for (uint64_t i = 0; i < n; i++) lttng_ust_tracepoint(fxbench, instant0);
}

static void loop_instant2(uint64_t n, int t, void* arg) {
  (void)arg;
  for (uint64_t i = 0; i < n; i++)
    lttng_ust_tracepoint(fxbench, instant2, (int64_t)i, (int64_t)t);
}

static void loop_instant_str(uint64_t n, int t, void* arg) {
  (void)t, (void)arg;
  for (uint64_t i = 0; i < n; i++) lttng_ust_tracepoint(fxbench, instant_str, g_bench_string);
}

static void loop_duration(uint64_t n, int t, void* arg) {
  (void)t, (void)arg;
  for (uint64_t i = 0; i < n; i++) {
    lttng_ust_tracepoint(fxbench, dur_begin);
    __asm__ volatile("" ::: "memory"); /* the scope's body */
    lttng_ust_tracepoint(fxbench, dur_end);
  }
}

static void loop_paced(uint64_t n, int t, void* arg) {
  const bench_options_t* o = arg;
  bench_pacer_t p;
  bench_pacer_init(&p, o->rate);
  for (uint64_t i = 0; i < n;) {
    uint64_t b = bench_pacer_next(&p);
    if (b > n - i) b = n - i;
    for (uint64_t j = 0; j < b; j++, i++)
      lttng_ust_tracepoint(fxbench, instant2, (int64_t)i, (int64_t)t);
  }
}

typedef struct scenario {
  const char* name;
  bench_loop_fn fn;
  int calls_per_iteration; /* tracepoint calls (events) per iteration */
  int expect_enabled;
} scenario_t;

int main(int argc, char** argv) {
  bench_options_t o;
  bench_parse_options(argc, argv, &o,
                      " [--rate N]\n  scenarios: off instant0 instant2 instant_str duration paced");
  /* Read the tracepoint states after the constructor has registered with
   * lttng-sessiond (it waits up to LTTNG_UST_REGISTER_TIMEOUT ms). */
  int enabled_off = lttng_ust_tracepoint_enabled(fxbench, off) != 0;
  int enabled_i0 = lttng_ust_tracepoint_enabled(fxbench, instant0) != 0;
  int enabled_i2 = lttng_ust_tracepoint_enabled(fxbench, instant2) != 0;
  int enabled_str = lttng_ust_tracepoint_enabled(fxbench, instant_str) != 0;
  int enabled_dur = lttng_ust_tracepoint_enabled(fxbench, dur_begin) != 0 &&
                    lttng_ust_tracepoint_enabled(fxbench, dur_end) != 0;
  const struct {
    scenario_t s;
    int enabled;
  } table[] = {
      {{"off", loop_off, 1, 0}, enabled_off},
      {{"instant0", loop_instant0, 1, 1}, enabled_i0},
      {{"instant2", loop_instant2, 1, 1}, enabled_i2},
      {{"instant_str", loop_instant_str, 1, 1}, enabled_str},
      {{"duration", loop_duration, 2, 1}, enabled_dur},
      {{"paced", loop_paced, 1, 1}, enabled_i2},
  };
  const scenario_t* sc = NULL;
  int enabled = 0;
  for (size_t i = 0; i < sizeof table / sizeof table[0]; i++)
    if (!strcmp(table[i].s.name, o.scenario)) sc = &table[i].s, enabled = table[i].enabled;
  if (!sc) {
    fprintf(stderr, "bench_lttng: unknown scenario %s\n", o.scenario);
    return 2;
  }
  if (enabled != sc->expect_enabled) {
    fprintf(stderr,
            "bench_lttng: tracepoint for %s is %s, expected %s: is an LTTng session with the "
            "fxbench events running (bench/run sets one up)?\n",
            sc->name, enabled ? "enabled" : "disabled", sc->expect_enabled ? "enabled" : "disabled");
    return 3;
  }
  bench_timing_t t;
  if (bench_run(&o, sc->fn, &o, &t) != 0) return 1;
  char extra[160];
  snprintf(extra, sizeof extra, "calls=%" PRIu64 " tracepoints_per_event=%d rate=%" PRIu64,
           (uint64_t)o.threads * (o.warmup + o.events) * (uint64_t)sc->calls_per_iteration,
           sc->calls_per_iteration, o.rate);
  bench_print_result("lttng", &o, &t, extra);
  return 0;
}
