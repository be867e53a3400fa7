/* Every macro of <trace/event.h>, through the engine (tests/engine/harness.h)
 * and back through the reader: each produces exactly the records FXT.md
 * prescribes (record and event type, category, name, arguments with types
 * and values, the instant scope word, counter / async / flow ids,
 * duration-complete start and end, blobs, kernel objects with "process",
 * vthreads with their koid and thread-info record, the instaflow triple on
 * one timestamp), the inferred and TA_* forms give identical records, and
 * nothing is evaluated or written for a disabled category or while tracing
 * is off. */
#include <pthread.h>
#include <stdint.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "engine/harness.h"
#include "record_copy.h"
#include "test.h"
#include "trace/event.h"

/* ---- the instrumented code ---- */

static int g_evaluations;
static int evaluated(int v) {
  g_evaluations++;
  return v;
}

static uint64_t g_pid, g_tid;
static uint64_t g_async_id, g_flow_id;
static trace_ticks_t g_vthread_ts;
static const unsigned char g_blob[10] = {0, 1, 2, 3, 4, 5, 6, 7, 8, 9};
static int g_struct_target;

/* One TRACE_INSTANT site written many times, by two threads: after its
 * first record a thread writes it from its cache of the site's record
 * (event_helpers.c); every record must still carry its own values, its
 * thread and the scope. Five arguments are more than the cache holds. */
static void emit_cached(int k) {
  TRACE_INSTANT("cat", "cached", TRACE_SCOPE_PROCESS, "k", TA_INT64(k), "b", TA_BOOL(k & 1), "u32",
                TA_UINT32(1000u * (unsigned)k), "d", TA_DOUBLE(k + 0.5));
  TRACE_INSTANT("cat", "cached5", TRACE_SCOPE_GLOBAL, "a", k, "b", k, "c", k, "d", k, "e", k);
  TRACE_INSTANT("cat", "cached_str", TRACE_SCOPE_THREAD, "s", TA_STRING(k & 1 ? "odd" : "even"));
}

static uint64_t g_other_tid;
static void* emit_cached_thread(void* arg) {
  (void)arg;
  g_other_tid = (uint64_t)syscall(SYS_gettid);
  emit_cached(3);
  emit_cached(4);
  return NULL;
}

/* OVERVIEW.md's C example, unchanged. */
static void DoSomething(int a, const char* b) {
  TRACE_DURATION("example", "DoSomething", "a", TA_INT32(a), "b", TA_STRING(b));
}

