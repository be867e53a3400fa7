/* The names collection (src/names/names.h): which source wins, what records
 * teach it, bounds, that /proc names only what is still the process it
 * knew, and that its section is FXT our reader takes whole. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "engine/explicit_name.h"
#include "engine/stop_names.h"
#include "fxt/fxt_encode.h"
#include "fxt/fxt_format.h"
#include "names/names.h"
#include "names/names_internal.h"
#include "test.h"
#include "trace-reader/reader.h"

static void test_ranks(void) {
  names_t* n = names__create();
  ASSERT_TRUE(n);
  names__set(n, true, 10, 1, "others", 6, NAMES_RANK_OTHERS_RECORD, 0);
  ASSERT_STREQ(names__get(n, true, 10), "others");
  names__set(n, true, 10, 0, "own", 3, NAMES_RANK_OWN_RECORD, 0);
  ASSERT_STREQ(names__get(n, true, 10), "own");
  names__set(n, true, 10, 0, "others-later", 12, NAMES_RANK_OTHERS_RECORD, 0);
  ASSERT_STREQ(names__get(n, true, 10), "own"); /* a weaker source never replaces */
  names__set(n, true, 10, 0, "own-later", 9, NAMES_RANK_OWN_RECORD, 0);
  ASSERT_STREQ(names__get(n, true, 10), "own-later"); /* same source: the last */
  names__set(n, true, 10, 0, "at-20", 5, NAMES_RANK_TASK_EVENT, 20);
  names__set(n, true, 10, 0, "at-5", 4, NAMES_RANK_TASK_EVENT, 5);
  ASSERT_STREQ(names__get(n, true, 10), "at-20"); /* task events: the latest time */
  names__set(n, true, 10, 0, "at-30", 5, NAMES_RANK_TASK_EVENT, 30);
  ASSERT_STREQ(names__get(n, true, 10), "at-30");
  names__set(n, true, 10, 0, "proc", 4, NAMES_RANK_PROC, 0);
  ASSERT_STREQ(names__get(n, true, 10), "proc");
  names__set(n, true, 10, 0, "", 0, NAMES_RANK_PROC, 0); /* an empty name is no name */
  ASSERT_STREQ(names__get(n, true, 10), "proc");
  /* processes and threads are apart */
  ASSERT_TRUE(names__get(n, false, 10) == NULL);
  names__set(n, false, 10, 0, "prog", 4, NAMES_RANK_PROGRAM, 0);
  ASSERT_STREQ(names__get(n, false, 10), "prog");
  ASSERT_STREQ(names__get(n, true, 10), "proc");
  /* a thread's process, as its name, from the strongest source: a kernel
   * provider that took a gone thread for its own process (no tgid to be
   * found) does not move it out of the process its provider said */
  names__set(n, true, 11, 1, "t", 1, NAMES_RANK_OTHERS_RECORD, 0);
  ASSERT_EQ(names__lookup(n, true, 11)->process_koid, 1);
  names__set(n, true, 11, 7, "t", 1, NAMES_RANK_OWN_RECORD, 0);
  ASSERT_EQ(names__lookup(n, true, 11)->process_koid, 7);
  names__set(n, true, 11, 11, "t", 1, NAMES_RANK_OTHERS_RECORD, 0);
  ASSERT_EQ(names__lookup(n, true, 11)->process_koid, 7);
  names__set(n, true, 11, 0, "t2", 2, NAMES_RANK_TASK_EVENT, 50); /* says no process */
  ASSERT_EQ(names__lookup(n, true, 11)->process_koid, 7);
  names_stats_t st = names__stats(n);
  ASSERT_EQ(st.processes, 1);
  ASSERT_EQ(st.threads, 2);
  ASSERT_EQ(st.not_kept, 0);
  names__free(n);
}

/* Past NAMES_MAX_ENTRIES, new koids are counted, not kept; known ones still
 * change. */
static void test_limit(void) {
  names_t* n = names__create();
  ASSERT_TRUE(n);
  for (uint64_t koid = 1; koid <= NAMES_MAX_ENTRIES + 10; koid++)
    names__set(n, true, koid, 1, "t", 1, NAMES_RANK_OWN_RECORD, 0);
  names_stats_t st = names__stats(n);
  ASSERT_EQ(st.threads, NAMES_MAX_ENTRIES);
  ASSERT_EQ(st.not_kept, 10);
  ASSERT_TRUE(names__get(n, true, NAMES_MAX_ENTRIES + 1) == NULL);
  names__set(n, true, 1, 1, "renamed", 7, NAMES_RANK_PROC, 0);
  ASSERT_STREQ(names__get(n, true, 1), "renamed");
  names__free(n);
}

/* A provider in another pid namespace: its koids are not ours, so /proc at
 * the end does not rename them (pid 1 is alive here: init). */
