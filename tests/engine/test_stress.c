/* Stress: 2 and 3 threads x 1,000,000 events each, in every buffering mode,
 * with a mix of event kinds and record sizes (emit_seq(), instants with 0-3
 * arguments of different types including inline strings from 1 byte to ~9 KB,
 * counters, duration-complete, async and flow events with ids), written
 * through the engine's C API (context.h and the macros' helpers).
 *
 * Every event is derived from its key (thread, seq): its kind, its arguments,
 * its ids and (for the context-API kinds) its timestamp. Reading the archive
 * back through the reader checks that
 *   - every record decodes (nothing skipped, no error, no truncation);
 *   - no record is torn: each event is exactly what its thread wrote for its
 *     seq (kind, name, category, thread, every argument, ids, ticks);
 *   - no (thread, seq) appears twice;
 *   - oneshot and streaming: events in the archive + records dropped ==
 *     events attempted, exactly; circular drops nothing;
 *   - oneshot really filled, circular wrapped many times, streaming saved
 *     many times.
 *
 * STRESS_EVENTS=n sets the events per thread (default 1,000,000; 250,000
 * under ThreadSanitizer). */
#include <pthread.h>
#include <sched.h>
#include <time.h>
#include <unistd.h>

#include "engine_test_util.h"
#include "fxt/fxt_format.h"
#include "harness.h"

enum {
  MAX_THREADS = 3,
  KINDS = 8,
  BIG_STRING_MAX = 9200, /* > the 4 KiB chunks of the circular buffer */
  YIELD_EVERY = 256,
};

static uint64_t events_per_thread;

/* ---- what a (thread, seq) writes ---- */

static uint64_t make_key(unsigned t, uint64_t seq) { return ((uint64_t)(t + 1) << 32) | seq; }

static uint64_t mix(uint64_t x) { /* splitmix64 */
  x += UINT64_C(0x9E3779B97F4A7C15);
  x = (x ^ (x >> 30)) * UINT64_C(0xBF58476D1CE4E5B9);
  x = (x ^ (x >> 27)) * UINT64_C(0x94D049BB133111EB);
  return x ^ (x >> 31);
}

static unsigned kind_of(uint64_t key) { return (unsigned)(mix(key) % KINDS); }

/* Length of the inline string of kinds 2 and 5: 1..80 bytes, and now and then
 * a large one (a record bigger than a small buffer's chunk). */
static size_t string_length(uint64_t key, unsigned kind) {
  uint64_t m = mix(key ^ kind);
  if (kind == 2 && (m >> 40) % 512 == 0) return 3000 + (size_t)((m >> 8) % (BIG_STRING_MAX - 3000));
  return 1 + (size_t)((m >> 8) % 80);
}

static void fill_string(char* out, uint64_t key, size_t length) {
  for (size_t i = 0; i < length; i++) out[i] = (char)('a' + (key + i * 7) % 26);
}

static const char* const literal_values[4] = {"alpha", "beta-gamma", "d", "epsilon zeta eta"};

/* ---- the writers ---- */

typedef struct worker {
  unsigned t;
  pthread_barrier_t* barrier;
  uint64_t tid;
  uint64_t not_acquired;
} worker_t;

