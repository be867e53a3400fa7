/* Test fixture for the names section (test_names.py, part exec): a process
 * renamed, then replaced by exec, whose threads rename themselves after they
 * have written events (so their provider's own records carry names that are
 * stale at the end).
 *
 *   names_rename_exec            prctl(PR_SET_NAME, "before-exec"), then
 *                                exec of itself with "stage2"
 *   names_rename_exec stage2     a provider (category "names"); a thread
 *                                named "t-first" writes an event, renames
 *                                itself "t-second" and ends; the main thread
 *                                writes an event, renames itself
 *                                "main-renamed", writes one more and ends.
 *
 * At the end the process is named after its program, "names_rename_exec"
 * (longer than a comm: only the exec says it whole), the main thread
 * "main-renamed" and the other thread "t-second". Prints "thread TID" for
 * the second thread.
 *
 * With NAMES_SWITCHES=N in its environment, stage 2 first makes 2N context
 * switches (N round trips through two pipes with a helper thread) before
 * the renames, so that a small oneshot kernel buffer is full before them
 * (part exec_full). A thread started before them waits until then, names
 * itself "t-kept", writes an event and ends (it never renames itself after
 * it wrote, but the kernel's fork event kept in the buffer names it after
 * the main thread); it prints "kept TID".
 *
 *   names_rename_exec explicit   a provider that names its process
 *                                "my-service (instance 3)", its main thread
 *                                "main-loop-with-a-long-name" and a second
 *                                thread "worker pool #2" with
 *                                TRACE_KERNEL_OBJECT (longer than a comm;
 *                                the thread after it first wrote), each
 *                                writing an event; prints "thread TID".
 *                                With NAMES_FILL=N it then writes N events
 *                                (a small circular buffer wraps past the
 *                                names); with NAMES_EXEC=plain or bare it
 *                                then execs itself with that argument:
 *   names_rename_exec plain      a provider that writes an event and names
 *                                nothing (its names are its program's and
 *                                /proc's);
 *   names_rename_exec bare       no provider: sleeps 50 ms and ends. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "trace-provider/provider.h"
#include "trace/event.h"

static void sleep_ms(long ms) { nanosleep(&(struct timespec){0, ms * 1000000L}, NULL); }

static int ping[2], pong[2];

static void* echo_main(void* arg) {
  (void)arg;
  char c;
  while (read(ping[0], &c, 1) == 1 && c == 'p')
    if (write(pong[1], &c, 1) != 1) break;
  return NULL;
}

/* n round trips with a helper thread: 2n context switches at least. */
static void switch_storm(long n) {
  if (pipe(ping) != 0 || pipe(pong) != 0) return;
  pthread_t echo;
  if (pthread_create(&echo, NULL, echo_main, NULL) != 0) return;
  char c = 'p';
  for (long i = 0; i < n; i++)
    if (write(ping[1], &c, 1) != 1 || read(pong[0], &c, 1) != 1) break;
  c = 'q';
  if (write(ping[1], &c, 1) != 1) perror("write");
  pthread_join(echo, NULL);
}

static int go[2];

static void* kept_main(void* arg) {
  (void)arg;
  char c;
  if (read(go[0], &c, 1) != 1) return NULL;
  prctl(PR_SET_NAME, "t-kept");
  printf("kept %ld\n", (long)syscall(SYS_gettid));
  fflush(stdout);
  TRACE_INSTANT("names", "kept", TRACE_SCOPE_THREAD);
  return NULL;
}

static void* thread_main(void* arg) {
  (void)arg;
  prctl(PR_SET_NAME, "t-first");
  printf("thread %ld\n", (long)syscall(SYS_gettid));
  fflush(stdout);
  TRACE_INSTANT("names", "first", TRACE_SCOPE_THREAD);
  sleep_ms(10);
  prctl(PR_SET_NAME, "t-second");
  sleep_ms(10);
  return NULL;
}

static void* named_main(void* arg) {
  (void)arg;
  printf("thread %ld\n", (long)syscall(SYS_gettid));
  fflush(stdout);
  TRACE_INSTANT("names", "before", TRACE_SCOPE_THREAD);
  TRACE_KERNEL_OBJECT(getpid(), syscall(SYS_gettid), "worker pool #2");
  TRACE_INSTANT("names", "after", TRACE_SCOPE_THREAD);
  return NULL;
}

static char* argv0;

static int explicit_names(void) {
  bool started = false;
  trace_provider_t* provider = trace_provider_create_synchronously("names", &started);
  for (int i = 0; started && !TRACE_ENABLED() && i < 1000; i++) sleep_ms(1);
  TRACE_KERNEL_OBJECT(getpid(), 0, "my-service (instance 3)");
  TRACE_KERNEL_OBJECT(getpid(), syscall(SYS_gettid), "main-loop-with-a-long-name");
  TRACE_INSTANT("names", "main", TRACE_SCOPE_THREAD);
  pthread_t thread;
  pthread_create(&thread, NULL, named_main, NULL);
  pthread_join(thread, NULL);
  const char* fill = getenv("NAMES_FILL");
  for (long i = 0, n = fill ? atol(fill) : 0; i < n; i++)
    TRACE_INSTANT("names", "fill", TRACE_SCOPE_THREAD, "i", i, "n", n);
  trace_provider_destroy(provider);
  char* next = getenv("NAMES_EXEC");
  if (next) {
    char* args[] = {argv0, next, NULL};
    execv(argv0, args);
    perror("execv");
    return 1;
  }
  return 0;
}

static int plain(void) {
  bool started = false;
  trace_provider_t* provider = trace_provider_create_synchronously("names", &started);
  for (int i = 0; started && !TRACE_ENABLED() && i < 1000; i++) sleep_ms(1);
  TRACE_INSTANT("names", "plain", TRACE_SCOPE_THREAD);
  trace_provider_destroy(provider);
  return 0;
}

int main(int argc, char** argv) {
  argv0 = argv[0];
  if (argc >= 2 && strcmp(argv[1], "explicit") == 0) return explicit_names();
  if (argc >= 2 && strcmp(argv[1], "plain") == 0) return plain();
  if (argc >= 2 && strcmp(argv[1], "bare") == 0) {
    sleep_ms(50);
    return 0;
  }
  if (argc < 2 || strcmp(argv[1], "stage2") != 0) {
    prctl(PR_SET_NAME, "before-exec");
    sleep_ms(20);
    char* args[] = {argv[0], "stage2", NULL};
    execv(argv[0], args);
    perror("execv");
    return 1;
  }
  bool started = false;
  trace_provider_t* provider = trace_provider_create_synchronously("names", &started);
  for (int i = 0; started && !TRACE_ENABLED() && i < 1000; i++) sleep_ms(1);
  TRACE_INSTANT("names", "main-before", TRACE_SCOPE_THREAD);
  const char* switches = getenv("NAMES_SWITCHES");
  if (switches) {
    pthread_t kept;
    if (pipe(go) != 0 || pthread_create(&kept, NULL, kept_main, NULL) != 0) return 1;
    switch_storm(atol(switches));
    if (write(go[1], "g", 1) != 1) return 1;
    pthread_join(kept, NULL);
  }
  pthread_t thread;
  pthread_create(&thread, NULL, thread_main, NULL);
  pthread_join(thread, NULL);
  prctl(PR_SET_NAME, "main-renamed");
  sleep_ms(10);
  TRACE_INSTANT("names", "main-after", TRACE_SCOPE_THREAD);
  trace_provider_destroy(provider);
  return 0;
}
