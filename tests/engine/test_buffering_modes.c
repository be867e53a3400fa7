/* Buffering modes exactly as PROTOCOL.md §7.5 says, through the reader:
 *   oneshot   stops at full; what was written is each thread's first records;
 *   circular  keeps the newest records (a contiguous suffix per thread) and
 *             every durable record, drops nothing;
 *   streaming hands off every full buffer, drops only while no rolling buffer
 *             is free, and resumes once one is saved;
 * and in every mode written + dropped == attempted, exactly, for 1 and 2
 * threads. The durable buffer filling up stops the trace for good. */
#include <pthread.h>

#include "engine_test_util.h"
#include "harness.h"

enum { SMALL_BUFFER = 64 * 1024 };

typedef struct worker {
  uint64_t first, count;
} worker_t;

static void* run_worker(void* arg) {
  worker_t* w = (worker_t*)arg;
  for (uint64_t i = 0; i < w->count; i++) emit_seq(w->first + i);
  return NULL;
}

/* Runs `threads` threads of `per_thread` events, seq numbers per thread
 * starting at t * 1e9, and checks the accounting. */
static void run(harness_t* h, int threads, uint64_t per_thread, archive_summary_t* s) {
  pthread_t tids[4];
  worker_t work[4];
  for (int t = 0; t < threads; t++) {
    work[t].first = (uint64_t)t * 1000000000u;
    work[t].count = per_thread;
    ASSERT_EQ(pthread_create(&tids[t], NULL, run_worker, &work[t]), 0);
  }
  for (int t = 0; t < threads; t++) pthread_join(tids[t], NULL);
  harness_stop(h);
  size_t length;
  const uint8_t* fxt = harness_archive(h, &length);
  summarize_archive(fxt, length, s);
  ASSERT_EQ(s->skipped, 0u);
  /* oneshot and streaming lose only what they drop (and count); circular
   * overwrites the oldest records, which is not dropping */
  uint64_t attempted = (uint64_t)threads * per_thread;
  if (threads > 0 && h->mode != TRACE_BUFFERING_MODE_CIRCULAR)
    ASSERT_EQ(s->seq_count + h->stats.records_dropped, attempted);
  ASSERT_EQ(s->overflow_events, h->stats.records_dropped > 0 ? 1u : 0u);
  ASSERT_EQ(s->init_records, 1u);
  ASSERT_EQ(s->process_objects, 1u);
  /* a thread-info record for each thread that has events (a thread that
   * found the oneshot buffer already full has neither) */
  uint64_t seen_tids[4] = {0};
  size_t distinct = 0;
  for (size_t i = 0; i < s->seq_count; i++) {
    bool seen = false;
    for (size_t k = 0; k < distinct; k++) seen |= seen_tids[k] == s->seqs[i].tid;
    if (!seen && distinct < 4) seen_tids[distinct++] = s->seqs[i].tid;
  }
  ASSERT_TRUE(s->thread_objects >= distinct &&
              s->thread_objects <= (size_t)(threads ? threads : 1));
}

/* seqs of one thread (by the seq's high part), in archive order */
static size_t thread_seqs(const archive_summary_t* s, int t, uint64_t* out) {
  size_t n = 0;
  for (size_t i = 0; i < s->seq_count; i++)
    if (s->seqs[i].seq / 1000000000u == (uint64_t)t) out[n++] = s->seqs[i].seq % 1000000000u;
  return n;
}

static int cmp_u64(const void* a, const void* b) {
  uint64_t x = *(const uint64_t*)a, y = *(const uint64_t*)b;
  return x < y ? -1 : x > y;
}

static void test_oneshot(int threads) {
  harness_t h;
  archive_summary_t s;
  ASSERT_EQ(harness_start(&h, TRACE_BUFFERING_MODE_ONESHOT, SMALL_BUFFER, NULL), 0);
  uint64_t per_thread = 20000; /* ~800 KB of records for a 64 KiB buffer */
  run(&h, threads, per_thread, &s);
  ASSERT_TRUE(h.stats.records_dropped > 0);
  ASSERT_TRUE(s.seq_count > 500); /* the buffer really filled */
  ASSERT_TRUE(h.disposition != 0);
  uint64_t* seqs = malloc(sizeof(uint64_t) * s.seq_count);
  for (int t = 0; t < threads; t++) {
    size_t n = thread_seqs(&s, t, seqs);
    qsort(seqs, n, sizeof(*seqs), cmp_u64);
    for (size_t i = 0; i < n; i++) ASSERT_EQ(seqs[i], i); /* a prefix: stopped at full */
  }
  free(seqs);
  free(s.seqs);
  harness_free(&h);
}