/* The context-API kinds: refs registered by hand, explicit ticks (= key). */
static void write_with_context(trace_context_t* c, const trace_string_ref_t* category, uint64_t key,
                               unsigned kind, char* text) {
  uint64_t m = mix(key);
  trace_thread_ref_t thread;
  trace_context_register_current_thread(c, &thread);
  trace_string_ref_t name;
  trace_arg_t args[3];
  switch (kind) {
    case 1: { /* instant, no args, the scope varies */
      trace_context_register_string_literal(c, "i0", &name);
      trace_context_write_instant_event_record(c, key, &thread, category, &name,
                                               (trace_scope_t)((m >> 20) % 3), NULL, 0);
      break;
    }
    case 2: { /* instant, 3 args: int32, double, inline string (1 B .. 9 KB) */
      trace_context_register_string_literal(c, "i3", &name);
      trace_string_ref_t a, s;
      trace_context_register_string_literal(c, "a", &a);
      trace_context_register_string_literal(c, "s", &s);
      size_t len = string_length(key, 2);
      fill_string(text, key, len);
      args[0] = trace_make_arg(a, trace_make_int32_arg_value((int32_t)(uint32_t)m));
      args[1] = trace_make_arg(trace_make_inline_c_string_ref("d"),
                               trace_make_double_arg_value((double)key * 0.25));
      args[2] =
          trace_make_arg(s, trace_make_string_arg_value(trace_make_inline_string_ref(text, len)));
      trace_context_write_instant_event_record(c, key, &thread, category, &name, TRACE_SCOPE_THREAD,
                                               args, 3);
      break;
    }
    case 4: { /* counter, id = key, 2 args: int64, uint32 */
      trace_context_register_string_literal(c, "ctr", &name);
      trace_string_ref_t v, u;
      trace_context_register_string_literal(c, "v", &v);
      trace_context_register_string_literal(c, "u", &u);
      args[0] = trace_make_arg(v, trace_make_int64_arg_value(-(int64_t)key));
      args[1] = trace_make_arg(u, trace_make_uint32_arg_value((uint32_t)(m >> 32)));
      trace_context_write_counter_event_record(c, key, &thread, category, &name, key, args, 2);
      break;
    }
    case 5: { /* duration complete key .. key + d, 3 args: pointer, koid, string */
      trace_context_register_string_literal(c, "dur", &name);
      trace_string_ref_t p, k;
      trace_context_register_string_literal(c, "p", &p);
      trace_context_register_string_literal(c, "k", &k);
      size_t len = string_length(key, 5);
      fill_string(text, key, len);
      args[0] = trace_make_arg(p, trace_make_pointer_arg_value((uintptr_t)m));
      args[1] = trace_make_arg(k, trace_make_koid_arg_value(key ^ 0x5555));
      args[2] =
          trace_make_arg(trace_make_inline_c_string_ref("str"),
                         trace_make_string_arg_value(trace_make_inline_string_ref(text, len)));
      trace_context_write_duration_event_record(c, key, key + (m & 0xffff), &thread, category,
                                                &name, args, 3);
      break;
    }
    default:
      TEST_FAIL("kind %u is not a context-API kind", kind);
  }
  trace_release_context(c);
}

static void write_event(worker_t* w, uint64_t seq, char* text) {
  static trace_site_t site;
  uint64_t key = make_key(w->t, seq);
  unsigned kind = kind_of(key);
  uint64_t m = mix(key);
  if (kind == 0) {
    emit_seq(key);
    return;
  }
  trace_string_ref_t category;
  trace_context_t* c = trace_acquire_context_for_category_cached("stress", &site, &category);
  if (!c) {
    w->not_acquired++;
    return;
  }
  trace_arg_t args[2];
  switch (kind) {
    case 3: /* the macros' helper: 2 args, uint64 and an interned literal value */
      args[0] =
          trace_make_arg(trace_internal_make_literal_ref("n"), trace_make_uint64_arg_value(key));
      args[1] = trace_make_arg(
          trace_internal_make_literal_ref("lit"),
          trace_make_string_arg_value(trace_internal_make_literal_ref(literal_values[m >> 62])));
      trace_internal_write_instant_event_record_and_release_context(c, &category, "h2",
                                                                    TRACE_SCOPE_PROCESS, args, 2);
      break;
    case 6: /* async begin / instant / end, id = key, 1 arg: bool */
      args[0] = trace_make_arg(trace_internal_make_literal_ref("b"),
                               trace_make_bool_arg_value((m >> 30) & 1));
      switch ((m >> 24) % 3) {
        case 0:
          trace_internal_write_async_begin_event_record_and_release_context(c, &category, "async",
                                                                            key, args, 1);
          break;
        case 1:
          trace_internal_write_async_instant_event_record_and_release_context(c, &category, "async",
                                                                              key, args, 1);
          break;
        default:
          trace_internal_write_async_end_event_record_and_release_context(c, &category, "async",
                                                                          key, args, 1);
      }
      break;
    case 7: /* flow begin / step / end, id = key, no args */
      switch ((m >> 24) % 3) {
        case 0:
          trace_internal_write_flow_begin_event_record_and_release_context(c, &category, "flow",
                                                                           key, NULL, 0);
          break;
        case 1:
          trace_internal_write_flow_step_event_record_and_release_context(c, &category, "flow", key,
                                                                          NULL, 0);
          break;
        default:
          trace_internal_write_flow_end_event_record_and_release_context(c, &category, "flow", key,
                                                                         NULL, 0);
      }
      break;
    default:
      write_with_context(c, &category, key, kind, text);
  }
}

