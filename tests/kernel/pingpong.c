/* The traced program of the kernel provider's tests.
 *
 *   pingpong token N   two threads ("ping", "pong") hand a byte back and forth N
 *                      times through two pipes; prints "ping=TID pong=TID"
 *   pingpong sleep     one thread ("sleeper") records instant A, sleeps 10 ms in
 *                      nanosleep, records instant B, while one spinning thread
 *                      per CPU keeps every CPU busy; prints "sleeper=TID"
 *   pingpong open PATH renames itself "opener" (task/task_rename, whose
 *                      oldcomm/newcomm are char arrays), then opens PATH (for
 *                      kernel:syscalls/sys_enter_openat) after an instant,
 *                      prints "tid=TID"
 *   pingpong migrate   one thread ("mover-old") blocks a few times on the last
 *                      CPU, moves to CPU 0, renames itself "mover-new", blocks
 *                      a few times there and ends; prints "mover=TID" (its
 *                      name's records come from two CPUs' pages, the newer
 *                      from the one the provider converts first)
 *   pingpong threads N from the last CPU it may use, N threads one after
 *                      another, each on the first, spinning 0.2 ms and ending
 *                      before the next begins; prints "pid=PID" and
 *                      "threads=TID,..." (their births come in the last CPU's
 *                      pages, their events in the first's, which the provider
 *                      converts first, and by then /proc knows none of them)
 *   pingpong nested N  the same, but each thread is created by a thread that
 *                      ends at once (a creator gone before the birth is
 *                      converted); "threads=" lists the inner threads
 * Each mode records a few events in category "pingpong", and waits (at most
 * 5 s) for tracing to be enabled first, so its events are in the trace. */
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "trace-provider/provider.h"
#include "trace/event.h"

static int ab[2], ba[2];
static int rounds;
static pid_t tids[2];

static pid_t gettid_(void) { return (pid_t)syscall(SYS_gettid); }

static void* pong(void* arg) {
  (void)arg;
  prctl(PR_SET_NAME, "pong");
  tids[1] = gettid_();
  char c;
  for (int i = 0; i < rounds; i++) {
    if (read(ab[0], &c, 1) != 1) break;
    if (write(ba[1], &c, 1) != 1) break;
  }
  return NULL;
}

static int token(int n) {
  rounds = n;
  if (pipe(ab) != 0 || pipe(ba) != 0) return 1;
  prctl(PR_SET_NAME, "ping");
  tids[0] = gettid_();
  pthread_t t;
  if (pthread_create(&t, NULL, pong, NULL) != 0) return 1;
  TRACE_INSTANT("pingpong", "begin", TRACE_SCOPE_THREAD);
  char c = 'x';
  for (int i = 0; i < n; i++) {
    if (write(ab[1], &c, 1) != 1 || read(ba[0], &c, 1) != 1) return 1;
  }
  pthread_join(t, NULL);
  TRACE_INSTANT("pingpong", "end", TRACE_SCOPE_THREAD);
  printf("ping=%d pong=%d\n", (int)tids[0], (int)tids[1]);
  return 0;
}

static volatile int spinning = 1;

/* Keeps a CPU busy while the sleeper sleeps, so that the sleeper's switch-in
 * replaces a running thread, not the idle task: on some kernels (this
 * project's CI VM) most switches out of the idle task are not traced at all
 * (docs/kernel-provider.md, Limits). */
static void* spinner(void* arg) {
  (void)arg;
  prctl(PR_SET_NAME, "spinner");
  while (__atomic_load_n(&spinning, __ATOMIC_RELAXED)) {
  }
  return NULL;
}

static void* sleeper(void* arg) {
  (void)arg;
  prctl(PR_SET_NAME, "sleeper");
  tids[0] = gettid_();
  TRACE_INSTANT("pingpong", "A", TRACE_SCOPE_THREAD);
  struct timespec ts = {0, 10 * 1000 * 1000};
  nanosleep(&ts, NULL);
  TRACE_INSTANT("pingpong", "B", TRACE_SCOPE_THREAD);
  return NULL;
}

static int sleep_mode(void) {
  long cpus = sysconf(_SC_NPROCESSORS_ONLN);
  if (cpus < 1 || cpus > 64) cpus = 1;
  pthread_t spinners[64];
  for (long i = 0; i < cpus; i++)
    if (pthread_create(&spinners[i], NULL, spinner, NULL) != 0) return 1;
  pthread_t t;
  if (pthread_create(&t, NULL, sleeper, NULL) != 0) return 1;
  pthread_join(t, NULL);
  __atomic_store_n(&spinning, 0, __ATOMIC_RELAXED);
  for (long i = 0; i < cpus; i++) pthread_join(spinners[i], NULL);
  printf("sleeper=%d\n", (int)tids[0]);
  return 0;
}

static void pin_and_block(int cpu) {
  cpu_set_t set;
  CPU_ZERO(&set);
  CPU_SET(cpu, &set);
  sched_setaffinity(0, sizeof(set), &set);
  for (int i = 0; i < 5; i++) {
    struct timespec ts = {0, 1000000};
    nanosleep(&ts, NULL);
  }
}