static void test_circular(int threads) {
  harness_t h;
  archive_summary_t s;
  ASSERT_EQ(harness_start(&h, TRACE_BUFFERING_MODE_CIRCULAR, SMALL_BUFFER, NULL), 0);
  uint64_t per_thread = 50000;
  run(&h, threads, per_thread, &s);
  ASSERT_EQ(h.stats.records_dropped, 0u);
  ASSERT_TRUE(h.stats.wrapped_count >= 2);
  ASSERT_TRUE(s.seq_count < per_thread * threads); /* the oldest were overwritten */
  uint64_t* seqs = malloc(sizeof(uint64_t) * s.seq_count);
  size_t threads_with_records = 0;
  for (int t = 0; t < threads; t++) {
    size_t n = thread_seqs(&s, t, seqs);
    if (n == 0) continue; /* another thread's newer records took the space */
    threads_with_records++;
    qsort(seqs, n, sizeof(*seqs), cmp_u64);
    ASSERT_EQ(seqs[n - 1], per_thread - 1); /* a thread's newest record is kept */
    for (size_t i = 1; i < n; i++) ASSERT_TRUE(seqs[i] != seqs[i - 1]);
    if (threads == 1) /* a contiguous suffix */
      for (size_t i = 0; i < n; i++) ASSERT_EQ(seqs[i], per_thread - n + i);
  }
  ASSERT_TRUE(threads_with_records >= 1);
  ASSERT_TRUE(s.seq_count > 500);
  free(seqs);
  free(s.seqs);
  harness_free(&h);
}

static void test_streaming(int threads) {
  harness_t h;
  archive_summary_t s;
  ASSERT_EQ(harness_start(&h, TRACE_BUFFERING_MODE_STREAMING, SMALL_BUFFER, NULL), 0);
  uint64_t per_thread = 50000;
  run(&h, threads, per_thread, &s);
  /* every buffer that filled was handed off (the harness saves at once) */
  ASSERT_TRUE(h.stats.wrapped_count >= 1);
  ASSERT_EQ(h.saves, h.stats.wrapped_count);
  /* the manager's way of copying a save (chunk prefixes) took records, and
   * matched the record-by-record save (harness_do_save) */
  ASSERT_TRUE(h.prefixed_saves >= 1);
  uint64_t* seqs = malloc(sizeof(uint64_t) * s.seq_count);
  for (int t = 0; t < threads; t++) {
    size_t n = thread_seqs(&s, t, seqs);
    qsort(seqs, n, sizeof(*seqs), cmp_u64);
    for (size_t i = 1; i < n; i++) ASSERT_TRUE(seqs[i] != seqs[i - 1]);
  }
  free(seqs);
  free(s.seqs);
  harness_free(&h);
}

/* The dropped count in the buffer, as the manager reads it: the header's
 * counter and the streaming writers' drop counters (buffer_scan__dropped). */
static uint64_t header_dropped(const harness_t* h) {
  trace_buffer_header_t header;
  ASSERT_TRUE(buffer_scan__header(h->buffer, h->size, &header) == NULL);
  return buffer_scan__dropped(h->buffer, h->size, &header);
}

/* Only the header's counter (the drops streaming writers do not count in
 * their own counters). */
static uint64_t header_counter(const harness_t* h) {
  const trace_buffer_header_t* header = (const trace_buffer_header_t*)h->buffer;
  return __atomic_load_n(&header->num_records_dropped, __ATOMIC_RELAXED);
}

/* With the save held back, the writer fills both rolling buffers and then
 * drops (counted); once the save is done, writing resumes. */