static void* run_worker(void* arg) {
  worker_t* w = (worker_t*)arg;
  char* text = malloc(BIG_STRING_MAX);
  if (!text) abort();
  w->tid = (uint64_t)gettid();
  pthread_barrier_wait(w->barrier);
  for (uint64_t seq = 0; seq < events_per_thread; seq++) {
    write_event(w, seq, text);
    /* With every core busy writing, the engine thread that saves streaming
     * buffers waits a scheduler tick to run: yield now and then, as real
     * programs do, so that the run sees many saves, not mostly drops. */
    if ((seq & (YIELD_EVERY - 1)) == YIELD_EVERY - 1) sched_yield();
  }
  free(text);
  return NULL;
}

/* ---- the checker ---- */

typedef struct checker {
  unsigned threads;
  const worker_t* workers;
  uint8_t* seen; /* threads * events_per_thread */
  uint64_t found[MAX_THREADS];
  uint64_t events;
  char* text;
} checker_t;

static const trace_reader_arg_t* arg_at(const trace_record_t* rec, size_t i, const char* name,
                                        uint32_t type) {
  ASSERT_TRUE(i < rec->event.args.count);
  const trace_reader_arg_t* a = &rec->event.args.items[i];
  ASSERT_STREQ(a->name.data, name);
  ASSERT_EQ(a->type, type);
  return a;
}

static void expect_string(const trace_reader_arg_t* a, checker_t* ck, uint64_t key, size_t len) {
  fill_string(ck->text, key, len);
  ASSERT_EQ(a->string_value.length, len);
  ASSERT_TRUE(memcmp(a->string_value.data, ck->text, len) == 0);
}