static void emit_all(void) {
  ASSERT_TRUE(TRACE_ENABLED());
  ASSERT_TRUE(TRACE_CATEGORY_ENABLED("cat"));
  ASSERT_TRUE(!TRACE_CATEGORY_ENABLED("off"));

  /* every TA_* form */
  char buf[16] = "chars";
  TRACE_INSTANT("cat", "ta_all", TRACE_SCOPE_PROCESS, "null", TA_NULL(), "bool", TA_BOOL(true),
                "i32", TA_INT32(-5), "u32", TA_UINT32(4000000000u), "i64",
                TA_INT64(-((int64_t)1 << 40)), "u64", TA_UINT64(UINT64_MAX), "dbl", TA_DOUBLE(2.5),
                "chars", TA_CHAR_ARRAY(buf, 3), "str", TA_STRING(buf), "lit",
                TA_STRING_LITERAL("interned-literal"), "ptr", TA_POINTER(&g_struct_target), "koid",
                TA_KOID(12345));
  TRACE_INSTANT("cat", "instant0", TRACE_SCOPE_GLOBAL);
  for (int k = 0; k < 3; k++) emit_cached(k);
  pthread_t t;
  ASSERT_EQ(pthread_create(&t, NULL, emit_cached_thread, NULL), 0);
  ASSERT_EQ(pthread_join(t, NULL), 0);
  emit_cached(5);
  TRACE_INSTANT("cat", "instant_thread", TRACE_SCOPE_THREAD, "x", 1);

  /* inferred and explicit forms of the same values */
  int32_t i32 = -7;
  uint32_t u32 = 7;
  int64_t i64 = INT64_MIN;
  uint64_t u64 = UINT64_MAX;
  bool b = true;
  double d = 0.125;
  const char* s = "a string";
  void* p = &g_struct_target;
  TRACE_INSTANT("cat", "inferred", TRACE_SCOPE_THREAD, "i32", i32, "u32", u32, "i64", i64, "u64",
                u64, "b", b, "d", d, "s", s, "p", p, "lit", "literal-value", "null_str",
                (const char*)NULL, "ta", TA_KOID(5));
  TRACE_INSTANT("cat", "explicit", TRACE_SCOPE_THREAD, "i32", TA_INT32(i32), "u32", TA_UINT32(u32),
                "i64", TA_INT64(i64), "u64", TA_UINT64(u64), "b", TA_BOOL(b), "d", TA_DOUBLE(d),
                "s", TA_STRING(s), "p", TA_POINTER(p), "lit", TA_STRING_LITERAL("literal-value"),
                "null_str", TA_STRING(NULL), "ta", TA_KOID(5));
  TRACE_INSTANT("cat", "inline_only", TRACE_SCOPE_THREAD, "v", TA_STRING("copied-not-interned"));

  /* 15 pairs, the maximum */
  TRACE_INSTANT("cat", "max_args", TRACE_SCOPE_THREAD, "a1", 1, "a2", 2, "a3", 3, "a4", 4, "a5", 5,
                "a6", 6, "a7", 7, "a8", 8, "a9", 9, "a10", 10, "a11", 11, "a12", 12, "a13", 13,
                "a14", 14, "a15", 15);

  TRACE_COUNTER("cat", "counter", 42, "a", 1, "b", TA_DOUBLE(2.5));

  {
    TRACE_DURATION("cat", "outer_scope", "x", 7);
    TRACE_DURATION("cat", "inner_scope");
    TRACE_INSTANT("cat", "inside_scope", TRACE_SCOPE_THREAD);
  }
  DoSomething(3, "bee");

  TRACE_DURATION_BEGIN("cat", "begin_end", "x", TA_INT32(1));
  TRACE_DURATION_END("cat", "begin_end", "y", TA_INT32(2));

  g_async_id = TRACE_NONCE();
  ASSERT_TRUE(g_async_id != 0);
  TRACE_ASYNC_BEGIN("cat", "async", g_async_id, "k", 1);
  TRACE_ASYNC_INSTANT("cat", "async", g_async_id, "k", 2);
  TRACE_ASYNC_END("cat", "async", g_async_id, "k", 3);

  g_flow_id = TRACE_NONCE();
  ASSERT_TRUE(g_flow_id != g_async_id);
  TRACE_DURATION_BEGIN("cat", "flow_host");
  TRACE_FLOW_BEGIN("cat", "flow", g_flow_id, "k", 1);
  TRACE_FLOW_STEP("cat", "flow", g_flow_id, "k", 2);
  TRACE_FLOW_END("cat", "flow", g_flow_id, "k", 3);
  TRACE_DURATION_END("cat", "flow_host");

  TRACE_INSTAFLOW_BEGIN("cat", "iflow_begin", 77, "a", 1);
  TRACE_INSTAFLOW_STEP("cat", "iflow_step", 77);
  TRACE_INSTAFLOW_END("cat", "iflow_end", 77, "a", 3);

  TRACE_BLOB_EVENT("cat", "blob_event", g_blob, sizeof(g_blob), "k", 9);
  TRACE_BLOB_ATTACHMENT("cat", "blob_attachment", g_blob, 5);
  TRACE_BLOB(TRACE_BLOB_TYPE_DATA, "small_blob", g_blob, 7);

  TRACE_KERNEL_OBJECT(g_pid, 0, "kobj_process");
  TRACE_KERNEL_OBJECT(g_pid, 4242, "kobj_thread", "extra", 5);
  /* a thread's record with 14 arguments of its own: with "process" the
   * record is full, so the marker gives way (the program's come first) */
  TRACE_KERNEL_OBJECT(g_pid, 4243, "kobj_full", "a1", 1, "a2", 2, "a3", 3, "a4", 4, "a5", 5, "a6",
                      6, "a7", 7, "a8", 8, "a9", 9, "a10", 10, "a11", 11, "a12", 12, "a13", 13,
                      "a14", 14);

  g_vthread_ts = trace_context_ticks_now();
  TRACE_VTHREAD_DURATION_BEGIN("cat", "vdur", "gpu-queue", 3, g_vthread_ts, "a", 1);
  TRACE_VTHREAD_DURATION_END("cat", "vdur", "gpu-queue", 3, g_vthread_ts + 100, "a", 2);
  TRACE_VTHREAD_FLOW_BEGIN("cat", "vflow", "gpu-queue", 3, 88, g_vthread_ts + 10, "a", 1);
  TRACE_VTHREAD_FLOW_STEP("cat", "vflow", "gpu-queue", 3, 88, g_vthread_ts + 20);
  TRACE_VTHREAD_FLOW_END("cat", "vflow", "gpu-queue", 3, 88, g_vthread_ts + 30, "a", 3);

  /* a hand-written event with its own timestamp (TRACE_DECLARE_ARGS) */
  trace_string_ref_t category_ref;
  trace_context_t* context = trace_acquire_context_for_category("cat", &category_ref);
  ASSERT_TRUE(context != NULL);
  {
    TRACE_DECLARE_ARGS(context, custom_args, "n", 5, "s", "custom-literal", "t", TA_STRING(buf));
    ASSERT_EQ(TRACE_NUM_ARGS(custom_args), 3u);
    TRACE_COMPLETE_ARGS(context, custom_args, TRACE_NUM_ARGS(custom_args));
    TRACE_DECLARE_ARGS(context, no_args);
    ASSERT_EQ(TRACE_NUM_ARGS(no_args), 0u);
    trace_thread_ref_t thread_ref;
    trace_context_register_current_thread(context, &thread_ref);
    trace_string_ref_t name_ref;
    trace_context_register_string_literal(context, "custom", &name_ref);
    trace_context_write_instant_event_record(context, 1234, &thread_ref, &category_ref, &name_ref,
                                             TRACE_SCOPE_THREAD, custom_args,
                                             TRACE_NUM_ARGS(custom_args));
    trace_context_write_instant_event_record(context, 1235, &thread_ref, &category_ref, &name_ref,
                                             TRACE_SCOPE_THREAD, no_args, TRACE_NUM_ARGS(no_args));
  }
  trace_release_context(context);

  /* a disabled category: nothing evaluated, nothing written */
  g_evaluations = 0;
  TRACE_INSTANT("off", "off_instant", TRACE_SCOPE_THREAD, "v", evaluated(1));
  TRACE_COUNTER("off", "off_counter", evaluated(1), "v", evaluated(1));
  { TRACE_DURATION("off", "off_scope", "v", evaluated(1)); }
  TRACE_ASYNC_BEGIN("off", "off_async", evaluated(1), "v", evaluated(1));
  TRACE_VTHREAD_DURATION_BEGIN("off", "off_vthread", "v", evaluated(1), evaluated(1));
  ASSERT_EQ(g_evaluations, 0);
  /* an enabled one: each argument exactly once */
  TRACE_INSTANT("cat", "evaluated_once", TRACE_SCOPE_THREAD, "v", evaluated(1), "w",
                TA_INT32(evaluated(2)));
  ASSERT_EQ(g_evaluations, 2);
}