static void test_streaming_drops_only_while_no_buffer_is_free(void) {
  harness_t h;
  archive_summary_t s;
  ASSERT_EQ(harness_start(&h, TRACE_BUFFERING_MODE_STREAMING, SMALL_BUFFER, NULL), 0);
  h.hold_saves = true;
  trace_engine_stats_t stats;
  uint64_t seq = 0;
  ASSERT_TRUE(!trace_engine_save_pending()); /* buffer 0 in use, buffer 1 free */
  /* fill buffer 0, switch (a save is requested), fill buffer 1 */
  while (trace_engine_get_stats(&stats) == 0 && stats.records_dropped == 0) emit_seq(seq++);
  uint64_t first_drop = seq - 1;
  ASSERT_TRUE(trace_engine_save_pending());      /* what a writer that can wait waits on */
  for (int i = 0; i < 100; i++) emit_seq(seq++); /* all dropped: no buffer is free */
  ASSERT_EQ(trace_engine_get_stats(&stats), 0);
  ASSERT_EQ(stats.records_dropped, 101u);
  ASSERT_EQ(header_dropped(&h), 101u);              /* live, before any save or stop */
  while (!harness_release_saves(&h)) sched_yield(); /* the engine's request may lag */
  ASSERT_TRUE(!trace_engine_save_pending());        /* saved: buffer 0 is free again */
  h.hold_saves = false;
  uint64_t resumed = seq;
  for (int i = 0; i < 100; i++) emit_seq(seq++); /* buffer 0 is free again */
  run(&h, 0, 0, &s);
  ASSERT_EQ(s.seq_count + h.stats.records_dropped, seq);
  ASSERT_EQ(h.stats.records_dropped, 101u);
  bool dropped_absent = true, resumed_present = false;
  for (size_t i = 0; i < s.seq_count; i++) {
    if (s.seqs[i].seq >= first_drop && s.seqs[i].seq < resumed) dropped_absent = false;
    if (s.seqs[i].seq == seq - 1) resumed_present = true;
  }
  ASSERT_TRUE(dropped_absent);
  ASSERT_TRUE(resumed_present);
  free(s.seqs);
  harness_free(&h);
}

enum { SEGMENTED_BUFFER = 1 << 20, SLOW_SAVE_SEGMENTS = 3 };

/* Under the harness's lock: with several segments the engine thread may be
 * handing over the next save meanwhile. */
static void set_hold_saves(harness_t* h, bool hold) {
  pthread_mutex_lock(&h->lock);
  h->hold_saves = hold;
  pthread_mutex_unlock(&h->lock);
}

/* A save held back (the consumer delayed) while the writer fills
 * SLOW_SAVE_SEGMENTS more segments — longer than one segment takes to fill,
 * less than the segment_count - 1 the buffer can wait for: nothing is
 * dropped (with two halves, test_streaming_drops_only_while_no_buffer_is_free
 * drops as soon as the second half is full). The events are counted, not
 * timed: the writer stops at a fixed count that fills exactly
 * SLOW_SAVE_SEGMENTS segments and a part of the next. Before the stop, the
 * buffer is also read as a crashed process would leave it (the reader's
 * recovery, reader/recover.c): every event, none saved yet. */
