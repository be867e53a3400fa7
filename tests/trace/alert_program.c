/* A program that raises alerts, for test_alerts.py (docs/flight-recorder.md):
 *
 *   alert_program [--name NAME] [--alert-at TICK]... [--after N] [--until-stopped]
 *                 [--idle] [--storm COUNT] [--report FILE]
 *
 * Ticks: TRACE_INSTANT "ticks"/"tick" with the argument "n" = 0, 1, 2, ...,
 * one every 20 µs. At each --alert-at tick (right after that tick's event) it
 * raises TRACE_ALERT("ticks", NAME) (NAME from the command line: a run-time
 * name, cut to 14 characters when longer). After the last alert it ticks N
 * more (--after); with --until-stopped it first ticks until tracing has
 * stopped in it (so the N ticks all come after the stop, however slowly the
 * stop arrives), then N more. --storm: COUNT alerts back to back, no ticks.
 * --wait-for PREFIX: after the k-th alert, waits (no ticks) until PREFIX.k.fxt
 * exists (trace record's k-th snapshot), at most 60 s.
 * It writes to FILE (--report), each line flushed as it happens: "alert TICK"
 * before each alert, "stopped TICK" (the first tick after tracing was seen
 * stopped: no tick from it on can be in a trace), "last TICK"; then, with
 * --idle, waits to be killed; otherwise it destroys its provider and exits
 * 0. SIGTERM is held until the report is complete (trace record ends its
 * command with SIGTERM once the trace is written). */
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <trace-provider/provider.h>
#include <trace/event.h>
#include <unistd.h>

enum { MAX_ALERTS = 16 };
/* however slow the machine, a stop comes long before this many ticks */
#define STOP_WAIT_LIMIT UINT64_C(100000000)

static void tick(uint64_t n) {
  TRACE_INSTANT("ticks", "tick", TRACE_SCOPE_THREAD, "n", TA_UINT64(n));
  nanosleep(&(struct timespec){0, 20000}, NULL);
}

int main(int argc, char** argv) {
  const char* name = "flight";
  const char* report = NULL;
  const char* wait_for = NULL;
  uint64_t alerts[MAX_ALERTS];
  size_t alert_count = 0;
  uint64_t after = 0, storm = 0;
  bool until_stopped = false, idle = false;
  for (int i = 1; i < argc; i++) {
    bool more = i + 1 < argc;
    if (strcmp(argv[i], "--name") == 0 && more)
      name = argv[++i];
    else if (strcmp(argv[i], "--alert-at") == 0 && more && alert_count < MAX_ALERTS)
      alerts[alert_count++] = strtoull(argv[++i], NULL, 10);
    else if (strcmp(argv[i], "--after") == 0 && more)
      after = strtoull(argv[++i], NULL, 10);
    else if (strcmp(argv[i], "--storm") == 0 && more)
      storm = strtoull(argv[++i], NULL, 10);
    else if (strcmp(argv[i], "--wait-for") == 0 && more)
      wait_for = argv[++i];
    else if (strcmp(argv[i], "--report") == 0 && more)
      report = argv[++i];
    else if (strcmp(argv[i], "--until-stopped") == 0)
      until_stopped = true;
    else if (strcmp(argv[i], "--idle") == 0)
      idle = true;
    else {
      fprintf(stderr, "alert_program: bad argument '%s'\n", argv[i]);
      return 2;
    }
  }
  sigset_t term;
  sigemptyset(&term);
  sigaddset(&term, SIGTERM);
  sigprocmask(SIG_BLOCK, &term, NULL);
  FILE* out = report ? fopen(report, "w") : NULL;
  if (report && !out) return 1;
  trace_provider_t* provider = trace_provider_create_with_name("alert_program");
  uint64_t n = 0;
  for (uint64_t i = 0; i < storm; i++) TRACE_ALERT("ticks", name);
  for (size_t a = 0; a < alert_count; a++) {
    for (; n <= alerts[a]; n++) tick(n);
    if (out) {
      fprintf(out, "alert %llu\n", (unsigned long long)alerts[a]);
      fflush(out);
    }
    TRACE_ALERT("ticks", name);
    if (wait_for) {
      char path[4096];
      snprintf(path, sizeof(path), "%s.%zu.fxt", wait_for, a + 1);
      struct stat st;
      for (int waited = 0; stat(path, &st) != 0 && waited < 6000; waited++)
        nanosleep(&(struct timespec){0, 10000000}, NULL);
    }
  }
  if (until_stopped) {
    for (uint64_t waited = 0; trace_is_enabled() && waited < STOP_WAIT_LIMIT; waited++) tick(n++);
    if (out) {
      fprintf(out, "stopped %llu\n", (unsigned long long)n);
      fflush(out);
    }
  }
  for (uint64_t i = 0; i < after; i++) tick(n++);
  if (out) {
    fprintf(out, "last %llu\n", (unsigned long long)(n ? n - 1 : 0));
    fclose(out);
  }
  sigprocmask(SIG_UNBLOCK, &term, NULL); /* a SIGTERM that came meanwhile ends it here */
  if (idle)
    for (;;) pause(); /* until killed */
  trace_provider_destroy(provider);
  return 0;
}
