/* Streaming saves and the writers still inside a record (engine.c,
 * engine__wait_writers_quiet): a save goes past the writer that made the
 * switch, still inside the record that made it, and waits for every record
 * still open in the segments it saves — another thread's, one of the
 * public context API's left uncommitted, a TRACE_EVENT() record whose
 * assignment traces (nested records moving the context to a new segment).
 * Nothing is lost, nothing dropped. */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "engine_test_util.h"
#include "fxt/fxt_encode.h"
#include "harness.h"
#include "trace-engine/context.h"
#include "trace-engine/instrumentation.h"

#define CREATE_TRACE_POINTS
#include "engine/save_waits_tp.h"

enum { SEGMENTED_BUFFER = 1 << 20 };

/* A "seq" event written in a context the caller holds (nesting 1: the
 * record is reserved and committed inside it, as the public context API
 * does). */
typedef struct seq_refs {
  trace_thread_ref_t thread;
  trace_string_ref_t category, name, arg_name;
} seq_refs_t;

static seq_refs_t seq_refs(trace_context_t* c) {
  seq_refs_t r;
  trace_context_register_current_thread(c, &r.thread);
  trace_context_register_string_literal(c, "test", &r.category);
  trace_context_register_string_literal(c, "seq", &r.name);
  trace_context_register_string_literal(c, "n", &r.arg_name);
  return r;
}

static void write_held(trace_context_t* c, uint64_t seq) {
  seq_refs_t r = seq_refs(c);
  trace_arg_t args[1] = {trace_make_arg(r.arg_name, trace_make_uint64_arg_value(seq))};
  trace_context_write_instant_event_record(c, trace_context_ticks_now(), &r.thread, &r.category,
                                           &r.name, TRACE_SCOPE_THREAD, args, 1);
}

static uint64_t saves_done(harness_t* h) {
  pthread_mutex_lock(&h->lock);
  uint64_t n = h->saves;
  pthread_mutex_unlock(&h->lock);
  return n;
}

/* Waits up to 5 s for at least `n` saves. */
static bool wait_saves(harness_t* h, uint64_t n) {
  for (int i = 0; i < 50000 && saves_done(h) < n; i++) {
    struct timespec ts = {0, 100000};
    nanosleep(&ts, NULL);
  }
  return saves_done(h) >= n;
}

/* No save within 200 ms (the engine thread had the time to make one). */
static bool no_save_for_a_while(harness_t* h) {
  struct timespec ts = {0, 200 * 1000000};
  nanosleep(&ts, NULL);
  return saves_done(h) == 0;
}

/* A save does not wait for a writer that is inside its outermost record
 * but already writes in a later segment: here the thread that made the
 * switch, still holding its context (engine.c, engine__wait_writers_quiet).
 * Before, the save waited until it left the record, however long that took. */
static void test_streaming_save_goes_past_the_switching_writer(void) {
  harness_t h;
  archive_summary_t s;
  ASSERT_EQ(harness_start(&h, TRACE_BUFFERING_MODE_STREAMING, SEGMENTED_BUFFER, NULL), 0);
  trace_context_t* c = trace_acquire_context();
  ASSERT_TRUE(c != NULL);
  trace_engine_stats_t stats;
  uint64_t seq = 0;
  while (trace_engine_get_stats(&stats) == 0 && stats.wrapped_count == 0) write_held(c, seq++);
  write_held(c, seq++);           /* certainly in the new segment */
  ASSERT_TRUE(wait_saves(&h, 1)); /* while the context is still held */
  trace_release_context(c);
  harness_finish(&h, &s);
  ASSERT_EQ(h.stats.records_dropped, 0u);
  ASSERT_EQ(s.seq_count, seq);
  free(s.seqs);
  harness_free(&h);
}

/* ... but does wait for one inside a record of the segment being saved:
 * a thread that wrote into segment 0 and still holds its context (its next
 * record could go there too) keeps segment 0's save back until it lets go,
 * and nothing it wrote is lost. */
typedef struct holder {
  pthread_mutex_t lock;
  pthread_cond_t cond;
  bool written, release;
} holder_t;

