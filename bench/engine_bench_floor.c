/* bench_floor: what the hardware charges for the pieces of an event, timed
 * by the same harness as bench_fxtrace and bench_lttng (bench/README.md).
 *
 *   scenario          per iteration
 *   load_branch       a relaxed load of a global that is never set + a branch
 *                     on it (the disabled call site's floor)
 *   clock             the engine's clock, trace_clock__now_ns() (TSC + multiply
 *                     where the engine picks the TSC, else clock_gettime)
 *   clock_vdso        clock_gettime(CLOCK_MONOTONIC) (vDSO; what LTTng-UST reads)
 *   fetch_add         an atomic fetch-add on a cache line of the thread's own
 *   fetch_add_shared  an atomic fetch-add on one word shared by all threads
 *   store             --record-bytes of stores (8-byte words) into a buffer
 *                     written once before the loop, record after record
 *   record            one engine clock read + a record of --record-bytes
 *                     whose second word is the timestamp (an event's floor)
 *   record2           two clock reads + the record (a duration's floor)
 *   record_str        one clock read + a string argument's record: strlen of a
 *                     16-byte string (opaque to the compiler) and its copy,
 *                     header, timestamp, argument header, scope (48 bytes;
 *                     a string event's floor: any recorder measures and
 *                     copies the string)
 *
 * --interleave BYTES (record, record_str): the threads' records go into one
 * region in pieces of BYTES taken in turn (thread t's k-th piece at piece
 * k * threads + t), as writers claiming chunks one at a time lay them out,
 * instead of a region per thread; records never cross a piece's end. A
 * multiple of 4096; 0 (the default): a region per thread.
 *
 * --record-bytes must be a multiple of 8 between 8 and 256. */
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>

#include "engine/clock.h" /* internal: the engine's timestamp source */
#include "harness.h"

/* ---- loads and atomics ---- */

int g_never_set; /* read relaxed; nobody writes it */
uint64_t g_sink[BENCH_MAX_THREADS * 8];

__attribute__((noinline)) static void never_called(void) {
  __atomic_add_fetch(&g_sink[0], 1, __ATOMIC_RELAXED);
}

static void loop_load_branch(uint64_t n, int t, void* arg) {
  (void)t, (void)arg;
  for (uint64_t i = 0; i < n; i++)
    if (__builtin_expect(__atomic_load_n(&g_never_set, __ATOMIC_RELAXED), 0)) never_called();
}

static void loop_clock(uint64_t n, int t, void* arg) {
  (void)arg;
  uint64_t sum = 0;
  for (uint64_t i = 0; i < n; i++) sum += trace_clock__now_ns();
  g_sink[t * 8] = sum;
}

static void loop_clock_vdso(uint64_t n, int t, void* arg) {
  (void)arg;
  uint64_t sum = 0;
  for (uint64_t i = 0; i < n; i++) sum += trace_clock__monotonic_ns();
  g_sink[t * 8] = sum;
}

typedef struct counter {
  uint64_t value;
} __attribute__((aligned(64))) counter_t;
static counter_t g_counters[BENCH_MAX_THREADS]; /* one line per thread */
static counter_t g_shared_counter;

static void loop_fetch_add(uint64_t n, int t, void* arg) {
  (void)arg;
  for (uint64_t i = 0; i < n; i++) __atomic_fetch_add(&g_counters[t].value, 8, __ATOMIC_RELAXED);
}

static void loop_fetch_add_shared(uint64_t n, int t, void* arg) {
  (void)t, (void)arg;
  for (uint64_t i = 0; i < n; i++) __atomic_fetch_add(&g_shared_counter.value, 8, __ATOMIC_RELAXED);
}

/* ---- stores: each thread writes its own region of one mapping ---- */

typedef struct store_args {
  uint8_t* base;
  uint64_t region;                     /* bytes per thread */
  uint64_t words;                      /* per record */
  uint64_t* cursor[BENCH_MAX_THREADS]; /* where thread t's next record goes */
  uint64_t piece;                      /* --interleave in words, 0 = off */
  uint64_t skip;                       /* words from a piece's end to the thread's next */
  uint64_t* piece_end[BENCH_MAX_THREADS];
} store_args_t;

/* Where the next record of `w` words goes (--interleave: the thread's next
 * piece when this one has no room). */
