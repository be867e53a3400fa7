/* The sample archive: every FXT record type and argument type, inline and
 * indexed strings and threads, two providers with their own tables and tick
 * rates, a provider-section switch back, and a buffer-overflow event. It is
 * what `trace gen-sample` writes, and the input of the robustness tests and
 * the conversion benchmark. */
#include "trace/sample.h"

#include <stdbool.h>

#include "fxt/fxt_encode.h"

enum { PID = 4100, TID = 4101, TID2 = 4102, PID2 = 5200, TID3 = 5201 };

/* Indexed strings of provider 1, registered once in its section. */
enum { S_CAT = 1, S_WORK, S_ARG_COUNT, S_ARG_NAME, S_VALUE, S_FRAME, S_NET, S_NUM_STRINGS };
static const char* const kStrings[S_NUM_STRINGS] = {
    [S_CAT] = "sample",
    [S_WORK] = "DoWork",
    [S_ARG_COUNT] = "count",
    [S_ARG_NAME] = "name",
    [S_VALUE] = "indexed string value",
    [S_FRAME] = "Frame",
    [S_NET] = "net",
};

static trace_string_ref_t idx(unsigned index) {
  return trace_make_indexed_string_ref((trace_string_index_t)index);
}
static trace_string_ref_t lit(const char* s) { return trace_make_inline_c_string_ref(s); }
static trace_arg_t arg(const char* name, trace_arg_value_t v) {
  return trace_make_arg(lit(name), v);
}

typedef struct builder {
  fxt_buffer_t* out;
  bool oom;
} builder_t;

static uint64_t* reserve(builder_t* b, size_t words) {
  uint64_t* p = b->oom ? NULL : fxt_buffer_reserve(b->out, words);
  if (!p) b->oom = true;
  return p;
}

static void event(builder_t* b, unsigned type, uint64_t ts, const trace_thread_ref_t* thread,
                  trace_string_ref_t cat, trace_string_ref_t name, const trace_arg_t* args,
                  size_t n, uint64_t payload) {
  size_t words = fxt_event_record_words(type, thread, &cat, &name, args, n);
  uint64_t* p = reserve(b, words);
  if (p) fxt_write_event_record(p, words, type, ts, thread, &cat, &name, args, n, payload);
}

static void kernel_object(builder_t* b, uint64_t koid, unsigned type, const char* name,
                          const trace_arg_t* args, size_t n) {
  trace_string_ref_t ref = lit(name);
  size_t words = fxt_kernel_object_record_words(&ref, args, n);
  uint64_t* p = reserve(b, words);
  if (p) fxt_write_kernel_object_record(p, words, koid, type, &ref, args, n);
}

static void provider_header(builder_t* b, uint32_t id, const char* name, uint64_t tps) {
  size_t len = strlen(name);
  uint64_t* p = reserve(b, fxt_provider_info_words(len));
  if (p) fxt_write_provider_info_record(p, id, name, len);
  if ((p = reserve(b, 2))) fxt_write_initialization_record(p, tps);
}

static void provider1_tables(builder_t* b) {
  for (unsigned i = 1; i < S_NUM_STRINGS; i++) {
    size_t len = strlen(kStrings[i]);
    uint64_t* p = reserve(b, fxt_string_record_words(len));
    if (p) fxt_write_string_record(p, (trace_string_index_t)i, kStrings[i], len);
  }
  uint64_t* p = reserve(b, 3);
  if (p) fxt_write_thread_record(p, 1, PID, TID);
  trace_arg_t process = arg("process", trace_make_koid_arg_value(PID));
  kernel_object(b, PID, FXT_KOBJ_PROCESS, "sample-app", NULL, 0);
  kernel_object(b, TID, FXT_KOBJ_THREAD, "main", &process, 1);
  kernel_object(b, TID2, FXT_KOBJ_THREAD, "worker \"1\"", &process, 1);
}

