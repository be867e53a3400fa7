/* The engine's lifecycle and state API (API.md §6 and §8, PROTOCOL.md §8):
 * argument and state errors, observers (callbacks and eventfds, including the
 * start hand-shake), start dispositions (retain, clear non-durable, clear
 * all), per-call-site category caches revalidated at every start, the
 * prolonged context holding a stop back, and terminate from a callback. */
#include <errno.h>
#include <pthread.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "engine/clock.h"
#include "engine_test_util.h"
#include "harness.h"

/* ---- observers ---- */

static trace_state_t seen_states[16];
static int seen_count;
static pthread_mutex_t seen_lock = PTHREAD_MUTEX_INITIALIZER;

static void record_state(trace_state_t state, void* arg) {
  ASSERT_TRUE(arg == &seen_states);
  pthread_mutex_lock(&seen_lock);
  if (seen_count < 16) seen_states[seen_count++] = state;
  pthread_mutex_unlock(&seen_lock);
}

static int seen(void) {
  pthread_mutex_lock(&seen_lock);
  int n = seen_count;
  pthread_mutex_unlock(&seen_lock);
  return n;
}

static void test_errors(void) {
  static uint8_t buffer[8192] __attribute__((aligned(4096)));
  harness_t h;
  memset(&h, 0, sizeof(h));
  h.handler.ops = &harness_ops;
  ASSERT_EQ(trace_engine_start(TRACE_START_CLEAR_ENTIRE_BUFFER), -ENODEV);
  ASSERT_EQ(trace_engine_initialize(&h.handler, TRACE_BUFFERING_MODE_ONESHOT, buffer, 4000),
            -EINVAL); /* not a multiple of 4096 */
  ASSERT_EQ(trace_engine_initialize(&h.handler, (trace_buffering_mode_t)7, buffer, 8192), -EINVAL);
  ASSERT_EQ(trace_engine_initialize(NULL, TRACE_BUFFERING_MODE_ONESHOT, buffer, 8192), -EINVAL);
  ASSERT_EQ(trace_state(), TRACE_STOPPED);
  ASSERT_TRUE(!trace_is_enabled());
  ASSERT_TRUE(trace_acquire_context() == NULL);
  ASSERT_EQ(trace_engine_mark_buffer_saved(0, 0), -EBUSY);
}

static void test_states_and_observers(void) {
  harness_t h;
  ASSERT_EQ(trace_register_observer_callback(record_state, &seen_states), 0);
  ASSERT_EQ(trace_register_observer_callback(record_state, &seen_states), -EINVAL);
  ASSERT_EQ(harness_start(&h, TRACE_BUFFERING_MODE_ONESHOT, 1 << 16, NULL), 0);
  /* a second initialize before terminate is refused, as is a second start */
  ASSERT_EQ(trace_engine_initialize(&h.handler, TRACE_BUFFERING_MODE_ONESHOT, h.buffer, h.size),
            -EBUSY);
  ASSERT_EQ(trace_engine_start(TRACE_START_RETAIN_BUFFER), -EBUSY);
  ASSERT_EQ(trace_engine_start((trace_start_mode_t)9), -EINVAL);
  ASSERT_EQ(trace_state(), TRACE_STARTED);
  ASSERT_TRUE(trace_is_enabled());
  ASSERT_TRUE(trace_is_category_enabled("anything"));
  ASSERT_TRUE(!trace_is_category_enabled(""));
  ASSERT_TRUE(trace_generate_nonce() != 0);
  ASSERT_TRUE(trace_generate_nonce() != trace_generate_nonce());
  ASSERT_EQ(trace_engine_flush_category_cache(), -EBUSY);
  harness_stop(&h);
  ASSERT_EQ(trace_state(), TRACE_STOPPED);
  ASSERT_EQ(trace_engine_flush_category_cache(), 0);
  while (seen() < 3) sched_yield(); /* STOPPED is reported after trace_stopped */
  ASSERT_EQ(seen_states[0], TRACE_STARTED);
  ASSERT_EQ(seen_states[1], TRACE_STOPPING);
  ASSERT_EQ(seen_states[2], TRACE_STOPPED);
  ASSERT_EQ(trace_unregister_observer_callback(record_state, &seen_states), 0);
  ASSERT_EQ(trace_unregister_observer_callback(record_state, &seen_states), -ENOENT);
  harness_free(&h);
}

