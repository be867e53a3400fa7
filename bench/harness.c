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
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

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
          "  --warmup N    untimed iterations per thread before the barrier (default 10000)\n"
          "  --rate N      paced scenarios: events per second per thread, in 1 ms bursts\n"
          "  --busy-cpus N also keep N other CPUs busy through the timed loop, a thread pinned\n"
          "                to each (default 0): what other threads' activity costs the loops\n"
          "  --busy-work W what those threads do: pause (spin on the pause instruction, the\n"
          "                default) or copy (copy 1 MiB from one buffer to another, over and\n"
          "                over, as a streaming save copies a provider's buffer)\n",
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
  *o = (bench_options_t){
      .threads = 1, .events = 10000000, .warmup = 10000, .record_bytes = 24, .mode = "local"};
  for (int i = 1; i < argc; i++) {
    const char* a = argv[i];
    if (i + 1 >= argc) usage(argv[0], usage_extra);
    const char* v = argv[++i];
    if (!strcmp(a, "--scenario"))
      o->scenario = v;
    else if (!strcmp(a, "--threads"))
      o->threads = (int)parse_u64(argv[0], usage_extra, v);
    else if (!strcmp(a, "--events"))
      o->events = parse_u64(argv[0], usage_extra, v);
    else if (!strcmp(a, "--warmup"))
      o->warmup = parse_u64(argv[0], usage_extra, v);
    else if (!strcmp(a, "--record-bytes"))
      o->record_bytes = parse_u64(argv[0], usage_extra, v);
    else if (!strcmp(a, "--interleave"))
      o->interleave = parse_u64(argv[0], usage_extra, v);
    else if (!strcmp(a, "--buffer-mib"))
      o->buffer_mib = parse_u64(argv[0], usage_extra, v);
    else if (!strcmp(a, "--rate"))
      o->rate = parse_u64(argv[0], usage_extra, v);
    else if (!strcmp(a, "--mode"))
      o->mode = v;
    else if (!strcmp(a, "--busy-cpus"))
      o->busy_cpus = (int)parse_u64(argv[0], usage_extra, v);
    else if (!strcmp(a, "--busy-work") && (!strcmp(v, "pause") || !strcmp(v, "copy")))
      o->busy_copy = !strcmp(v, "copy");
    else
      usage(argv[0], usage_extra);
  }
  if (!o->scenario || o->threads < 1 || o->threads > BENCH_MAX_THREADS || o->events == 0 ||
      o->busy_cpus < 0 || o->busy_cpus > BENCH_MAX_THREADS)
    usage(argv[0], usage_extra);
}

/* ---- pacing ---- */

void bench_pacer_init(bench_pacer_t* p, uint64_t rate) {
  if (rate == 0) rate = 1;
  p->burst = rate >= 1000 ? rate / 1000 : 1;
  p->period_ns = 1e9 * (double)p->burst / (double)rate;
  p->t0 = 0;
  p->k = 0;
}

uint64_t bench_pacer_next(bench_pacer_t* p) {
  if (p->k == 0) {
    p->t0 = bench_now_ns();
  } else {
    uint64_t due = p->t0 + (uint64_t)((double)p->k * p->period_ns);
    if (bench_now_ns() < due) {
      struct timespec ts = {(time_t)(due / 1000000000u), (long)(due % 1000000000u)};
      while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR) {
      }
    }
  }
  p->k++;
  return p->burst;
}

/* ---- threads ---- */

typedef struct shared_state {
  const bench_options_t* o;
  bench_loop_fn fn;
  void* arg;
  int ready;      /* threads past their warm-up; atomic, written by each thread */
  int go;         /* set once by the main thread when all are ready; atomic */
  int done;       /* set once by the main thread when all loops ended: busy threads stop; atomic */
  int busy_ready; /* busy threads running on their CPUs; atomic */
} shared_state_t;

/* One per thread, on its own cache line; read by main after join. */
typedef struct thread_slot {
  shared_state_t* s;
  int index;
  int cpu;
  uint64_t t0, t1;
  int64_t delay0, delay1;    /* run_delay (ns) around the loop, -1 if unknown */
  uint64_t cpu0, cpu1;       /* the thread's CPU time around the loop, ns */
  uint64_t minflt0, minflt1; /* the thread's minor page faults around the loop */
} __attribute__((aligned(64))) thread_slot_t;

static uint64_t thread_cpu_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static uint64_t thread_minflt(void) {
  struct rusage ru;
  return getrusage(RUSAGE_THREAD, &ru) == 0 ? (uint64_t)ru.ru_minflt : 0;
}

/* The calling thread's time spent waiting on a run queue, in ns; -1 if the
 * kernel does not say (CONFIG_SCHED_INFO). */
