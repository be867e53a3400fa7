/* The engine's lifecycle and state API (API.md §6 and §8, PROTOCOL.md §8):
 * argument and state errors, observers (callbacks and eventfds, including the
 * start hand-shake), start dispositions (retain, clear non-durable, clear
 * all), per-call-site category caches revalidated at every start (the
 * site state words, and a site that cached "disabled" while stopped racing
 * with starts), the
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

static void test_start_dispositions(trace_buffering_mode_t mode) {
  harness_t h;
  ASSERT_EQ(harness_start(&h, mode, 1 << 20, NULL), 0);
  for (int i = 0; i < 100; i++) emit_seq((uint64_t)i);
  ASSERT_EQ(count_seqs(&h), 100u);
  harness_restart(&h, TRACE_START_RETAIN_BUFFER); /* appends */
  for (int i = 0; i < 50; i++) emit_seq((uint64_t)i);
  ASSERT_EQ(count_seqs(&h), 150u);
  harness_restart(&h, TRACE_START_CLEAR_NONDURABLE_BUFFER); /* events go, tables stay */
  for (int i = 0; i < 30; i++) emit_seq((uint64_t)i);
  ASSERT_EQ(count_seqs(&h), 30u);
  harness_restart(&h, TRACE_START_CLEAR_ENTIRE_BUFFER);
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
  harness_restart(&h, TRACE_START_CLEAR_ENTIRE_BUFFER);
  for (int i = 0; i < 10; i++) emit_seq((uint64_t)i);
  ASSERT_EQ(count_seqs(&h), 0u);
  categories__free(&h.categories);
  ASSERT_EQ(categories__parse(&h.categories, "te*"), 0);
  harness_restart(&h, TRACE_START_CLEAR_ENTIRE_BUFFER);
  for (int i = 0; i < 10; i++) emit_seq((uint64_t)i);
  ASSERT_EQ(count_seqs(&h), 10u);
  harness_free(&h);
}

/* The site state word through a trace's life (instrumentation.h): ENABLED
 * with the trace's generation, DISABLED for an off category and while
 * stopped, reset to unknown at start and stop, and unlinked by a flush. */
static bool visit(trace_site_t* site, const char* category) {
  trace_string_ref_t ref;
  trace_context_t* c = trace_acquire_context_for_category_cached(category, site, &ref);
  if (c) trace_release_context(c);
  return c != NULL;
}

static void test_site_words(void) {
  static trace_site_t on, off, idle;
  harness_t h;
  ASSERT_TRUE(!visit(&idle, "test")); /* not initialized: disabled */
  ASSERT_EQ(idle.state, (uint64_t)TRACE_SITE_DISABLED);
  ASSERT_TRUE(idle.next != NULL);
  ASSERT_EQ(harness_start(&h, TRACE_BUFFERING_MODE_ONESHOT, 1 << 20, "test"), 0);
  uint64_t generation = __atomic_load_n(&trace_engine__generation[0], __ATOMIC_RELAXED);
  ASSERT_TRUE(generation != 0);
  ASSERT_EQ(idle.state, 0u); /* the start reset it */
  ASSERT_TRUE(visit(&idle, "test"));
  ASSERT_TRUE(visit(&on, "test"));
  ASSERT_EQ(on.state, TRACE_SITE_ENABLED(generation));
  ASSERT_TRUE(visit(&on, "test")); /* the cached answer */
  ASSERT_TRUE(!visit(&off, "other"));
  ASSERT_EQ(off.state, (uint64_t)TRACE_SITE_DISABLED);
  ASSERT_TRUE(!visit(&off, "other"));
  harness_stop(&h);
  ASSERT_EQ(off.state, 0u); /* the stop reset it */
  ASSERT_TRUE(!visit(&on, "test"));
  ASSERT_EQ(on.state, (uint64_t)TRACE_SITE_DISABLED);
  ASSERT_TRUE(!visit(&off, "other"));
  ASSERT_EQ(off.state, (uint64_t)TRACE_SITE_DISABLED);
  categories__free(&h.categories);
  ASSERT_EQ(categories__parse(&h.categories, "other"), 0);
  harness_restart(&h, TRACE_START_CLEAR_ENTIRE_BUFFER);
  ASSERT_TRUE(!visit(&on, "test"));
  ASSERT_TRUE(visit(&off, "other"));
  ASSERT_TRUE(__atomic_load_n(&trace_engine__generation[0], __ATOMIC_RELAXED) > generation);
  harness_stop(&h);
  ASSERT_EQ(trace_engine_flush_category_cache(), 0);
  ASSERT_TRUE(on.state == 0 && on.next == NULL && off.state == 0 && off.next == NULL);
  ASSERT_TRUE(idle.next == NULL);
  ASSERT_TRUE(!visit(&on, "test")); /* listed again */
  ASSERT_TRUE(on.next != NULL);
  harness_free(&h);
}

/* A site that caches "disabled" while tracing is stopped must be enabled
 * again by the next start, however its slow path interleaves with the start
 * (sites.c): a thread hammers one site while the main thread stops and
 * starts; after every start the thread must record within the trace. */
