/* bench_fxtrace: the fxtrace side of the engine benchmark (bench/README.md).
 * No daemon: the program initializes the engine itself on a pre-faulted
 * shared anonymous buffer in circular mode, sized so that nothing wraps
 * during the measured loop, starts it, runs the scenario, stops, and reads
 * the buffer back to count the event records it holds and their bytes.
 *
 *   scenario     per iteration (category "bench" is enabled, "bench.off" is not)
 *   off          TRACE_INSTANT("bench.off", ..., 2 x TA_INT64), tracing started
 *   stopped      the same call site with the engine initialized but not started
 *   instant0     TRACE_INSTANT("bench", "instant0", TRACE_SCOPE_THREAD)
 *   instant2     ... "a", TA_INT64(i), "b", TA_INT64(thread)
 *   instant_str  ... "s", TA_STRING(16-character string), copied inline
 *   instant_lit  ... "s", TA_STRING_LITERAL("literal-value"), interned (an indexed ref)
 *   instant_str8 ... "s", TA_STRING(8-character string)
 *   instant_str_long ... "s", TA_STRING(100-character string)
 *   instant_str2 ... "s", TA_STRING(16 characters), "t", TA_STRING(16 characters)
 *   instant_mixed ... "a", TA_INT64(i), "s", TA_STRING(16 characters), "l",
 *                TA_STRING_LITERAL("literal-value")
 *   duration     { TRACE_DURATION("bench", "duration"); }: one duration-complete record
 *   duration_args { TRACE_DURATION("bench", "duration_args", "a", TA_INT64(i), "s",
 *                TA_STRING(16 characters)); }
 *   begin_end    TRACE_DURATION_BEGIN + TRACE_DURATION_END: two records
 *   counter      TRACE_COUNTER("bench", "counter", 7, "a", TA_INT64(i))
 *   async        TRACE_ASYNC_INSTANT("bench", "async", 5, "a", TA_INT64(i))
 *   async_str    TRACE_ASYNC_BEGIN("bench", "async_str", 5, "s", TA_STRING(16 characters))
 *   flow         TRACE_FLOW_STEP("bench", "flow", 9)
 *   paced        instant2's event, paced: --rate events/s per thread in 1 ms bursts
 *                (the sustained-streaming scenario; harness.h, bench_pacer)
 *   alert_off    TRACE_ALERT("bench.off", "bench_alert"): a disabled alert, tracing started
 *   alert        TRACE_ALERT("bench", "bench_alert"): the instant event marking it, and the
 *                alert (16 a second go out; the rest take the counted drop path)
 *   tp_off       trace_bench_off_int2(i, thread): TRACE_EVENT() of the disabled
 *                TRACE_SYSTEM bench_off (fxbench_events_off.h)
 *   tp_int2      trace_bench_int2(i, thread): TRACE_EVENT(), two int64 fields
 *   tp_str       trace_bench_str(s): TRACE_EVENT(), one __string (16 chars)
 *
 * --mode local (the default): as above, no daemon. --mode provider: the
 * program registers with the trace manager through libtrace-provider
 * (trace_provider_create_synchronously, as "bench_fxtrace"), waits for the
 * manager to start it (bench/run runs it under `trace record
 * --buffering-mode=streaming -- ...`), runs the scenario on the manager's
 * buffer, and prints system=fxtrace-stream with the engine's stats taken
 * right after the loop (written=, dropped=, expected=) and start_ns= (from
 * creating the provider to tracing enabled); the records themselves are
 * counted in the archive (bench_fxt_count) by bench/run. With FXTRACE_OUTPUT
 * set the provider records in file mode instead (no manager), the same way.
 *
 * --mode drops: as local, but the engine is in streaming mode on a small
 * buffer (1 MiB unless --buffer-mib) and the handler never marks a save
 * done, so once the warm-up filled every rolling segment each timed event
 * takes the drop path (counted, not written): the cost of a dropped record
 * (issue 20; bench/RESULTS.md, "Streaming drops and circular wrap"). The
 * program checks that the events in the buffer + the buffer header's
 * dropped count = the events issued.
 *
 * BENCH_SESSIONS=N (1..4, default 1; --mode local): N engine sessions
 * (docs/sessions.md) enable the categories, each on a buffer of its own of
 * the same size, so that every event is written N times; session 0's buffer
 * is the one scanned, and sessions= and extra_written= (the other
 * sessions' records) are added to the result (bench/run part "sessions").
 *
 * Extra result fields: bytes=(bytes of the scenario's event records per
 * event), buffer_bytes=(rolling-buffer chunk space used per event, so
 * including chunk tails and any non-event records), recorded=(event records
 * found in the buffer), expected=, written= and dropped= (engine stats),
 * wrapped=. bytes are "na" when the buffer header is not the layout of
 * docs/buffer-layout.md (version 3), which this program reads directly. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "engine/buffer_header.h" /* internal: the layout this program scans */