static void check_event(checker_t* ck, const trace_record_t* rec) {
  const char* name = rec->event.name.data;
  uint32_t type = rec->event.event_type;
  unsigned kind;
  uint64_t key;
  size_t nargs;
  if (strcmp(name, "seq") == 0) {
    kind = 0, nargs = 1;
    ASSERT_EQ(type, FXT_EVENT_INSTANT);
    key = arg_at(rec, 0, "n", TRACE_ARG_UINT64)->uint64_value;
  } else if (strcmp(name, "i0") == 0) {
    kind = 1, nargs = 0, key = rec->event.ticks;
    ASSERT_EQ(type, FXT_EVENT_INSTANT);
  } else if (strcmp(name, "i3") == 0) {
    kind = 2, nargs = 3, key = rec->event.ticks;
    ASSERT_EQ(type, FXT_EVENT_INSTANT);
  } else if (strcmp(name, "h2") == 0) {
    kind = 3, nargs = 2;
    ASSERT_EQ(type, FXT_EVENT_INSTANT);
    key = arg_at(rec, 0, "n", TRACE_ARG_UINT64)->uint64_value;
  } else if (strcmp(name, "ctr") == 0) {
    kind = 4, nargs = 2, key = rec->event.ticks;
    ASSERT_EQ(type, FXT_EVENT_COUNTER);
  } else if (strcmp(name, "dur") == 0) {
    kind = 5, nargs = 3, key = rec->event.ticks;
    ASSERT_EQ(type, FXT_EVENT_DURATION_COMPLETE);
  } else if (strcmp(name, "async") == 0) {
    kind = 6, nargs = 1, key = rec->event.payload;
  } else if (strcmp(name, "flow") == 0) {
    kind = 7, nargs = 0, key = rec->event.payload;
  } else {
    TEST_FAIL("unexpected event \"%s\"", name);
  }
  /* whose, and which */
  uint64_t t1 = key >> 32, seq = key & 0xffffffffu;
  ASSERT_TRUE(t1 >= 1 && t1 <= ck->threads);
  ASSERT_TRUE(seq < events_per_thread);
  unsigned t = (unsigned)(t1 - 1);
  ASSERT_EQ(kind_of(key), kind);
  ASSERT_STREQ(rec->event.category.data, kind == 0 ? "test" : "stress");
  ASSERT_EQ(rec->event.thread_koid, ck->workers[t].tid);
  ASSERT_EQ(rec->event.process_koid, (uint64_t)getpid());
  ASSERT_EQ(rec->event.args.count, nargs);
  /* everything else that thread wrote for that seq */
  uint64_t m = mix(key);
  switch (kind) {
    case 1:
      ASSERT_EQ(rec->event.scope, (m >> 20) % 3);
      break;
    case 2:
      ASSERT_EQ(rec->event.scope, TRACE_SCOPE_THREAD);
      ASSERT_EQ(arg_at(rec, 0, "a", TRACE_ARG_INT32)->int32_value, (int32_t)(uint32_t)m);
      ASSERT_TRUE(arg_at(rec, 1, "d", TRACE_ARG_DOUBLE)->double_value == (double)key * 0.25);
      expect_string(arg_at(rec, 2, "s", TRACE_ARG_STRING), ck, key, string_length(key, 2));
      break;
    case 3:
      ASSERT_EQ(rec->event.scope, TRACE_SCOPE_PROCESS);
      ASSERT_STREQ(arg_at(rec, 1, "lit", TRACE_ARG_STRING)->string_value.data,
                   literal_values[m >> 62]);
      break;
    case 4:
      ASSERT_EQ(rec->event.payload, key);
      ASSERT_EQ(arg_at(rec, 0, "v", TRACE_ARG_INT64)->int64_value, -(int64_t)key);
      ASSERT_EQ(arg_at(rec, 1, "u", TRACE_ARG_UINT32)->uint32_value, (uint32_t)(m >> 32));
      break;
    case 5:
      ASSERT_EQ(rec->event.payload, key + (m & 0xffff));
      ASSERT_EQ(arg_at(rec, 0, "p", TRACE_ARG_POINTER)->pointer_value, (uintptr_t)m);
      ASSERT_EQ(arg_at(rec, 1, "k", TRACE_ARG_KOID)->koid_value, key ^ 0x5555);
      expect_string(arg_at(rec, 2, "str", TRACE_ARG_STRING), ck, key, string_length(key, 5));
      break;
    case 6:
      ASSERT_EQ(type, FXT_EVENT_ASYNC_BEGIN + (m >> 24) % 3);
      ASSERT_EQ(arg_at(rec, 0, "b", TRACE_ARG_BOOL)->bool_value, (m >> 30) & 1);
      break;
    case 7:
      ASSERT_EQ(type, FXT_EVENT_FLOW_BEGIN + (m >> 24) % 3);
      break;
    default:
      break;
  }
  uint8_t* seen = &ck->seen[t * events_per_thread + seq];
  if (*seen) TEST_FAIL("thread %u seq %llu appears twice", t, (unsigned long long)seq);
  *seen = 1;
  ck->found[t]++;
  ck->events++;
}

typedef struct archive_counts {
  uint64_t records, events, overflow_events, init_records, process_objects;
} archive_counts_t;

static void check_archive(checker_t* ck, const uint8_t* data, size_t length, archive_counts_t* n) {
  memset(n, 0, sizeof(*n));
  trace_reader_t* r = trace_reader_open_memory(data, length, NULL);
  ASSERT_TRUE(r != NULL);
  trace_record_t rec;
  int status;
  while ((status = trace_reader_next(r, &rec)) != TRACE_READ_END) {
    if (status != TRACE_READ_RECORD)
      TEST_FAIL("%s at offset %llu: %s",
                status == TRACE_READ_SKIPPED ? "skipped record" : "read error",
                (unsigned long long)trace_reader_error(r).offset, trace_reader_error(r).message);
    n->records++;
    switch (rec.type) {
      case 0:
        n->overflow_events += rec.metadata.type == 3;
        break;
      case 1:
        n->init_records++;
        break;
      case 7:
        n->process_objects += rec.kernel_object.object_type == 1;
        break;
      case 4:
        n->events++;
        check_event(ck, &rec);
        break;
      default:
        break;
    }
  }
  ASSERT_TRUE(!trace_reader_truncated(r));
  ASSERT_EQ(trace_reader_stats(r).records_skipped, 0u);
  trace_reader_close(r);
}

static double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static const char* mode_name(trace_buffering_mode_t mode) {
  return mode == TRACE_BUFFERING_MODE_ONESHOT    ? "oneshot"
         : mode == TRACE_BUFFERING_MODE_CIRCULAR ? "circular"
                                                 : "streaming";
}