static void test_foreign(void) {
  names_t* n = names__create();
  names_source_t* foreign = names__source_create_foreign();
  ASSERT_TRUE(n && foreign);
  uint64_t words[16];
  trace_string_ref_t ref = trace_make_inline_c_string_ref("container-init");
  size_t w = fxt_kernel_object_record_words(&ref, NULL, 0);
  fxt_write_kernel_object_record(words, w, 1, FXT_KOBJ_PROCESS, &ref, NULL, 0);
  names__note(n, foreign, words, w * 8);
  ASSERT_STREQ(names__get(n, false, 1), "container-init");
  names__refresh_from_proc(n, 0);
  ASSERT_STREQ(names__get(n, false, 1), "container-init");
  /* the same record from a provider of ours: /proc names pid 1 */
  names_source_t* local = names__source_create(12345);
  ASSERT_TRUE(local);
  names__note(n, local, words, w * 8);
  names__refresh_from_proc(n, 0);
  ASSERT_TRUE(strcmp(names__get(n, false, 1), "container-init") != 0);
  names__source_free(local);
  names__source_free(foreign);
  names__free(n);
}

static void test_bound(void) {
  char name[400];
  /* 'a', then 2-byte characters (é = c3 a9) so that byte 255 falls inside one */
  name[0] = 'a';
  size_t i = 1;
  while (i + 2 <= sizeof(name) - 1) {
    name[i++] = (char)0xc3;
    name[i++] = (char)0xa9;
  }
  name[i] = '\0';
  size_t kept = names__bound(name, strlen(name));
  ASSERT_TRUE(kept <= NAMES_MAX_LENGTH);
  ASSERT_EQ(kept, NAMES_MAX_LENGTH); /* 'a' + 127 whole characters = 255 bytes */
  ASSERT_EQ(names__bound("\xc3\xa9", 2), 2);
  /* byte 255 a lead byte: cut before it */
  name[0] = 'a';
  name[1] = 'b';
  for (i = 2; i + 2 <= sizeof(name) - 1; i += 2) {
    name[i] = (char)0xc3;
    name[i + 1] = (char)0xa9;
  }
  name[i] = '\0';
  kept = names__bound(name, strlen(name));
  ASSERT_EQ(kept, NAMES_MAX_LENGTH - 1);
  ASSERT_EQ(names__bound("comm\n", 5), 4); /* /proc's newline */
  ASSERT_EQ(names__bound("ab\0cd", 5), 2);
}

/* ---- records ---- */

typedef struct buf {
  uint64_t words[4096];
  size_t used;
} buf_t;

static void note_last(names_t* n, names_source_t* s, buf_t* b, size_t from) {
  names__note(n, s, b->words + from, (b->used - from) * 8);
}

static void put_kobj(names_t* n, names_source_t* s, buf_t* b, bool thread, uint64_t koid,
                     uint64_t process, const char* name) {
  size_t from = b->used;
  trace_string_ref_t ref = trace_make_inline_c_string_ref(name);
  trace_arg_t arg =
      trace_make_arg(trace_make_inline_c_string_ref("process"), trace_make_koid_arg_value(process));
  size_t count = thread ? 1 : 0;
  size_t words = fxt_kernel_object_record_words(&ref, &arg, count);
  fxt_write_kernel_object_record(b->words + b->used, words, koid,
                                 thread ? FXT_KOBJ_THREAD : FXT_KOBJ_PROCESS, &ref, &arg, count);
  b->used += words;
  note_last(n, s, b, from);
}

static void put_task(names_t* n, names_source_t* s, buf_t* b, uint64_t ts, const char* event,
                     const trace_arg_t* args, size_t count) {
  size_t from = b->used;
  trace_thread_ref_t thread = trace_make_inline_thread_ref(1, 1);
  trace_string_ref_t category = trace_make_indexed_string_ref(1); /* "kernel:task" */
  trace_string_ref_t name = trace_make_inline_c_string_ref(event);
  size_t words = fxt_event_record_words(FXT_EVENT_INSTANT, &thread, &category, &name, args, count);
  fxt_write_event_record(b->words + b->used, words, FXT_EVENT_INSTANT, ts, &thread, &category,
                         &name, args, count, 3 /* thread scope */);
  b->used += words;
  note_last(n, s, b, from);
}

static trace_arg_t named_int(const char* name, int64_t v) {
  return trace_make_arg(trace_make_inline_c_string_ref(name), trace_make_int64_arg_value(v));
}

static trace_arg_t named_string(const char* name, const char* value) {
  return trace_make_arg(trace_make_inline_c_string_ref(name),
                        trace_make_string_arg_value(trace_make_inline_c_string_ref(value)));
}

/* ---- the section ---- */

typedef struct archive {
  uint8_t bytes[1 << 16];
  size_t size;
  int calls;
} archive_t;

static bool append(void* arg, const void* data, size_t bytes) {
  archive_t* a = arg;
  ASSERT_TRUE(a->size + bytes <= sizeof(a->bytes));
  ASSERT_EQ(bytes % 8, 0);
  memcpy(a->bytes + a->size, data, bytes);
  a->size += bytes;
  a->calls++;
  return true;
}

static bool refuse(void* arg, const void* data, size_t bytes) {
  (void)arg, (void)data, (void)bytes;
  return false;
}

/* The section of n, read back with our reader after a magic record and a
 * provider-info record: `processes` process and `threads` thread records,
 * each thread with its `process` koid, every name the one n knows, and
 * `absent` (a thread) not among them. */