/* Tracing is off when the scope begins: nothing, although it ends with
 * tracing on. */
static void run(harness_t* h) {
  g_evaluations = 0;
  TRACE_DURATION("cat", "began_while_off", "v", evaluated(1));
  TRACE_INSTANT("cat", "while_off", TRACE_SCOPE_THREAD, "v", evaluated(1));
  ASSERT_TRUE(!TRACE_ENABLED());
  ASSERT_TRUE(!TRACE_CATEGORY_ENABLED("cat"));
  ASSERT_EQ(g_evaluations, 0);
  ASSERT_EQ(harness_start(h, TRACE_BUFFERING_MODE_ONESHOT, 1 << 20, "cat,example"), 0);
  emit_all();
}

/* ---- the checks ---- */

static void check_ta_all(void) {
  const rec_copy_t* c = &g_records[find_one(4, 0, "ta_all")];
  ASSERT_STREQ(c->category, "cat");
  ASSERT_TRUE(c->has_scope);
  ASSERT_EQ(c->scope, TRACE_SCOPE_PROCESS);
  ASSERT_EQ(c->pid, g_pid);
  ASSERT_EQ(c->tid, g_tid);
  ASSERT_EQ(c->num_args, 12u);
  arg_at(c, 0, "null", TRACE_ARG_NULL);
  ASSERT_EQ(arg_at(c, 1, "bool", TRACE_ARG_BOOL)->bits, 1u);
  ASSERT_EQ(arg_at(c, 2, "i32", TRACE_ARG_INT32)->bits, (uint64_t)-5);
  ASSERT_EQ(arg_at(c, 3, "u32", TRACE_ARG_UINT32)->bits, 4000000000u);
  ASSERT_EQ(arg_at(c, 4, "i64", TRACE_ARG_INT64)->bits, (uint64_t) - ((int64_t)1 << 40));
  ASSERT_EQ(arg_at(c, 5, "u64", TRACE_ARG_UINT64)->bits, UINT64_MAX);
  ASSERT_TRUE(arg_at(c, 6, "dbl", TRACE_ARG_DOUBLE)->d == 2.5);
  ASSERT_STREQ(arg_at(c, 7, "chars", TRACE_ARG_STRING)->str, "cha");
  ASSERT_STREQ(arg_at(c, 8, "str", TRACE_ARG_STRING)->str, "chars");
  ASSERT_STREQ(arg_at(c, 9, "lit", TRACE_ARG_STRING)->str, "interned-literal");
  ASSERT_EQ(arg_at(c, 10, "ptr", TRACE_ARG_POINTER)->bits, (uintptr_t)&g_struct_target);
  ASSERT_EQ(arg_at(c, 11, "koid", TRACE_ARG_KOID)->bits, 12345u);
  /* TA_STRING_LITERAL is interned (a string record), TA_STRING is not */
  ASSERT_TRUE(have_string_record("interned-literal"));
  ASSERT_TRUE(!have_string_record("copied-not-interned"));
  ASSERT_STREQ(g_records[find_one(4, 0, "inline_only")].args[0].str, "copied-not-interned");
}

