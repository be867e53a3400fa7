/* The names of the engine's threads at the stop (src/engine/stop_names.h):
 * in every mode, and in oneshot mode with the buffer full, the stop writes a
 * thread kernel-object record with `name_at` for each thread that wrote
 * (one that ended: its name at its end; one still running: its name now),
 * the renamed ones first. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <pthread.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "engine/stop_names.h"
#include "engine_test_util.h"
#include "harness.h"
#include "trace/event.h"

enum { SMALL_BUFFER = 64 * 1024, MAX_SEEN = 16 };

typedef struct named {
  uint64_t tid;
  char name[32];
  uint64_t process, at;
} named_t;

typedef struct seen {
  named_t items[MAX_SEEN];
  size_t count;
} seen_t;

/* The stop's records (those with name_at) of the archive. */
static void stop_names_of(harness_t* h, seen_t* seen) {
  size_t length;
  const uint8_t* fxt = harness_archive(h, &length);
  trace_reader_t* r = trace_reader_open_memory(fxt, length, NULL);
  ASSERT_TRUE(r);
  memset(seen, 0, sizeof(*seen));
  trace_record_t rec;
  int rc;
  while ((rc = trace_reader_next(r, &rec)) != TRACE_READ_END) {
    ASSERT_EQ(rc, TRACE_READ_RECORD);
    if (rec.type != 7 || rec.kernel_object.object_type != 2) continue;
    named_t n = {0};
    bool at = false;
    for (size_t i = 0; i < rec.kernel_object.args.count; i++) {
      const trace_reader_arg_t* a = &rec.kernel_object.args.items[i];
      if (strcmp(a->name.data, "process") == 0 && a->type == TRACE_ARG_KOID)
        n.process = a->koid_value;
      if (strcmp(a->name.data, STOP_NAMES_ARG) == 0 && a->type == TRACE_ARG_UINT64) {
        n.at = a->uint64_value;
        at = true;
      }
    }
    if (!at) continue;
    ASSERT_TRUE(seen->count < MAX_SEEN);
    n.tid = rec.kernel_object.koid;
    snprintf(n.name, sizeof(n.name), "%.*s", (int)rec.kernel_object.name.length,
             rec.kernel_object.name.data);
    seen->items[seen->count++] = n;
  }
  trace_reader_close(r);
}

static const named_t* find(const seen_t* seen, uint64_t tid) {
  for (size_t i = 0; i < seen->count; i++)
    if (seen->items[i].tid == tid) return &seen->items[i];
  return NULL;
}

typedef struct thread_job {
  const char* first;
  const char* second; /* NULL: keeps its name */
  uint64_t tid;
} thread_job_t;

static void* renaming_thread(void* arg) {
  thread_job_t* job = arg;
  job->tid = (uint64_t)syscall(SYS_gettid);
  prctl(PR_SET_NAME, job->first);
  emit_seq(1);
  if (job->second) prctl(PR_SET_NAME, job->second);
  return NULL;
}

static uint64_t run_thread(const char* first, const char* second) {
  thread_job_t job = {first, second, 0};
  pthread_t t;
  ASSERT_EQ(pthread_create(&t, NULL, renaming_thread, &job), 0);
  pthread_join(t, NULL);
  return job.tid;
}

static void test_mode(trace_buffering_mode_t mode) {
  char old_name[17] = {0};
  prctl(PR_GET_NAME, old_name);
  uint64_t begin = trace_clock__now_ns();
  harness_t h;
  ASSERT_EQ(harness_start(&h, mode, SMALL_BUFFER, NULL), 0);
  prctl(PR_SET_NAME, "sn-main-first");
  emit_seq(0);
  prctl(PR_SET_NAME, "sn-main-second");
  uint64_t renamed = run_thread("sn-a-first", "sn-a-second");
  uint64_t kept = run_thread("sn-b-same", NULL);
  /* enough to fill the oneshot buffer, wrap the circular one and make the
   * streaming one save */
  for (uint64_t i = 0; i < 20000; i++) emit_seq(i);
  uint64_t late = run_thread("sn-c-first", "sn-c-second"); /* oneshot: after it filled */
  harness_stop(&h);
  uint64_t end = trace_clock__now_ns();
  if (mode == TRACE_BUFFERING_MODE_ONESHOT) ASSERT_TRUE(h.stats.records_dropped > 0);
  seen_t seen;
  stop_names_of(&h, &seen);
  ASSERT_EQ(seen.count, 4u);
  const named_t* main_thread = find(&seen, (uint64_t)getpid());
  const named_t* a = find(&seen, renamed);
  const named_t* b = find(&seen, kept);
  const named_t* c = find(&seen, late);
  ASSERT_TRUE(main_thread && a && b && c);
  ASSERT_STREQ(main_thread->name, "sn-main-second");
  ASSERT_STREQ(a->name, "sn-a-second");
  ASSERT_STREQ(b->name, "sn-b-same");
  ASSERT_STREQ(c->name, "sn-c-second");
  ASSERT_TRUE(seen.items[3].tid == kept); /* the renamed ones first */
  for (size_t i = 0; i < seen.count; i++) {
    ASSERT_EQ(seen.items[i].process, (uint64_t)getpid());
    ASSERT_TRUE(seen.items[i].at >= begin && seen.items[i].at <= end);
  }
  /* a thread's end comes before the stop's reading of a running thread */
  ASSERT_TRUE(a->at <= c->at && c->at <= main_thread->at);
  harness_free(&h);
  prctl(PR_SET_NAME, old_name);
}