#include "engine/buffer_scan.h"   /* internal: the whole dropped count */
#include "engine/clock.h"         /* internal: which clock the engine picked */
#include "fxbench_events.h"
#include "fxbench_events_off.h"
#include "harness.h"
#include "trace-engine/handler.h"
#include "trace-provider/provider.h"
#include "trace/event.h"

/* Not const: the compiler must not fold its length (LTTng copies it too). */
char g_bench_string[17] = "0123456789abcdef";
char g_bench_string8[9] = "01234567";
char g_bench_string_long[101] =
    "0123456789abcdefghij0123456789abcdefghij0123456789abcdefghij0123456789abcdefghij0123456789"
    "abcdefghij";

/* ---- the scenarios ---- */

static void loop_off(uint64_t n, int t, void* arg) {
  (void)arg;
  for (uint64_t i = 0; i < n; i++)
    TRACE_INSTANT("bench.off", "off", TRACE_SCOPE_THREAD, "a", TA_INT64((int64_t)i), "b",
                  TA_INT64((int64_t)t));
}

static void loop_instant0(uint64_t n, int t, void* arg) {
  (void)t, (void)arg;
  for (uint64_t i = 0; i < n; i++) TRACE_INSTANT("bench", "instant0", TRACE_SCOPE_THREAD);
}

static void loop_instant2(uint64_t n, int t, void* arg) {
  (void)arg;
  for (uint64_t i = 0; i < n; i++)
    TRACE_INSTANT("bench", "instant2", TRACE_SCOPE_THREAD, "a", TA_INT64((int64_t)i), "b",
                  TA_INT64((int64_t)t));
}

static void loop_instant_str(uint64_t n, int t, void* arg) {
  (void)t, (void)arg;
  for (uint64_t i = 0; i < n; i++)
    TRACE_INSTANT("bench", "instant_str", TRACE_SCOPE_THREAD, "s", TA_STRING(g_bench_string));
}

static void loop_instant_lit(uint64_t n, int t, void* arg) {
  (void)t, (void)arg;
  for (uint64_t i = 0; i < n; i++)
    TRACE_INSTANT("bench", "instant_lit", TRACE_SCOPE_THREAD, "s",
                  TA_STRING_LITERAL("literal-value"));
}

static void loop_instant_str8(uint64_t n, int t, void* arg) {
  (void)t, (void)arg;
  for (uint64_t i = 0; i < n; i++)
    TRACE_INSTANT("bench", "instant_str8", TRACE_SCOPE_THREAD, "s", TA_STRING(g_bench_string8));
}

static void loop_instant_str_long(uint64_t n, int t, void* arg) {
  (void)t, (void)arg;
  for (uint64_t i = 0; i < n; i++)
    TRACE_INSTANT("bench", "instant_str_long", TRACE_SCOPE_THREAD, "s",
                  TA_STRING(g_bench_string_long));
}

static void loop_instant_str2(uint64_t n, int t, void* arg) {
  (void)t, (void)arg;
  for (uint64_t i = 0; i < n; i++)
    TRACE_INSTANT("bench", "instant_str2", TRACE_SCOPE_THREAD, "s", TA_STRING(g_bench_string), "t",
                  TA_STRING(g_bench_string));
}

static void loop_instant_mixed(uint64_t n, int t, void* arg) {
  (void)t, (void)arg;
  for (uint64_t i = 0; i < n; i++)
    TRACE_INSTANT("bench", "instant_mixed", TRACE_SCOPE_THREAD, "a", TA_INT64((int64_t)i), "s",
                  TA_STRING(g_bench_string), "l", TA_STRING_LITERAL("literal-value"));
}

static void loop_duration(uint64_t n, int t, void* arg) {
  (void)t, (void)arg;
  for (uint64_t i = 0; i < n; i++) {
    TRACE_DURATION("bench", "duration");
    __asm__ volatile("" ::: "memory"); /* the scope's body */
  }
}