/* Records of one site come in buffer order: a thread's chunks, then the
 * other's; each record is matched by its value of k. */
static void check_cached_site(void) {
  unsigned seen = 0, seen5 = 0, seen_str = 0;
  for (size_t i = 0; i < g_count; i++) {
    const rec_copy_t* c = &g_records[i];
    if (c->type != 4) continue;
    if (strcmp(c->name, "cached") == 0) {
      ASSERT_STREQ(c->category, "cat");
      ASSERT_EQ(c->scope, TRACE_SCOPE_PROCESS);
      ASSERT_EQ(c->num_args, 4u);
      uint64_t k = arg_at(c, 0, "k", TRACE_ARG_INT64)->bits;
      ASSERT_TRUE(k < 6 && !(seen & (1u << k)));
      seen |= 1u << k;
      ASSERT_EQ(c->tid, k == 3 || k == 4 ? g_other_tid : g_tid);
      ASSERT_EQ(arg_at(c, 1, "b", TRACE_ARG_BOOL)->bits, k & 1);
      ASSERT_EQ(arg_at(c, 2, "u32", TRACE_ARG_UINT32)->bits, 1000u * k);
      ASSERT_TRUE(arg_at(c, 3, "d", TRACE_ARG_DOUBLE)->d == (double)k + 0.5);
    } else if (strcmp(c->name, "cached5") == 0) {
      ASSERT_EQ(c->scope, TRACE_SCOPE_GLOBAL);
      ASSERT_EQ(c->num_args, 5u);
      uint64_t k = arg_at(c, 4, "e", TRACE_ARG_INT32)->bits;
      ASSERT_TRUE(k < 6 && !(seen5 & (1u << k)));
      seen5 |= 1u << k;
      ASSERT_EQ(c->tid, k == 3 || k == 4 ? g_other_tid : g_tid);
    } else if (strcmp(c->name, "cached_str") == 0) {
      const char* s = arg_at(c, 0, "s", TRACE_ARG_STRING)->str;
      seen_str += strcmp(s, "odd") == 0 ? 0x10u : strcmp(s, "even") == 0 ? 1u : 0x100u;
    }
  }
  ASSERT_EQ(seen, 0x3fu);
  ASSERT_EQ(seen5, 0x3fu);
  ASSERT_EQ(seen_str, 0x33u); /* k = 0..5: three even, three odd */
}

