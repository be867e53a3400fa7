/* Writes the crafted archive of the `trace summary` tests (test_summary.py)
 * to argv[1]: durations of known lengths (complete events, begin/end pairs,
 * nesting written inner-first, async spans with an unmatched end and an
 * open begin), thousands of log-uniformly distributed durations for the
 * percentiles, counters, two providers with different tick rates and a
 * buffer overflow, and kernel scheduling records on two CPUs: legacy and
 * new context switches, wakeup records and the kernel:sched wakeup instant
 * events. Deterministic (a fixed pseudo-random sequence). The test computes
 * the expected figures itself from `trace convert` and the independent
 * decoder, so this file only has to be a varied, conformant archive. */
#include <stdio.h>
#include <string.h>

#include "fxt/fxt_buffer.h"
#include "fxt/fxt_encode.h"

enum { PID = 100, MAIN = 101, WORKER = 102, PID2 = 200, IO = 201 };
static const uint64_t kBase = 1000000000u; /* 1 s */

static fxt_buffer_t g_out;
static int g_oom;
static uint64_t g_seed = 0x9e3779b97f4a7c15u;

static uint64_t next_random(void) { /* xorshift64 */
  g_seed ^= g_seed << 13;
  g_seed ^= g_seed >> 7;
  g_seed ^= g_seed << 17;
  return g_seed;
}
static uint64_t random_below(uint64_t n) { return next_random() % n; }

static uint64_t* reserve(size_t words) {
  uint64_t* p = fxt_buffer_reserve(&g_out, words);
  if (!p) g_oom = 1;
  return p;
}

static trace_string_ref_t lit(const char* s) { return trace_make_inline_c_string_ref(s); }

static void event(unsigned type, uint64_t ts, uint64_t pid, uint64_t tid, const char* cat,
                  const char* name, const trace_arg_t* args, size_t n, uint64_t payload) {
  trace_thread_ref_t thread = trace_make_inline_thread_ref(pid, tid);
  trace_string_ref_t c = lit(cat), nm = lit(name);
  size_t words = fxt_event_record_words(type, &thread, &c, &nm, args, n);
  uint64_t* p = reserve(words);
  if (p) fxt_write_event_record(p, words, type, ts, &thread, &c, &nm, args, n, payload);
}

static void complete(uint64_t tid, const char* cat, const char* name, uint64_t begin,
                     uint64_t length) {
  event(FXT_EVENT_DURATION_COMPLETE, begin, tid == IO ? PID2 : PID, tid, cat, name, NULL, 0,
        begin + length);
}

static void provider(uint32_t id, const char* name, uint64_t ticks_per_second) {
  size_t len = strlen(name);
  uint64_t* p = reserve(fxt_provider_info_words(len));
  if (p) fxt_write_provider_info_record(p, id, name, len);
  if ((p = reserve(2))) fxt_write_initialization_record(p, ticks_per_second);
}

static void kernel_object(uint64_t koid, unsigned type, const char* name, uint64_t process) {
  trace_string_ref_t ref = lit(name);
  trace_arg_t arg = trace_make_arg(lit("process"), trace_make_koid_arg_value(process));
  size_t n = process ? 1 : 0;
  size_t words = fxt_kernel_object_record_words(&ref, &arg, n);
  uint64_t* p = reserve(words);
  if (p) fxt_write_kernel_object_record(p, words, koid, type, &ref, &arg, n);
}

/* 100 steps of 1..100 us on MAIN, one every 200 us. */
static void known_steps(void) {
  for (uint64_t i = 0; i < 100; i++)
    complete(MAIN, "work", "step", kBase + i * 200000, (i + 1) * 1000);
}

/* On WORKER: begin/end "outer" pairs around "inner" complete events, and
 * complete "frame" events enclosing "draw" ones, written inner-first as an
 * engine writes scopes that end. */