/* An eventfd observer: the provider hears "started" only once the observer
 * has caught up (trace_notify_observer_updated). */
static void test_eventfd_observer_gates_started(void) {
  int fd = eventfd(0, EFD_CLOEXEC);
  ASSERT_TRUE(fd >= 0);
  ASSERT_EQ(trace_register_observer(fd), 0);
  harness_t h;
  memset(&h, 0, sizeof(h));
  h.handler.ops = &harness_ops;
  h.size = 1 << 16;
  pthread_mutex_init(&h.lock, NULL);
  pthread_cond_init(&h.cond, NULL);
  h.buffer = aligned_alloc(4096, h.size);
  ASSERT_EQ(trace_engine_initialize(&h.handler, TRACE_BUFFERING_MODE_ONESHOT, h.buffer, h.size), 0);
  ASSERT_EQ(trace_engine_start(TRACE_START_CLEAR_ENTIRE_BUFFER), 0);
  uint64_t signals;
  ASSERT_EQ(read(fd, &signals, sizeof(signals)), 8); /* signalled for the start */
  ASSERT_EQ(trace_state(), TRACE_STARTED);
  usleep(20000);
  pthread_mutex_lock(&h.lock);
  bool early = h.started;
  pthread_mutex_unlock(&h.lock);
  ASSERT_TRUE(!early); /* held back until the observer catches up */
  trace_notify_observer_updated(fd);
  pthread_mutex_lock(&h.lock);
  while (!h.started) pthread_cond_wait(&h.cond, &h.lock);
  pthread_mutex_unlock(&h.lock);
  ASSERT_EQ(trace_unregister_observer(fd), 0);
  ASSERT_EQ(trace_unregister_observer(fd), -ENOENT);
  harness_stop(&h);
  trace_engine_terminate();
  free(h.buffer);
  free(h.archive);
  categories__free(&h.categories);
  close(fd);
}

/* ---- dispositions and caches ---- */

static size_t count_seqs(harness_t* h) {
  harness_stop(h);
  size_t length;
  const uint8_t* fxt = harness_archive(h, &length);
  archive_summary_t s;
  summarize_archive(fxt, length, &s);
  ASSERT_EQ(s.skipped, 0u);
  free(s.seqs);
  return s.seq_count;
}

static void restart(harness_t* h, trace_start_mode_t mode) {
  h->stopped = h->started = false;
  ASSERT_EQ(trace_engine_start(mode), 0);
  pthread_mutex_lock(&h->lock);
  while (!h->started) pthread_cond_wait(&h->cond, &h->lock);
  pthread_mutex_unlock(&h->lock);
}

static void test_start_dispositions(trace_buffering_mode_t mode) {
  harness_t h;
  ASSERT_EQ(harness_start(&h, mode, 1 << 20, NULL), 0);
  for (int i = 0; i < 100; i++) emit_seq((uint64_t)i);
  ASSERT_EQ(count_seqs(&h), 100u);
  restart(&h, TRACE_START_RETAIN_BUFFER); /* appends */
  for (int i = 0; i < 50; i++) emit_seq((uint64_t)i);
  ASSERT_EQ(count_seqs(&h), 150u);
  restart(&h, TRACE_START_CLEAR_NONDURABLE_BUFFER); /* events go, tables stay */
  for (int i = 0; i < 30; i++) emit_seq((uint64_t)i);
  ASSERT_EQ(count_seqs(&h), 30u);
  restart(&h, TRACE_START_CLEAR_ENTIRE_BUFFER);
  for (int i = 0; i < 20; i++) emit_seq((uint64_t)i);
  ASSERT_EQ(count_seqs(&h), 20u);
  harness_free(&h);
}

