/* The bundled demo: a small multi-threaded pipeline, instrumented with every
 * common kind of event. `scripts/demo.sh` records it and converts the trace.
 *
 *   producer ──queue──▶ worker-1, worker-2 ──▶ (results)
 *
 * - durations: each stage's work (TRACE_DURATION scopes, nested);
 * - instants:  queue full / empty, at thread and process scope;
 * - counters:  queue depth and items done;
 * - async:     each item's life from production to completion (an async span
 *              that starts on one thread and ends on another);
 * - flows:     arrows from the producer's duration to the worker's;
 * - threads are named (pthread_setname_np), which the trace shows.
 *
 *     trace record -o demo.fxt -- ./demo [ITEMS] && trace convert demo.fxt -o demo.json
 *     FXTRACE_OUTPUT=demo.fxt ./demo [ITEMS]      (file mode: no manager involved)
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* pthread_setname_np */
#endif
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include <trace-provider/provider.h>
#include <trace/event.h>

enum { QUEUE_SIZE = 8, WORKERS = 2 };

typedef struct item {
  unsigned number;
  uint64_t id; /* async and flow id */
} item_t;

static struct {
  pthread_mutex_t lock;
  pthread_cond_t changed;
  item_t items[QUEUE_SIZE];
  unsigned head, count;
  bool closed;
} queue = {PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, {{0, 0}}, 0, 0, false};

static unsigned done;

static void spin_us(unsigned us) { /* stand-in for real work */
  struct timespec start, now;
  clock_gettime(CLOCK_MONOTONIC, &start);
  do clock_gettime(CLOCK_MONOTONIC, &now);
  while ((now.tv_sec - start.tv_sec) * 1000000L + (now.tv_nsec - start.tv_nsec) / 1000 < us);
}

static void push(item_t item) {
  pthread_mutex_lock(&queue.lock);
  if (queue.count == QUEUE_SIZE)
    TRACE_INSTANT("demo", "queue full", TRACE_SCOPE_PROCESS, "depth", queue.count);
  while (queue.count == QUEUE_SIZE) pthread_cond_wait(&queue.changed, &queue.lock);
  queue.items[(queue.head + queue.count) % QUEUE_SIZE] = item;
  queue.count++;
  TRACE_COUNTER("demo", "queue", 0, "depth", queue.count);
  pthread_cond_broadcast(&queue.changed);
  pthread_mutex_unlock(&queue.lock);
}

static bool pop(item_t* item) {
  pthread_mutex_lock(&queue.lock);
  if (queue.count == 0 && !queue.closed) TRACE_INSTANT("demo", "queue empty", TRACE_SCOPE_THREAD);
  while (queue.count == 0 && !queue.closed) pthread_cond_wait(&queue.changed, &queue.lock);
  bool got = queue.count > 0;
  if (got) {
    *item = queue.items[queue.head];
    queue.head = (queue.head + 1) % QUEUE_SIZE;
    queue.count--;
    TRACE_COUNTER("demo", "queue", 0, "depth", queue.count);
    pthread_cond_broadcast(&queue.changed);
  }
  pthread_mutex_unlock(&queue.lock);
  return got;
}

static void produce(unsigned number) {
  TRACE_DURATION("demo", "produce", "item", number);
  item_t item = {number, TRACE_NONCE()};
  TRACE_ASYNC_BEGIN("demo", "item", item.id, "number", number);
  spin_us(50 + number % 7 * 20);
  TRACE_FLOW_BEGIN("demo", "handoff", item.id);
  push(item);
}

static double process(const item_t* item) {
  TRACE_DURATION("demo", "process", "item", item->number);
  TRACE_FLOW_END("demo", "handoff", item->id);
  TRACE_ASYNC_INSTANT("demo", "item", item->id, "stage", "processing");
  double result = 0;
  {
    TRACE_DURATION("demo", "compute", "kind", item->number % 2 ? "odd" : "even");
    spin_us(120 + item->number % 5 * 40);
    result = item->number * 1.5;
  }
  TRACE_ASYNC_END("demo", "item", item->id, "result", result);
  return result;
}

static void* worker_main(void* arg) {
  char name[16];
  snprintf(name, sizeof(name), "worker-%d", (int)(intptr_t)arg);
  pthread_setname_np(pthread_self(), name);
  item_t item;
  while (pop(&item)) {
    process(&item);
    unsigned n = __atomic_add_fetch(&done, 1, __ATOMIC_RELAXED);
    TRACE_COUNTER("demo", "progress", 1, "done", n);
  }
  return NULL;
}

int main(int argc, char** argv) {
  unsigned items = argc > 1 ? (unsigned)strtoul(argv[1], NULL, 10) : 400;
  /* Synchronous registration: when a trace is already running (`trace record
   * -- demo`), the manager starts this provider at once; wait for that (at
   * most 1 s) so that the first events are recorded too. */
  bool started = false;
  trace_provider_t* provider = trace_provider_create_synchronously("demo", &started);
  for (int i = 0; started && !TRACE_ENABLED() && i < 1000; i++)
    nanosleep(&(struct timespec){0, 1000000}, NULL);
  pthread_setname_np(pthread_self(), "producer");
  TRACE_INSTANT("demo", "start", TRACE_SCOPE_GLOBAL, "items", items, "workers", WORKERS);

  pthread_t workers[WORKERS];
  for (int i = 0; i < WORKERS; i++)
    pthread_create(&workers[i], NULL, worker_main, (void*)(intptr_t)(i + 1));
  {
    TRACE_DURATION("demo", "produce all", "items", items);
    for (unsigned i = 0; i < items; i++) produce(i);
  }
  pthread_mutex_lock(&queue.lock);
  queue.closed = true;
  pthread_cond_broadcast(&queue.changed);
  pthread_mutex_unlock(&queue.lock);
  for (int i = 0; i < WORKERS; i++) pthread_join(workers[i], NULL);

  TRACE_INSTANT("demo", "done", TRACE_SCOPE_GLOBAL, "processed", done);
  printf("demo: processed %u items\n", done);
  trace_provider_destroy(provider);
  return 0;
}