static void test_section(names_t* n, uint64_t processes, uint64_t threads, uint64_t absent) {
  archive_t* a = calloc(1, sizeof(*a));
  ASSERT_TRUE(a);
  uint64_t words[8];
  fxt_write_magic_record(words);
  append(a, words, 8);
  uint64_t* end = fxt_write_provider_info_record(words, 0, "trace_manager", 13);
  append(a, words, (size_t)(end - words) * 8);
  uint64_t records = 0;
  ASSERT_TRUE(names__write_section(n, append, a, &records));
  ASSERT_EQ(records, processes + threads);
  trace_reader_t* r = trace_reader_open_memory(a->bytes, a->size, NULL);
  ASSERT_TRUE(r);
  trace_record_t rec;
  int rc;
  uint64_t seen_processes = 0, seen_threads = 0;
  while ((rc = trace_reader_next(r, &rec)) != TRACE_READ_END) {
    ASSERT_EQ(rc, TRACE_READ_RECORD);
    if (rec.type != 7) continue;
    bool thread = rec.kernel_object.object_type == FXT_KOBJ_THREAD;
    const char* known = names__get(n, thread, rec.kernel_object.koid);
    ASSERT_TRUE(known);
    ASSERT_EQ(rec.kernel_object.name.length, strlen(known));
    ASSERT_TRUE(memcmp(rec.kernel_object.name.data, known, strlen(known)) == 0);
    if (thread) {
      ASSERT_TRUE(rec.kernel_object.koid != absent);
      ASSERT_EQ(seen_threads == 0 ? seen_processes : processes, processes); /* processes first */
      ASSERT_EQ(rec.kernel_object.args.count, 1);
      ASSERT_EQ(rec.kernel_object.args.items[0].type, TRACE_ARG_KOID);
      ASSERT_STREQ(rec.kernel_object.args.items[0].name.data, "process");
      seen_threads++;
    } else {
      ASSERT_EQ(rec.kernel_object.args.count, 0);
      seen_processes++;
    }
  }
  trace_reader_close(r);
  ASSERT_EQ(seen_processes, processes);
  ASSERT_EQ(seen_threads, threads);
  /* a sink that fails stops the section */
  ASSERT_TRUE(!names__write_section(n, refuse, NULL, NULL));
  free(a);
}

static void test_records(void) {
  names_t* n = names__create();
  names_source_t* kernel = names__source_create(500); /* the kernel provider, pid 500 */
  names_source_t* app = names__source_create(100);    /* the traced program, pid 100 */
  ASSERT_TRUE(n && kernel && app);
  buf_t* b = calloc(1, sizeof(*b));
  ASSERT_TRUE(b);
  /* a high string index (the table grows to it) naming a thread */
  size_t from = b->used;
  fxt_write_string_record(b->words + b->used, 30000, "far-name", 8);
  b->used += fxt_string_record_words(8);
  note_last(n, app, b, from);
  {
    from = b->used;
    trace_string_ref_t ref = trace_make_indexed_string_ref(30000);
    trace_arg_t arg =
        trace_make_arg(trace_make_inline_c_string_ref("process"), trace_make_koid_arg_value(100));
    size_t w = fxt_kernel_object_record_words(&ref, &arg, 1);
    fxt_write_kernel_object_record(b->words + b->used, w, 103, FXT_KOBJ_THREAD, &ref, &arg, 1);
    b->used += w;
    note_last(n, app, b, from);
    ASSERT_STREQ(names__get(n, true, 103), "far-name");
  }
  /* the kernel provider's string table: index 1 is its category */
  from = b->used;
  size_t words = fxt_string_record_words(11);
  fxt_write_string_record(b->words + b->used, 1, "kernel:task", 11);
  b->used += words;
  note_last(n, kernel, b, from);

  /* the program names itself (own records) ... */
  put_kobj(n, app, b, false, 100, 0, "prog-comm");
  put_kobj(n, app, b, true, 101, 100, "worker-1");
  /* ... the kernel provider names it by comm afterwards (someone else's) */
  put_kobj(n, kernel, b, false, 100, 0, "main-comm");
  put_kobj(n, kernel, b, true, 101, 100, "main-comm");
  put_kobj(n, kernel, b, true, 100, 100, "main-comm");
  ASSERT_STREQ(names__get(n, false, 100), "prog-comm");
  ASSERT_STREQ(names__get(n, true, 101), "worker-1");
  ASSERT_STREQ(names__get(n, true, 100), "main-comm");

  /* task events, out of time order (a circular buffer's durable part first) */
  trace_arg_t rename_late[] = {named_int("pid", 100), named_string("newcomm", "late-name")};
  put_task(n, kernel, b, 300, "task_rename", rename_late, 2);
  trace_arg_t rename_early[] = {named_int("pid", 100), named_string("newcomm", "early-name")};
  put_task(n, kernel, b, 200, "task_rename", rename_early, 2);
  ASSERT_STREQ(names__get(n, true, 100), "late-name");
  trace_arg_t exec[] = {named_string("filename", "/usr/bin/a-program-longer-than-15"),
                        named_int("pid", 100), named_int("old_pid", 100)};
  put_task(n, kernel, b, 100, "sched_process_exec", exec, 3);
  ASSERT_STREQ(names__get(n, false, 100), "a-program-longer-than-15"); /* the program, whole */
  ASSERT_STREQ(names__get(n, true, 100), "late-name");                 /* renamed later */
  trace_arg_t exec2[] = {named_string("filename", "/bin/second"), named_int("pid", 100)};
  put_task(n, kernel, b, 400, "sched_process_exec", exec2, 2);
  ASSERT_STREQ(names__get(n, false, 100), "second");
  ASSERT_STREQ(names__get(n, true, 100), "second");
  trace_arg_t fork[] = {named_string("parent_comm", "second"), named_int("parent_pid", 100),
                        named_string("child_comm", "second"), named_int("child_pid", 102)};
  put_task(n, kernel, b, 410, "sched_process_fork", fork, 4);
  ASSERT_STREQ(names__get(n, true, 102), "second");
  trace_arg_t exit102[] = {named_string("comm", "w-final"), named_int("pid", 102),
                           named_int("prio", 120)};
  put_task(n, kernel, b, 420, "sched_process_exit", exit102, 3);
  ASSERT_STREQ(names__get(n, true, 102), "w-final");
  /* another category is not the kernel's task events */
  from = b->used;
  fxt_write_string_record(b->words + b->used, 1, "kernel:other", 12);
  b->used += fxt_string_record_words(12);
  note_last(n, kernel, b, from);
  trace_arg_t rename_other[] = {named_int("pid", 102), named_string("newcomm", "wrong")};
  put_task(n, kernel, b, 500, "task_rename", rename_other, 2);
  ASSERT_STREQ(names__get(n, true, 102), "w-final");
  /* a record cut short is not read past its size */
  trace_arg_t rename_cut[] = {named_int("pid", 101), named_string("newcomm", "cut")};
  from = b->used;
  fxt_write_string_record(b->words + b->used, 1, "kernel:task", 11);
  b->used += fxt_string_record_words(11);
  note_last(n, kernel, b, from);
  from = b->used;
  put_task(n, kernel, b, 600, "task_rename", rename_cut, 2); /* noted whole: applies */
  ASSERT_STREQ(names__get(n, true, 101), "cut");
  names__note(n, kernel, b->words + from, 3 * 8); /* only its first words: nothing */
  ASSERT_STREQ(names__get(n, true, 101), "cut");

  /* thread 102's process is known from no kernel-object record (a fork
   * does not say it): the section leaves it out */
  test_section(n, 1, 3, 102);
  free(b);
  names__source_free(kernel);
  names__source_free(app);
  names__free(n);
}