static void test_streaming_tolerates_a_slow_save(void) {
  harness_t h;
  archive_summary_t s;
  trace_engine_stats_t stats;
  /* The contrast: two halves (a 64 KiB buffer keeps 2 segments) drop under
   * the same delay as soon as the second half is full. */
  ASSERT_EQ(harness_start(&h, TRACE_BUFFERING_MODE_STREAMING, SMALL_BUFFER, NULL), 0);
  set_hold_saves(&h, true);
  ASSERT_EQ(((const trace_buffer_header_t*)h.buffer)->segment_count, 2);
  uint64_t seq = 0;
  while (trace_engine_get_stats(&stats) == 0 && stats.wrapped_count == 0) emit_seq(seq++);
  uint64_t halves_total = seq * SLOW_SAVE_SEGMENTS + seq / 2;
  while (seq < halves_total) emit_seq(seq++);
  ASSERT_EQ(trace_engine_get_stats(&stats), 0);
  ASSERT_TRUE(stats.records_dropped > 0);
  ASSERT_EQ(header_dropped(&h), stats.records_dropped);
  while (!harness_release_saves(&h)) sched_yield();
  run(&h, 0, 0, &s);
  ASSERT_EQ(s.seq_count + h.stats.records_dropped, halves_total);
  free(s.seqs);
  harness_free(&h);

  ASSERT_EQ(harness_start(&h, TRACE_BUFFERING_MODE_STREAMING, SEGMENTED_BUFFER, NULL), 0);
  set_hold_saves(&h, true);
  const trace_buffer_header_t* header = (const trace_buffer_header_t*)h.buffer;
  uint32_t segments = header->segment_count;
  ASSERT_EQ(segments, TRACE_BUFFER_MAX_SEGMENTS);
  ASSERT_TRUE(SLOW_SAVE_SEGMENTS + 1 < segments);
  /* the events one segment holds: count those of the first */
  seq = 0;
  while (trace_engine_get_stats(&stats) == 0 && stats.wrapped_count == 0) emit_seq(seq++);
  uint64_t per_segment = seq;
  uint64_t total = per_segment * SLOW_SAVE_SEGMENTS + per_segment / 2;
  while (seq < total) emit_seq(seq++);
  ASSERT_EQ(trace_engine_get_stats(&stats), 0);
  ASSERT_EQ(stats.wrapped_count, (uint32_t)SLOW_SAVE_SEGMENTS);
  ASSERT_EQ(stats.records_dropped, 0u);
  ASSERT_EQ(header_dropped(&h), 0u);
  ASSERT_TRUE(!trace_engine_save_pending()); /* the writer need not wait */
  ASSERT_EQ(h.saves, 0u);                    /* the first save is still held */

  /* the crashed-process view: the buffer as it is, read by the reader, once
   * the engine thread has handed every full segment over (and is done with
   * the header: the harness's lock orders its writes before this copy) */
  for (;;) {
    pthread_mutex_lock(&h.lock);
    size_t waiting = h.saves_waiting;
    pthread_mutex_unlock(&h.lock);
    if (waiting == SLOW_SAVE_SEGMENTS) break;
    ASSERT_TRUE(waiting < SLOW_SAVE_SEGMENTS);
    sched_yield();
  }
  uint8_t* image = malloc(h.size);
  ASSERT_TRUE(image != NULL);
  memcpy(image, h.buffer, h.size);
  archive_summary_t crashed;
  summarize_archive(image, h.size, &crashed);
  ASSERT_EQ(crashed.skipped, 0u);
  ASSERT_EQ(crashed.seq_count, total);
  free(crashed.seqs);
  free(image);

  /* the delayed consumer catches up: the held save, then the others the
   * engine hands over one at a time */
  while (!harness_release_saves(&h)) sched_yield();
  set_hold_saves(&h, false);
  for (int i = 0;
       i < 100000 && __atomic_load_n(&header->saves_done, __ATOMIC_ACQUIRE) < SLOW_SAVE_SEGMENTS;
       i++) {
    while (harness_release_saves(&h)) {
    }
    struct timespec ts = {0, 100000};
    nanosleep(&ts, NULL);
  }
  ASSERT_EQ(__atomic_load_n(&header->saves_done, __ATOMIC_ACQUIRE), (uint64_t)SLOW_SAVE_SEGMENTS);
  run(&h, 0, 0, &s);
  ASSERT_EQ(h.stats.records_dropped, 0u);
  ASSERT_EQ(h.saves, (uint64_t)SLOW_SAVE_SEGMENTS);
  ASSERT_EQ(s.seq_count, total);
  uint8_t* seen = calloc(total, 1);
  ASSERT_TRUE(seen != NULL);
  for (size_t i = 0; i < s.seq_count; i++) {
    ASSERT_TRUE(s.seqs[i].seq < total);
    ASSERT_EQ(seen[s.seqs[i].seq]++, 0); /* each exactly once */
  }
  free(seen);
  free(s.seqs);
  harness_free(&h);
}

/* With every save held, the writer fills segment_count - 1 segments and the
 * current one, then drops (counted exactly); the saves then go in order. */
