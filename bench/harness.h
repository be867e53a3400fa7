/* Not part of fxtrace: the timing harness shared by the engine benchmarks
 * (bench_fxtrace, bench_lttng, bench_floor; bench/README.md).
 *
 * One process makes one measurement: `threads` threads, each pinned to its
 * own CPU, run an untimed warm-up, meet at a spinning barrier, then run the
 * timed loop of `events` iterations. Timing is CLOCK_MONOTONIC around each
 * thread's loop. The result is one line on stdout,
 *   result key=value key=value ...
 * which bench/run collects and bench/report.py turns into bench/RESULTS.md. */
#ifndef FXTRACE_BENCH_HARNESS_H_
#define FXTRACE_BENCH_HARNESS_H_

#include <stddef.h>
#include <stdint.h>

enum { BENCH_MAX_THREADS = 8 };

typedef struct bench_options {
  const char* scenario;  /* required */
  int threads;           /* --threads, default 1 */
  uint64_t events;       /* --events per thread, default 10M */
  uint64_t warmup;       /* --warmup per thread (untimed), default 10000 */
  uint64_t record_bytes; /* --record-bytes (floor scenarios), default 24 */
  uint64_t interleave;   /* --interleave (floor record scenarios): piece bytes, 0 = off */
  uint64_t buffer_mib;   /* --buffer-mib (fxtrace; 0 = computed) */
  uint64_t rate;         /* --rate events/s per thread (paced scenarios; 0 = unpaced) */
  const char* mode;      /* --mode (bench_fxtrace: local or provider), default "local" */
  int busy_cpus;         /* --busy-cpus: CPUs kept busy beside the loops, default 0 */
  int busy_copy;         /* --busy-work copy (1) or pause (0, the default) */
} bench_options_t;

/* Parses argv into *o (defaults first). Unknown options print usage to
 * stderr and exit(2); `usage_extra` is appended to the usage text. */
void bench_parse_options(int argc, char** argv, bench_options_t* o, const char* usage_extra);

/* The loop body: run `n` iterations on thread `thread_index` (0-based).
 * `arg` is passed through unchanged (borrowed). */
typedef void (*bench_loop_fn)(uint64_t n, int thread_index, void* arg);

typedef struct bench_timing {
  int threads;
  uint64_t events;                       /* per thread */
  uint64_t thread_ns[BENCH_MAX_THREADS]; /* each thread's timed loop */
  uint64_t wall_ns;                      /* first start to last end */
  int cpu[BENCH_MAX_THREADS];            /* pinned CPU, -1 if pinning failed */
  /* CPU time that other processes used while the threads ran, in CPUs
   * (0.5 = half a core on average), from /proc/stat's busy time minus this
   * process's own CPU time and that of the processes listed in the
   * environment variable BENCH_EXCLUDE_PIDS (e.g. LTTng's daemons, whose
   * work is part of what is measured). -1 if unknown. Tick-sampled (1/100 s
   * per CPU), so only a rough indicator for short loops. */
  double other_cpu;
  /* The largest share of its timed loop that a thread spent runnable but
   * waiting for its CPU (run_delay of /proc/thread-self/schedstat, in ns):
   * preemption by anything, LTTng's consumer daemon included. -1 if unknown. */
  double wait;
  /* The threads' own CPU time in their timed loops (user + system, page
   * faults included, time waiting for a CPU excluded), summed, and their
   * minor page faults there: printed as cpu_ns= (per event, mean over the
   * threads) and minflt= (all threads). Robust on a shared machine, where
   * ns= is not. */
  uint64_t cpu_ns;
  uint64_t minflt;
} bench_timing_t;

/* Runs fn(warmup) then, after all threads are warm, fn(events) on `threads`
 * threads pinned to distinct CPUs, with `busy_cpus` more CPUs spinning on
 * pause meanwhile. Returns 0, or -1 (message on stderr) if a thread could not
 * be created or too few CPUs are left for the busy ones. */
int bench_run(const bench_options_t* o, bench_loop_fn fn, void* arg, bench_timing_t* out);

/* Mean over threads of thread_ns / events. */
double bench_ns_per_event(const bench_timing_t* t);

/* Aggregate rate: threads * events / wall time, in events per second. */
double bench_events_per_second(const bench_timing_t* t);

/* Prints "result system=S scenario=... threads=... events=... ns=...
 * wall_ns=... eps=... ns_t0=... cpus=a,b other_cpu=x wait=y" followed by `extra` (may be NULL or
 * ""), then a newline, and flushes stdout. */
void bench_print_result(const char* system, const bench_options_t* o, const bench_timing_t* t,
                        const char* extra);

/* Pacing (the sustained-streaming scenario, "paced"): events go out in
 * bursts, one burst per millisecond of CLOCK_MONOTONIC (rate / 1000 events,
 * at least 1; below 1000 events/s one event per 1/rate s). A loop that falls
 * behind does not sleep until it has caught up. */
typedef struct bench_pacer {
  uint64_t t0;      /* the first burst's time, ns */
  uint64_t burst;   /* events per burst */
  double period_ns; /* between bursts */
  uint64_t k;       /* bursts so far */
} bench_pacer_t;
void bench_pacer_init(bench_pacer_t* p, uint64_t rate);
/* Sleeps until the next burst is due; returns its size (events). */
uint64_t bench_pacer_next(bench_pacer_t* p);

/* CLOCK_MONOTONIC in ns. */
uint64_t bench_now_ns(void);

/* A shared anonymous mapping of `size` bytes, pre-faulted (MAP_POPULATE) so
 * that page faults stay out of the timed loops; NULL on failure. Release
 * with munmap(). Shared (shmem) like a real provider buffer, which also
 * keeps transparent huge pages out of the picture. */
void* bench_map_buffer(size_t size);

#endif /* FXTRACE_BENCH_HARNESS_H_ */