/* A task event under `category` appended to b, not noted. */
static void add_task(buf_t* b, trace_string_ref_t category, uint64_t ts, int64_t pid,
                     const char* newcomm) {
  trace_thread_ref_t thread = trace_make_inline_thread_ref(1, 1);
  trace_string_ref_t name = trace_make_inline_c_string_ref("task_rename");
  trace_arg_t args[] = {named_int("pid", pid), named_string("newcomm", newcomm)};
  size_t words = fxt_event_record_words(FXT_EVENT_INSTANT, &thread, &category, &name, args, 2);
  fxt_write_event_record(b->words + b->used, words, FXT_EVENT_INSTANT, ts, &thread, &category,
                         &name, args, 2, 3);
  b->used += words;
}

static void add_string(buf_t* b, uint32_t index, const char* text) {
  fxt_write_string_record(b->words + b->used, index, text, strlen(text));
  b->used += fxt_string_record_words(strlen(text));
}

/* names__note_run over many records at once learns what names__note does
 * record by record: its shortcut for events of other categories follows
 * the string table as the run redefines it, and knows every index that
 * holds "kernel:task" (the manager's saves). */
static void test_note_run(void) {
  names_t* n = names__create();
  names_source_t* kernel = names__source_create(500);
  ASSERT_TRUE(n && kernel);
  buf_t* b = calloc(1, sizeof(*b));
  ASSERT_TRUE(b);
  add_string(b, 1, "kernel:task");
  add_task(b, trace_make_indexed_string_ref(1), 100, 100, "first");
  add_string(b, 2, "kernel:other");
  add_task(b, trace_make_indexed_string_ref(2), 110, 101, "wrong-category");
  add_string(b, 1, "kernel:sched"); /* index 1 is no longer the task category */
  add_task(b, trace_make_indexed_string_ref(1), 120, 100, "wrong-redefined");
  add_string(b, 3, "kernel:task");
  add_task(b, trace_make_indexed_string_ref(3), 130, 102, "third");
  add_string(b, 4, "kernel:task"); /* a second index for it (another thread's) */
  add_task(b, trace_make_indexed_string_ref(4), 135, 105, "fourth");
  add_task(b, trace_make_inline_c_string_ref("kernel:task"), 140, 103, "inline");
  names__note_run(n, kernel, b->words, b->used * 8);
  ASSERT_STREQ(names__get(n, true, 100), "first");
  ASSERT_TRUE(names__get(n, true, 101) == NULL);
  ASSERT_STREQ(names__get(n, true, 102), "third");
  ASSERT_STREQ(names__get(n, true, 105), "fourth");
  ASSERT_STREQ(names__get(n, true, 103), "inline");
  /* a run cut inside a record stops before it */
  size_t whole = b->used;
  add_task(b, trace_make_indexed_string_ref(3), 150, 104, "cut");
  names__note_run(n, kernel, b->words + whole, (b->used - whole - 1) * 8);
  ASSERT_TRUE(names__get(n, true, 104) == NULL);
  free(b);
  names__source_free(kernel);
  names__free(n);
}