static void nested(void) {
  for (uint64_t k = 0; k < 20; k++) {
    uint64_t b = kBase + k * 1000000;
    event(FXT_EVENT_DURATION_BEGIN, b, PID, WORKER, "work", "outer", NULL, 0, 0);
    for (uint64_t j = 0; j < 3; j++)
      complete(WORKER, "work", "inner", b + 1000 + j * 100000, 50000 + k * 700 + j);
    event(FXT_EVENT_DURATION_END, b + 400000 + k * 1000, PID, WORKER, "work", "outer", NULL, 0, 0);
    uint64_t f = b + 600000;
    complete(WORKER, "gfx", "draw", f + 10000, 30000 + k);      /* grandchild */
    complete(WORKER, "gfx", "draw", f + 5000, 100000);          /* its parent */
    complete(WORKER, "gfx", "draw", f + 150000, 20000 + 3 * k); /* a sibling */
    complete(WORKER, "gfx", "frame", f, 250000 + k * 100);      /* encloses all */
  }
}

/* 3000 log-uniform durations from 10 ns to ~10 ms on IO, with gaps, and a
 * few zero-length ones. */
static void random_ops(void) {
  uint64_t t = kBase + 50000;
  for (int i = 0; i < 3000; i++) {
    unsigned bits = 3 + (unsigned)random_below(21);
    uint64_t length = i % 500 == 0 ? 0 : (1u << bits) + random_below(1u << bits);
    complete(IO, "rand", "op", t, length);
    t += length + 1 + random_below(2000);
  }
}

/* Async "fetch" spans of process PID2: begun on IO, ended on another thread,
 * overlapping, ended out of order; one end without a begin and one begin
 * (id 1) never ended. */
static void async_spans(void) {
  for (uint64_t id = 1; id <= 10; id++)
    event(FXT_EVENT_ASYNC_BEGIN, kBase + id * 1000, PID2, IO, "net", "fetch", NULL, 0, id);
  for (uint64_t id = 10; id >= 2; id--)
    event(FXT_EVENT_ASYNC_END, kBase + 100000 + id * 37000 + (id % 3) * 5000, PID2, IO + 1, "net",
          "fetch", NULL, 0, id);
  event(FXT_EVENT_ASYNC_END, kBase + 900000, PID2, IO + 1, "net", "fetch", NULL, 0,
        99); /* no begin */
}

static void counters(void) {
  for (int i = 0; i < 50; i++) {
    trace_arg_t args[2] = {
        trace_make_arg(lit("rss"),
                       trace_make_int64_arg_value(1000000 + (int64_t)random_below(500000))),
        trace_make_arg(lit("ratio"), trace_make_double_arg_value((double)random_below(1000) / 7.0)),
    };
    event(FXT_EVENT_COUNTER, kBase + (uint64_t)i * 20000, PID, MAIN, "mem", "usage", args, 2, 0);
    trace_arg_t q =
        trace_make_arg(lit("depth"), trace_make_uint32_arg_value((uint32_t)random_below(64)));
    event(FXT_EVENT_COUNTER, kBase + (uint64_t)i * 20000 + 5, PID2, IO, "net", "queue", &q, 1, 7);
  }
}

/* Context switches on CPUs 0 and 1 among MAIN, WORKER, IO and idle (0),
 * each switch-in mostly announced by a wakeup shortly before. */