/* ---- names the program gave (explicit_name.h), said again at each stop ---- */

static uint64_t ghost_tid;

static void* naming_thread(void* arg) {
  (void)arg;
  ghost_tid = (uint64_t)syscall(SYS_gettid);
  TRACE_KERNEL_OBJECT((trace_koid_t)getpid(), ghost_tid, "ghost-thread");
  return NULL;
}

/* The times (explicit_name) of the kernel-object records named `name`. */
static size_t explicit_times(harness_t* h, const char* name, uint64_t times[4]) {
  size_t length, n = 0;
  const uint8_t* fxt = harness_archive(h, &length);
  trace_reader_t* r = trace_reader_open_memory(fxt, length, NULL);
  ASSERT_TRUE(r);
  trace_record_t rec;
  while (trace_reader_next(r, &rec) == TRACE_READ_RECORD) {
    if (rec.type != 7 || rec.kernel_object.name.length != strlen(name) ||
        memcmp(rec.kernel_object.name.data, name, strlen(name)) != 0)
      continue;
    for (size_t i = 0; i < rec.kernel_object.args.count; i++)
      if (strcmp(rec.kernel_object.args.items[i].name.data, "explicit_name") == 0 && n < 4)
        times[n++] = rec.kernel_object.args.items[i].uint64_value;
  }
  trace_reader_close(r);
  return n;
}

/* A thread that named itself and ended: its name again at the stop of its
 * trace, with the time it ended; not in a later trace (it is not in it).
 * The process's name, said again at every stop, with the stop's time, also
 * when it was given with no trace running. */
static void test_explicit_across_traces(void) {
  harness_t h;
  ASSERT_EQ(harness_start(&h, TRACE_BUFFERING_MODE_ONESHOT, 1 << 20, NULL), 0);
  TRACE_KERNEL_OBJECT((trace_koid_t)getpid(), 0, "the-process");
  pthread_t t;
  ASSERT_EQ(pthread_create(&t, NULL, naming_thread, NULL), 0);
  ASSERT_EQ(pthread_join(t, NULL), 0);
  uint64_t ended_before = trace_clock__now_ns();
  harness_stop(&h);
  uint64_t times[4];
  ASSERT_EQ(explicit_times(&h, "ghost-thread", times), 2u);
  uint64_t named = times[0] < times[1] ? times[0] : times[1];
  uint64_t ended = times[0] < times[1] ? times[1] : times[0];
  ASSERT_TRUE(named < ended && ended <= ended_before); /* its end, not the stop */
  ASSERT_EQ(explicit_times(&h, "the-process", times), 2u);
  harness_free(&h);

  /* named again with no trace running (as programs name themselves at
   * start-up, before anyone traces them): remembered all the same */
  TRACE_KERNEL_OBJECT((trace_koid_t)getpid(), 0, "named-between-traces");
  uint64_t second_start = trace_clock__now_ns();
  ASSERT_EQ(harness_start(&h, TRACE_BUFFERING_MODE_CIRCULAR, 1 << 20, NULL), 0);
  emit_seq(1);
  harness_stop(&h);
  ASSERT_EQ(explicit_times(&h, "ghost-thread", times), 0u);
  ASSERT_EQ(explicit_times(&h, "the-process", times), 0u);
  ASSERT_EQ(explicit_times(&h, "named-between-traces", times), 1u);
  ASSERT_TRUE(times[0] > second_start);
  harness_free(&h);
  printf("explicit names across traces: ok (thread %llu)\n", (unsigned long long)ghost_tid);
}

int main(void) {
  test_mode(TRACE_BUFFERING_MODE_ONESHOT);
  test_mode(TRACE_BUFFERING_MODE_CIRCULAR);
  test_mode(TRACE_BUFFERING_MODE_STREAMING);
  test_explicit_across_traces();
  printf("ok\n");
  return 0;
}