/* A run's headers OR-ed and AND-ed, as the archive's framing check does. */
static bool may_teach(const names_source_t* s, const buf_t* b, size_t from) {
  uint64_t any = 0, all = ~UINT64_C(0);
  for (size_t w = from; w < b->used; w += fxt_record_words(b->words[w])) {
    any |= b->words[w];
    all &= b->words[w];
  }
  return names__run_may_teach(s, any, all);
}

/* names__run_may_teach says false only for runs names__note_run learns
 * nothing from: events with indexed categories from a source that never
 * defined "kernel:task"; a string, a kernel object, an inline category or
 * a source that defined "kernel:task" (in an earlier run) make it true. */
static void test_run_may_teach(void) {
  names_t* n = names__create();
  names_source_t* s = names__source_create(600);
  ASSERT_TRUE(n && s);
  buf_t* b = calloc(1, sizeof(*b));
  ASSERT_TRUE(b);
  add_string(b, 2, "app:cat");
  ASSERT_TRUE(may_teach(s, b, 0)); /* a string record */
  names__note_run(n, s, b->words, b->used * 8);
  size_t from = b->used;
  add_task(b, trace_make_indexed_string_ref(2), 100, 200, "not-a-task");
  add_task(b, trace_make_indexed_string_ref(2), 110, 201, "not-a-task");
  ASSERT_TRUE(!may_teach(s, b, from));
  /* and indeed the pass learns nothing from such a run */
  names__note_run(n, s, b->words + from, (b->used - from) * 8);
  ASSERT_TRUE(names__get(n, true, 200) == NULL && names__get(n, true, 201) == NULL);
  size_t inline_from = b->used;
  add_task(b, trace_make_inline_c_string_ref("kernel:task"), 120, 202, "inline");
  ASSERT_TRUE(may_teach(s, b, from)); /* an inline category among them */
  names__note_run(n, s, b->words + inline_from, (b->used - inline_from) * 8);
  ASSERT_STREQ(names__get(n, true, 202), "inline");
  /* a kernel-object record among indexed events */
  from = b->used;
  add_task(b, trace_make_indexed_string_ref(2), 125, 204, "not-a-task");
  trace_string_ref_t thread_name = trace_make_inline_c_string_ref("worker");
  size_t words = fxt_kernel_object_record_words(&thread_name, NULL, 0);
  fxt_write_kernel_object_record(b->words + b->used, words, 205, FXT_KOBJ_THREAD, &thread_name,
                                 NULL, 0);
  b->used += words;
  ASSERT_TRUE(may_teach(s, b, from));
  names__note_run(n, s, b->words + from, (b->used - from) * 8);
  ASSERT_STREQ(names__get(n, true, 205), "worker");
  /* "kernel:task" defined in one run, used by index in the next */
  from = b->used;
  add_string(b, 3, "kernel:task");
  names__note_run(n, s, b->words + from, (b->used - from) * 8);
  from = b->used;
  add_task(b, trace_make_indexed_string_ref(3), 130, 203, "indexed");
  ASSERT_TRUE(may_teach(s, b, from));
  names__note_run(n, s, b->words + from, (b->used - from) * 8);
  ASSERT_STREQ(names__get(n, true, 203), "indexed");
  free(b);
  names__source_free(s);
  names__free(n);
}

/* A provider's names at the stop (`name_at`, src/engine/stop_names.h) are
 * names at a time, weighed with the kernel's task events: the latest wins.
 * Only about the provider's own threads. */
static void put_stop_name(names_t* n, names_source_t* s, buf_t* b, uint64_t tid, uint64_t process,
                          const char* name, uint64_t at) {
  size_t from = b->used;
  trace_string_ref_t ref = trace_make_inline_c_string_ref(name);
  trace_arg_t args[2] = {
      trace_make_arg(trace_make_inline_c_string_ref("process"), trace_make_koid_arg_value(process)),
      trace_make_arg(trace_make_inline_c_string_ref(STOP_NAMES_ARG),
                     trace_make_uint64_arg_value(at))};
  size_t words = fxt_kernel_object_record_words(&ref, args, 2);
  fxt_write_kernel_object_record(b->words + b->used, words, tid, FXT_KOBJ_THREAD, &ref, args, 2);
  b->used += words;
  note_last(n, s, b, from);
}