static void loop_duration_args(uint64_t n, int t, void* arg) {
  (void)t, (void)arg;
  for (uint64_t i = 0; i < n; i++) {
    TRACE_DURATION("bench", "duration_args", "a", TA_INT64((int64_t)i), "s",
                   TA_STRING(g_bench_string));
    __asm__ volatile("" ::: "memory"); /* the scope's body */
  }
}

static void loop_begin_end(uint64_t n, int t, void* arg) {
  (void)t, (void)arg;
  for (uint64_t i = 0; i < n; i++) {
    TRACE_DURATION_BEGIN("bench", "begin_end");
    __asm__ volatile("" ::: "memory"); /* the body */
    TRACE_DURATION_END("bench", "begin_end");
  }
}

static void loop_counter(uint64_t n, int t, void* arg) {
  (void)t, (void)arg;
  for (uint64_t i = 0; i < n; i++) TRACE_COUNTER("bench", "counter", 7, "a", TA_INT64((int64_t)i));
}

static void loop_async(uint64_t n, int t, void* arg) {
  (void)t, (void)arg;
  for (uint64_t i = 0; i < n; i++)
    TRACE_ASYNC_INSTANT("bench", "async", 5, "a", TA_INT64((int64_t)i));
}

static void loop_async_str(uint64_t n, int t, void* arg) {
  (void)t, (void)arg;
  for (uint64_t i = 0; i < n; i++)
    TRACE_ASYNC_BEGIN("bench", "async_str", 5, "s", TA_STRING(g_bench_string));
}

static void loop_flow(uint64_t n, int t, void* arg) {
  (void)t, (void)arg;
  for (uint64_t i = 0; i < n; i++) TRACE_FLOW_STEP("bench", "flow", 9);
}

static void loop_paced(uint64_t n, int t, void* arg) {
  const bench_options_t* o = arg;
  bench_pacer_t p;
  bench_pacer_init(&p, o->rate);
  for (uint64_t i = 0; i < n;) {
    uint64_t b = bench_pacer_next(&p);
    if (b > n - i) b = n - i;
    for (uint64_t j = 0; j < b; j++, i++)
      TRACE_INSTANT("bench", "instant2", TRACE_SCOPE_THREAD, "a", TA_INT64((int64_t)i), "b",
                    TA_INT64((int64_t)t));
  }
}

/* TRACE_EVENT(): the same payloads as typed events (fxbench_events.h). */
static void loop_alert_off(uint64_t n, int t, void* arg) {
  (void)t, (void)arg;
  for (uint64_t i = 0; i < n; i++) TRACE_ALERT("bench.off", "bench_alert");
}

static void loop_alert(uint64_t n, int t, void* arg) {
  (void)t, (void)arg;
  for (uint64_t i = 0; i < n; i++) TRACE_ALERT("bench", "bench_alert");
}

static void loop_tp_off(uint64_t n, int t, void* arg) {
  (void)arg;
  for (uint64_t i = 0; i < n; i++) trace_bench_off_int2((int64_t)i, (int64_t)t);
}

static void loop_tp_int2(uint64_t n, int t, void* arg) {
  (void)arg;
  for (uint64_t i = 0; i < n; i++) trace_bench_int2((int64_t)i, (int64_t)t);
}

static void loop_tp_str(uint64_t n, int t, void* arg) {
  (void)t, (void)arg;
  for (uint64_t i = 0; i < n; i++) trace_bench_str(g_bench_string);
}

typedef struct scenario {
  const char* name;
  bench_loop_fn fn;
  int start;          /* start tracing before the loop */
  int records;        /* event records expected per iteration */
  uint64_t max_bytes; /* upper bound of one record, for sizing the buffer */
} scenario_t;

