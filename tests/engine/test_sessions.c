/* Several sessions in one process (docs/sessions.md): each event goes into
 * every started session that enables its category, each session keeps its
 * own buffer, mode and exact drop accounting, and sessions start and stop
 * while others record (also while writer threads run: this test is in
 * .ci/run's TSan list). */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/buffer_header.h"
#include "harness.h"
#include "trace-reader/reader.h"
#include "trace/event.h"
#define CREATE_TRACE_POINTS
#include "engine/sessions_tp.h"

enum { MAX_SEQ = 1 << 16 };

/* What an archive holds: the "seq" events of category "test" (their n, in
 * archive order, per thread index t), and the events of category "other". */
typedef struct seen {
  uint64_t* seqs[4];
  size_t seq_count[4];
  size_t other;
  size_t alerts;
} seen_t;

static void read_archive(harness_t* h, seen_t* out) {
  memset(out, 0, sizeof(*out));
  for (int t = 0; t < 4; t++) {
    out->seqs[t] = malloc(sizeof(uint64_t) * MAX_SEQ);
    ASSERT_TRUE(out->seqs[t] != NULL);
  }
  harness_records_t it;
  for (harness_records_open(&it, h); harness_records_next(&it);) {
    const trace_record_t* rec = &it.rec;
    if (rec->type != 4) continue;
    if (strcmp(rec->event.category.data, "other") == 0) {
      out->other++;
      continue;
    }
    if (strcmp(rec->event.category.data, "alerts") == 0) {
      out->alerts++;
      continue;
    }
    ASSERT_STREQ(rec->event.category.data, "test");
    ASSERT_STREQ(rec->event.name.data, "seq");
    ASSERT_EQ(rec->event.args.count, 2u);
    ASSERT_STREQ(rec->event.args.items[0].name.data, "t");
    ASSERT_STREQ(rec->event.args.items[1].name.data, "n");
    uint64_t t = rec->event.args.items[0].uint64_value;
    ASSERT_TRUE(t < 4);
    ASSERT_TRUE(out->seq_count[t] < MAX_SEQ);
    out->seqs[t][out->seq_count[t]++] = rec->event.args.items[1].uint64_value;
  }
}

static void free_seen(seen_t* s) {
  for (int t = 0; t < 4; t++) free(s->seqs[t]);
}

static void emit(uint64_t t, uint64_t n) {
  TRACE_INSTANT("test", "seq", TRACE_SCOPE_THREAD, "t", TA_UINT64(t), "n", TA_UINT64(n));
}

/* The buffer's dropped count as the manager reads it: the header's counter
 * and the streaming writers' drop counters (buffer_scan__dropped). */
static uint64_t header_dropped(const harness_t* h) {
  trace_buffer_header_t header;
  ASSERT_TRUE(buffer_scan__header(h->buffer, h->size, &header) == NULL);
  return buffer_scan__dropped(h->buffer, h->size, &header);
}

/* h's archive holds thread index t's events first .. first + count - 1,
 * each once and in order, and nothing of category "other"; h dropped
 * nothing (its stats and its buffer's header agree). */
static void expect_whole_run(harness_t* h, int t, uint64_t first, uint64_t count) {
  seen_t s;
  read_archive(h, &s);
  ASSERT_EQ(s.seq_count[t], count);
  for (uint64_t i = 0; i < count; i++) ASSERT_EQ(s.seqs[t][i], first + i);
  ASSERT_EQ(s.other, 0u);
  ASSERT_EQ(h->stats.records_dropped, 0u);
  ASSERT_EQ(header_dropped(h), 0u);
  free_seen(&s);
}

/* The case in one process: a long circular session and a short
 * oneshot one on the same category, and a third on another category. */
