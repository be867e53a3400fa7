/* A tiny traced program for the file-mode tests (test_file_mode.py).
 *
 *   traced_program N [--no-destroy | --wait-stdin]
 *       Two worker threads ("worker-0", "worker-1") each record one instant
 *       "marker" event in each of the categories gfx.paint, gfx.layout and
 *       other, then N instant events test/"event" with arguments
 *       "thread" = 0 or 1 and "n" = 0 .. N-1; then the program calls
 *       trace_provider_destroy() (or, with --no-destroy, leaves the archive
 *       to the exit handler) and exits 0. Prints "attempted M" (M = the event
 *       records the program tried to write) on stdout. The threads keep in
 *       step (a barrier every 1024 events), so that each thread's newest
 *       events are among the newest of the trace (circular mode keeps them).
 *       --wait-stdin: after "attempted M", wait for a line (or EOF) on stdin
 *       before destroying the provider (the test fills the disk meanwhile).
 *   traced_program --until-killed
 *       The same, with numbered events forever; prints "ready" (flushed)
 *       once each thread has recorded 100000 events, then records more
 *       slowly (a pause every 64 events) until it is killed.
 *
 * Events are written with the <trace/event.h> macros. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "trace-provider/provider.h"
#include "trace/event.h"

enum { THREADS = 2, READY_EVENTS = 100000, MARKERS = 3, LOCKSTEP = 1024 };

static uint64_t events_per_thread; /* 0: forever */
static uint64_t progress[THREADS]; /* events recorded so far, per thread */
static bool ready;                 /* --until-killed: "ready" was printed */
static pthread_barrier_t lockstep;

#define INSTANT(category, name, thread, n) \
  TRACE_INSTANT(category, name, TRACE_SCOPE_THREAD, "thread", TA_UINT64(thread), "n", TA_UINT64(n))

static void* worker(void* arg) {
  uint64_t thread = (uint64_t)(uintptr_t)arg;
  char name[16];
  snprintf(name, sizeof(name), "worker-%u", (unsigned)thread);
  pthread_setname_np(pthread_self(), name);
  INSTANT("gfx.paint", "marker", thread, 0);
  INSTANT("gfx.layout", "marker", thread, 0);
  INSTANT("other", "marker", thread, 0);
  for (uint64_t n = 0; events_per_thread == 0 || n < events_per_thread; n++) {
    INSTANT("test", "event", thread, n);
    __atomic_store_n(&progress[thread], n + 1, __ATOMIC_RELAXED);
    if (n % LOCKSTEP == LOCKSTEP - 1) pthread_barrier_wait(&lockstep);
    /* Once the test knows data exists, slow down: the file (streaming) need
     * not grow much more before the kill. */
    if (n % 64 == 63 && __atomic_load_n(&ready, __ATOMIC_RELAXED)) usleep(100);
  }
  return NULL;
}

static int usage(void) {
  fputs("usage: traced_program N [--no-destroy | --wait-stdin] | traced_program --until-killed\n",
        stderr);
  return 2;
}

int main(int argc, char** argv) {
  bool until_killed = false, destroy = true, wait_stdin = false;
  if (argc == 2 && strcmp(argv[1], "--until-killed") == 0) {
    until_killed = true;
  } else if (argc >= 2 && argc <= 3) {
    char* end;
    events_per_thread = strtoull(argv[1], &end, 10);
    if (*end || end == argv[1] || events_per_thread == 0) return usage();
    if (argc == 3) {
      if (strcmp(argv[2], "--wait-stdin") == 0)
        wait_stdin = true;
      else if (strcmp(argv[2], "--no-destroy") == 0)
        destroy = false;
      else
        return usage();
    }
  } else {
    return usage();
  }

  trace_provider_t* provider = trace_provider_create_with_name("traced_program");
  if (!provider) {
    fputs("traced_program: trace_provider_create_with_name failed\n", stderr);
    return 1;
  }
  pthread_t threads[THREADS];
  pthread_barrier_init(&lockstep, NULL, THREADS);
  for (unsigned i = 0; i < THREADS; i++)
    if (pthread_create(&threads[i], NULL, worker, (void*)(uintptr_t)i) != 0) {
      fputs("traced_program: pthread_create failed\n", stderr);
      return 1;
    }
  if (until_killed) {
    for (;;) {
      bool all = true;
      for (unsigned i = 0; i < THREADS; i++)
        if (__atomic_load_n(&progress[i], __ATOMIC_RELAXED) < READY_EVENTS) all = false;
      if (all) break;
      usleep(1000);
    }
    __atomic_store_n(&ready, true, __ATOMIC_RELAXED);
    fputs("ready\n", stdout);
    fflush(stdout);
    for (;;) pause();
  }
  for (unsigned i = 0; i < THREADS; i++) pthread_join(threads[i], NULL);
  printf("attempted %llu\n", (unsigned long long)(THREADS * (events_per_thread + MARKERS)));
  fflush(stdout);
  if (wait_stdin) {
    char line[16];
    (void)!fgets(line, sizeof(line), stdin);
  }
  if (destroy) trace_provider_destroy(provider);
  return 0;
}
