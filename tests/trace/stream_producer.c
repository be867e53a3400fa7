/* The producer of the streaming acceptance test (test_streaming.py): a
 * provider that records one instant event after another as fast as it can,
 * for SECONDS (or until MAX_EVENTS), then prints how many it attempted.
 *
 *   stream_producer SECONDS [MAX_EVENTS]
 *
 * It registers synchronously and waits to be started, so every event it
 * counts is attempted while the trace runs (the trace stops only after it
 * exits: `trace record -- stream_producer ...`). Each event carries its
 * sequence number ("n"), so the test can also check for duplicates. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include <trace-provider/provider.h>
#include <trace/event.h>

static double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

int main(int argc, char** argv) {
  if (argc < 2 || argc > 3) {
    fprintf(stderr, "usage: stream_producer SECONDS [MAX_EVENTS]\n");
    return 2;
  }
  double seconds = atof(argv[1]);
  uint64_t max_events = argc == 3 ? strtoull(argv[2], NULL, 10) : UINT64_MAX;
  bool started = false;
  trace_provider_t* provider = trace_provider_create_synchronously("stream_producer", &started);
  for (int i = 0; started && !TRACE_ENABLED() && i < 5000; i++)
    nanosleep(&(struct timespec){0, 1000000}, NULL);
  if (!TRACE_ENABLED()) {
    fprintf(stderr, "stream_producer: tracing was not started\n");
    trace_provider_destroy(provider);
    return 1;
  }
  uint64_t attempted = 0;
  double end = now_s() + seconds;
  while (attempted < max_events) {
    for (int i = 0; i < 1024 && attempted < max_events; i++) {
      TRACE_INSTANT("stream", "tick", TRACE_SCOPE_THREAD, "n", TA_UINT64(attempted));
      attempted++;
    }
    if (now_s() >= end) break;
  }
  trace_provider_destroy(provider); /* an orderly stop: the manager gets STOPPED */
  printf("stream_producer: attempted %llu events\n", (unsigned long long)attempted);
  return 0;
}