static void check_instants_and_inference(void) {
  const rec_copy_t* c = &g_records[find_one(4, 0, "instant0")];
  ASSERT_TRUE(c->has_scope);
  ASSERT_EQ(c->scope, TRACE_SCOPE_GLOBAL);
  ASSERT_EQ(c->num_args, 0u);
  c = &g_records[find_one(4, 0, "instant_thread")];
  ASSERT_EQ(c->scope, TRACE_SCOPE_THREAD);
  ASSERT_EQ(arg_at(c, 0, "x", TRACE_ARG_INT32)->bits, 1u);

  const rec_copy_t* inferred = &g_records[find_one(4, 0, "inferred")];
  const rec_copy_t* explicit_ = &g_records[find_one(4, 0, "explicit")];
  ASSERT_EQ(inferred->num_args, 11u);
  assert_same_args(inferred, explicit_);
  ASSERT_EQ(arg_at(inferred, 2, "i64", TRACE_ARG_INT64)->bits, (uint64_t)INT64_MIN);
  ASSERT_STREQ(arg_at(inferred, 6, "s", TRACE_ARG_STRING)->str, "a string");
  ASSERT_STREQ(arg_at(inferred, 8, "lit", TRACE_ARG_STRING)->str, "literal-value");
  ASSERT_EQ(arg_at(inferred, 9, "null_str", TRACE_ARG_STRING)->str_length, 0u);
  ASSERT_TRUE(have_string_record("literal-value")); /* the literal was interned */
  ASSERT_TRUE(!have_string_record("a string"));     /* the pointer was copied */

  c = &g_records[find_one(4, 0, "max_args")];
  ASSERT_EQ(c->num_args, 15u);
  for (size_t i = 0; i < 15; i++) {
    char name[8];
    snprintf(name, sizeof(name), "a%zu", i + 1);
    ASSERT_EQ(arg_at(c, i, name, TRACE_ARG_INT32)->bits, i + 1);
  }
  c = &g_records[find_one(4, 0, "evaluated_once")];
  ASSERT_EQ(c->num_args, 2u);

  /* TRACE_DECLARE_ARGS / TRACE_COMPLETE_ARGS with trace_context_write_* */
  size_t first = g_count, n = 0;
  for (size_t i = 0; i < g_count; i++)
    if (g_records[i].type == 4 && strcmp(g_records[i].name, "custom") == 0) {
      if (n++ == 0) first = i;
    }
  ASSERT_EQ(n, 2u);
  c = &g_records[first];
  ASSERT_EQ(c->ticks, 1234u);
  ASSERT_EQ(arg_at(c, 0, "n", TRACE_ARG_INT32)->bits, 5u);
  ASSERT_STREQ(arg_at(c, 1, "s", TRACE_ARG_STRING)->str, "custom-literal");
  ASSERT_STREQ(arg_at(c, 2, "t", TRACE_ARG_STRING)->str, "chars");
  ASSERT_TRUE(have_string_record("custom-literal"));
  ASSERT_EQ(g_records[first + 1].ticks, 1235u);
  ASSERT_EQ(g_records[first + 1].num_args, 0u);
}