static int64_t thread_run_delay(void) {
  FILE* f = fopen("/proc/thread-self/schedstat", "r");
  if (!f) return -1;
  unsigned long long run = 0, delay = 0;
  int n = fscanf(f, "%llu %llu", &run, &delay);
  fclose(f);
  return n == 2 ? (int64_t)delay : -1;
}

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
  slot->delay0 = thread_run_delay(); /* a few microseconds, before the clock starts */
  slot->minflt0 = thread_minflt();
  slot->cpu0 = thread_cpu_ns();
  slot->t0 = bench_now_ns();
  s->fn(s->o->events, slot->index, s->arg);
  slot->t1 = bench_now_ns();
  slot->cpu1 = thread_cpu_ns();
  slot->minflt1 = thread_minflt();
  slot->delay1 = thread_run_delay();
  return NULL;
}

/* --busy-cpus: a thread pinned to a CPU no loop runs on, working from
 * before the loops start until they end. pause is the gentlest work a CPU
 * can do, yet where CPUs share a physical core or a power budget even that
 * slows the loops on the others; copy adds what a save's copy does to the
 * caches and the memory bus. Its CPU time is this process's, so other_cpu
 * does not count it. */
enum { BUSY_COPY_BYTES = 1 << 20 };

typedef struct busy_slot {
  shared_state_t* s;
  int cpu;
  uint8_t* from; /* --busy-work copy: 2 x BUSY_COPY_BYTES, else NULL */
} busy_slot_t;

static void* busy_main(void* p) {
  busy_slot_t* b = p;
  __atomic_add_fetch(&b->s->busy_ready, 1, __ATOMIC_ACQ_REL);
  if (b->from) {
    while (!__atomic_load_n(&b->s->done, __ATOMIC_ACQUIRE)) {
      memcpy(b->from + BUSY_COPY_BYTES, b->from, BUSY_COPY_BYTES);
      __asm__ volatile("" : : "r"(b->from) : "memory"); /* the copy is not dead */
    }
  } else {
    while (!__atomic_load_n(&b->s->done, __ATOMIC_ACQUIRE)) __builtin_ia32_pause();
  }
  return NULL;
}

/* ---- what else ran: /proc/stat against our own CPU time ---- */

typedef struct cpu_sample {
  int ok;
  uint64_t busy_ticks;     /* all CPUs, not idle or iowait */
  uint64_t own_ns;         /* this process */
  uint64_t excluded_ticks; /* BENCH_EXCLUDE_PIDS */
} cpu_sample_t;

static int read_busy_ticks(uint64_t* out) {
  FILE* f = fopen("/proc/stat", "r");
  if (!f) return -1;
  unsigned long long v[10] = {0};
  int n = fscanf(f, "cpu %llu %llu %llu %llu %llu %llu %llu %llu %llu %llu", &v[0], &v[1], &v[2],
                 &v[3], &v[4], &v[5], &v[6], &v[7], &v[8], &v[9]);
  fclose(f);
  if (n < 8) return -1;
  /* user nice system idle iowait irq softirq steal: all but idle and iowait
   * (guest time is already inside user). */
  *out = v[0] + v[1] + v[2] + v[5] + v[6] + v[7];
  return 0;
}

/* utime + stime of one process, in ticks; 0 if it is gone. */
static uint64_t pid_ticks(long pid) {
  char path[64], buf[1024];
  snprintf(path, sizeof path, "/proc/%ld/stat", pid);
  FILE* f = fopen(path, "r");
  if (!f) return 0;
  size_t n = fread(buf, 1, sizeof buf - 1, f);
  fclose(f);
  buf[n] = 0;
  const char* p = strrchr(buf, ')'); /* the command name may hold spaces */
  if (!p) return 0;
  unsigned long long utime = 0, stime = 0;
  /* After ")": state ppid pgrp session tty_nr tpgid flags minflt cminflt
   * majflt cmajflt utime stime (fields 3..15). */
  if (sscanf(p + 1, " %*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %llu %llu", &utime, &stime) != 2)
    return 0;
  return utime + stime;
}

static void cpu_sample(cpu_sample_t* s) {
  struct timespec ts;
  s->ok = read_busy_ticks(&s->busy_ticks) == 0 && clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts) == 0;
  s->own_ns = (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
  s->excluded_ticks = 0;
  const char* env = getenv("BENCH_EXCLUDE_PIDS");
  for (const char* p = env; p && *p;) {
    char* end;
    long pid = strtol(p, &end, 10);
    if (end == p) {
      p++;
      continue;
    }
    s->excluded_ticks += pid_ticks(pid);
    p = end;
  }
}

static double other_cpu(const cpu_sample_t* a, const cpu_sample_t* b, uint64_t wall_ns) {
  long hz = sysconf(_SC_CLK_TCK);
  if (!a->ok || !b->ok || hz <= 0 || wall_ns == 0) return -1;
  double tick_ns = 1e9 / (double)hz;
  double others = (double)(b->busy_ticks - a->busy_ticks) * tick_ns -
                  (double)(b->own_ns - a->own_ns) -
                  (double)(b->excluded_ticks - a->excluded_ticks) * tick_ns;
  return others > 0 ? others / (double)wall_ns : 0;
}