/* Every event type, every argument type; `t` is the section's base time. */
static void provider1_events(builder_t* b, uint64_t t) {
  static const unsigned char kBlob[5] = {0xde, 0xad, 0xbe, 0xef, 0x01};
  trace_thread_ref_t main_thread = trace_make_indexed_thread_ref(1);
  trace_thread_ref_t worker = trace_make_inline_thread_ref(PID, TID2);
  trace_string_ref_t cat = idx(S_CAT);
  trace_arg_t all[11] = {
      arg("null", trace_make_null_arg_value()),
      arg("i32", trace_make_int32_arg_value(-42)),
      arg("u32", trace_make_uint32_arg_value(4000000000u)),
      arg("i64", trace_make_int64_arg_value(-5000000000ll)),
      arg("u64", trace_make_uint64_arg_value(UINT64_C(18000000000000000000))),
      arg("dbl", trace_make_double_arg_value(3.25)),
      arg("str", trace_make_string_arg_value(lit("inline value"))),
      arg("ptr", trace_make_pointer_arg_value((uintptr_t)0x7ffd1234abcdu)),
      arg("koid", trace_make_koid_arg_value(TID2)),
      arg("flag", trace_make_bool_arg_value(true)),
      arg("bytes", trace_make_blob_arg_value(kBlob, sizeof(kBlob))),
  };
  trace_arg_t indexed[2] = {
      trace_make_arg(idx(S_ARG_COUNT), trace_make_uint32_arg_value(7)),
      trace_make_arg(idx(S_ARG_NAME), trace_make_string_arg_value(idx(S_VALUE))),
  };
  /* Counters carry numeric arguments only, as readers expect (READERS.md). */
  trace_arg_t samples[3] = {
      arg("bytes_in", trace_make_int64_arg_value(1024)),
      arg("ratio", trace_make_double_arg_value(0.5)),
      arg("packets", trace_make_uint32_arg_value(3)),
  };
  event(b, FXT_EVENT_DURATION_BEGIN, t + 1000, &main_thread, cat, idx(S_WORK), indexed, 2, 0);
  event(b, FXT_EVENT_INSTANT, t + 1500, &main_thread, cat, lit("thread instant"), all, 11,
        TRACE_SCOPE_THREAD);
  event(b, FXT_EVENT_INSTANT, t + 1600, &worker, lit("inline-cat"), lit("process instant"), NULL, 0,
        TRACE_SCOPE_PROCESS);
  event(b, FXT_EVENT_INSTANT, t + 1700, &main_thread, cat, lit("global instant"), NULL, 0,
        TRACE_SCOPE_GLOBAL);
  event(b, FXT_EVENT_COUNTER, t + 1800, &main_thread, cat, lit("bytes"), samples, 3, 0);
  event(b, FXT_EVENT_COUNTER, t + 1900, &main_thread, cat, lit("bytes"), samples, 2, 42);
  event(b, FXT_EVENT_DURATION_COMPLETE, t + 2000, &worker, cat, idx(S_FRAME), all + 1, 2, t + 2750);
  event(b, FXT_EVENT_ASYNC_BEGIN, t + 2100, &main_thread, idx(S_NET), lit("request"), all + 6, 1,
        0x1001);
  event(b, FXT_EVENT_ASYNC_INSTANT, t + 2200, &worker, idx(S_NET), lit("request"), NULL, 0, 0x1001);
  event(b, FXT_EVENT_ASYNC_END, t + 2300, &worker, idx(S_NET), lit("request"), all + 9, 1, 0x1001);
  event(b, FXT_EVENT_FLOW_BEGIN, t + 2400, &main_thread, cat, lit("handoff"), NULL, 0,
        (uint64_t)PID << 32 | 1);
  event(b, FXT_EVENT_FLOW_STEP, t + 2500, &worker, cat, lit("handoff"), NULL, 0,
        (uint64_t)PID << 32 | 1);
  event(b, FXT_EVENT_FLOW_END, t + 2600, &worker, cat, lit("handoff"), all + 7, 2,
        (uint64_t)PID << 32 | 1);
  event(b, FXT_EVENT_DURATION_END, t + 3000, &main_thread, cat, idx(S_WORK), all + 10, 1, 0);
}