static void stress(trace_buffering_mode_t mode, unsigned threads, size_t buffer_bytes) {
  double t0 = now_s();
  harness_t h;
  ASSERT_EQ(harness_start(&h, mode, buffer_bytes, NULL), 0);
  pthread_barrier_t barrier;
  pthread_barrier_init(&barrier, NULL, threads);
  pthread_t tids[MAX_THREADS];
  worker_t workers[MAX_THREADS];
  memset(workers, 0, sizeof(workers));
  for (unsigned t = 0; t < threads; t++) {
    workers[t].t = t;
    workers[t].barrier = &barrier;
    ASSERT_EQ(pthread_create(&tids[t], NULL, run_worker, &workers[t]), 0);
  }
  for (unsigned t = 0; t < threads; t++) ASSERT_EQ(pthread_join(tids[t], NULL), 0);
  pthread_barrier_destroy(&barrier);
  double t1 = now_s();
  harness_stop(&h);
  for (unsigned t = 0; t < threads; t++) ASSERT_EQ(workers[t].not_acquired, 0u);

  checker_t ck = {threads, workers, calloc(threads, events_per_thread),
                  {0},     0,       malloc(BIG_STRING_MAX)};
  ASSERT_TRUE(ck.seen != NULL && ck.text != NULL);
  size_t length;
  const uint8_t* fxt = harness_archive(&h, &length);
  archive_counts_t n;
  check_archive(&ck, fxt, length, &n);
  double t2 = now_s();

  uint64_t attempted = (uint64_t)threads * events_per_thread;
  uint64_t dropped = h.stats.records_dropped;
  printf(
      "%-9s %u threads: %llu attempted, %llu in the archive, %llu dropped, %u wraps, "
      "%llu saves, %.1f MB; write %.2f s, stop+check %.2f s\n",
      mode_name(mode), threads, (unsigned long long)attempted, (unsigned long long)ck.events,
      (unsigned long long)dropped, h.stats.wrapped_count, (unsigned long long)h.saves,
      (double)length / 1e6, t1 - t0, t2 - t1);
  fflush(stdout);
  ASSERT_EQ(n.init_records, 1u);
  ASSERT_EQ(n.process_objects, 1u);
  ASSERT_EQ(n.overflow_events, dropped > 0 ? 1u : 0u);
  ASSERT_EQ(h.stats.threads, threads);
  switch (mode) {
    case TRACE_BUFFERING_MODE_ONESHOT:
      ASSERT_EQ(ck.events + dropped, attempted);
      ASSERT_TRUE(dropped > attempted / 2); /* it filled, early */
      ASSERT_TRUE(ck.events > 1000);
      ASSERT_TRUE(h.disposition != 0);
      break;
    case TRACE_BUFFERING_MODE_CIRCULAR:
      ASSERT_EQ(dropped, 0u);
      ASSERT_TRUE(h.stats.wrapped_count >= 50);
      ASSERT_TRUE(ck.events > 1000 && ck.events < attempted);
      break;
    case TRACE_BUFFERING_MODE_STREAMING:
      ASSERT_EQ(ck.events + dropped, attempted);
      ASSERT_TRUE(h.saves >= 20);
      ASSERT_EQ(h.saves, h.stats.wrapped_count);
      ASSERT_TRUE(ck.events > 10000);
      break;
  }
  free(ck.seen);
  free(ck.text);
  harness_free(&h);
}

/* ---- a deterministic case: a buffer switch that leaves chunks unclaimed ----
 *
 * When a record needs more chunks than are left in the current rolling
 * buffer, the writer switches buffers; the chunks left behind are never
 * claimed in that round, so never cleared. If they still hold records of the
 * round segment_count switches earlier (same segment), the next save
 * (streaming) or the final scan emits those records again. */

static uint64_t saves_done(harness_t* h) {
  pthread_mutex_lock(&h->lock);
  uint64_t n = h->saves;
  pthread_mutex_unlock(&h->lock);
  return n;
}

static uint32_t wraps(void) {
  trace_engine_stats_t stats;
  ASSERT_EQ(trace_engine_get_stats(&stats), 0);
  return stats.wrapped_count;
}