static void* hold_context(void* arg) {
  holder_t* k = arg;
  trace_context_t* c = trace_acquire_context();
  if (c) write_held(c, 1000000);
  pthread_mutex_lock(&k->lock);
  k->written = true;
  pthread_cond_broadcast(&k->cond);
  while (!k->release) pthread_cond_wait(&k->cond, &k->lock);
  pthread_mutex_unlock(&k->lock);
  if (c) write_held(c, 1000001);
  if (c) trace_release_context(c);
  return NULL;
}

static void test_streaming_save_waits_for_a_writer_in_the_segment(void) {
  harness_t h;
  archive_summary_t s;
  ASSERT_EQ(harness_start(&h, TRACE_BUFFERING_MODE_STREAMING, SEGMENTED_BUFFER, NULL), 0);
  holder_t k = {PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, false, false};
  pthread_t thread;
  ASSERT_EQ(pthread_create(&thread, NULL, hold_context, &k), 0);
  pthread_mutex_lock(&k.lock);
  while (!k.written) pthread_cond_wait(&k.cond, &k.lock);
  pthread_mutex_unlock(&k.lock);
  trace_engine_stats_t stats;
  uint64_t seq = 0;
  while (trace_engine_get_stats(&stats) == 0 && stats.wrapped_count == 0) emit_seq(seq++);
  ASSERT_TRUE(no_save_for_a_while(&h)); /* the holder may still write into segment 0 */
  pthread_mutex_lock(&k.lock);
  k.release = true;
  pthread_cond_broadcast(&k.cond);
  pthread_mutex_unlock(&k.lock);
  pthread_join(thread, NULL);
  ASSERT_TRUE(wait_saves(&h, 1));
  harness_finish(&h, &s);
  ASSERT_EQ(h.stats.records_dropped, 0u);
  ASSERT_EQ(s.seq_count, seq + 2);
  size_t held = 0;
  for (size_t i = 0; i < s.seq_count; i++) held += s.seqs[i].seq >= 1000000;
  ASSERT_EQ(held, 2u);
  free(s.seqs);
  harness_free(&h);
}

/* A record reserved at nesting 1 but not committed
 * when the same context moves to a later segment (here through
 * trace_context_alloc_record; a signal handler's record or a nested event
 * does the same) must still be in the archive: the save of its segment
 * must wait for its commit. */
static void test_streaming_save_waits_for_an_uncommitted_record(void) {
  harness_t h;
  archive_summary_t s;
  ASSERT_EQ(harness_start(&h, TRACE_BUFFERING_MODE_STREAMING, SEGMENTED_BUFFER, NULL), 0);
  trace_context_t* c = trace_acquire_context();
  ASSERT_TRUE(c != NULL);
  uint64_t seq = 0;
  write_held(c, seq++); /* registers the strings and the thread */
  seq_refs_t r = seq_refs(c);
  trace_arg_t args[1] = {trace_make_arg(r.arg_name, trace_make_uint64_arg_value(777777777))};
  size_t words =
      fxt_event_record_words(FXT_EVENT_INSTANT, &r.thread, &r.category, &r.name, args, 1);
  uint64_t scratch[64];
  ASSERT_TRUE(words <= 64);
  fxt_write_event_record(scratch, words, FXT_EVENT_INSTANT, trace_context_ticks_now(), &r.thread,
                         &r.category, &r.name, args, 1, 0);
  uint64_t* a = trace_context_alloc_record(c, words * 8); /* in segment 0 */
  ASSERT_TRUE(a != NULL);
  memcpy(a + 1, scratch + 1, (words - 1) * 8);
  trace_engine_stats_t stats;
  while (trace_engine_get_stats(&stats) == 0 && stats.wrapped_count == 0) write_held(c, seq++);
  write_held(c, seq++);                 /* certainly in the new segment */
  ASSERT_TRUE(no_save_for_a_while(&h)); /* its record is open in segment 0 */
  trace_context_commit_record(c, a, scratch[0]);
  trace_release_context(c);
  harness_finish(&h, &s);
  size_t found = 0;
  for (size_t i = 0; i < s.seq_count; i++) found += s.seqs[i].seq == 777777777;
  ASSERT_EQ(h.stats.records_dropped, 0u);
  ASSERT_EQ(found, 1u);
  free(s.seqs);
  harness_free(&h);
}