static void* mover(void* arg) {
  (void)arg;
  prctl(PR_SET_NAME, "mover-old");
  tids[0] = gettid_();
  long cpus = sysconf(_SC_NPROCESSORS_ONLN);
  pin_and_block(cpus > 1 ? (int)cpus - 1 : 0);
  pin_and_block(0);
  prctl(PR_SET_NAME, "mover-new");
  TRACE_INSTANT("pingpong", "renamed", TRACE_SCOPE_THREAD);
  pin_and_block(0);
  return NULL;
}

static int migrate_mode(void) {
  pthread_t t;
  if (pthread_create(&t, NULL, mover, NULL) != 0) return 1;
  pthread_join(t, NULL);
  printf("mover=%d\n", (int)tids[0]);
  return 0;
}

static pid_t short_tids[1000];
static int short_done[1000]; /* release: its short_tids entry is written */

static void* short_lived(void* arg) {
  short_tids[(size_t)arg] = gettid_();
  struct timespec t0, t;
  clock_gettime(CLOCK_MONOTONIC, &t0);
  do clock_gettime(CLOCK_MONOTONIC, &t);
  while ((t.tv_sec - t0.tv_sec) * 1000000000L + (t.tv_nsec - t0.tv_nsec) < 200000);
  __atomic_store_n(&short_done[(size_t)arg], 1, __ATOMIC_RELEASE);
  return NULL;
}

/* nested: creates the short-lived thread, detached, and ends at once */
static void* creator(void* arg) {
  pthread_t t;
  pthread_attr_t attr;
  pthread_attr_init(&attr);
  pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
  if (pthread_create(&t, &attr, short_lived, arg) != 0)
    __atomic_store_n(&short_done[(size_t)arg], 1, __ATOMIC_RELEASE);
  pthread_attr_destroy(&attr);
  return NULL;
}

/* The first and the last CPU this process may run on; false with fewer than two. */
static bool two_cpus(int* first, int* last) {
  cpu_set_t allowed;
  if (sched_getaffinity(0, sizeof(allowed), &allowed) != 0) return false;
  *first = *last = -1;
  for (int cpu = 0; cpu < CPU_SETSIZE; cpu++)
    if (CPU_ISSET(cpu, &allowed)) {
      if (*first < 0) *first = cpu;
      *last = cpu;
    }
  return *first >= 0 && *last != *first;
}

static int threads_mode(int n, bool nested) {
  if (n < 1 || n > (int)(sizeof(short_tids) / sizeof(short_tids[0]))) return 2;
  int first_cpu, last_cpu;
  if (!two_cpus(&first_cpu, &last_cpu)) return 1;
  cpu_set_t last, first;
  CPU_ZERO(&last);
  CPU_SET(last_cpu, &last);
  CPU_ZERO(&first);
  CPU_SET(first_cpu, &first);
  if (sched_setaffinity(0, sizeof(last), &last) != 0) return 1;
  pthread_attr_t attr;
  pthread_attr_init(&attr);
  pthread_attr_setaffinity_np(&attr, sizeof(first), &first);
  for (int i = 0; i < n; i++) {
    pthread_t t;
    if (pthread_create(&t, &attr, nested ? creator : short_lived, (void*)(size_t)i) != 0) return 1;
    pthread_join(t, NULL);
    while (!__atomic_load_n(&short_done[i], __ATOMIC_ACQUIRE)) {
      struct timespec ts = {0, 100000};
      nanosleep(&ts, NULL);
    }
  }
  pthread_attr_destroy(&attr);
  printf("pid=%d\nthreads=", (int)getpid());
  for (int i = 0; i < n; i++) printf("%s%d", i ? "," : "", (int)short_tids[i]);
  printf("\n");
  return 0;
}

static int open_mode(const char* path) {
  prctl(PR_SET_NAME, "opener");
  TRACE_INSTANT("pingpong", "open", TRACE_SCOPE_THREAD);
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd >= 0) close(fd);
  printf("tid=%d\n", (int)gettid_());
  return 0;
}

int main(int argc, char** argv) {
  if (argc < 2) {
    fprintf(stderr,
            "usage: pingpong token N | sleep | open PATH | migrate | threads N | nested N\n");
    return 2;
  }
  bool started = false;
  trace_provider_t* provider = trace_provider_create_synchronously("pingpong", &started);
  for (int i = 0; started && !TRACE_ENABLED() && i < 5000; i++) {
    struct timespec ts = {0, 1000000};
    nanosleep(&ts, NULL);
  }
  int rc = 2;
  if (strcmp(argv[1], "token") == 0 && argc == 3)
    rc = token(atoi(argv[2]));
  else if (strcmp(argv[1], "sleep") == 0)
    rc = sleep_mode();
  else if (strcmp(argv[1], "open") == 0 && argc == 3)
    rc = open_mode(argv[2]);
  else if (strcmp(argv[1], "migrate") == 0)
    rc = migrate_mode();
  else if (strcmp(argv[1], "threads") == 0 && argc == 3)
    rc = threads_mode(atoi(argv[2]), false);
  else if (strcmp(argv[1], "nested") == 0 && argc == 3)
    rc = threads_mode(atoi(argv[2]), true);
  fflush(stdout);
  trace_provider_destroy(provider);
  return rc;
}