static inline uint64_t* next_record(store_args_t* a, int t, uint64_t* p, uint64_t w,
                                    uint64_t piece) {
  if (piece != 0 && p + w > a->piece_end[t]) {
    p = a->piece_end[t] + a->skip;
    a->piece_end[t] = p + piece;
  }
  return p;
}

/* The record's words are stored one by one, as a writer fills a record; the
 * compiler barrier keeps them from being merged into a memset or vectorized
 * across records. Each pass (warm-up, then the timed loop) continues where
 * the previous one ended, so every record lands on memory not yet written. */
static void loop_store(uint64_t n, int t, void* arg) {
  store_args_t* a = arg;
  uint64_t* p = a->cursor[t];
  const uint64_t w = a->words;
  for (uint64_t i = 0; i < n; i++) {
    p[0] = (w << 4) | 4 | (i << 32);
    for (uint64_t k = 1; k < w; k++) p[k] = i + k;
    __asm__ volatile("" ::: "memory");
    p += w;
  }
  a->cursor[t] = p;
}

static void loop_record(uint64_t n, int t, void* arg) {
  store_args_t* a = arg;
  uint64_t* p = a->cursor[t];
  const uint64_t w = a->words, piece = a->piece;
  for (uint64_t i = 0; i < n; i++) {
    p = next_record(a, t, p, w, piece);
    uint64_t ts = trace_clock__now_ns();
    for (uint64_t k = 2; k < w; k++) p[k] = i + k;
    p[1] = ts;
    __asm__ volatile("" ::: "memory");
    __atomic_store_n(&p[0], (w << 4) | 4 | (i << 32), __ATOMIC_RELEASE);
    p += w;
  }
  a->cursor[t] = p;
}

static void loop_record2(uint64_t n, int t, void* arg) {
  store_args_t* a = arg;
  uint64_t* p = a->cursor[t];
  const uint64_t w = a->words;
  for (uint64_t i = 0; i < n; i++) {
    uint64_t start = trace_clock__now_ns();
    __asm__ volatile("" ::: "memory"); /* the scope's body */
    uint64_t end = trace_clock__now_ns();
    for (uint64_t k = 3; k < w; k++) p[k] = i + k;
    p[1] = start;
    p[2] = end;
    __asm__ volatile("" ::: "memory");
    __atomic_store_n(&p[0], (w << 4) | 4 | (i << 32), __ATOMIC_RELEASE);
    p += w;
  }
  a->cursor[t] = p;
}

char g_floor_string[17] = "0123456789abcdef";

static void loop_record_str(uint64_t n, int t, void* arg) {
  store_args_t* a = arg;
  uint64_t* p = a->cursor[t];
  const uint64_t piece = a->piece;
  for (uint64_t i = 0; i < n; i++) {
    p = next_record(a, t, p, 6, piece); /* the record below: 48 bytes */
    uint64_t ts = trace_clock__now_ns();
    const char* s = g_floor_string;
    __asm__("" : "+r"(s)); /* a string the compiler does not know */
    size_t len = strlen(s);
    size_t sw = (len + 7) / 8, w = 4 + sw;
    p[1] = ts;
    p[2] = ((uint64_t)(0x8000 | len) << 32) | ((1 + sw) << 4) | 6;
    p[2 + sw] = 0;
    if (len >= 16 && len <= 32) { /* the string's bytes, as two overlapping copies */
      memcpy(p + 3, s, 16);
      memcpy((char*)(p + 3) + len - 16, s + len - 16, 16);
    } else {
      memcpy(p + 3, s, len);
    }
    p[w - 1] = 0;
    __asm__ volatile("" ::: "memory");
    __atomic_store_n(&p[0], (w << 4) | 4 | (i << 32), __ATOMIC_RELEASE);
    p += w;
  }
  a->cursor[t] = p;
}