static void test_circular_and_oneshot_overlap(void) {
  static harness_t longrun, shortrun, other;
  ASSERT_EQ(harness_start_session(&longrun, 0, TRACE_BUFFERING_MODE_CIRCULAR, 4 << 20, "test"), 0);
  ASSERT_EQ(harness_start_session(&other, 2, TRACE_BUFFERING_MODE_ONESHOT, 1 << 20, "other"), 0);
  for (uint64_t n = 0; n < 3000; n++) {
    if (n == 1000)
      ASSERT_EQ(harness_start_session(&shortrun, 1, TRACE_BUFFERING_MODE_ONESHOT, 1 << 20, "test"),
                0);
    if (n == 2000) harness_stop(&shortrun);
    emit(0, n);
    if (n % 100 == 0) TRACE_INSTANT("other", "tick", TRACE_SCOPE_THREAD);
  }
  harness_stop(&longrun);
  harness_stop(&other);

  /* the long one: every event, in order: no hole where the short one
   * started or stopped */
  expect_whole_run(&longrun, 0, 0, 3000);
  /* the short one: the unbroken run between its start and its stop (both
   * on this thread) */
  expect_whole_run(&shortrun, 0, 1000, 1000);
  /* the third: its own category only */
  seen_t s;
  read_archive(&other, &s);
  ASSERT_EQ(s.seq_count[0], 0u);
  ASSERT_EQ(s.other, 30u);
  free_seen(&s);

  harness_free(&shortrun);
  harness_free(&longrun);
  harness_free(&other);
}

/* Drops are each session's own: a small oneshot buffer fills and counts
 * exactly what it lost, a large one beside it loses nothing. */
static void test_drops_are_per_session(void) {
  static harness_t small, large;
  ASSERT_EQ(harness_start_session(&small, 3, TRACE_BUFFERING_MODE_ONESHOT, 64 << 10, "test"), 0);
  ASSERT_EQ(harness_start_session(&large, 1, TRACE_BUFFERING_MODE_ONESHOT, 4 << 20, "test"), 0);
  const uint64_t total = 20000;
  for (uint64_t n = 0; n < total; n++) emit(1, n);
  harness_stop(&small);
  harness_stop(&large);

  expect_whole_run(&large, 1, 0, total);

  seen_t s;
  read_archive(&small, &s);
  ASSERT_TRUE(s.seq_count[1] > 0 && s.seq_count[1] < total);
  /* a oneshot buffer keeps the first events: a prefix, then drops */
  for (uint64_t i = 0; i < s.seq_count[1]; i++) ASSERT_EQ(s.seqs[1][i], i);
  ASSERT_EQ(small.stats.records_dropped, total - s.seq_count[1]);
  ASSERT_EQ(header_dropped(&small), total - s.seq_count[1]);
  ASSERT_EQ(small.disposition, -12); /* -ENOMEM: records were dropped */
  ASSERT_EQ(large.disposition, 0);
  free_seen(&s);
  harness_free(&small);
  harness_free(&large);
}

/* Four sessions at once; a fifth index does not exist, and a session is
 * initialized once. */
static void test_four_sessions(void) {
  static harness_t h[4];
  const trace_buffering_mode_t modes[4] = {
      TRACE_BUFFERING_MODE_ONESHOT, TRACE_BUFFERING_MODE_CIRCULAR, TRACE_BUFFERING_MODE_STREAMING,
      TRACE_BUFFERING_MODE_ONESHOT};
  for (unsigned i = 0; i < 4; i++)
    ASSERT_EQ(harness_start_session(&h[i], i, modes[i], 1 << 20, i == 3 ? "other" : "test"), 0);
  static harness_t extra;
  ASSERT_EQ(harness_start_session(&extra, TRACE_ENGINE_MAX_SESSIONS, TRACE_BUFFERING_MODE_ONESHOT,
                                  1 << 20, "test"),
            -22); /* -EINVAL */
  munmap(extra.buffer, extra.size);
  categories__free(&extra.categories);
  static uint8_t spare[1 << 16] __attribute__((aligned(4096)));
  ASSERT_EQ(trace_engine_session_initialize(1, &extra.handler, TRACE_BUFFERING_MODE_ONESHOT, spare,
                                            sizeof(spare)),
            -16); /* -EBUSY: session 1 is initialized */
  for (uint64_t n = 0; n < 500; n++) emit(2, n);
  TRACE_INSTANT("other", "tick", TRACE_SCOPE_THREAD);
  for (unsigned i = 0; i < 4; i++) harness_stop(&h[i]);
  for (unsigned i = 0; i < 4; i++) {
    seen_t s;
    read_archive(&h[i], &s);
    ASSERT_EQ(s.seq_count[2], i == 3 ? 0u : 500u);
    for (uint64_t k = 0; k < s.seq_count[2]; k++) ASSERT_EQ(s.seqs[2][k], k);
    ASSERT_EQ(s.other, i == 3 ? 1u : 0u);
    ASSERT_EQ(h[i].stats.records_dropped, 0u);
    free_seen(&s);
  }
  for (unsigned i = 0; i < 4; i++) harness_free(&h[i]);
}