static void check_counter_and_durations(void) {
  const rec_copy_t* c = &g_records[find_one(4, 1, "counter")];
  ASSERT_EQ(c->payload, 42u);
  ASSERT_EQ(arg_at(c, 0, "a", TRACE_ARG_INT32)->bits, 1u);
  ASSERT_TRUE(arg_at(c, 1, "b", TRACE_ARG_DOUBLE)->d == 2.5);

  /* scoped durations: one complete event each, inner ends before outer */
  size_t oi = find_one(4, 4, "outer_scope"), ii = find_one(4, 4, "inner_scope");
  const rec_copy_t* outer = &g_records[oi];
  const rec_copy_t* inner = &g_records[ii];
  const rec_copy_t* inside = &g_records[find_one(4, 0, "inside_scope")];
  ASSERT_EQ(count_named("outer_scope"), 1u);
  ASSERT_TRUE(ii < oi); /* the inner scope is destroyed, so written, first */
  ASSERT_TRUE(outer->ticks <= inner->ticks);
  ASSERT_TRUE(inner->ticks <= inside->ticks);
  ASSERT_TRUE(inside->ticks <= inner->payload);
  ASSERT_TRUE(inner->payload <= outer->payload);
  ASSERT_EQ(arg_at(outer, 0, "x", TRACE_ARG_INT32)->bits, 7u);
  ASSERT_EQ(inner->num_args, 0u);
  ASSERT_EQ(outer->tid, g_tid);

  c = &g_records[find_one(4, 4, "DoSomething")];
  ASSERT_STREQ(c->category, "example");
  ASSERT_EQ(arg_at(c, 0, "a", TRACE_ARG_INT32)->bits, 3u);
  ASSERT_STREQ(arg_at(c, 1, "b", TRACE_ARG_STRING)->str, "bee");
  ASSERT_TRUE(c->ticks <= c->payload);

  size_t bi = find_one(4, 2, "begin_end"), ei = find_one(4, 3, "begin_end");
  ASSERT_TRUE(bi < ei);
  ASSERT_EQ(arg_at(&g_records[bi], 0, "x", TRACE_ARG_INT32)->bits, 1u);
  ASSERT_EQ(arg_at(&g_records[ei], 0, "y", TRACE_ARG_INT32)->bits, 2u);
  ASSERT_TRUE(g_records[bi].ticks <= g_records[ei].ticks);

  /* never written: began while off, disabled categories */
  ASSERT_EQ(count_named("began_while_off"), 0u);
  ASSERT_EQ(count_named("while_off"), 0u);
  ASSERT_EQ(count_named("off_instant") + count_named("off_counter") + count_named("off_scope") +
                count_named("off_async") + count_named("off_vthread"),
            0u);
}

static void check_async_and_flows(void) {
  static const char* const names[] = {"async", "flow"};
  for (int k = 0; k < 2; k++) {
    uint64_t id = k == 0 ? g_async_id : g_flow_id;
    int first = k == 0 ? 5 : 8;
    size_t prev = 0;
    for (int t = 0; t < 3; t++) {
      size_t i = find_one(4, first + t, names[k]);
      const rec_copy_t* c = &g_records[i];
      ASSERT_EQ(c->payload, id);
      ASSERT_EQ(arg_at(c, 0, "k", TRACE_ARG_INT32)->bits, (uint64_t)t + 1);
      if (t > 0) ASSERT_TRUE(i > prev);
      prev = i;
    }
  }
  /* instaflows: begin (args), flow (no args), end (no args), one timestamp */
  static const char* const inames[] = {"iflow_begin", "iflow_step", "iflow_end"};
  for (int t = 0; t < 3; t++) {
    size_t b = find_one(4, 2, inames[t]);
    size_t f = find_one(4, 8 + t, inames[t]);
    size_t e = find_one(4, 3, inames[t]);
    ASSERT_EQ(f, b + 1);
    ASSERT_EQ(e, b + 2);
    ASSERT_EQ(g_records[f].payload, 77u);
    ASSERT_EQ(g_records[b].ticks, g_records[f].ticks);
    ASSERT_EQ(g_records[b].ticks, g_records[e].ticks);
    ASSERT_EQ(g_records[f].num_args, 0u);
    ASSERT_EQ(g_records[e].num_args, 0u);
    if (t == 1) {
      ASSERT_EQ(g_records[b].num_args, 0u);
    } else {
      ASSERT_EQ(arg_at(&g_records[b], 0, "a", TRACE_ARG_INT32)->bits, (uint64_t)t + 1);
    }
  }
}

/* The two kernel-object records named `name`: at[0] the macro's when it
 * has more arguments than the stop's, at[1] the other (records with as
 * many arguments stay in archive order). */