static void scheduling(void) {
  static const uint64_t kThreads[3] = {MAIN, WORKER, IO};
  uint64_t current[2] = {0, 0};
  uint64_t t = kBase;
  static const char* const kWakeNames[3] = {"sched_wakeup", "sched_waking", "sched_wakeup_new"};
  for (int step = 0; step < 400; step++) {
    uint64_t gap = 2000 + random_below(60000);
    t += gap;
    unsigned cpu = (unsigned)random_below(2);
    uint64_t in = 0;
    if (random_below(5) != 0) {
      uint64_t candidate = kThreads[random_below(3)];
      if (candidate != current[0] && candidate != current[1]) in = candidate;
    }
    if (in == current[cpu]) continue;
    uint64_t in_pid = in == IO ? PID2 : in ? PID : 0;
    if (in && random_below(10) < 8) {
      uint64_t wake = t - random_below(gap);
      unsigned how = (unsigned)random_below(4);
      if (how < 3) {
        event(FXT_EVENT_INSTANT, wake, in_pid, in, "kernel:sched", kWakeNames[how], NULL, 0,
              TRACE_SCOPE_THREAD);
      } else {
        size_t w = fxt_thread_wakeup_record_words(NULL, 0);
        uint64_t* p = reserve(w);
        if (p) fxt_write_thread_wakeup_record(p, w, wake, cpu, in, NULL, 0);
      }
    }
    uint64_t out = current[cpu];
    unsigned state = random_below(2) ? FXT_THREAD_BLOCKED : FXT_THREAD_SUSPENDED;
    if (step % 3 == 0) {
      size_t w = fxt_context_switch_record_words(NULL, 0);
      uint64_t* p = reserve(w);
      if (p) fxt_write_context_switch_record(p, w, t, cpu, state, out, in, NULL, 0);
    } else {
      trace_thread_ref_t o = trace_make_inline_thread_ref(out == IO ? PID2 : out ? PID : 0, out);
      trace_thread_ref_t i = trace_make_inline_thread_ref(in_pid, in);
      size_t w = fxt_legacy_context_switch_record_words(&o, &i);
      uint64_t* p = reserve(w);
      if (p) fxt_write_legacy_context_switch_record(p, w, t, cpu, state, &o, &i, 20, 20);
    }
    current[cpu] = in;
  }
}

/* `deep`: 300 nested begins on one thread, their 300 ends, then one end too
 * many: trace summary counts the outermost 256 levels (SUMMARY_MAX_DEPTH),
 * reports the 44 inner ones as too deep (their ends close nothing else) and
 * the last end as unmatched. */
static void deep(void) {
  provider(1, "deep", 1000000000u);
  for (uint64_t i = 0; i < 300; i++)
    event(FXT_EVENT_DURATION_BEGIN, kBase + i, PID, MAIN, "deep", "level", NULL, 0, 0);
  for (uint64_t i = 0; i < 301; i++)
    event(FXT_EVENT_DURATION_END, kBase + 1000 + i, PID, MAIN, "deep", "level", NULL, 0, 0);
}

int main(int argc, char** argv) {
  if (argc != 2 && !(argc == 3 && strcmp(argv[2], "deep") == 0)) {
    fprintf(stderr, "usage: summary_fixture OUT.fxt [deep]\n");
    return 2;
  }
  uint64_t* p = reserve(1);
  if (p) fxt_write_magic_record(p);
  if (argc == 3) {
    deep();
    goto write;
  }
  provider(1, "crafted", 1000000000u);
  kernel_object(PID, FXT_KOBJ_PROCESS, "app", 0);
  kernel_object(MAIN, FXT_KOBJ_THREAD, "main", PID);
  kernel_object(WORKER, FXT_KOBJ_THREAD, "worker", PID);
  kernel_object(PID2, FXT_KOBJ_PROCESS, "svc", 0);
  kernel_object(IO, FXT_KOBJ_THREAD, "io", PID2);
  known_steps();
  nested();
  random_ops();
  async_spans();
  counters();
  scheduling();
  /* A second provider at 10 MHz (1 tick = 100 ns) that dropped records. */
  provider(2, "slow-clock", 10000000u);
  if ((p = reserve(1))) fxt_write_provider_event_record(p, 2, FXT_PROVIDER_EVENT_BUFFER_OVERFLOW);
  for (uint64_t i = 0; i < 10; i++)
    event(FXT_EVENT_DURATION_COMPLETE, kBase / 100 + i * 1000, 300, 301, "slow", "tick", NULL, 0,
          kBase / 100 + i * 1000 + 10 + i);
write:
  if (g_oom) {
    fprintf(stderr, "summary_fixture: out of memory\n");
    return 1;
  }
  FILE* f = fopen(argv[1], "wb");
  if (!f || fwrite(g_out.words, 8, g_out.count, f) != g_out.count || fclose(f) != 0) {
    perror(argv[1]);
    return 1;
  }
  fxt_buffer_free(&g_out);
  return 0;
}