int main(int argc, char** argv) {
  bench_options_t o;
  bench_parse_options(
      argc, argv, &o,
      " [--record-bytes N] [--interleave BYTES]\n"
      "  scenarios: load_branch clock clock_vdso fetch_add fetch_add_shared\n"
      "             store record record2 record_str\n"
      "  --record-bytes N  record size for store/record/record2 (default 24)\n"
      "  --interleave BYTES  record/record_str: threads take pieces of one region\n"
      "                    in turn (as chunks), not a region each (default 0: off)");
  trace_clock__init();
  static const struct {
    const char* name;
    bench_loop_fn fn;
    int stores;
  } table[] = {
      {"load_branch", loop_load_branch, 0},
      {"clock", loop_clock, 0},
      {"clock_vdso", loop_clock_vdso, 0},
      {"fetch_add", loop_fetch_add, 0},
      {"fetch_add_shared", loop_fetch_add_shared, 0},
      {"store", loop_store, 1},
      {"record", loop_record, 1},
      {"record2", loop_record2, 1},
      {"record_str", loop_record_str, 1},
  };
  bench_loop_fn fn = NULL;
  int stores = 0;
  for (size_t i = 0; i < sizeof table / sizeof table[0]; i++)
    if (!strcmp(table[i].name, o.scenario)) fn = table[i].fn, stores = table[i].stores;
  if (!fn) {
    fprintf(stderr, "bench_floor: unknown scenario %s\n", o.scenario);
    return 2;
  }
  store_args_t sa = {0};
  char extra[128] = "";
  if (stores) {
    uint64_t min_words = !strcmp(o.scenario, "record2") ? 3 : !strcmp(o.scenario, "record") ? 2 : 1;
    if (!strcmp(o.scenario, "record_str")) o.record_bytes = 48; /* the 16-byte string's */
    if (o.record_bytes % 8 || o.record_bytes / 8 < min_words || o.record_bytes > 256) {
      fprintf(stderr, "bench_floor: bad --record-bytes %llu\n", (unsigned long long)o.record_bytes);
      return 2;
    }
    bool interleavable = !strcmp(o.scenario, "record") || !strcmp(o.scenario, "record_str");
    if (o.interleave && (!interleavable || o.interleave % 4096 || o.interleave < o.record_bytes)) {
      fprintf(stderr,
              "bench_floor: bad --interleave %llu (record, record_str; a multiple of 4096)\n",
              (unsigned long long)o.interleave);
      return 2;
    }
    sa.words = o.record_bytes / 8;
    sa.region = ((o.warmup + o.events) * o.record_bytes + 4095) & ~UINT64_C(4095);
    if (o.interleave) { /* whole pieces, each holding as many whole records as fit */
      uint64_t per_piece = o.interleave / o.record_bytes;
      sa.region = ((o.warmup + o.events + per_piece - 1) / per_piece + 1) * o.interleave;
    }
    sa.base = bench_map_buffer(sa.region * (uint64_t)o.threads);
    if (!sa.base) {
      perror("bench_floor: mmap");
      return 1;
    }
    /* Written once, as the engine writes its buffer when it initializes it
     * (and the provider touches its mapping before it reports started): on
     * some virtual machines a process's first write to a page costs about a
     * microsecond even after MAP_POPULATE (issue 20, item 3), which would
     * put 20-80 ns of page cost per record into the floor, not the record's. */
    memset(sa.base, 0, sa.region * (uint64_t)o.threads);
    for (int i = 0; i < o.threads; i++)
      sa.cursor[i] = (uint64_t*)(sa.base + (uint64_t)i * sa.region);
    if (o.interleave) {
      sa.piece = o.interleave / 8;
      sa.skip = (uint64_t)(o.threads - 1) * sa.piece;
      for (int i = 0; i < o.threads; i++) {
        sa.cursor[i] = (uint64_t*)(sa.base + (uint64_t)i * o.interleave);
        sa.piece_end[i] = sa.cursor[i] + sa.piece;
      }
    }
    snprintf(extra, sizeof extra, "record_bytes=%llu interleave=%llu",
             (unsigned long long)o.record_bytes, (unsigned long long)o.interleave);
  }
  if (!strcmp(o.scenario, "clock") || !strcmp(o.scenario, "record") ||
      !strcmp(o.scenario, "record2") || !strcmp(o.scenario, "record_str"))
    snprintf(extra + strlen(extra), sizeof extra - strlen(extra), "%sclock_source=%s",
             *extra ? " " : "", trace_clock__source_name());
  bench_timing_t t;
  if (bench_run(&o, fn, &sa, &t) != 0) return 1;
  bench_print_result("floor", &o, &t, extra);
  if (sa.base) munmap(sa.base, sa.region * (uint64_t)o.threads);
  return 0;
}