static void test_streaming_drops_once_every_segment_waits(void) {
  harness_t h;
  archive_summary_t s;
  ASSERT_EQ(harness_start(&h, TRACE_BUFFERING_MODE_STREAMING, SEGMENTED_BUFFER, NULL), 0);
  set_hold_saves(&h, true);
  uint32_t segments = ((const trace_buffer_header_t*)h.buffer)->segment_count;
  trace_engine_stats_t stats;
  uint64_t seq = 0;
  while (trace_engine_get_stats(&stats) == 0 && stats.records_dropped == 0) emit_seq(seq++);
  ASSERT_EQ(stats.wrapped_count, segments - 1);
  ASSERT_TRUE(trace_engine_save_pending());
  for (int i = 0; i < 100; i++) emit_seq(seq++);
  ASSERT_EQ(header_dropped(&h), 101u);
  while (!harness_release_saves(&h)) sched_yield();
  ASSERT_TRUE(!trace_engine_save_pending()); /* segment 0 is free again */
  set_hold_saves(&h, false); /* the next save may be held already: the final scan has it */
  for (int i = 0; i < 100; i++) emit_seq(seq++);
  run(&h, 0, 0, &s);
  ASSERT_EQ(h.stats.records_dropped, 101u);
  ASSERT_EQ(s.seq_count + 101u, seq);
  free(s.seqs);
  harness_free(&h);
}

/* The header's drop counter is live: right while the trace runs (as for a
 * process killed now, which never reaches the stop), equal to the engine's
 * own count, and back to 0 at the next start. */
static void test_header_drop_counter_is_live(void) {
  harness_t h;
  archive_summary_t s;
  ASSERT_EQ(harness_start(&h, TRACE_BUFFERING_MODE_ONESHOT, SMALL_BUFFER, NULL), 0);
  trace_engine_stats_t stats;
  uint64_t seq = 0;
  while (trace_engine_get_stats(&stats) == 0 && stats.records_dropped == 0) emit_seq(seq++);
  ASSERT_TRUE(!trace_engine_save_pending()); /* full, but oneshot saves nothing */
  ASSERT_EQ(header_dropped(&h), 1u);
  for (int i = 0; i < 1000; i++) emit_seq(seq++);
  ASSERT_EQ(header_dropped(&h), 1001u);
  ASSERT_EQ(trace_engine_get_stats(&stats), 0);
  ASSERT_EQ(stats.records_dropped, 1001u);
  run(&h, 0, 0, &s);
  ASSERT_EQ(header_dropped(&h), 1001u);
  ASSERT_EQ(s.seq_count + 1001u, seq);
  ASSERT_EQ(s.overflow_events, 1u);
  free(s.seqs);
  ASSERT_EQ(trace_engine_start(TRACE_START_RETAIN_BUFFER), 0);
  ASSERT_EQ(header_dropped(&h), 0u);
  harness_free(&h);
}

typedef struct dropper {
  uint64_t first, count;
  uint64_t dropped; /* the engine's count for this thread's writer, after its loop */
} dropper_t;

static void* run_dropper(void* arg) {
  dropper_t* d = arg;
  for (uint64_t i = 0; i < d->count; i++) emit_seq(d->first + i);
  return NULL;
}

/* Streaming drops while every segment waits for its save are counted in each
 * writer's own drop counter in the buffer's durable area, not in the
 * header's shared counter (issue 20): two threads dropping at once count
 * exactly, the count is in the buffer while the trace runs (as for a
 * process killed now), no scan emits the counters, and a start that keeps
 * the durable buffer sets them back to 0. */