static void test_stop_names(void) {
  names_t* n = names__create();
  names_source_t* kernel = names__source_create(500);
  names_source_t* app = names__source_create(100);
  buf_t* b = calloc(1, sizeof(*b));
  ASSERT_TRUE(n && kernel && app && b);
  size_t from = b->used;
  fxt_write_string_record(b->words + b->used, 1, "kernel:task", 11);
  b->used += fxt_string_record_words(11);
  note_last(n, kernel, b, from);
  put_kobj(n, app, b, true, 101, 100, "t-first"); /* when it first wrote */
  trace_arg_t early[] = {named_int("pid", 101), named_string("newcomm", "t-early")};
  put_task(n, kernel, b, 200, "task_rename", early, 2);
  ASSERT_STREQ(names__get(n, true, 101), "t-early");
  /* the kernel's later renames were lost (a full buffer): the stop's name */
  put_stop_name(n, app, b, 101, 100, "t-second", 300);
  ASSERT_STREQ(names__get(n, true, 101), "t-second");
  trace_arg_t older[] = {named_int("pid", 101), named_string("newcomm", "t-older")};
  put_task(n, kernel, b, 250, "task_rename", older, 2); /* read later, happened before */
  ASSERT_STREQ(names__get(n, true, 101), "t-second");
  trace_arg_t newer[] = {named_int("pid", 101), named_string("newcomm", "t-third")};
  put_task(n, kernel, b, 400, "task_rename", newer, 2); /* after the stop */
  ASSERT_STREQ(names__get(n, true, 101), "t-third");
  /* not its own thread (another process), or from someone else: a record */
  put_kobj(n, app, b, true, 201, 200, "other-first");
  put_task(n, kernel, b, 100, "task_rename",
           (trace_arg_t[]){named_int("pid", 201), named_string("newcomm", "other-task")}, 2);
  put_stop_name(n, app, b, 201, 200, "not-mine", 900);
  put_stop_name(n, kernel, b, 201, 200, "not-mine", 900);
  ASSERT_STREQ(names__get(n, true, 201), "other-task");
  free(b);
  names__source_free(kernel);
  names__source_free(app);
  names__free(n);
}

/* The kernel provider names a thread that ended before it looked up its
 * process as a process of its own; its provider said whose thread it is:
 * the section has no such process. */
static void test_thread_not_process(void) {
  names_t* n = names__create();
  ASSERT_TRUE(n);
  names__set(n, false, 100, 0, "prog", 4, NAMES_RANK_PROGRAM, 0);
  names__set(n, true, 105, 100, "t-first", 7, NAMES_RANK_OWN_RECORD, 0);
  names__set(n, false, 105, 0, "t-second", 8, NAMES_RANK_OTHERS_RECORD, 0);
  names__set(n, true, 105, 105, "t-second", 8, NAMES_RANK_OTHERS_RECORD, 0);
  names__set(n, true, 105, 0, "t-second", 8, NAMES_RANK_TASK_EVENT, 10);
  test_section(n, 1, 1, 0);
  names__free(n);
}

/* A thread of this process named as fxtrace's control thread is, until told
 * to end. */
typedef struct control_like {
  pthread_mutex_t lock;
  pthread_cond_t cond;
  uint64_t tid;
  bool end;
} control_like_t;

static void* control_like_main(void* arg) {
  control_like_t* c = arg;
  prctl(PR_SET_NAME, "fxtrace-control");
  pthread_mutex_lock(&c->lock);
  c->tid = (uint64_t)syscall(SYS_gettid);
  pthread_cond_broadcast(&c->cond);
  while (!c->end) pthread_cond_wait(&c->cond, &c->lock);
  pthread_mutex_unlock(&c->lock);
  return NULL;
}

/* A process that ended before the section, whose pid the kernel then gave
 * to a thread of another process (here: a thread of this one named
 * "fxtrace-control"): /proc/PID answers for that thread, under its comm, and
 * /proc/PID/task/PID too. Neither the process nor its main thread may take
 * that name (seen once in a full suite run: the traced program and its main
 * thread both named "fxtrace-control"). A real thread of a live process
 * still gets its name from /proc. */
static void test_reused_pid(void) {
  control_like_t c = {PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, 0, false};
  pthread_t t;
  ASSERT_EQ(pthread_create(&t, NULL, control_like_main, &c), 0);
  pthread_mutex_lock(&c.lock);
  while (!c.tid) pthread_cond_wait(&c.cond, &c.lock);
  pthread_mutex_unlock(&c.lock);
  names_t* n = names__create();
  ASSERT_TRUE(n);
  uint64_t gone = c.tid; /* the ended process's pid, now that thread's tid */
  names__set(n, false, gone, 0, "names_rename_exec", 17, NAMES_RANK_PROGRAM, 0);
  names__set(n, true, gone, gone, "main-renamed", 12, NAMES_RANK_TASK_EVENT, 10);
  uint64_t self = (uint64_t)getpid();
  names__set(n, false, self, 0, "self-record", 11, NAMES_RANK_OWN_RECORD, 0);
  names__set(n, true, self, self, "main-record", 11, NAMES_RANK_OWN_RECORD, 0);
  names__refresh_from_proc(n, 0);
  ASSERT_STREQ(names__get(n, false, gone), "names_rename_exec");
  ASSERT_STREQ(names__get(n, true, gone), "main-renamed");
  /* this process is alive and is itself: /proc names it and its thread */
  ASSERT_STREQ(names__get(n, false, self), "test_names_table");
  char comm[17] = {0};
  prctl(PR_GET_NAME, comm);
  ASSERT_STREQ(names__get(n, true, self), comm);
  names__free(n);
  pthread_mutex_lock(&c.lock);
  c.end = true;
  pthread_cond_broadcast(&c.cond);
  pthread_mutex_unlock(&c.lock);
  pthread_join(t, NULL);
}

/* A provider's process (its program read when it registered, with its start
 * time): /proc names it and its threads at the section only while /proc/PID
 * is still that process, not a new one given the same pid. */