static void wait_saves(harness_t* h, uint64_t n) {
  for (int i = 0; i < 100000 && saves_done(h) < n; i++) {
    struct timespec ts = {0, 100000};
    nanosleep(&ts, NULL);
  }
  ASSERT_EQ(saves_done(h), n);
}

static void test_switch_leaving_unclaimed_chunks(void) {
  harness_t h;
  ASSERT_EQ(harness_start(&h, TRACE_BUFFERING_MODE_STREAMING, 512 * 1024, NULL), 0);
  const trace_buffer_header_t* header = (const trace_buffer_header_t*)h.buffer;
  uint64_t C = header->chunk_size, chunks = header->rolling_buffer_size / C;
  uint32_t segments = header->segment_count;
  ASSERT_TRUE(segments >= 2);
  /* a record of r chunks that does not tile the chunks after chunk 0 */
  uint64_t r = 2;
  while ((chunks - 1) % r == 0) r++;
  size_t big = (size_t)((r - 1) * C + C / 2);
  ASSERT_TRUE(big <= TRACE_ENCODED_STRING_REF_MAX_LENGTH);
  char* text = malloc(big);
  ASSERT_TRUE(text != NULL);
  memset(text, 'x', big);
  uint64_t seq = 0;
  /* rounds 0 .. segments - 1: small records fill every segment, each saved */
  for (uint32_t round = 1; round <= segments; round++) {
    while (wraps() < round) emit_seq(seq++);
    wait_saves(&h, round);
  }
  /* round `segments` reuses segment 0: records of r chunks, until it
   * switches with (chunks - 1) % r chunks never claimed; they hold round 0's
   * records */
  static trace_site_t site;
  while (wraps() < segments + 1) {
    trace_string_ref_t category;
    trace_context_t* c = trace_acquire_context_for_category_cached("stress", &site, &category);
    ASSERT_TRUE(c != NULL);
    trace_arg_t arg =
        trace_make_arg(trace_internal_make_literal_ref("big"),
                       trace_make_string_arg_value(trace_make_inline_string_ref(text, big)));
    trace_internal_write_instant_event_record_and_release_context(c, &category, "big",
                                                                  TRACE_SCOPE_THREAD, &arg, 1);
  }
  wait_saves(&h, segments + 1);
  harness_stop(&h);
  size_t length;
  const uint8_t* fxt = harness_archive(&h, &length);
  archive_summary_t s;
  summarize_archive(fxt, length, &s);
  ASSERT_EQ(s.skipped, 0u);
  ASSERT_EQ(h.stats.records_dropped, 0u);
  uint8_t* seen = calloc(seq, 1);
  ASSERT_TRUE(seen != NULL);
  size_t duplicates = 0;
  for (size_t i = 0; i < s.seq_count; i++) {
    ASSERT_TRUE(s.seqs[i].seq < seq);
    duplicates += seen[s.seqs[i].seq]++ != 0;
  }
  if (duplicates)
    TEST_FAIL(
        "%zu records of round 0 saved again in round %u (chunk %llu B, %llu chunks per "
        "buffer, records of %llu chunks)",
        duplicates, segments, (unsigned long long)C, (unsigned long long)chunks,
        (unsigned long long)r);
  ASSERT_EQ(s.seq_count, seq);
  free(seen);
  free(s.seqs);
  free(text);
  harness_free(&h);
}

int main(void) {
  (void)harness_release_saves; /* this test lets the harness save at once */
  events_per_thread = TEST_UNDER_TSAN ? 250000 : 1000000;
  const char* env = getenv("STRESS_EVENTS");
  if (env && *env) events_per_thread = strtoull(env, NULL, 10);
  ASSERT_TRUE(events_per_thread >= 1000 && events_per_thread < (UINT64_C(1) << 32));
  test_switch_leaving_unclaimed_chunks();
  for (unsigned threads = 2; threads <= 3; threads++) {
    stress(TRACE_BUFFERING_MODE_ONESHOT, threads, 512 * 1024);
    stress(TRACE_BUFFERING_MODE_CIRCULAR, threads, 256 * 1024);
    stress(TRACE_BUFFERING_MODE_STREAMING, threads, 512 * 1024);
  }
  printf("stress: ok (%llu events per thread)\n", (unsigned long long)events_per_thread);
  return 0;
}
