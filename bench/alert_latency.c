/* bench_alert_latency: how long from TRACE_ALERT to the trace stopped in the
 * program that raised it, under `trace record --trigger=NAME:stop`
 * (bench/alert_latency.sh runs it; docs/flight-recorder.md).
 *
 *   bench_alert_latency [TICKS_BEFORE]
 *
 * Ticks (TRACE_INSTANT every 20 µs) TICKS_BEFORE times (default 20000),
 * raises TRACE_ALERT("bench", "bench_stop"), then spins on
 * trace_is_enabled() until the stop reaches it, and prints
 * "latency_ns=N": CLOCK_MONOTONIC from just before the alert to the first
 * read of tracing off (the path: the engine thread, the FIFO, the manager,
 * trace record, STOP back through the manager, the provider's stop). It then
 * waits to be ended, as a traced program would. */
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <trace-provider/provider.h>
#include <trace/event.h>
#include <unistd.h>

static uint64_t now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

int main(int argc, char** argv) {
  uint64_t before = argc > 1 ? strtoull(argv[1], NULL, 10) : 20000;
  /* trace record ends its command with SIGTERM once the trace is written:
   * held until the latency is out */
  sigset_t term;
  sigemptyset(&term);
  sigaddset(&term, SIGTERM);
  sigprocmask(SIG_BLOCK, &term, NULL);
  trace_provider_t* provider = trace_provider_create_with_name("bench_alert_latency");
  for (uint64_t n = 0; n < before; n++) {
    TRACE_INSTANT("bench", "tick", TRACE_SCOPE_THREAD, "n", TA_UINT64(n));
    nanosleep(&(struct timespec){0, 20000}, NULL);
  }
  uint64_t t0 = now_ns();
  TRACE_ALERT("bench", "bench_stop");
  uint64_t spins = 0;
  while (trace_is_enabled() && spins < UINT64_C(50000000000)) spins++;
  uint64_t t1 = now_ns();
  printf("latency_ns=%llu\n", (unsigned long long)(t1 - t0));
  fflush(stdout);
  sigprocmask(SIG_UNBLOCK, &term, NULL);
  for (;;) pause();
  trace_provider_destroy(provider);
  return 0;
}