static void kobj_pair(const char* name, size_t at[2]) {
  size_t found = 0;
  for (size_t i = 0; i < g_count; i++) {
    if (g_records[i].type != 7 || strcmp(g_records[i].name, name) != 0) continue;
    if (found < 2) at[found] = i;
    found++;
  }
  if (found != 2) TEST_FAIL("%zu kernel-object records named \"%s\", expected 2", found, name);
  if (g_records[at[1]].num_args > g_records[at[0]].num_args) {
    size_t t = at[0];
    at[0] = at[1];
    at[1] = t;
  }
}

static void check_blobs_and_objects(void) {
  const rec_copy_t* c = &g_records[find_one(15, -1, "blob_event")];
  ASSERT_EQ(c->blob_format, 0u);
  ASSERT_STREQ(c->category, "cat");
  ASSERT_EQ(c->size, sizeof(g_blob));
  ASSERT_BYTES_EQ(c->data, g_blob, sizeof(g_blob));
  ASSERT_EQ(c->tid, g_tid);
  ASSERT_TRUE(c->ticks != 0);
  ASSERT_EQ(arg_at(c, 0, "k", TRACE_ARG_INT32)->bits, 9u);
  c = &g_records[find_one(15, -1, "blob_attachment")];
  ASSERT_EQ(c->blob_format, 1u);
  ASSERT_STREQ(c->category, "cat");
  ASSERT_EQ(c->size, 5u);
  ASSERT_BYTES_EQ(c->data, g_blob, 5);
  ASSERT_EQ(c->num_args, 0u);
  c = &g_records[find_one(5, -1, "small_blob")];
  ASSERT_EQ(c->blob_type, TRACE_BLOB_TYPE_DATA);
  ASSERT_EQ(c->size, 7u);
  ASSERT_BYTES_EQ(c->data, g_blob, 7);

  /* The program's own process and threads: each record marked as its
   * explicit name, with the time it was given (explicit_name.h), and the
   * stop writes each such name again (stop_names.h) with its own time: two
   * records each, the stop's with only "process" (threads) and the
   * marker. */
  size_t at[2];
  kobj_pair("kobj_process", at);
  /* alike but for their times (in oneshot mode the stop's comes first,
   * in chunk 0): the macro's, and the stop's, later */
  uint64_t times[2];
  for (int i = 0; i < 2; i++) {
    c = &g_records[at[i]];
    ASSERT_EQ(c->object_type, 1u);
    ASSERT_EQ(c->koid, g_pid);
    ASSERT_EQ(c->num_args, 1u);
    times[i] = arg_at(c, 0, "explicit_name", TRACE_ARG_UINT64)->bits;
  }
  uint64_t named_at = times[0] < times[1] ? times[0] : times[1];
  uint64_t said_again = times[0] < times[1] ? times[1] : times[0];
  ASSERT_TRUE(named_at != 0 && said_again > named_at && said_again <= trace_clock__now_ns());

  kobj_pair("kobj_thread", at);
  c = &g_records[at[0]];
  ASSERT_EQ(c->object_type, 2u);
  ASSERT_EQ(c->koid, 4242u);
  ASSERT_EQ(c->num_args, 3u);
  ASSERT_EQ(arg_at(c, 0, "process", TRACE_ARG_KOID)->bits, g_pid);
  /* named after the process, in the same thread */
  uint64_t thread_named_at = arg_at(c, 1, "explicit_name", TRACE_ARG_UINT64)->bits;
  ASSERT_TRUE(thread_named_at >= named_at);
  ASSERT_EQ(arg_at(c, 2, "extra", TRACE_ARG_INT32)->bits, 5u);
  c = &g_records[at[1]];
  ASSERT_EQ(c->koid, 4242u);
  ASSERT_EQ(c->num_args, 2u);
  ASSERT_EQ(arg_at(c, 0, "process", TRACE_ARG_KOID)->bits, g_pid);
  ASSERT_EQ(arg_at(c, 1, "explicit_name", TRACE_ARG_UINT64)->bits, said_again); /* the stop's */

  /* no room for the marker in its own record; the stop's says it */
  kobj_pair("kobj_full", at);
  c = &g_records[at[0]];
  ASSERT_EQ(c->num_args, 15u);
  ASSERT_EQ(arg_at(c, 0, "process", TRACE_ARG_KOID)->bits, g_pid);
  ASSERT_EQ(arg_at(c, 1, "a1", TRACE_ARG_INT32)->bits, 1u);
  ASSERT_EQ(arg_at(c, 14, "a14", TRACE_ARG_INT32)->bits, 14u);
  c = &g_records[at[1]];
  ASSERT_EQ(c->koid, 4243u);
  ASSERT_EQ(c->num_args, 2u);
  ASSERT_EQ(arg_at(c, 1, "explicit_name", TRACE_ARG_UINT64)->bits, said_again); /* the stop's */

  /* the calling thread has its thread-info record with "process" */
  bool found = false;
  for (size_t i = 0; i < g_count; i++) {
    c = &g_records[i];
    if (c->type == 7 && c->object_type == 2 && c->koid == g_tid) {
      ASSERT_EQ(arg_at(c, 0, "process", TRACE_ARG_KOID)->bits, g_pid);
      found = true;
    }
  }
  ASSERT_TRUE(found);
}

