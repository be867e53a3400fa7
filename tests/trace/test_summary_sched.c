/* trace summary's scheduling rules (docs/summary.md, "Scheduling") on
 * records built by hand, including what a conformant archive cannot say
 * (a thread switched out while running, i.e. preempted): CPU time per
 * switch-in, runnable wait from the first wakeup or a preemption to the
 * switch-in, wakeups of a thread on a CPU ignored, the idle thread, a thread
 * still running at the end, and clipping to --time-range. */
#include <string.h>

#include "test.h"
#include "trace/summary.h"

enum { A = 11, B = 12, RUNNING = 1, BLOCKED = 3 };

static const trace_reader_provider_t kProvider = {1, {"p", 1}, 1000000000u};

static void context_switch(summary_t* s, uint64_t ts, uint32_t cpu, uint64_t out, uint32_t state,
                           uint64_t in) {
  trace_record_t r;
  memset(&r, 0, sizeof(r));
  r.type = 8;
  r.provider = &kProvider;
  r.scheduling.sched_type = 0;
  r.scheduling.ticks = ts;
  r.scheduling.cpu = cpu;
  r.scheduling.outgoing_state = state;
  r.scheduling.outgoing_process_koid = out ? 10 : 0;
  r.scheduling.outgoing_thread_koid = out;
  r.scheduling.incoming_process_koid = in ? 10 : 0;
  r.scheduling.incoming_thread_koid = in;
  summary__record(s, &r);
}

/* An instant event on `tid`: a kernel:sched wakeup when name is one. */
static void instant(summary_t* s, uint64_t ts, uint64_t tid, const char* category,
                    const char* name) {
  trace_record_t r;
  memset(&r, 0, sizeof(r));
  r.type = 4;
  r.provider = &kProvider;
  r.event.event_type = 0;
  r.event.ticks = ts;
  r.event.process_koid = 10;
  r.event.thread_koid = tid;
  r.event.category = (trace_reader_string_t){category, strlen(category)};
  r.event.name = (trace_reader_string_t){name, strlen(name)};
  summary__record(s, &r);
}

static const summary_thread_t* thread(const summary_t* s, uint64_t tid) {
  summary_entry_t* e = summary_table__find(&s->threads, &tid, sizeof(tid));
  ASSERT_MSG(e != NULL, "no thread %" PRIu64, tid);
  return summary_entry__value(e);
}

/* cpu 0: idle -> A at 100; A preempted for B at 300; B blocks, A back at
 * 500; the trace ends at 600 with A running. Wakeups: A at 150 (on the
 * CPU: ignored), B at 250 (sched_waking) and 270 (sched_wakeup: the same
 * wait), an instant of another category at 280 (not a wakeup). */
static void play(summary_t* s) {
  context_switch(s, 100, 0, 0, BLOCKED, A);
  instant(s, 150, A, "kernel:sched", "sched_wakeup");
  instant(s, 250, B, "kernel:sched", "sched_waking");
  instant(s, 270, B, "kernel:sched", "sched_wakeup");
  instant(s, 280, A, "app", "sched_wakeup");
  context_switch(s, 300, 0, A, RUNNING, B);
  context_switch(s, 500, 0, B, BLOCKED, A);
  instant(s, 600, B, "app", "end");
  summary__finish(s);
}

static void test_whole_trace(void) {
  summary_t s;
  ASSERT_TRUE(summary__init(&s, NULL));
  play(&s);
  ASSERT_TRUE(s.sched);
  const summary_thread_t *a = thread(&s, A), *b = thread(&s, B);
  ASSERT_EQ(a->cpu_ns, 200 + 100); /* 100..300, then 500..600 (running at the end) */
  ASSERT_EQ(a->switches, 2);
  ASSERT_EQ(a->wait.count, 1); /* preempted at 300, back at 500 */
  ASSERT_EQ(a->wait.max, 200);
  ASSERT_EQ(b->cpu_ns, 200);
  ASSERT_EQ(b->switches, 1);
  ASSERT_EQ(b->wait.count, 1); /* the first wakeup (250) to the switch-in (300) */
  ASSERT_EQ(b->wait.max, 50);
  ASSERT_TRUE(summary_table__find(&s.threads, &(uint64_t){0}, sizeof(uint64_t)) == NULL);
  summary__free(&s);
}

/* --time-range=0.0000002,0.00000045: origin 100 (the first record), so
 * [300, 550] absolute. */
static void test_time_range(void) {
  time_range_t range;
  ASSERT_EQ(time_range__parse("0.0000002,0.00000045", &range), 0);
  summary_t s;
  ASSERT_TRUE(summary__init(&s, &range));
  play(&s);
  const summary_thread_t *a = thread(&s, A), *b = thread(&s, B);
  ASSERT_EQ(a->cpu_ns, 50);    /* 500..550 of 500..600; 100..300 is before */
  ASSERT_EQ(a->switches, 1);   /* the switch-in at 500, not the one at 100 */
  ASSERT_EQ(a->wait.count, 1); /* counted at its switch-in (500) */
  ASSERT_EQ(b->cpu_ns, 200);   /* 300..500 */
  ASSERT_EQ(b->switches, 1);
  ASSERT_EQ(b->wait.max, 50);
  summary__free(&s);
}

int main(void) {
  test_whole_trace();
  test_time_range();
  puts("summary scheduling rules: ok");
  return 0;
}