/* TRACE_ALERT goes to every session that enables its category, each
 * marking it and passing it to its own handler (its fifo). */
static void test_alert_reaches_every_session(void) {
  static harness_t a, b, c;
  ASSERT_EQ(harness_start_session(&a, 0, TRACE_BUFFERING_MODE_CIRCULAR, 1 << 20, "alerts"), 0);
  ASSERT_EQ(harness_start_session(&b, 2, TRACE_BUFFERING_MODE_ONESHOT, 1 << 20, "alerts,test"), 0);
  ASSERT_EQ(harness_start_session(&c, 1, TRACE_BUFFERING_MODE_ONESHOT, 1 << 20, "test"), 0);
  TRACE_ALERT("alerts", "boom");
  harness_stop(&a);
  harness_stop(&b);
  harness_stop(&c);
  ASSERT_EQ(a.alert_count, 1u);
  ASSERT_STREQ(a.alerts[0], "boom");
  ASSERT_EQ(b.alert_count, 1u);
  ASSERT_STREQ(b.alerts[0], "boom");
  ASSERT_EQ(c.alert_count, 0u);
  seen_t s;
  read_archive(&a, &s);
  ASSERT_EQ(s.alerts, 1u);
  free_seen(&s);
  read_archive(&b, &s);
  ASSERT_EQ(s.alerts, 1u);
  free_seen(&s);
  read_archive(&c, &s);
  ASSERT_EQ(s.alerts, 0u);
  free_seen(&s);
  trace_engine_alert_stats_t stats;
  ASSERT_EQ(trace_engine_session_get_alert_stats(2, &stats), 0);
  ASSERT_EQ(stats.alerts_sent, 1u);
  harness_free(&a);
  harness_free(&b);
  harness_free(&c);
}

/* The spans (TRACE_DURATION "span" of category "test") in h's archive,
 * their "i" in archive order. */
static int read_spans(harness_t* h, int32_t* out, int max) {
  int spans = 0;
  harness_records_t it;
  for (harness_records_open(&it, h); harness_records_next(&it);) {
    const trace_record_t* rec = &it.rec;
    if (rec->type != 4) continue;
    ASSERT_STREQ(rec->event.category.data, "test");
    ASSERT_STREQ(rec->event.name.data, "span");
    ASSERT_EQ(rec->event.event_type, 4u); /* duration complete */
    ASSERT_STREQ(rec->event.args.items[0].name.data, "i");
    ASSERT_TRUE(spans < max);
    out[spans++] = rec->event.args.items[0].int32_value;
  }
  return spans;
}

/* TRACE_DURATION goes to the sessions that enabled its category when it
 * began and still run, each once (as one trace records nothing of a scope
 * that began before its start): with sessions 0 and 2 on its category and
 * session 1 on another between them (the several-sessions mask has a gap),
 * a scope that spans the start of 1 and 2 (100: session 0 only), ten
 * scopes while all three run (0..9, the exit's inline loop over the
 * sessions), one that spans session 2's stop (200: session 0 only), and,
 * with session 3 started on the category, one that spans session 0's stop
 * (300: session 3 only, the library's intersection of the scope's word
 * with the sessions at its end). */
