/* wake_latency: how late a sleeping thread runs after another thread wakes
 * it, on this machine, without fxtrace. A streaming save's round trip is a
 * chain of such wake-ups (docs/manager.md, "What a save waits for"); on a
 * VM the woken thread's vCPU may be halted, and the host may take a while
 * to run it again.
 *
 * A waker thread, pinned to CPU 0, works in bursts (--busy-us of spinning
 * every --period-us, like bench_fxtrace's paced producer), and at the start
 * of each burst writes the time to a slot and then the eventfd, unless the
 * last wake-up is still pending (then a late one is one long sample, not
 * many short ones); the sleeper (not pinned, so the kernel places it as it
 * places fxtrace's threads) blocks in read() and records now - the slot.
 *
 * usage: wake_latency [--seconds S] [--period-us P] [--busy-us B]
 * Prints the distribution, and how many wake-ups took longer than 1, 2, 5
 * and 10 ms. */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <time.h>
#include <unistd.h>

static uint64_t now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

typedef struct shared {
  int fd;
  _Atomic uint64_t sent_ns; /* when the pending wake-up was sent */
  atomic_bool pending;      /* sent, not yet received: the waker sends no other */
  atomic_bool done;
  uint64_t* samples; /* ns, one per wake-up received */
  size_t count, capacity;
} shared_t;

static void* sleeper(void* arg) {
  shared_t* s = arg;
  for (;;) {
    uint64_t value;
    if (read(s->fd, &value, sizeof(value)) != (ssize_t)sizeof(value)) {
      if (errno == EINTR) continue;
      return NULL;
    }
    uint64_t late = now_ns() - atomic_load(&s->sent_ns);
    atomic_store(&s->pending, false);
    if (atomic_load(&s->done)) return NULL;
    if (s->count < s->capacity) s->samples[s->count++] = late;
  }
}

static int by_value(const void* a, const void* b) {
  uint64_t x = *(const uint64_t*)a, y = *(const uint64_t*)b;
  return x < y ? -1 : x > y;
}

static void usage(const char* argv0) {
  fprintf(stderr, "usage: %s [--seconds S] [--period-us P] [--busy-us B]\n", argv0);
  exit(2);
}

int main(int argc, char** argv) {
  double seconds = 10;
  long period_us = 1000, busy_us = 250;
  for (int i = 1; i < argc; i++) {
    if (i + 1 >= argc) usage(argv[0]);
    if (strcmp(argv[i], "--seconds") == 0)
      seconds = atof(argv[++i]);
    else if (strcmp(argv[i], "--period-us") == 0)
      period_us = atol(argv[++i]);
    else if (strcmp(argv[i], "--busy-us") == 0)
      busy_us = atol(argv[++i]);
    else
      usage(argv[0]);
  }
  if (seconds <= 0 || period_us <= 0 || busy_us < 0 || busy_us >= period_us) usage(argv[0]);

  shared_t s = {0};
  s.fd = eventfd(0, EFD_CLOEXEC);
  s.capacity = (size_t)(seconds * 1e6 / (double)period_us) + 16;
  s.samples = calloc(s.capacity, sizeof(uint64_t));
  if (s.fd < 0 || !s.samples) {
    perror("wake_latency");
    return 1;
  }
  cpu_set_t cpu0;
  CPU_ZERO(&cpu0);
  CPU_SET(0, &cpu0);
  if (pthread_setaffinity_np(pthread_self(), sizeof(cpu0), &cpu0) != 0)
    fprintf(stderr, "wake_latency: could not pin the waker to CPU 0\n");
  pthread_t thread;
  if (pthread_create(&thread, NULL, sleeper, &s) != 0) {
    perror("wake_latency: pthread_create");
    return 1;
  }
  uint64_t start = now_ns(), end = start + (uint64_t)(seconds * 1e9);
  uint64_t next = start, sent = 0;
  while (next < end) {
    while (now_ns() < next) {
      struct timespec nap = {0, (long)(next - now_ns())};
      nanosleep(&nap, NULL);
    }
    uint64_t one = 1;
    if (!atomic_load(&s.pending)) {
      atomic_store(&s.sent_ns, now_ns());
      atomic_store(&s.pending, true);
      if (write(s.fd, &one, sizeof(one)) == (ssize_t)sizeof(one)) sent++;
    }
    uint64_t until = now_ns() + (uint64_t)busy_us * 1000u;
    while (now_ns() < until) {
    }
    next += (uint64_t)period_us * 1000u;
  }
  atomic_store(&s.done, true);
  uint64_t one = 1;
  if (write(s.fd, &one, sizeof(one)) < 0) perror("wake_latency: write");
  pthread_join(thread, NULL);

  size_t n = s.count;
  if (n == 0) {
    fprintf(stderr, "wake_latency: no wake-up measured\n");
    return 1;
  }
  qsort(s.samples, n, sizeof(uint64_t), by_value);
  size_t over[4] = {0};
  const uint64_t limits[4] = {1000000, 2000000, 5000000, 10000000};
  for (size_t i = 0; i < n; i++)
    for (int k = 0; k < 4; k++)
      if (s.samples[i] > limits[k]) over[k]++;
  printf("wake_latency: %zu wake-ups sent, %zu measured (period %ld us, waker busy %ld us)\n",
         (size_t)sent, n, period_us, busy_us);
  printf("  median %.1f us, p99 %.1f us, p99.9 %.1f us, max %.2f ms\n", s.samples[n / 2] / 1e3,
         s.samples[(size_t)(n * 0.99)] / 1e3, s.samples[(size_t)(n * 0.999)] / 1e3,
         s.samples[n - 1] / 1e6);
  printf("  later than 1 ms: %zu, 2 ms: %zu, 5 ms: %zu, 10 ms: %zu\n", over[0], over[1], over[2],
         over[3]);
  free(s.samples);
  return 0;
}