typedef struct site_race {
  trace_site_t site;
  uint64_t visits;   /* atomic */
  uint64_t acquired; /* atomic */
  int done;          /* atomic */
} site_race_t;

static void* site_race_thread(void* arg) {
  site_race_t* r = arg;
  while (!__atomic_load_n(&r->done, __ATOMIC_RELAXED)) {
    if (visit(&r->site, "test")) __atomic_add_fetch(&r->acquired, 1, __ATOMIC_RELAXED);
    __atomic_add_fetch(&r->visits, 1, __ATOMIC_RELAXED);
  }
  return NULL;
}

static void wait_for_more(uint64_t* counter, uint64_t than, const char* what, int cycle) {
  uint64_t t0 = trace_clock__monotonic_ns();
  while (__atomic_load_n(counter, __ATOMIC_RELAXED) <= than) {
    if (trace_clock__monotonic_ns() - t0 > 10000000000u) {
      fprintf(stderr, "FAIL: cycle %d: no %s within 10 s (a site stuck disabled?)\n", cycle, what);
      abort();
    }
    sched_yield();
  }
}

static void test_site_disabled_races_start(void) {
  static site_race_t r;
  harness_t h;
  ASSERT_EQ(harness_start(&h, TRACE_BUFFERING_MODE_CIRCULAR, 1 << 16, "test"), 0);
  harness_stop(&h);
  pthread_t t;
  ASSERT_EQ(pthread_create(&t, NULL, site_race_thread, &r), 0);
  for (int cycle = 0; cycle < 200; cycle++) {
    /* stopped: let the thread visit (and cache "disabled") */
    wait_for_more(&r.visits, __atomic_load_n(&r.visits, __ATOMIC_RELAXED) + 2, "visit", cycle);
    uint64_t acquired = __atomic_load_n(&r.acquired, __ATOMIC_RELAXED);
    harness_restart(&h, TRACE_START_RETAIN_BUFFER);
    wait_for_more(&r.acquired, acquired, "acquisition in the trace", cycle);
    harness_stop(&h);
  }
  __atomic_store_n(&r.done, 1, __ATOMIC_RELAXED);
  pthread_join(t, NULL);
  harness_free(&h);
}

/* The same race made certain: the thread's slow path reads generation g,
 * then asks the handler, which answers "off" only after the main thread has
 * stopped and started again (g + 1, where the category is on). The thread
 * then stores DISABLED for g; its re-check of the generation must put the
 * site back to unknown, or the site would stay off for the whole trace. */
static struct {
  pthread_mutex_t lock;
  pthread_cond_t cond;
  int phase; /* 1: the thread is in the callback; 2: answer now */
  bool block;
} gate = {PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, 0, false};

static bool gated_is_category_enabled(trace_handler_t* handler, const char* category) {
  (void)handler;
  (void)category;
  pthread_mutex_lock(&gate.lock);
  bool block = gate.block;
  if (block) {
    gate.block = false;
    gate.phase = 1;
    pthread_cond_broadcast(&gate.cond);
    while (gate.phase != 2) pthread_cond_wait(&gate.cond, &gate.lock);
  }
  pthread_mutex_unlock(&gate.lock);
  return !block; /* "off" for the blocked (old) trace, "on" after */
}

static trace_site_t gated_site;

static void* gated_visit(void* arg) {
  (void)arg;
  ASSERT_TRUE(!visit(&gated_site, "test"));
  return NULL;
}

static void test_site_disabled_after_start(void) {
  static trace_handler_ops_t ops;
  ops = harness_ops;
  ops.is_category_enabled = gated_is_category_enabled;
  harness_t h;
  ASSERT_EQ(harness_start(&h, TRACE_BUFFERING_MODE_ONESHOT, 1 << 16, NULL), 0);
  h.handler.ops = &ops;
  gate.block = true;
  pthread_t t;
  ASSERT_EQ(pthread_create(&t, NULL, gated_visit, NULL), 0);
  pthread_mutex_lock(&gate.lock);
  while (gate.phase != 1) pthread_cond_wait(&gate.cond, &gate.lock);
  pthread_mutex_unlock(&gate.lock);
  harness_stop(&h);
  harness_restart(&h, TRACE_START_CLEAR_ENTIRE_BUFFER);
  pthread_mutex_lock(&gate.lock);
  gate.phase = 2;
  pthread_cond_broadcast(&gate.cond);
  pthread_mutex_unlock(&gate.lock);
  pthread_join(t, NULL);
  ASSERT_TRUE(gated_site.state != (uint64_t)TRACE_SITE_DISABLED);
  ASSERT_TRUE(visit(&gated_site, "test")); /* on in this trace */
  harness_stop(&h);
  h.handler.ops = &harness_ops;
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
  test_site_words();
  test_site_disabled_races_start();
  test_site_disabled_after_start();
  test_prolonged_context_holds_stop();
  test_terminate_from_stopped_callback();
  printf("lifecycle: ok\n");
  return 0;
}