static const scenario_t k_scenarios[] = {
    {"off", loop_off, 1, 0, 0},
    {"stopped", loop_off, 0, 0, 0},
    {"instant0", loop_instant0, 1, 1, 32},
    {"instant2", loop_instant2, 1, 1, 64},
    {"instant_str", loop_instant_str, 1, 1, 64},
    {"instant_lit", loop_instant_lit, 1, 1, 64},
    {"instant_str8", loop_instant_str8, 1, 1, 64},
    {"instant_str_long", loop_instant_str_long, 1, 1, 160},
    {"instant_str2", loop_instant_str2, 1, 1, 96},
    {"instant_mixed", loop_instant_mixed, 1, 1, 96},
    {"duration", loop_duration, 1, 1, 32},
    {"duration_args", loop_duration_args, 1, 1, 96},
    {"begin_end", loop_begin_end, 1, 2, 32},
    {"counter", loop_counter, 1, 1, 64},
    {"async", loop_async, 1, 1, 64},
    {"async_str", loop_async_str, 1, 1, 64},
    {"flow", loop_flow, 1, 1, 32},
    {"paced", loop_paced, 1, 1, 64},
    {"alert_off", loop_alert_off, 1, 0, 0},
    {"alert", loop_alert, 1, 1, 64},
    {"tp_off", loop_tp_off, 1, 0, 0},
    {"tp_int2", loop_tp_int2, 1, 1, 64},
    {"tp_str", loop_tp_str, 1, 1, 64},
};

/* ---- the handler: every callback runs on the engine's thread ---- */

static int g_started, g_stopped, g_terminated, g_disposition; /* atomic */
static uint64_t g_buffer_full_calls;                          /* atomic */

static bool h_is_category_enabled(trace_handler_t* h, const char* category) {
  (void)h;
  return strcmp(category, "bench") == 0;
}
static void h_trace_started(trace_handler_t* h) {
  (void)h;
  __atomic_store_n(&g_started, 1, __ATOMIC_RELEASE);
}
static void h_trace_stopped(trace_handler_t* h, int disposition) {
  (void)h;
  __atomic_store_n(&g_disposition, disposition, __ATOMIC_RELAXED);
  __atomic_store_n(&g_stopped, 1, __ATOMIC_RELEASE);
}
static void h_trace_terminated(trace_handler_t* h) {
  (void)h;
  __atomic_store_n(&g_terminated, 1, __ATOMIC_RELEASE);
}
static void h_notify_buffer_full(trace_handler_t* h, uint32_t wrapped_count,
                                 uint64_t durable_data_end) {
  (void)h, (void)wrapped_count, (void)durable_data_end;
  __atomic_add_fetch(&g_buffer_full_calls, 1, __ATOMIC_RELAXED); /* not in circular mode */
}
static void h_send_alert(trace_handler_t* h, const char* alert_name) { (void)h, (void)alert_name; }

static const trace_handler_ops_t k_ops = {
    .is_category_enabled = h_is_category_enabled,
    .trace_started = h_trace_started,
    .trace_stopped = h_trace_stopped,
    .trace_terminated = h_trace_terminated,
    .notify_buffer_full = h_notify_buffer_full,
    .send_alert = h_send_alert,
};
static trace_handler_t g_handler = {.ops = &k_ops};

/* Waits up to 10 s for *flag; returns 0 or -1. */
static int wait_flag(int* flag, const char* what) {
  for (int i = 0; i < 10000; i++) {
    if (__atomic_load_n(flag, __ATOMIC_ACQUIRE)) return 0;
    nanosleep(&(struct timespec){0, 1000000}, NULL);
  }
  fprintf(stderr, "bench_fxtrace: no %s callback after 10 s\n", what);
  return -1;
}

/* ---- reading the buffer back (docs/buffer-layout.md, scan rule) ---- */

typedef struct scan_result {
  int valid;
  uint64_t event_records, event_bytes; /* FXT records of type 4 */
  uint64_t chunks_used;
  uint32_t chunk_size;
  uint32_t wrapped;
} scan_result_t;

/* Scans one rolling buffer chunk by chunk: a zero header word ends a chunk's
 * data; any record that does not fit its chunk makes the result invalid. */
static int scan_rolling(const uint8_t* base, uint64_t size, uint32_t chunk, scan_result_t* r) {
  for (uint64_t c = 0; c + chunk <= size; c += chunk) {
    const uint8_t* p = base + c;
    uint64_t pos = 0;
    while (pos + 8 <= chunk) {
      uint64_t hdr;
      memcpy(&hdr, p + pos, 8);
      if (hdr == 0) break;
      uint64_t bytes = ((hdr >> 4) & 0xfff) * 8;
      if (bytes == 0 || pos + bytes > chunk) return -1;
      if ((hdr & 0xf) == 4) r->event_records++, r->event_bytes += bytes;
      pos += bytes;
    }
    if (pos) r->chunks_used++;
  }
  return 0;
}

