/* thread_names.c's names in time (thread_names__at): what the kernel's task
 * events and the engine's names at a stop (name_at) say at each time, the
 * name before the first rename, and the last name the archive gives a thread
 * (its names section) otherwise. */
#include <string.h>

#include "test.h"
#include "trace/thread_names.h"

static trace_reader_string_t str(const char* s) {
  trace_reader_string_t r = {s, strlen(s)};
  return r;
}

/* A kernel-object record of object type `type` (2: thread) with `count`
 * arguments. */
static void kobj_args(uint32_t type, uint64_t koid, const char* name,
                      const trace_reader_arg_t* args, size_t count) {
  trace_record_t r;
  memset(&r, 0, sizeof(r));
  r.type = 7;
  r.kernel_object.koid = koid;
  r.kernel_object.object_type = type;
  r.kernel_object.name = str(name);
  for (size_t i = 0; i < count; i++) r.kernel_object.args.items[i] = args[i];
  r.kernel_object.args.count = count;
  thread_names__note(&r);
}

static void kobj(uint64_t tid, const char* name) { kobj_args(2, tid, name, NULL, 0); }

/* A thread's name at a stop (src/engine/stop_names.h): a thread
 * kernel-object record with its `process` koid and a uint64 `name_at`. */
static void stop_name(uint64_t tid, const char* name, uint64_t name_at) {
  const trace_reader_arg_t args[2] = {
      {.type = 8, .name = str("process"), .koid_value = 1},
      {.type = 4, .name = str("name_at"), .uint64_value = name_at},
  };
  kobj_args(2, tid, name, args, 2);
}

/* A kernel:task instant with a string argument k1 and an int64 one k2. */
static void task(uint64_t ns, const char* event, const char* k1, const char* s1, const char* k2,
                 int64_t pid) {
  trace_record_t r;
  memset(&r, 0, sizeof(r));
  r.type = 4;
  r.event.event_type = 0;
  r.event.category = str("kernel:task");
  r.event.name = str(event);
  trace_reader_arg_t* a = r.event.args.items;
  a[0].type = 6;
  a[0].name = str(k1);
  a[0].string_value = str(s1);
  a[1].type = 3;
  a[1].name = str(k2);
  a[1].int64_value = pid;
  r.event.args.count = 2;
  thread_names__note_task(&r, ns);
}

int main(void) {
  /* thread 7: forked as "producer" at 100, renamed "worker-1" at 200 (from
   * "producer"), exited at 900; the archive's last record names it too */
  kobj(7, "producer");
  task(200, "task_rename", "newcomm", "worker-1", "pid", 7);
  task(100, "sched_process_fork", "child_comm", "producer", "child_pid", 7);
  task(900, "sched_process_exit", "comm", "worker-1", "pid", 7);
  kobj(7, "worker-1");
  ASSERT_STREQ(thread_names__at(7, 150), "producer");
  ASSERT_STREQ(thread_names__at(7, 200), "worker-1");
  ASSERT_STREQ(thread_names__at(7, 950), "worker-1");
  /* before any event: the last name the archive gives it */
  ASSERT_STREQ(thread_names__at(7, 50), "worker-1");
  ASSERT_STREQ(thread_names__get(7), "worker-1");

  /* thread 8: only a rename at 500 from "old": before it, "old" */
  kobj(8, "new");
  {
    trace_record_t r;
    memset(&r, 0, sizeof(r));
    r.type = 4;
    r.event.category = str("kernel:task");
    r.event.name = str("task_rename");
    trace_reader_arg_t* a = r.event.args.items;
    a[0] = (trace_reader_arg_t){.type = 3, .name = str("pid"), .int64_value = 8};
    a[1] = (trace_reader_arg_t){.type = 6, .name = str("oldcomm"), .string_value = str("old")};
    a[2] = (trace_reader_arg_t){.type = 6, .name = str("newcomm"), .string_value = str("new")};
    r.event.args.count = 3;
    thread_names__note_task(&r, 500);
  }
  ASSERT_STREQ(thread_names__at(8, 499), "old");
  ASSERT_STREQ(thread_names__at(8, 500), "new");

  /* thread 9: exec of a long file name at 300: the comm, cut to 15 bytes */
  kobj(9, "final");
  task(300, "sched_process_exec", "filename", "/usr/bin/a-very-long-program-name", "pid", 9);
  ASSERT_STREQ(thread_names__at(9, 301), "a-very-long-pro");
  ASSERT_STREQ(thread_names__at(9, 299), "final");

  /* another category says nothing of names */
  {
    trace_record_t r;
    memset(&r, 0, sizeof(r));
    r.type = 4;
    r.event.category = str("kernel:other");
    r.event.name = str("task_rename");
    trace_reader_arg_t* a = r.event.args.items;
    a[0] = (trace_reader_arg_t){.type = 3, .name = str("pid"), .int64_value = 9};
    a[1] = (trace_reader_arg_t){.type = 6, .name = str("newcomm"), .string_value = str("no")};
    r.event.args.count = 2;
    thread_names__note_task(&r, 400);
  }
  ASSERT_STREQ(thread_names__at(9, 401), "a-very-long-pro");
  ASSERT_TRUE(thread_names__at(10, 1) == NULL);

  /* thread 11, in an archive without a names section (`trace recover`): it
   * wrote first as "main" and was renamed "renamed" (the kernel recorded no
   * rename); its name at the stop, at 600, comes first in the file (chunk 0)
   * and its own first record after it. Renamed again at 800 by a task
   * event, after the stop's time. */
  stop_name(11, "renamed", 600);
  kobj(11, "main");
  task(800, "task_rename", "newcomm", "later", "pid", 11);
  ASSERT_STREQ(thread_names__at(11, 600), "renamed");
  ASSERT_STREQ(thread_names__at(11, 799), "renamed");
  ASSERT_STREQ(thread_names__at(11, 800), "later");
  /* before the stop's time: the last name the archive gives it */
  ASSERT_STREQ(thread_names__at(11, 599), "main");
  ASSERT_STREQ(thread_names__get(11), "main");
  /* two stops (a retained buffer): each name from its time on, in any
   * file order */
  stop_name(12, "second", 2000);
  stop_name(12, "first", 1000);
  kobj(12, "start");
  ASSERT_STREQ(thread_names__at(12, 999), "start");
  ASSERT_STREQ(thread_names__at(12, 1500), "first");
  ASSERT_STREQ(thread_names__at(12, 2500), "second");
  /* a `name_at` of another type, or on a process record, is no time */
  const trace_reader_arg_t signed_at = {.type = 3, .name = str("name_at"), .int64_value = 100};
  kobj_args(2, 13, "signed", &signed_at, 1);
  kobj(13, "last");
  const trace_reader_arg_t at = {.type = 4, .name = str("name_at"), .uint64_value = 100};
  kobj_args(1, 14, "process", &at, 1);
  ASSERT_STREQ(thread_names__at(13, 200), "last");
  ASSERT_TRUE(thread_names__at(14, 200) == NULL);
  thread_names__free();
  printf("ok\n");
  return 0;
}