static void test_same_process(void) {
  uint64_t self = (uint64_t)getpid();
  char old_name[17] = {0};
  prctl(PR_GET_NAME, old_name);
  names_t* n = names__create();
  ASSERT_TRUE(n);
  names__note_program(n, self, 0);
  ASSERT_STREQ(names__get(n, false, self), "test_names_table");
  names_entry_t* e = names__lookup(n, false, self);
  ASSERT_TRUE(e && e->start_time != 0);
  uint64_t start_time = e->start_time;
  names__set(n, false, self, 0, "program-then", 12, NAMES_RANK_PROGRAM, 0);
  names__set(n, true, self, self, "main-then", 9, NAMES_RANK_TASK_EVENT, 5);
  prctl(PR_SET_NAME, "main-now");
  /* another process with this pid: another start time */
  e->start_time = start_time + 1;
  names__refresh_from_proc(n, 0);
  ASSERT_STREQ(names__get(n, false, self), "program-then");
  ASSERT_STREQ(names__get(n, true, self), "main-then");
  /* the same process */
  e->start_time = start_time;
  names__refresh_from_proc(n, 0);
  ASSERT_STREQ(names__get(n, false, self), "test_names_table");
  ASSERT_STREQ(names__get(n, true, self), "main-now");
  names__free(n);
  prctl(PR_SET_NAME, old_name);
}

/* A program's own name for its process or thread (rank 6): marked with its
 * time, read through records as the manager reads them. */
static void put_explicit(names_t* n, names_source_t* s, buf_t* b, bool thread, uint64_t koid,
                         uint64_t process, const char* name, uint64_t ns) {
  size_t from = b->used;
  trace_string_ref_t ref = trace_make_inline_c_string_ref(name);
  trace_arg_t args[2];
  size_t count = 0;
  if (thread)
    args[count++] = trace_make_arg(trace_make_inline_c_string_ref("process"),
                                   trace_make_koid_arg_value(process));
  args[count++] = trace_make_arg(trace_make_inline_c_string_ref(EXPLICIT_NAME_ARG),
                                 trace_make_uint64_arg_value(ns));
  size_t words = fxt_kernel_object_record_words(&ref, args, count);
  fxt_write_kernel_object_record(b->words + b->used, words, koid,
                                 thread ? FXT_KOBJ_THREAD : FXT_KOBJ_PROCESS, &ref, args, count);
  b->used += words;
  note_last(n, s, b, from);
}

/* Explicit names hold over /proc and task events until the koid becomes
 * another program or task, in any file order; the latest given wins; they
 * move no thread into the program's process over a stronger source. */
/* Times in ms (the names' clock is in ns): a fork ends only the names
 * given NAMES_CLOCK_MARGIN_NS (10 ms) or more before it. */
#define MS(ms) ((uint64_t)(ms)*1000000u)

static void test_explicit_times(void) {
  names_t* n = names__create();
  names_source_t* kernel = names__source_create(500);
  names_source_t* app = names__source_create(100);
  ASSERT_TRUE(n && kernel && app);
  buf_t* b = calloc(1, sizeof(*b));
  ASSERT_TRUE(b);
  size_t words = fxt_string_record_words(11);
  fxt_write_string_record(b->words + b->used, 1, "kernel:task", 11);
  b->used += words;
  note_last(n, kernel, b, 0);

  /* given at 200; a rename at 300 does not replace it (rank 6 over 4) */
  put_explicit(n, app, b, false, 100, 0, "my-service (3)", MS(200));
  put_explicit(n, app, b, true, 100, 100, "main loop", MS(200));
  trace_arg_t rename[] = {named_int("pid", 100), named_string("newcomm", "renamed")};
  put_task(n, kernel, b, MS(300), "task_rename", rename, 2);
  ASSERT_STREQ(names__get(n, false, 100), "my-service (3)");
  ASSERT_STREQ(names__get(n, true, 100), "main loop");
  /* the latest given wins, whatever the file order */
  put_explicit(n, app, b, true, 100, 100, "main loop v2", MS(250));
  put_explicit(n, app, b, true, 100, 100, "main loop (old)", MS(220));
  ASSERT_STREQ(names__get(n, true, 100), "main loop v2");
  /* an exec at 400: the new program's names, for the process and its main thread */
  trace_arg_t exec[] = {named_string("filename", "/bin/next"), named_int("pid", 100)};
  put_task(n, kernel, b, MS(400), "sched_process_exec", exec, 2);
  ASSERT_STREQ(names__get(n, false, 100), "next");
  ASSERT_STREQ(names__get(n, true, 100), "next");
  /* the old program's names read after it (a circular buffer's order):
   * no stronger than its own records */
  put_explicit(n, app, b, false, 100, 0, "my-service (old)", MS(260));
  ASSERT_STREQ(names__get(n, false, 100), "next");
  /* the new program names itself after its exec */
  put_explicit(n, app, b, false, 100, 0, "next service", MS(500));
  ASSERT_STREQ(names__get(n, false, 100), "next service");
  names__refresh_from_proc(n, MS(600));
  ASSERT_STREQ(names__get(n, false, 100), "next service");

  /* a thread named at 200; its tid given to a new task at 700 (fork) */
  put_explicit(n, app, b, true, 105, 100, "worker A", MS(200));
  ASSERT_STREQ(names__get(n, true, 105), "worker A");
  trace_arg_t fork[] = {named_string("parent_comm", "other"), named_int("parent_pid", 900),
                        named_string("child_comm", "other-child"), named_int("child_pid", 105)};
  put_task(n, kernel, b, MS(700), "sched_process_fork", fork, 4);
  ASSERT_STREQ(names__get(n, true, 105), "other-child");
  /* so is a process whose pid a fork gave out before its old name is read */
  trace_arg_t fork2[] = {named_string("parent_comm", "other"), named_int("parent_pid", 900),
                         named_string("child_comm", "reuser"), named_int("child_pid", 110)};
  put_task(n, kernel, b, MS(700), "sched_process_fork", fork2, 4);
  names__set(n, false, 110, 0, "reuser", 6, NAMES_RANK_TASK_EVENT, MS(700));
  put_explicit(n, app, b, false, 110, 0, "old process", MS(650));
  ASSERT_STREQ(names__get(n, false, 110), "reuser");

  /* a thread whose process a task event gave (rank 4): a record of the
   * program naming that tid under its own pid does not move it */
  trace_arg_t fork3[] = {named_string("parent_comm", "p"), named_int("parent_pid", 900),
                         named_string("child_comm", "t"), named_int("child_pid", 120)};
  put_task(n, kernel, b, MS(800), "sched_process_fork", fork3, 4);
  names__set(n, true, 120, 900, "t", 1, NAMES_RANK_TASK_EVENT, MS(800));
  put_explicit(n, app, b, true, 120, 100, "not mine", MS(900));
  names_entry_t* e = names__lookup(n, true, 120);
  ASSERT_TRUE(e);
  ASSERT_EQ(e->process_koid, 900u);

  /* a thread naming itself right after its birth, by a clock 5 ms behind
   * the kernel's: its name stays */
  trace_arg_t fork4[] = {named_string("parent_comm", "p"), named_int("parent_pid", 100),
                         named_string("child_comm", "w"), named_int("child_pid", 130)};
  put_task(n, kernel, b, MS(1000), "sched_process_fork", fork4, 4);
  put_explicit(n, app, b, true, 130, 100, "skewed", MS(995));
  ASSERT_STREQ(names__get(n, true, 130), "skewed");

  names__source_free(kernel);
  names__source_free(app);
  free(b);
  names__free(n);
}