/* The same through the library's own record path: a
 * TRACE_EVENT() whose assignment calls code that traces. The nested
 * records (nesting 2) fill segment 0 and switch; back at nesting 1 the
 * outer record is still open in segment 0 while the context's chunk is in
 * segment 1. Its assignment waits for the save there (a preemption at that
 * point does the same). */
static harness_t* nested_h;
static uint64_t nested_seq;
static bool nested_saved_early;

unsigned nested_fill(unsigned n) {
  trace_engine_stats_t stats;
  while (trace_engine_get_stats(&stats) == 0 && stats.wrapped_count == 0) emit_seq(nested_seq++);
  emit_seq(nested_seq++);
  nested_saved_early = no_save_for_a_while(nested_h) == false;
  return n;
}

static void test_streaming_save_waits_for_an_open_tracepoint_record(void) {
  harness_t h;
  archive_summary_t s;
  ASSERT_EQ(harness_start(&h, TRACE_BUFFERING_MODE_STREAMING, SEGMENTED_BUFFER, NULL), 0);
  nested_h = &h;
  nested_seq = 0;
  emit_seq(nested_seq++);
  ASSERT_TRUE(trace_save_waits_outer_enabled());
  trace_save_waits_outer(4242);
  harness_finish(&h, &s);
  ASSERT_TRUE(!nested_saved_early); /* the outer record was open in segment 0 */
  ASSERT_EQ(h.stats.records_dropped, 0u);
  ASSERT_EQ(s.seq_count, nested_seq);
  ASSERT_EQ(s.events, nested_seq + 1); /* and the outer record */
  free(s.seqs);
  harness_free(&h);
}

/* A writer is reused by a later thread (writer.c, new_writer): what the
 * thread before it left open is not the new thread's. Here a thread exits
 * inside a record with a trace_context_alloc_record() uncommitted (on_thread_exit
 * lets go of its context); the next thread gets its writer and makes the
 * switch while it holds its own context with nothing open: the save must
 * go past it, as past any switching writer
 * (test_streaming_save_goes_past_the_switching_writer). */
static void* exit_inside_an_alloc(void* arg) {
  (void)arg;
  trace_context_t* c = trace_acquire_context();
  if (c) write_held(c, 5000000);
  if (c) (void)trace_context_alloc_record(c, 16); /* never committed */
  return NULL;                                    /* exits holding the context */
}

typedef struct switcher {
  harness_t* h;
  uint64_t seq;
  bool saved_while_held;
} switcher_t;

static void* switch_while_holding(void* arg) {
  switcher_t* k = arg;
  trace_context_t* c = trace_acquire_context();
  if (!c) return NULL;
  trace_engine_stats_t stats;
  while (trace_engine_get_stats(&stats) == 0 && stats.wrapped_count == 0) write_held(c, k->seq++);
  write_held(c, k->seq++); /* certainly in the new segment */
  k->saved_while_held = wait_saves(k->h, 1);
  trace_release_context(c);
  return NULL;
}

static void test_streaming_reused_writer_starts_with_nothing_open(void) {
  harness_t h;
  ASSERT_EQ(harness_start(&h, TRACE_BUFFERING_MODE_STREAMING, SEGMENTED_BUFFER, NULL), 0);
  pthread_t thread;
  ASSERT_EQ(pthread_create(&thread, NULL, exit_inside_an_alloc, NULL), 0);
  pthread_join(thread, NULL);
  switcher_t k = {&h, 0, false};
  ASSERT_EQ(pthread_create(&thread, NULL, switch_while_holding, &k), 0);
  pthread_join(thread, NULL);
  ASSERT_TRUE(k.saved_while_held);
  harness_stop(&h);
  harness_free(&h);
}

int main(void) {
  test_streaming_save_goes_past_the_switching_writer();
  test_streaming_save_waits_for_a_writer_in_the_segment();
  test_streaming_save_waits_for_an_uncommitted_record();
  test_streaming_save_waits_for_an_open_tracepoint_record();
  test_streaming_reused_writer_starts_with_nothing_open();
  printf("save waits: ok\n");
  return 0;
}
