/* TRACE_EVENT() from a signal handler in oneshot mode, where each thread
 * writes an event's format itself before its first record of it
 * (src/engine/tracepoints.c): a handler that interrupts its thread while
 * that thread writes a format (holding the formats' lock) and records
 * another event for the first time on the thread must not wait for the
 * lock (a self-deadlock), nor for the engine's lock when it interrupts the
 * thread's first attach (writer.c); every record in the archive follows its
 * format. */
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <unistd.h>

#include "engine/harness.h"
#include "test.h"
#include "trace-reader/formats.h"
#include "trace-reader/reader.h"
#include "trace/event.h"
#include "tracepoint/tp_test.h"

enum { ROUNDS = 300, HANG_S = 120 };

static atomic_int phase; /* 0 starting, 1 recording, 2 done */

static void on_usr1(int sig) {
  (void)sig;
  trace_tp_test_fp(1.0, 2.0f, NULL);
}

static void on_alarm(int sig) {
  (void)sig;
  static const char m[] = "FAIL: a thread hangs in a TRACE_EVENT() record (signal handler)\n";
  ssize_t n = write(STDERR_FILENO, m, sizeof(m) - 1);
  (void)n;
  _exit(1);
}

static void* victim(void* arg) {
  (void)arg;
  TRACE_INSTANT("tp_test", "attach", TRACE_SCOPE_THREAD); /* the writer exists */
  atomic_store(&phase, 1);
  for (int i = 0; i < 3; i++) trace_tp_test_ints(1, 2, 3, 4, 5, 6, 7, 8, true);
  atomic_store(&phase, 2);
  return NULL;
}

/* Every tp_test_fp/ints record in the archive comes after its format. */
static void check_order(harness_t* h) {
  size_t size;
  const uint8_t* fxt = harness_archive(h, &size);
  trace_reader_t* r = trace_reader_open_memory(fxt, size, NULL);
  trace_format_set_t* set = trace_format_set_new();
  trace_record_t rec;
  while (trace_reader_next(r, &rec) == TRACE_READ_RECORD) {
    ASSERT_TRUE(trace_format_set_add_record(set, &rec, NULL) >= 0);
    if (rec.type != 4 || rec.event.name.length < 8 ||
        memcmp(rec.event.name.data, "tp_test_", 8) != 0)
      continue;
    ASSERT_MSG(trace_format_set_find_event(set, &rec) != NULL,
               "an event at byte %" PRIu64 " comes before its format", rec.offset);
  }
  trace_format_set_free(set);
  trace_reader_close(r);
}

int main(void) {
  struct sigaction sa;
  memset(&sa, 0, sizeof(sa));
  sa.sa_handler = on_usr1;
  ASSERT_EQ(sigaction(SIGUSR1, &sa, NULL), 0);
  signal(SIGALRM, on_alarm);
  alarm(HANG_S); /* a hang detector, not a timing: a round takes milliseconds */
  for (int round = 0; round < ROUNDS; round++) {
    harness_t h;
    ASSERT_EQ(harness_start(&h, TRACE_BUFFERING_MODE_ONESHOT, 1 << 20, "tp_test"), 0);
    atomic_store(&phase, 0);
    pthread_t t;
    ASSERT_EQ(pthread_create(&t, NULL, victim, NULL), 0);
    /* from its start: a handler may interrupt the thread's first attach too */
    while (atomic_load(&phase) < 2) pthread_kill(t, SIGUSR1);
    ASSERT_EQ(pthread_join(t, NULL), 0);
    harness_stop(&h);
    check_order(&h);
    harness_free(&h);
  }
  alarm(0);
  printf("ok\n");
  return 0;
}
