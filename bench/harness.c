/* The benchmark harness (harness.h): options, pinned threads, a spinning
 * start barrier and the result line. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* pthread_setaffinity_np, CPU_SET (CMake defines it too) */
#endif
#include "harness.h"

#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>

uint64_t bench_now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static void usage(const char* prog, const char* extra) {
  fprintf(stderr,
          "usage: %s --scenario NAME [--threads N] [--events N] [--warmup N]%s\n"
          "  --threads N   threads, each pinned to its own CPU (1..%d, default 1)\n"
          "  --events N    timed iterations per thread (default 10000000)\n"
          "  --warmup N    untimed iterations per thread before the barrier (default 10000)\n",
          prog, extra ? extra : "", BENCH_MAX_THREADS);
  exit(2);
}

static uint64_t parse_u64(const char* prog, const char* extra, const char* s) {
  char* end;
  errno = 0;
  unsigned long long v = strtoull(s, &end, 10);
  if (errno || end == s || *end) usage(prog, extra);
  return v;
}

void bench_parse_options(int argc, char** argv, bench_options_t* o, const char* usage_extra) {
  *o = (bench_options_t){.threads = 1, .events = 10000000, .warmup = 10000, .record_bytes = 24};
  for (int i = 1; i < argc; i++) {
    const char* a = argv[i];
    if (i + 1 >= argc) usage(argv[0], usage_extra);
    const char* v = argv[++i];
    if (!strcmp(a, "--scenario")) o->scenario = v;
    else if (!strcmp(a, "--threads")) o->threads = (int)parse_u64(argv[0], usage_extra, v);
    else if (!strcmp(a, "--events")) o->events = parse_u64(argv[0], usage_extra, v);
    else if (!strcmp(a, "--warmup")) o->warmup = parse_u64(argv[0], usage_extra, v);
    else if (!strcmp(a, "--record-bytes")) o->record_bytes = parse_u64(argv[0], usage_extra, v);
    else if (!strcmp(a, "--buffer-mib")) o->buffer_mib = parse_u64(argv[0], usage_extra, v);
    else usage(argv[0], usage_extra);
  }
  if (!o->scenario || o->threads < 1 || o->threads > BENCH_MAX_THREADS || o->events == 0)
    usage(argv[0], usage_extra);
}

/* ---- threads ---- */

typedef struct shared_state {
  const bench_options_t* o;
  bench_loop_fn fn;
  void* arg;
  int ready; /* threads past their warm-up; atomic, written by each thread */
  int go;    /* set once by the main thread when all are ready; atomic */
} shared_state_t;

/* One per thread, on its own cache line; read by main after join. */
typedef struct thread_slot {
  shared_state_t* s;
  int index;
  int cpu;
  uint64_t t0, t1;
} __attribute__((aligned(64))) thread_slot_t;

/* The CPUs this process may run on, in order; returns how many. */
static int allowed_cpus(int* cpus, int max) {
  cpu_set_t set;
  int n = 0;
  if (sched_getaffinity(0, sizeof set, &set) != 0) return 0;
  for (int c = 0; c < CPU_SETSIZE && n < max; c++)
    if (CPU_ISSET(c, &set)) cpus[n++] = c;
  return n;
}

static void* thread_main(void* p) {
  thread_slot_t* slot = p;
  shared_state_t* s = slot->s;
  if (slot->cpu >= 0) {
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(slot->cpu, &set);
    if (pthread_setaffinity_np(pthread_self(), sizeof set, &set) != 0) slot->cpu = -1;
  }
  s->fn(s->o->warmup, slot->index, s->arg);
  __atomic_add_fetch(&s->ready, 1, __ATOMIC_ACQ_REL);
  while (!__atomic_load_n(&s->go, __ATOMIC_ACQUIRE)) __builtin_ia32_pause();
  slot->t0 = bench_now_ns();
  s->fn(s->o->events, slot->index, s->arg);
  slot->t1 = bench_now_ns();
  return NULL;
}

int bench_run(const bench_options_t* o, bench_loop_fn fn, void* arg, bench_timing_t* out) {
  shared_state_t s = {.o = o, .fn = fn, .arg = arg};
  thread_slot_t slots[BENCH_MAX_THREADS];
  pthread_t tids[BENCH_MAX_THREADS];
  int cpus[BENCH_MAX_THREADS * 4];
  int ncpus = allowed_cpus(cpus, BENCH_MAX_THREADS * 4);
  if (o->threads > ncpus)
    fprintf(stderr, "warning: %d threads on %d CPUs: some share a CPU\n", o->threads, ncpus);
  int started = 0, rc = 0;
  for (int i = 0; i < o->threads; i++) {
    slots[i] = (thread_slot_t){.s = &s, .index = i, .cpu = ncpus ? cpus[i % ncpus] : -1};
    int err = pthread_create(&tids[i], NULL, thread_main, &slots[i]);
    if (err) {
      fprintf(stderr, "pthread_create: %s\n", strerror(err));
      rc = -1;
      break;
    }
    started++;
  }
  if (rc == 0)
    while (__atomic_load_n(&s.ready, __ATOMIC_ACQUIRE) < o->threads) sched_yield();
  __atomic_store_n(&s.go, 1, __ATOMIC_RELEASE); /* also releases threads after a failure */
  for (int i = 0; i < started; i++) pthread_join(tids[i], NULL);
  if (rc) return rc;

  *out = (bench_timing_t){.threads = o->threads, .events = o->events};
  uint64_t first = UINT64_MAX, last = 0;
  for (int i = 0; i < o->threads; i++) {
    out->thread_ns[i] = slots[i].t1 - slots[i].t0;
    out->cpu[i] = slots[i].cpu;
    if (slots[i].t0 < first) first = slots[i].t0;
    if (slots[i].t1 > last) last = slots[i].t1;
  }
  out->wall_ns = last - first;
  return 0;
}

double bench_ns_per_event(const bench_timing_t* t) {
  double sum = 0;
  for (int i = 0; i < t->threads; i++) sum += (double)t->thread_ns[i] / (double)t->events;
  return sum / t->threads;
}

double bench_events_per_second(const bench_timing_t* t) {
  return (double)t->threads * (double)t->events * 1e9 / (double)t->wall_ns;
}

void bench_print_result(const char* system, const bench_options_t* o, const bench_timing_t* t,
                        const char* extra) {
  printf("result system=%s scenario=%s threads=%d events=%" PRIu64 " ns=%.3f wall_ns=%" PRIu64
         " eps=%.0f",
         system, o->scenario, t->threads, t->events, bench_ns_per_event(t), t->wall_ns,
         bench_events_per_second(t));
  for (int i = 0; i < t->threads; i++)
    printf(" ns_t%d=%.3f", i, (double)t->thread_ns[i] / (double)t->events);
  printf(" cpus=");
  for (int i = 0; i < t->threads; i++) printf("%s%d", i ? "," : "", t->cpu[i]);
  if (extra && *extra) printf(" %s", extra);
  printf("\n");
  fflush(stdout);
}

void* bench_map_buffer(size_t size) {
  void* p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS | MAP_POPULATE,
                 -1, 0);
  return p == MAP_FAILED ? NULL : p;
}