static void test_duration_into_both(void) {
  static harness_t a, other, b, c;
  ASSERT_EQ(harness_start_session(&a, 0, TRACE_BUFFERING_MODE_ONESHOT, 1 << 20, "test"), 0);
  {
    TRACE_DURATION("test", "span", "i", TA_INT32(100));
    ASSERT_EQ(harness_start_session(&other, 1, TRACE_BUFFERING_MODE_ONESHOT, 1 << 20, "other"), 0);
    ASSERT_EQ(harness_start_session(&b, 2, TRACE_BUFFERING_MODE_ONESHOT, 1 << 20, "test"), 0);
  }
  for (int i = 0; i < 10; i++) {
    TRACE_DURATION("test", "span", "i", TA_INT32(i));
  }
  {
    TRACE_DURATION("test", "span", "i", TA_INT32(200));
    harness_stop(&b);
  }
  ASSERT_EQ(harness_start_session(&c, 3, TRACE_BUFFERING_MODE_ONESHOT, 1 << 20, "test"), 0);
  {
    TRACE_DURATION("test", "span", "i", TA_INT32(300));
    harness_stop(&a);
  }
  harness_stop(&other);
  harness_stop(&c);
  int32_t spans[16];
  ASSERT_EQ(read_spans(&a, spans, 16), 12);
  ASSERT_EQ(spans[0], 100);
  for (int i = 0; i < 10; i++) ASSERT_EQ(spans[1 + i], i);
  ASSERT_EQ(spans[11], 200);
  ASSERT_EQ(read_spans(&b, spans, 16), 10);
  for (int i = 0; i < 10; i++) ASSERT_EQ(spans[i], i);
  ASSERT_EQ(read_spans(&c, spans, 16), 1);
  ASSERT_EQ(spans[0], 300);
  ASSERT_EQ(read_spans(&other, spans, 16), 0);
  harness_free(&a);
  harness_free(&other);
  harness_free(&b);
  harness_free(&c);
}

/* The records of category `category` in h's archive: events (each checked
 * to be named `name`, with argument `arg` equal to its index among them)
 * and, of any category, the kernel-object, blob and other records. */
typedef struct kinds {
  int events;  /* of `category`, named `name` */
  int objects; /* kernel-object records */
  int blobs;   /* blob records (large blobs: type 15) */
} kinds_t;

static kinds_t count_kinds(harness_t* h, const char* category, const char* name, const char* arg) {
  kinds_t k = {0, 0, 0};
  harness_records_t it;
  for (harness_records_open(&it, h); harness_records_next(&it);) {
    const trace_record_t* rec = &it.rec;
    if (rec->type != 4 || strcmp(rec->event.category.data, category) != 0) continue;
    ASSERT_STREQ(rec->event.name.data, name);
    ASSERT_TRUE(rec->event.args.count >= 1);
    ASSERT_STREQ(rec->event.args.items[0].name.data, arg);
    ASSERT_EQ(rec->event.args.items[0].uint64_value & 0xffffffffu, (uint64_t)k.events);
    k.events++;
  }
  return k;
}

/* TRACE_EVENT(): a record in every session that enables the system, once
 * each, and none in a session that does not; then with one of them
 * stopped, in the other only. */
static void test_trace_event_into_every_session(void) {
  static harness_t a, b, c, d;
  ASSERT_EQ(harness_start_session(&a, 0, TRACE_BUFFERING_MODE_ONESHOT, 1 << 20, "tpsys"), 0);
  ASSERT_EQ(harness_start_session(&b, 3, TRACE_BUFFERING_MODE_CIRCULAR, 1 << 20, "test,tpsys"), 0);
  ASSERT_EQ(harness_start_session(&c, 1, TRACE_BUFFERING_MODE_ONESHOT, 1 << 20, "test"), 0);
  ASSERT_TRUE(trace_sessions_tp_tick_enabled());
  for (unsigned n = 0; n < 100; n++) trace_sessions_tp_tick(n, n % 2 ? "odd" : "even");
  harness_stop(&a);
  harness_stop(&c);
  /* one session left: the single-session path, inline after the first */
  ASSERT_EQ(harness_start_session(&d, 2, TRACE_BUFFERING_MODE_ONESHOT, 1 << 20, "other"), 0);
  for (unsigned n = 100; n < 150; n++) trace_sessions_tp_tick(n, "late");
  harness_stop(&b);
  harness_stop(&d);
  ASSERT_TRUE(!trace_sessions_tp_tick_enabled());
  ASSERT_EQ(count_kinds(&a, "tpsys", "sessions_tp_tick", "n").events, 100);
  ASSERT_EQ(count_kinds(&b, "tpsys", "sessions_tp_tick", "n").events, 150);
  ASSERT_EQ(count_kinds(&c, "tpsys", "sessions_tp_tick", "n").events, 0);
  ASSERT_EQ(count_kinds(&d, "tpsys", "sessions_tp_tick", "n").events, 0);
  ASSERT_EQ(header_dropped(&a), 0u);
  ASSERT_EQ(header_dropped(&b), 0u);
  harness_free(&a);
  harness_free(&b);
  harness_free(&c);
  harness_free(&d);
}