static void test_streaming_drop_counters(void) {
  harness_t h;
  archive_summary_t s;
  ASSERT_EQ(harness_start(&h, TRACE_BUFFERING_MODE_STREAMING, SMALL_BUFFER, NULL), 0);
  h.hold_saves = true;
  trace_engine_stats_t stats;
  uint64_t seq = 0;
  while (trace_engine_get_stats(&stats) == 0 && stats.records_dropped == 0) emit_seq(seq++);
  ASSERT_TRUE(trace_engine_save_pending());
  enum { PER_THREAD = 100000 };
  dropper_t d[2] = {{seq, PER_THREAD, 0}, {seq + PER_THREAD, PER_THREAD, 0}};
  pthread_t t[2];
  for (int i = 0; i < 2; i++) ASSERT_EQ(pthread_create(&t[i], NULL, run_dropper, &d[i]), 0);
  for (int i = 0; i < 2; i++) ASSERT_EQ(pthread_join(t[i], NULL), 0);
  seq += 2 * PER_THREAD;
  /* every one dropped (no segment was saved), counted once: in the buffer
   * while the trace runs, and by the engine */
  uint64_t dropped = 1 + 2 * (uint64_t)PER_THREAD;
  ASSERT_EQ(trace_engine_get_stats(&stats), 0);
  ASSERT_EQ(stats.records_dropped, dropped);
  ASSERT_EQ(header_dropped(&h), dropped);
  ASSERT_EQ(header_counter(&h), 0u); /* nothing on the shared line */
  { /* the buffer as a killed process leaves it, read as `trace recover`
     * reads it: the archive it assembles says records were dropped */
    uint8_t* copy = malloc(h.size);
    ASSERT_TRUE(copy != NULL);
    memcpy(copy, h.buffer, h.size);
    archive_summary_t raw;
    summarize_archive(copy, h.size, &raw);
    ASSERT_EQ(raw.overflow_events, 1u);
    free(raw.seqs);
    free(copy);
  }
  while (!harness_release_saves(&h)) sched_yield();
  h.hold_saves = false;
  for (int i = 0; i < 100; i++) emit_seq(seq++);
  harness_stop(&h);
  size_t length;
  const uint8_t* fxt = harness_archive(&h, &length);
  summarize_archive(fxt, length, &s);
  ASSERT_EQ(s.skipped, 0u);
  ASSERT_EQ(h.stats.records_dropped, dropped);
  ASSERT_EQ(s.seq_count + dropped, seq);
  ASSERT_EQ(s.overflow_events, 1u);
  ASSERT_EQ(header_dropped(&h), dropped); /* after the stop too */
  free(s.seqs);
  /* a start that keeps the durable buffer (and the counters in it) */
  ASSERT_EQ(trace_engine_start(TRACE_START_CLEAR_NONDURABLE_BUFFER), 0);
  ASSERT_EQ(header_dropped(&h), 0u);
  harness_free(&h);
}

/* A writer killed while writing a durable record leaves a zero header below
 * the allocation point: the drop counters after it are still found. */
static void test_drop_counter_after_an_uncommitted_record(void) {
  enum { SIZE = 64 * 1024 };
  uint64_t* buffer = calloc(SIZE / 8, 8);
  ASSERT_TRUE(buffer != NULL);
  trace_buffer_geometry_t g;
  ASSERT_EQ(buffer__compute_geometry(TRACE_BUFFERING_MODE_STREAMING, SIZE, &g), 0);
  trace_buffer_header_t* header = (trace_buffer_header_t*)buffer;
  buffer_header__init(header, TRACE_BUFFERING_MODE_STREAMING, SIZE, &g);
  header->num_records_dropped = 5;
  uint64_t* durable = buffer + sizeof(*header) / 8;
  /* a counter (7), a 3-word record never committed (header 0, a body word
   * set), a counter (11), then a 2-word string-like record and a counter (13) */
  uint64_t pos = 0;
  durable[pos] = buffer__drop_counter_header();
  durable[pos + TRACE_BUFFER_DROP_COUNTER_WORD] = 7;
  pos += TRACE_BUFFER_DROP_COUNTER_WORDS;
  durable[pos + 1] = UINT64_C(0x1234);
  pos += 3;
  durable[pos] = buffer__drop_counter_header();
  durable[pos + TRACE_BUFFER_DROP_COUNTER_WORD] = 11;
  pos += TRACE_BUFFER_DROP_COUNTER_WORDS;
  durable[pos] = 2 | (2 << 4);
  pos += 2;
  durable[pos] = buffer__drop_counter_header();
  durable[pos + TRACE_BUFFER_DROP_COUNTER_WORD] = 13;
  pos += TRACE_BUFFER_DROP_COUNTER_WORDS;
  header->durable_alloc = pos * 8;
  trace_buffer_header_t h;
  ASSERT_TRUE(buffer_scan__header(buffer, SIZE, &h) == NULL);
  ASSERT_EQ(buffer_scan__dropped(buffer, SIZE, &h), 5u + 7 + 11 + 13);
  /* past the allocation point nothing counts */
  header->durable_alloc = (pos - TRACE_BUFFER_DROP_COUNTER_WORDS) * 8;
  ASSERT_TRUE(buffer_scan__header(buffer, SIZE, &h) == NULL);
  ASSERT_EQ(buffer_scan__dropped(buffer, SIZE, &h), 5u + 7 + 11);
  /* untrusted counts saturate */
  durable[TRACE_BUFFER_DROP_COUNTER_WORD] = UINT64_MAX;
  ASSERT_TRUE(buffer_scan__header(buffer, SIZE, &h) == NULL);
  ASSERT_EQ(buffer_scan__dropped(buffer, SIZE, &h), TRACE_BUFFER_MAX_DROPPED);
  free(buffer);
}

