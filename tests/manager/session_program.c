/* A traced program for the concurrent-sessions acceptance tests
 * (test_sessions_acceptance.py): one real provider (libtrace-provider on the
 * real engine) driven by commands on its standard input, one a line:
 *
 *   emit K   K steps; step n (counting on from the previous batches) records
 *            TRACE_INSTANT "seq"/"tick" then "other"/"tock", each with the
 *            argument "n" = n; then prints "emitted TOTAL" (flushed)
 *   quit     destroys the provider and exits 0
 *
 * At start it prints "ready PID" once its provider is created (registration
 * goes on in the background: the test waits for the manager to list it). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <trace-provider/provider.h>
#include <trace/event.h>
#include <unistd.h>

int main(void) {
  trace_provider_t* provider = trace_provider_create_with_name("session_program");
  printf("ready %d\n", (int)getpid());
  fflush(stdout);
  uint64_t n = 0;
  char line[128];
  while (fgets(line, sizeof(line), stdin)) {
    unsigned long long k;
    if (sscanf(line, "emit %llu", &k) == 1) {
      for (uint64_t i = 0; i < k; i++, n++) {
        TRACE_INSTANT("seq", "tick", TRACE_SCOPE_THREAD, "n", TA_UINT64(n));
        TRACE_INSTANT("other", "tock", TRACE_SCOPE_THREAD, "n", TA_UINT64(n));
      }
      printf("emitted %llu\n", (unsigned long long)n);
      fflush(stdout);
    } else if (strncmp(line, "quit", 4) == 0) {
      break;
    } else {
      fprintf(stderr, "session_program: unknown command %s", line);
      return 2;
    }
  }
  trace_provider_destroy(provider);
  return 0;
}