/* What the context forms left in an archive: of category "forms", the
 * instaflows' event records ("if": three each), the vthread events ("vt"),
 * the large blobs ("lb", "la"); of no category, the small blobs ("sb") and
 * the kernel objects ("sessions kobj"). */
typedef struct forms {
  int instaflow, vthread, large_blobs, small_blobs, objects;
} forms_t;

static forms_t count_forms(harness_t* h) {
  forms_t f = {0, 0, 0, 0, 0};
  harness_records_t it;
  for (harness_records_open(&it, h); harness_records_next(&it);) {
    const trace_record_t* rec = &it.rec;
    if (rec->type == 4 && strcmp(rec->event.category.data, "forms") == 0) {
      if (strcmp(rec->event.name.data, "if") == 0) f.instaflow++;
      if (strcmp(rec->event.name.data, "vt") == 0) f.vthread++;
    } else if (rec->type == 15 && strcmp(rec->large.category.data, "forms") == 0) {
      f.large_blobs++;
    } else if (rec->type == 5 && strcmp(rec->blob.name.data, "sb") == 0) {
      f.small_blobs++;
    } else if (rec->type == 7 && strcmp(rec->kernel_object.name.data, "sessions kobj") == 0) {
      f.objects++;
    }
  }
  return f;
}

/* The forms written through a context: each into every session that
 * enables its category (those without a category into every started
 * session), exactly once each. */
static void test_context_forms_into_every_session(void) {
  static harness_t a, b, c;
  ASSERT_EQ(harness_start_session(&a, 0, TRACE_BUFFERING_MODE_ONESHOT, 1 << 20, "forms"), 0);
  ASSERT_EQ(harness_start_session(&b, 2, TRACE_BUFFERING_MODE_CIRCULAR, 1 << 20, "test,forms"), 0);
  ASSERT_EQ(harness_start_session(&c, 1, TRACE_BUFFERING_MODE_ONESHOT, 1 << 20, "test"), 0);
  static const char blob[40] = "a blob of forty bytes, in every session";
  for (uint64_t i = 0; i < 5; i++) {
    TRACE_INSTAFLOW_BEGIN("forms", "if", 100 + i, "i", TA_UINT64(i));
    TRACE_VTHREAD_DURATION_BEGIN("forms", "vt", "vthread", 7, trace_context_ticks_now(), "i",
                                 TA_UINT64(i));
    TRACE_VTHREAD_DURATION_END("forms", "vt", "vthread", 7, trace_context_ticks_now());
    TRACE_BLOB_EVENT("forms", "lb", blob, sizeof(blob), "i", TA_UINT64(i));
    TRACE_BLOB_ATTACHMENT("forms", "la", blob, sizeof(blob));
    TRACE_BLOB(TRACE_BLOB_TYPE_DATA, "sb", blob, sizeof(blob));
    TRACE_KERNEL_OBJECT(1234, 0, "sessions kobj", "i", TA_UINT64(i));
  }
  harness_stop(&a);
  harness_stop(&b);
  harness_stop(&c);
  for (int k = 0; k < 3; k++) {
    harness_t* h = k == 0 ? &a : k == 1 ? &b : &c;
    forms_t f = count_forms(h);
    int with_category = h == &c ? 0 : 1;
    ASSERT_EQ(f.instaflow, 15 * with_category);
    ASSERT_EQ(f.vthread, 10 * with_category);
    ASSERT_EQ(f.large_blobs, 10 * with_category);
    ASSERT_EQ(f.small_blobs, 5);
    ASSERT_EQ(f.objects, 5);
    ASSERT_EQ(header_dropped(h), 0u);
  }
  harness_free(&a);
  harness_free(&b);
  harness_free(&c);
}