/* Strings registered faster than the durable buffer holds: tracing stops for
 * good, later events are dropped and counted, and no record refers to a
 * string that was lost. */
static void test_durable_full_stops_the_trace(void) {
  harness_t h;
  archive_summary_t s;
  ASSERT_EQ(harness_start(&h, TRACE_BUFFERING_MODE_CIRCULAR, SMALL_BUFFER, NULL), 0);
  trace_context_t* c = trace_acquire_context();
  ASSERT_TRUE(c != NULL);
  char text[64];
  for (int i = 0; i < 2000; i++) { /* 4 KiB durable buffer: fills after ~100 */
    int n = snprintf(text, sizeof(text), "a distinct string number %d", i);
    trace_string_ref_t ref;
    trace_context_register_string_copy(c, text, (size_t)n, &ref);
  }
  trace_release_context(c);
  for (int i = 0; i < 10; i++) emit_seq((uint64_t)i);
  run(&h, 0, 0, &s);
  ASSERT_EQ(s.seq_count, 0u);
  ASSERT_EQ(h.stats.records_dropped, 10u);
  ASSERT_EQ(s.skipped, 0u);
  free(s.seqs);
  harness_free(&h);
}

/* Literals that share an address neighbourhood ("a" and "b" are adjacent in
 * .rodata) are each registered once per thread, not once per use: a string
 * cache that thrashed would fill the durable buffer and stop the trace. */
static void test_each_literal_registered_once(void) {
  harness_t h;
  archive_summary_t s;
  ASSERT_EQ(harness_start(&h, TRACE_BUFFERING_MODE_CIRCULAR, 1 << 20, NULL), 0);
  static const char names[] = "a\0b\0c\0d";
  for (int i = 0; i < 20000; i++) {
    static trace_site_t site;
    trace_string_ref_t category;
    trace_context_t* c = trace_acquire_context_for_category_cached("test", &site, &category);
    ASSERT_TRUE(c != NULL);
    trace_arg_t args[4];
    for (int k = 0; k < 4; k++)
      args[k] = trace_make_arg(trace_internal_make_literal_ref(names + 2 * k),
                               trace_make_int32_arg_value(k));
    trace_internal_write_instant_event_record_and_release_context(c, &category, "ev",
                                                                  TRACE_SCOPE_THREAD, args, 4);
  }
  run(&h, 0, 0, &s);
  ASSERT_EQ(h.stats.records_dropped, 0u);
  /* "test", "ev", "a".."d", the thread's name and "process" */
  ASSERT_TRUE(s.string_records <= 8);
  free(s.seqs);
  harness_free(&h);
}

int main(void) {
  test_each_literal_registered_once();
  test_oneshot(1);
  test_oneshot(2);
  test_circular(1);
  test_circular(2);
  test_streaming(1);
  test_streaming(2);
  test_streaming_drops_only_while_no_buffer_is_free();
  test_streaming_tolerates_a_slow_save();
  test_streaming_drops_once_every_segment_waits();
  test_durable_full_stops_the_trace();
  test_header_drop_counter_is_live();
  test_streaming_drop_counters();
  test_drop_counter_after_an_uncommitted_record();
  printf("buffering modes: ok\n");
  return 0;
}
