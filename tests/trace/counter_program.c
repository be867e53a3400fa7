/* The README's instrumentation example as a test program (test_edges.py):
 * trace_provider_create_with_name() at the top of main, then a loop of
 * TRACE_INSTANT events carrying a counter.
 *
 *   counter_program [--sleep-ms MS] [--then-pause] [--wait-go] COUNT
 *
 * --sleep-ms: sleep that long before creating the provider (a provider
 * created later in the program). The loop records instant events
 * "counter"/"tick" with the argument "counter" = 0 .. COUNT-1, then prints
 * "pid P attempted COUNT" (flushed). --then-pause: then waits to be killed
 * (the test SIGKILLs it, so the count of attempts is exact); otherwise it
 * destroys the provider and exits 0. --wait-go: once the provider is
 * created, prints "ready pid P" (flushed) and waits for a line on its
 * standard input before the loop (the test stops the manager meanwhile, so
 * that a streaming buffer surely fills). */
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <trace-provider/provider.h>
#include <trace/event.h>
#include <unistd.h>

static int usage(void) {
  fputs("usage: counter_program [--sleep-ms MS] [--then-pause] [--wait-go] COUNT\n", stderr);
  return 2;
}

int main(int argc, char** argv) {
  long sleep_ms = 0;
  bool then_pause = false, wait_go = false;
  int i = 1;
  for (; i < argc - 1; i++) {
    if (strcmp(argv[i], "--sleep-ms") == 0 && i + 1 < argc - 1) {
      sleep_ms = atol(argv[++i]);
    } else if (strcmp(argv[i], "--then-pause") == 0) {
      then_pause = true;
    } else if (strcmp(argv[i], "--wait-go") == 0) {
      wait_go = true;
    } else {
      return usage();
    }
  }
  if (i != argc - 1) return usage();
  char* end;
  uint64_t count = strtoull(argv[i], &end, 10);
  if (*end || end == argv[i]) return usage();
  if (sleep_ms > 0)
    nanosleep(&(struct timespec){sleep_ms / 1000, (sleep_ms % 1000) * 1000000}, NULL);

  trace_provider_t* provider = trace_provider_create_with_name("counter_program");
  if (wait_go) {
    printf("ready pid %d\n", (int)getpid());
    fflush(stdout);
    char line[16];
    if (!fgets(line, sizeof(line), stdin)) return 1;
  }
  for (uint64_t n = 0; n < count; n++)
    TRACE_INSTANT("counter", "tick", TRACE_SCOPE_THREAD, "counter", TA_UINT64(n));
  printf("pid %d attempted %llu\n", (int)getpid(), (unsigned long long)count);
  fflush(stdout);
  if (then_pause)
    for (;;) pause(); /* until killed */
  trace_provider_destroy(provider);
  return 0;
}