/* ---- sessions started and stopped while writer threads run ---- */

enum { WRITERS = 3, PER_WRITER = 6000, CYCLES = 12 };

static int go; /* atomic */

static void* writer_main(void* arg) {
  uint64_t t = (uint64_t)(uintptr_t)arg;
  while (!__atomic_load_n(&go, __ATOMIC_ACQUIRE)) {
  }
  for (uint64_t n = 0; n < PER_WRITER; n++) emit(t, n);
  return NULL;
}

static void test_start_stop_while_writing(void) {
  static harness_t base, side;
  /* session 0 holds everything: 3 x 6000 events of 40 bytes and their
   * strings fit in 4 MiB without wrapping */
  ASSERT_EQ(harness_start_session(&base, 0, TRACE_BUFFERING_MODE_CIRCULAR, 4 << 20, "test"), 0);
  __atomic_store_n(&go, 0, __ATOMIC_RELEASE);
  pthread_t threads[WRITERS];
  for (uintptr_t t = 0; t < WRITERS; t++)
    ASSERT_EQ(pthread_create(&threads[t], NULL, writer_main, (void*)t), 0);
  __atomic_store_n(&go, 1, __ATOMIC_RELEASE);
  uint64_t side_events = 0, side_dropped = 0;
  for (int cycle = 0; cycle < CYCLES; cycle++) {
    unsigned session = 1 + (unsigned)(cycle % 3);
    ASSERT_EQ(harness_start_session(
                  &side, session,
                  cycle % 2 ? TRACE_BUFFERING_MODE_ONESHOT : TRACE_BUFFERING_MODE_STREAMING,
                  256 << 10, "test"),
              0);
    struct timespec ts = {0, 200000};
    nanosleep(&ts, NULL);
    harness_stop(&side);
    seen_t s;
    read_archive(&side, &s);
    /* what the side session holds: per thread, increasing, each at most
     * once; its count and its drops add up to what it was offered, which
     * its stats account for exactly */
    for (int t = 0; t < WRITERS; t++) {
      for (size_t i = 1; i < s.seq_count[t]; i++) ASSERT_TRUE(s.seqs[t][i] > s.seqs[t][i - 1]);
      side_events += s.seq_count[t];
    }
    ASSERT_EQ(side.stats.records_dropped, header_dropped(&side));
    side_dropped += side.stats.records_dropped;
    free_seen(&s);
    harness_free(&side);
  }
  for (int t = 0; t < WRITERS; t++) pthread_join(threads[t], NULL);
  harness_stop(&base);
  seen_t s;
  read_archive(&base, &s);
  /* the base session: every event of every thread, in order, whatever the
   * side sessions did */
  for (int t = 0; t < WRITERS; t++) {
    ASSERT_EQ(s.seq_count[t], (size_t)PER_WRITER);
    for (uint64_t n = 0; n < PER_WRITER; n++) ASSERT_EQ(s.seqs[t][n], n);
  }
  ASSERT_EQ(base.stats.records_dropped, 0u);
  free_seen(&s);
  harness_free(&base);
  printf("sessions: side sessions held %llu events, dropped %llu\n",
         (unsigned long long)side_events, (unsigned long long)side_dropped);
}

int main(void) {
  test_circular_and_oneshot_overlap();
  test_drops_are_per_session();
  test_four_sessions();
  test_alert_reaches_every_session();
  test_duration_into_both();
  test_trace_event_into_every_session();
  test_context_forms_into_every_session();
  test_start_stop_while_writing();
  printf("sessions: ok\n");
  return 0;
}