static void scan_buffer(const uint8_t* buf, uint64_t size, scan_result_t* r) {
  trace_buffer_header_t h;
  memcpy(&h, buf, sizeof h);
  *r = (scan_result_t){0};
  if (h.magic != TRACE_BUFFER_HEADER_MAGIC || h.version != TRACE_BUFFER_HEADER_VERSION ||
      h.total_size != size || h.chunk_size < 8 || h.rolling_buffer_size > size ||
      h.segment_count == 0 ||
      128 + h.durable_buffer_size + (uint64_t)h.segment_count * h.rolling_buffer_size > size)
    return;
  r->chunk_size = h.chunk_size;
  r->wrapped = h.wrapped_count;
  const uint8_t* rolling = buf + 128 + h.durable_buffer_size;
  for (unsigned b = 0; b < h.segment_count; b++)
    if (scan_rolling(rolling + b * h.rolling_buffer_size, h.rolling_buffer_size, h.chunk_size, r) !=
        0)
      return;
  r->valid = 1;
}

/* ---- provider mode: the manager owns the buffer ---- */

static int run_provider(const bench_options_t* o, const scenario_t* sc) {
  bool started = false;
  /* start_ns: from creating the provider to tracing enabled, i.e. until the
   * first event could be recorded (file mode: the buffer's reservation and
   * the synchronous part of its page touch; manager: registration, the
   * buffer hand-over and its touch). Polled every 0.1 ms. */
  uint64_t t_create = bench_now_ns();
  trace_provider_t* provider = trace_provider_create_synchronously("bench_fxtrace", &started);
  for (int i = 0; !TRACE_ENABLED() && i < 100000; i++)
    nanosleep(&(struct timespec){0, 100000}, NULL);
  uint64_t start_ns = bench_now_ns() - t_create;
  if (!TRACE_ENABLED() || (sc->start && !TRACE_CATEGORY_ENABLED("bench"))) {
    fprintf(stderr,
            "bench_fxtrace: --mode provider: no trace manager started tracing with "
            "category bench within 10 s (run under `trace record --categories=bench -- ...`)\n");
    trace_provider_destroy(provider);
    return 5;
  }
  /* The manager's work (our parent, `trace record`) is part of what is
   * measured, like LTTng's daemons: not "other processes" (harness.h). */
  char exclude[512];
  const char* prev = getenv("BENCH_EXCLUDE_PIDS");
  snprintf(exclude, sizeof exclude, "%s %ld", prev ? prev : "", (long)getppid());
  setenv("BENCH_EXCLUDE_PIDS", exclude, 1);
  bench_timing_t t;
  if (bench_run(o, sc->fn, (void*)o, &t) != 0) return 1;
  trace_engine_stats_t stats = {0};
  if (trace_engine_get_stats(&stats) != 0) fprintf(stderr, "bench_fxtrace: no stats\n");
  const char* clock_source = trace_clock__source_name();
  trace_provider_destroy(provider); /* an orderly stop: the manager gets STOPPED */
  uint64_t expected = (uint64_t)o->threads * (o->warmup + o->events) * (uint64_t)sc->records;
  char extra[300];
  snprintf(extra, sizeof extra,
           "expected=%" PRIu64 " written=%" PRIu64 " dropped=%" PRIu64 " wrapped=%u rate=%" PRIu64
           " clock_source=%s start_ns=%" PRIu64,
           expected, stats.records_written, stats.records_dropped, stats.wrapped_count, o->rate,
           clock_source, start_ns);
  bench_print_result("fxtrace-stream", o, &t, extra);
  return 0;
}

/* ---- main ---- */

static uint64_t buffer_size_for(const bench_options_t* o, const scenario_t* sc) {
  if (o->buffer_mib) return o->buffer_mib << 20;
  /* Each rolling buffer takes every record plus a chunk per thread of slack;
   * the durable buffer takes at most 1 MiB; 25% margin. */
  uint64_t rolling = (uint64_t)o->threads * (o->warmup + o->events) * sc->max_bytes;
  rolling += rolling / 4 + (uint64_t)o->threads * 2 * TRACE_BUFFER_MAX_CHUNK_SIZE;
  uint64_t total = 128 + (1u << 20) + 2 * rolling;
  if (total < (4u << 20)) total = 4u << 20;
  return (total + 4095) & ~UINT64_C(4095);
}

