/* The ticking program of test_snapshot.py: records numbered ticks and asks
 * the `trace record` that runs it (its parent) for snapshots at known ticks.
 *
 *   snapshot_ticker [--period-us US] [--no-signal] REQUEST_TICK... COUNT
 *
 * Records TRACE_INSTANT "counter"/"tick" with the argument "counter" = 0 ..
 * COUNT-1, one every US microseconds (default 20; 0: no sleep). Right after
 * recording each REQUEST_TICK (ascending) it sends SIGUSR1 to its parent
 * (unless --no-signal: the test sends it), prints "requested after K"
 * (flushed) and waits for a line on standard input before it goes on: the
 * test answers once trace has written the snapshot, so no tick is recorded
 * while the snapshot is taken and the test knows exactly which ticks came
 * before the request. Then it prints "done COUNT", destroys its provider and
 * exits 0. */
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
  fputs("usage: snapshot_ticker [--period-us US] [--no-signal] REQUEST_TICK... COUNT\n", stderr);
  return 2;
}

static bool parse(const char* text, uint64_t* out) {
  char* end;
  *out = strtoull(text, &end, 10);
  return end != text && *end == '\0';
}

int main(int argc, char** argv) {
  uint64_t period_us = 20;
  bool signal_parent = true;
  int i = 1;
  for (; i < argc; i++) {
    if (strcmp(argv[i], "--period-us") == 0 && i + 1 < argc) {
      if (!parse(argv[++i], &period_us)) return usage();
    } else if (strcmp(argv[i], "--no-signal") == 0) {
      signal_parent = false;
    } else {
      break;
    }
  }
  if (i >= argc) return usage();
  size_t request_count = (size_t)(argc - 1 - i);
  uint64_t* requests = calloc(request_count + 1, sizeof(uint64_t));
  uint64_t count;
  if (!requests) return 1;
  for (size_t k = 0; k < request_count; k++)
    if (!parse(argv[i + (int)k], &requests[k]) || (k > 0 && requests[k] <= requests[k - 1]))
      return usage();
  if (!parse(argv[argc - 1], &count)) return usage();

  trace_provider_t* provider = trace_provider_create_with_name("snapshot_ticker");
  size_t next = 0;
  struct timespec period = {0, (long)(period_us * 1000)};
  for (uint64_t n = 0; n < count; n++) {
    TRACE_INSTANT("counter", "tick", TRACE_SCOPE_THREAD, "counter", TA_UINT64(n));
    if (next < request_count && n == requests[next]) {
      next++;
      if (signal_parent) kill(getppid(), SIGUSR1);
      printf("requested after %llu\n", (unsigned long long)n);
      fflush(stdout);
      char line[64];
      if (!fgets(line, sizeof(line), stdin)) break; /* the test went away */
    }
    if (period_us > 0) nanosleep(&period, NULL);
  }
  printf("done %llu\n", (unsigned long long)count);
  fflush(stdout);
  trace_provider_destroy(provider);
  free(requests);
  return 0;
}