/* A call site's cached answer lasts one trace: with the category disabled in
 * the next trace, the same site records nothing, and vice versa. */
static void test_site_cache_follows_categories(void) {
  harness_t h;
  ASSERT_EQ(harness_start(&h, TRACE_BUFFERING_MODE_ONESHOT, 1 << 20, "test"), 0);
  for (int i = 0; i < 10; i++) emit_seq((uint64_t)i);
  ASSERT_EQ(count_seqs(&h), 10u);
  categories__free(&h.categories);
  ASSERT_EQ(categories__parse(&h.categories, "other,te*x"), 0); /* "test" now off */
  restart(&h, TRACE_START_CLEAR_ENTIRE_BUFFER);
  for (int i = 0; i < 10; i++) emit_seq((uint64_t)i);
  ASSERT_EQ(count_seqs(&h), 0u);
  categories__free(&h.categories);
  ASSERT_EQ(categories__parse(&h.categories, "te*"), 0);
  restart(&h, TRACE_START_CLEAR_ENTIRE_BUFFER);
  for (int i = 0; i < 10; i++) emit_seq((uint64_t)i);
  ASSERT_EQ(count_seqs(&h), 10u);
  harness_free(&h);
}

/* ---- prolonged contexts, terminate from a callback ---- */

static void* release_later(void* arg) {
  usleep(50000);
  trace_release_prolonged_context((trace_prolonged_context_t*)arg);
  return NULL;
}

static void test_prolonged_context_holds_stop(void) {
  harness_t h;
  ASSERT_EQ(harness_start(&h, TRACE_BUFFERING_MODE_ONESHOT, 1 << 16, NULL), 0);
  trace_prolonged_context_t* p = trace_acquire_prolonged_context();
  ASSERT_TRUE(p != NULL);
  pthread_t t;
  pthread_create(&t, NULL, release_later, p);
  uint64_t t0 = trace_clock__monotonic_ns();
  harness_stop(&h); /* waits for trace_stopped */
  ASSERT_TRUE(trace_clock__monotonic_ns() - t0 >= 40000000u);
  pthread_join(t, NULL);
  ASSERT_TRUE(trace_acquire_prolonged_context() == NULL); /* not started */
  harness_free(&h);
}

static void terminate_in_callback(trace_handler_t* handler, int disposition) {
  harness_stopped(handler, disposition);
  trace_engine_terminate();
}

static void test_terminate_from_stopped_callback(void) {
  static trace_handler_ops_t ops;
  ops = harness_ops;
  ops.trace_stopped = terminate_in_callback;
  harness_t h;
  ASSERT_EQ(harness_start(&h, TRACE_BUFFERING_MODE_ONESHOT, 1 << 16, NULL), 0);
  h.handler.ops = &ops;
  trace_engine_stop(0);
  pthread_mutex_lock(&h.lock);
  while (!h.terminated) pthread_cond_wait(&h.cond, &h.lock);
  pthread_mutex_unlock(&h.lock);
  /* the engine can be initialized again once its thread is gone */
  int status;
  while ((status = trace_engine_initialize(&h.handler, TRACE_BUFFERING_MODE_ONESHOT, h.buffer,
                                           h.size)) == -EBUSY)
    usleep(1000);
  ASSERT_EQ(status, 0);
  harness_free(&h);
}

int main(void) {
  test_errors();
  test_states_and_observers();
  test_eventfd_observer_gates_started();
  test_start_dispositions(TRACE_BUFFERING_MODE_ONESHOT);
  test_start_dispositions(TRACE_BUFFERING_MODE_CIRCULAR);
  test_start_dispositions(TRACE_BUFFERING_MODE_STREAMING);
  test_site_cache_follows_categories();
  test_prolonged_context_holds_stop();
  test_terminate_from_stopped_callback();
  printf("lifecycle: ok\n");
  return 0;
}