/* The records that Chrome JSON cannot hold: blobs, objects, scheduling. */
static void provider1_other_records(builder_t* b, uint64_t t) {
  static const char kPayload[] = "raw blob payload";
  trace_string_ref_t name = lit("sample-blob"), cat = idx(S_CAT);
  trace_thread_ref_t main_thread = trace_make_indexed_thread_ref(1);
  trace_thread_ref_t worker = trace_make_inline_thread_ref(PID, TID2);
  trace_arg_t weight = arg("incoming_weight", trace_make_int32_arg_value(3));
  trace_arg_t note = arg("note", trace_make_string_arg_value(lit("object arg")));
  size_t w = fxt_blob_record_words(&name, sizeof(kPayload) - 1);
  uint64_t* p = reserve(b, w);
  if (p) fxt_write_blob_record(p, w, TRACE_BLOB_TYPE_DATA, &name, kPayload, sizeof(kPayload) - 1);
  w = fxt_userspace_object_record_words(&worker, &name, &note, 1);
  if ((p = reserve(b, w)))
    fxt_write_userspace_object_record(p, w, 0x5000u, &worker, &name, &note, 1);
  w = fxt_legacy_context_switch_record_words(&main_thread, &worker);
  if ((p = reserve(b, w)))
    fxt_write_legacy_context_switch_record(p, w, t + 3100, 1, FXT_THREAD_BLOCKED, &main_thread,
                                           &worker, 20, 21);
  w = fxt_context_switch_record_words(&weight, 1);
  if ((p = reserve(b, w)))
    fxt_write_context_switch_record(p, w, t + 3200, 1, FXT_THREAD_SUSPENDED, TID2, TID, &weight, 1);
  w = fxt_thread_wakeup_record_words(NULL, 0);
  if ((p = reserve(b, w))) fxt_write_thread_wakeup_record(p, w, t + 3300, 0, TID2, NULL, 0);
  static const char kMessage[] = "log line: \"quoted\"\tand tabbed";
  w = fxt_log_record_words(&main_thread, sizeof(kMessage) - 1);
  if ((p = reserve(b, w)))
    fxt_write_log_record(p, w, t + 3400, &main_thread, kMessage, sizeof(kMessage) - 1);
  w = fxt_large_blob_event_record_words(&cat, &name, &worker, &note, 1, sizeof(kPayload) - 1);
  if ((p = reserve(b, w)))
    fxt_write_large_blob_event_record(p, w, &cat, &name, t + 3500, &worker, &note, 1, kPayload,
                                      sizeof(kPayload) - 1);
  w = fxt_large_blob_attachment_record_words(&cat, &name, sizeof(kPayload) - 1);
  if ((p = reserve(b, w)))
    fxt_write_large_blob_attachment_record(p, w, &cat, &name, kPayload, sizeof(kPayload) - 1);
}

/* Provider 2: another process, a dropped-records event, and string index 1
 * meaning something else than in provider 1. Like every fxtrace writer it
 * uses 1 tick = 1 ns, since some readers ignore the tick rate (READERS.md);
 * other rates are covered by the tests' own archives. */
static void provider2(builder_t* b) {
  provider_header(b, 2, "second-provider", 1000000000u);
  uint64_t* p = reserve(b, 1);
  if (p) fxt_write_provider_event_record(p, 2, FXT_PROVIDER_EVENT_BUFFER_OVERFLOW);
  static const char kCat[] = "other";
  if ((p = reserve(b, fxt_string_record_words(sizeof(kCat) - 1))))
    fxt_write_string_record(p, 1, kCat, sizeof(kCat) - 1);
  if ((p = reserve(b, 3))) fxt_write_thread_record(p, 1, PID2, TID3);
  trace_arg_t process = arg("process", trace_make_koid_arg_value(PID2));
  kernel_object(b, PID2, FXT_KOBJ_PROCESS, "second-app", NULL, 0);
  kernel_object(b, TID3, FXT_KOBJ_THREAD, "loop", &process, 1);
  trace_thread_ref_t thread = trace_make_indexed_thread_ref(1);
  event(b, FXT_EVENT_DURATION_COMPLETE, 2500005000u, &thread, idx(1), lit("tick"), NULL, 0,
        2500007501u);
  event(b, FXT_EVENT_FLOW_END, 2500006000u, &thread, idx(1), lit("handoff"), NULL, 0, 7);
}

int sample_archive__build(fxt_buffer_t* out, uint64_t repeat) {
  builder_t b = {out, false};
  uint64_t* p = reserve(&b, 1);
  if (p) fxt_write_magic_record(p);
  provider_header(&b, 1, "sample-provider", 1000000000u);
  provider1_tables(&b);
  provider1_events(&b, 1000000);
  provider1_other_records(&b, 1000000);
  provider2(&b);
  if ((p = reserve(&b, 1))) fxt_write_provider_section_record(p, 1);
  for (uint64_t i = 0; i < (repeat ? repeat : 1); i++) provider1_events(&b, 2000000 + i * 4000);
  return b.oom ? -1 : 0;
}