/* A provider's process that registers again (an exec into another traced
 * program, a reused pid, a provider made anew) or whose /proc program is no
 * longer the one read (an exec into an untraced one): the names it gave
 * itself before give way, until said again. */
static void test_explicit_program_change(void) {
  uint64_t self = (uint64_t)getpid();
  char old_name[17] = {0};
  prctl(PR_GET_NAME, old_name);
  names_t* n = names__create();
  ASSERT_TRUE(n);
  names__note_program(n, self, 100);
  names__set(n, false, self, 0, "named", 5, NAMES_RANK_EXPLICIT, 150);
  names__set(n, true, self, self, "main named", 10, NAMES_RANK_EXPLICIT, 150);
  prctl(PR_SET_NAME, "main-now");
  names__refresh_from_proc(n, 200);
  ASSERT_STREQ(names__get(n, false, self), "named");
  ASSERT_STREQ(names__get(n, true, self), "main named");
  /* /proc's program differs from the one read at registration */
  names_entry_t* e = names__lookup(n, false, self);
  ASSERT_TRUE(e && e->program_hash != 0);
  uint64_t hash = e->program_hash;
  e->program_hash = hash + 1;
  names__refresh_from_proc(n, 300);
  ASSERT_STREQ(names__get(n, false, self), "test_names_table");
  ASSERT_STREQ(names__get(n, true, self), "main-now");
  /* what the old program said, read afterwards, is no stronger than a record */
  names__set(n, false, self, 0, "named (old)", 11, NAMES_RANK_EXPLICIT, 250);
  names__refresh_from_proc(n, 350);
  ASSERT_STREQ(names__get(n, false, self), "test_names_table");
  names__free(n);

  /* a second provider of the pid at 400 (an exec, a reused pid, or the
   * same program's provider made anew): the first one's names give way,
   * until the program says them again (its stop's copies carry the
   * stop's time) */
  n = names__create();
  ASSERT_TRUE(n);
  names__note_program(n, self, 100);
  names__set(n, false, self, 0, "first", 5, NAMES_RANK_EXPLICIT, 150);
  names__note_program(n, self, 100);
  ASSERT_STREQ(names__get(n, false, self), "first"); /* not later than the name */
  names__note_program(n, self, 400);
  ASSERT_STREQ(names__get(n, false, self), "test_names_table");
  names__set(n, false, self, 0, "first", 5, NAMES_RANK_EXPLICIT, 420);
  ASSERT_STREQ(names__get(n, false, self), "first");
  names__set(n, false, self, 0, "second", 6, NAMES_RANK_EXPLICIT, 450);
  names__refresh_from_proc(n, 500);
  ASSERT_STREQ(names__get(n, false, self), "second");
  names__free(n);
  prctl(PR_SET_NAME, old_name);
}

int main(void) {
  test_ranks();
  test_limit();
  test_foreign();
  test_bound();
  test_records();
  test_note_run();
  test_run_may_teach();
  test_stop_names();
  test_thread_not_process();
  test_reused_pid();
  test_same_process();
  test_explicit_times();
  test_explicit_program_change();
  printf("ok\n");
  return 0;
}