/* BENCH_SESSIONS - 1 more sessions beside session 0 (0..3). */
static unsigned extra_sessions(void) {
  const char* text = getenv("BENCH_SESSIONS");
  long n = text && text[0] ? strtol(text, NULL, 10) : 1;
  if (n < 1 || n > (long)TRACE_ENGINE_MAX_SESSIONS) {
    fprintf(stderr, "bench_fxtrace: BENCH_SESSIONS=%s: 1 to %u\n", text, TRACE_ENGINE_MAX_SESSIONS);
    exit(2);
  }
  return (unsigned)n - 1;
}

int main(int argc, char** argv) {
  bench_options_t o;
  bench_parse_options(
      argc, argv, &o,
      " [--buffer-mib N] [--mode local|provider|drops] [--rate N]\n"
      "  scenarios: off stopped instant0 instant2 instant_str instant_lit instant_str8\n"
      "             instant_str_long instant_str2 instant_mixed duration duration_args\n"
      "             begin_end counter async async_str flow paced alert_off alert tp_off\n"
      "             tp_int2 tp_str\n"
      "  --buffer-mib N  engine buffer size (default: enough for the loop)\n"
      "  --mode provider  register with the trace manager instead (streaming)\n"
      "  --mode drops  streaming on a 1 MiB buffer never saved: the timed events are dropped");
  const scenario_t* sc = NULL;
  for (size_t i = 0; i < sizeof k_scenarios / sizeof k_scenarios[0]; i++)
    if (!strcmp(k_scenarios[i].name, o.scenario)) sc = &k_scenarios[i];
  if (!sc) {
    fprintf(stderr, "bench_fxtrace: unknown scenario %s\n", o.scenario);
    return 2;
  }
  if (!strcmp(o.mode, "provider")) return run_provider(&o, sc);
  bool drops = !strcmp(o.mode, "drops");
  if (drops && !o.buffer_mib) o.buffer_mib = 1;
  if (strcmp(o.mode, "local") != 0 && !drops) {
    fprintf(stderr, "bench_fxtrace: unknown --mode %s\n", o.mode);
    return 2;
  }
  uint64_t size = buffer_size_for(&o, sc);
  if (size > TRACE_BUFFER_MAX_SIZE) {
    fprintf(stderr,
            "bench_fxtrace: %" PRIu64
            " MiB needed, more than the engine's 4 GiB: "
            "use fewer --events\n",
            size >> 20);
    return 2;
  }
  uint8_t* buf = bench_map_buffer(size);
  if (!buf) {
    fprintf(stderr, "bench_fxtrace: mmap %" PRIu64 " bytes: %s\n", size, strerror(errno));
    return 1;
  }
  int rc = trace_engine_initialize(
      &g_handler, drops ? TRACE_BUFFERING_MODE_STREAMING : TRACE_BUFFERING_MODE_CIRCULAR, buf,
      size);
  if (rc != 0) {
    fprintf(stderr, "bench_fxtrace: trace_engine_initialize: %s\n", strerror(-rc));
    return 1;
  }
  if (sc->start) {
    rc = trace_engine_start(TRACE_START_CLEAR_ENTIRE_BUFFER);
    if (rc != 0) {
      fprintf(stderr, "bench_fxtrace: trace_engine_start: %s\n", strerror(-rc));
      return 1;
    }
    if (wait_flag(&g_started, "trace_started") != 0) return 1;
  }
  /* the other sessions, started after session 0 (the handler's flags are
   * waited for and cleared one session at a time) */
  unsigned more = extra_sessions();
  uint8_t* extra_buf[TRACE_ENGINE_MAX_SESSIONS] = {0};
  static trace_handler_t extra_handler[TRACE_ENGINE_MAX_SESSIONS];
  for (unsigned i = 1; i <= more; i++) {
    extra_handler[i].ops = &k_ops;
    extra_buf[i] = bench_map_buffer(size);
    if (!extra_buf[i]) return 1;
    rc = trace_engine_session_initialize(i, &extra_handler[i], TRACE_BUFFERING_MODE_CIRCULAR,
                                         extra_buf[i], size);
    if (rc == 0 && sc->start) {
      __atomic_store_n(&g_started, 0, __ATOMIC_RELAXED);
      rc = trace_engine_session_start(i, TRACE_START_CLEAR_ENTIRE_BUFFER);
      if (rc == 0 && wait_flag(&g_started, "trace_started") != 0) return 1;
    }
    if (rc != 0) {
      fprintf(stderr, "bench_fxtrace: session %u: %s\n", i, strerror(-rc));
      return 1;
    }
  }

  bench_timing_t t;
  if (bench_run(&o, sc->fn, &o, &t) != 0) return 1;
  const char* clock_source = trace_clock__source_name();
  uint64_t extra_written = 0;
  for (unsigned i = 1; i <= more; i++) {
    trace_engine_stats_t s = {0};
    if (sc->start) {
      __atomic_store_n(&g_stopped, 0, __ATOMIC_RELAXED);
      trace_engine_session_stop(i, 0);
      if (wait_flag(&g_stopped, "trace_stopped") != 0) return 1;
    }
    if (trace_engine_session_get_stats(i, &s) == 0) extra_written += s.records_written;
    __atomic_store_n(&g_terminated, 0, __ATOMIC_RELAXED);
    trace_engine_session_terminate(i);
    wait_flag(&g_terminated, "trace_terminated");
    munmap(extra_buf[i], size);
  }
  __atomic_store_n(&g_stopped, 0, __ATOMIC_RELAXED);
  __atomic_store_n(&g_terminated, 0, __ATOMIC_RELAXED);

  trace_engine_stats_t stats = {0};
  if (sc->start) {
    trace_engine_stop(0);
    if (wait_flag(&g_stopped, "trace_stopped") != 0) return 1;
  }
  if (trace_engine_get_stats(&stats) != 0) fprintf(stderr, "bench_fxtrace: no stats\n");
  scan_result_t scan;
  scan_buffer(buf, size, &scan);
  trace_buffer_header_t header;
  uint64_t header_dropped = buffer_scan__header(buf, size, &header) == NULL
                                ? buffer_scan__dropped(buf, size, &header)
                                : UINT64_MAX;
  trace_engine_terminate();
  wait_flag(&g_terminated, "trace_terminated");

  uint64_t expected = (uint64_t)o.threads * (o.warmup + o.events) * (uint64_t)sc->records;
  char extra[600], bytes[32] = "na", buffer_bytes[32] = "na", recorded[32] = "na";
  if (scan.valid) {
    snprintf(recorded, sizeof recorded, "%" PRIu64, scan.event_records);
    if (scan.event_records) {
      snprintf(bytes, sizeof bytes, "%.2f", (double)scan.event_bytes / (double)scan.event_records);
      snprintf(buffer_bytes, sizeof buffer_bytes, "%.2f",
               (double)scan.chunks_used * scan.chunk_size / (double)scan.event_records);
    }
  }
  snprintf(extra, sizeof extra,
           "bytes=%s buffer_bytes=%s recorded=%s expected=%" PRIu64 " written=%" PRIu64
           " dropped=%" PRIu64 " wrapped=%u disposition=%d buffer_mib=%" PRIu64
           " clock_source=%s sessions=%u extra_written=%" PRIu64,
           bytes, buffer_bytes, recorded, expected, stats.records_written, stats.records_dropped,
           stats.wrapped_count, __atomic_load_n(&g_disposition, __ATOMIC_RELAXED), size >> 20,
           clock_source, more + 1, extra_written);
  bench_print_result(drops ? "fxtrace-drops" : "fxtrace", &o, &t, extra);
  munmap(buf, size);
  /* streaming, never saved: nothing is overwritten, every event is either
   * in the buffer or counted, in the header too */
  if (drops && (!scan.valid || scan.event_records + header_dropped != expected ||
                header_dropped != stats.records_dropped)) {
    fprintf(stderr,
            "bench_fxtrace: --mode drops: %" PRIu64 " event records in the buffer + %" PRIu64
            " dropped (buffer: header and drop counters; engine stats %" PRIu64
            "), expected %" PRIu64 " events\n",
            scan.event_records, header_dropped, stats.records_dropped, expected);
    return 4;
  }
  /* a buffer of --buffer-mib may wrap: circular mode then overwrote the oldest records */
  int overwritten = scan.wrapped > 0 && scan.event_records <= expected;
  if (scan.valid && scan.event_records != expected && !overwritten) {
    fprintf(stderr,
            "bench_fxtrace: %" PRIu64 " event records in the buffer, expected %" PRIu64 "\n",
            scan.event_records, expected);
    return 4;
  }
  return 0;
}