static void check_vthreads(void) {
  const uint64_t koid = 3u | (UINT64_C(1) << 63);
  size_t b = find_one(4, 2, "vdur"), e = find_one(4, 3, "vdur");
  ASSERT_EQ(g_records[b].ticks, g_vthread_ts);
  ASSERT_EQ(g_records[e].ticks, g_vthread_ts + 100);
  ASSERT_EQ(arg_at(&g_records[e], 0, "a", TRACE_ARG_INT32)->bits, 2u);
  for (int t = 0; t < 3; t++) {
    const rec_copy_t* c = &g_records[find_one(4, 8 + t, "vflow")];
    ASSERT_EQ(c->payload, 88u);
    ASSERT_EQ(c->ticks, g_vthread_ts + 10 * (uint64_t)(t + 1));
    ASSERT_EQ(c->tid, koid);
    ASSERT_EQ(c->pid, g_pid);
    ASSERT_EQ(c->num_args, t == 1 ? 0u : 1u);
  }
  ASSERT_EQ(g_records[b].tid, koid);
  ASSERT_EQ(g_records[b].pid, g_pid);
  ASSERT_EQ(g_records[e].tid, koid);
  /* its thread-info record (named) and its thread record */
  const rec_copy_t* info = &g_records[find_one(7, -1, "gpu-queue")];
  ASSERT_EQ(info->object_type, 2u);
  ASSERT_EQ(info->koid, koid);
  ASSERT_EQ(arg_at(info, 0, "process", TRACE_ARG_KOID)->bits, g_pid);
  size_t threads = 0;
  for (size_t i = 0; i < g_count; i++)
    threads += g_records[i].type == 3 && g_records[i].tid == koid && g_records[i].pid == g_pid;
  ASSERT_TRUE(threads >= 1);
}

int main(void) {
  (void)harness_release_saves; /* harness.h defines it static; unused here */
  g_pid = (uint64_t)getpid();
  g_tid = (uint64_t)syscall(SYS_gettid);
  harness_t h;
  run(&h);
  harness_stop(&h);
  /* stopped: nothing is enabled, nothing is evaluated */
  g_evaluations = 0;
  ASSERT_TRUE(!TRACE_ENABLED());
  TRACE_INSTANT("cat", "after_stop", TRACE_SCOPE_THREAD, "v", evaluated(1));
  ASSERT_EQ(g_evaluations, 0);

  size_t length;
  const uint8_t* fxt = harness_archive(&h, &length);
  read_archive(fxt, length);
  ASSERT_EQ(h.stats.records_dropped, 0u);
  check_ta_all();
  check_cached_site();
  check_instants_and_inference();
  check_counter_and_durations();
  check_async_and_flows();
  check_blobs_and_objects();
  check_vthreads();
  ASSERT_EQ(count_named("after_stop"), 0u);
  harness_free(&h);
  printf("ok: %zu records checked\n", g_count);
  return 0;
}