int bench_run(const bench_options_t* o, bench_loop_fn fn, void* arg, bench_timing_t* out) {
  shared_state_t s = {.o = o, .fn = fn, .arg = arg};
  thread_slot_t slots[BENCH_MAX_THREADS];
  pthread_t tids[BENCH_MAX_THREADS];
  int cpus[BENCH_MAX_THREADS * 4];
  int ncpus = allowed_cpus(cpus, BENCH_MAX_THREADS * 4);
  if (o->threads > ncpus)
    fprintf(stderr, "warning: %d threads on %d CPUs: some share a CPU\n", o->threads, ncpus);
  if (o->busy_cpus > 0 && o->threads + o->busy_cpus > ncpus) {
    fprintf(stderr, "--busy-cpus %d: %d threads leave only %d of %d CPUs free\n", o->busy_cpus,
            o->threads, ncpus > o->threads ? ncpus - o->threads : 0, ncpus);
    return -1;
  }
  busy_slot_t busy[BENCH_MAX_THREADS];
  pthread_t busy_tids[BENCH_MAX_THREADS];
  int busy_started = 0;
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
  for (int i = 0; rc == 0 && i < o->busy_cpus; i++) {
    busy[i] = (busy_slot_t){.s = &s, .cpu = cpus[o->threads + i]};
    if (o->busy_copy) {
      busy[i].from = malloc(2 * BUSY_COPY_BYTES);
      if (!busy[i].from) {
        fprintf(stderr, "--busy-work copy: out of memory\n");
        rc = -1;
        break;
      }
      memset(busy[i].from, 0x5a, 2 * BUSY_COPY_BYTES); /* no page faults in the timed loop */
    }
    /* pinned from its first instruction: a busy thread must never take a loop's CPU */
    pthread_attr_t attr;
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(busy[i].cpu, &set);
    int err = pthread_attr_init(&attr);
    if (!err) {
      err = pthread_attr_setaffinity_np(&attr, sizeof set, &set);
      if (!err) err = pthread_create(&busy_tids[i], &attr, busy_main, &busy[i]);
      pthread_attr_destroy(&attr); /* only once initialized */
    }
    if (err) {
      fprintf(stderr, "pthread_create: %s\n", strerror(err));
      free(busy[i].from);
      rc = -1;
      break;
    }
    busy_started++;
  }
  while (__atomic_load_n(&s.busy_ready, __ATOMIC_ACQUIRE) < busy_started) sched_yield();
  cpu_sample_t before, after;
  cpu_sample(&before);
  uint64_t t_go = bench_now_ns();
  __atomic_store_n(&s.go, 1, __ATOMIC_RELEASE); /* also releases threads after a failure */
  for (int i = 0; i < started; i++) pthread_join(tids[i], NULL);
  uint64_t t_joined = bench_now_ns();
  __atomic_store_n(&s.done, 1, __ATOMIC_RELEASE);
  for (int i = 0; i < busy_started; i++) {
    pthread_join(busy_tids[i], NULL);
    free(busy[i].from);
  }
  cpu_sample(&after);
  if (rc) return rc;

  *out = (bench_timing_t){.threads = o->threads, .events = o->events};
  uint64_t first = UINT64_MAX, last = 0;
  out->wait = 0;
  for (int i = 0; i < o->threads; i++) {
    out->thread_ns[i] = slots[i].t1 - slots[i].t0;
    out->cpu_ns += slots[i].cpu1 - slots[i].cpu0;
    out->minflt += slots[i].minflt1 - slots[i].minflt0;
    if (slots[i].delay0 < 0 || slots[i].delay1 < 0 || out->wait < 0)
      out->wait = -1;
    else if (out->thread_ns[i] > 0) {
      double w = (double)(slots[i].delay1 - slots[i].delay0) / (double)out->thread_ns[i];
      if (w > out->wait) out->wait = w;
    }
    out->cpu[i] = slots[i].cpu;
    if (slots[i].t0 < first) first = slots[i].t0;
    if (slots[i].t1 > last) last = slots[i].t1;
  }
  out->wall_ns = last - first;
  out->other_cpu = other_cpu(&before, &after, t_joined - t_go);
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
  printf(" other_cpu=%.2f wait=%.3f", t->other_cpu, t->wait);
  printf(" cpu_ns=%.3f minflt=%" PRIu64,
         (double)t->cpu_ns / ((double)t->events * (t->threads > 0 ? t->threads : 1)), t->minflt);
  if (o->busy_cpus)
    printf(" busy_cpus=%d busy_work=%s", o->busy_cpus, o->busy_copy ? "copy" : "pause");
  if (extra && *extra) printf(" %s", extra);
  printf("\n");
  fflush(stdout);
}

void* bench_map_buffer(size_t size) {
  void* p =
      mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
  return p == MAP_FAILED ? NULL : p;
}
