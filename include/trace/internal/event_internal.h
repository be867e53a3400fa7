/* Not part of the public API: use <trace/event.h>. The TRACE_INTERNAL_*
 * implementations of the event macros, in their enabled form and their
 * NTRACE form.
 *
 * Shape of every category event (TRACE_INTERNAL_EVENT_RECORD):
 *
 *   do {
 *     static trace_site_t site;              // per call site, zero-initialised
 *     trace_string_ref_t category_ref;
 *     trace_context_t* context = trace_acquire_context_for_category_cached(cat, &site,
 *                                                                         &category_ref);
 *     if (__builtin_expect(context != NULL, 0)) {
 *       trace_internal_write_..._and_release_context(context, &category_ref, name, ...,
 *                                                    args, num_args);
 *     }
 *   } while (0)
 *
 * While the site is disabled (tracing off, or its category off) the inline
 * acquire is one relaxed load of the site's word and one predicted branch;
 * the arguments (and every other macro parameter but the category) are
 * evaluated only inside the branch. TRACE_INSTANT's form
 * (TRACE_INTERNAL_SITE_RECORD) goes further: trace_site_is_enabled() inline
 * (the load and branch; an enabled site compares its word with the
 * generation), then one call that acquires, writes (from a per-thread cache
 * of the site's record, event_helpers.c) and releases. The args array is a
 * temporary of the write call (event_args.h), so the names and values it
 * borrows live until the helper has written the record; the helper releases
 * the context, so every acquire here is paired with exactly one release. */
#ifndef TRACE_INTERNAL_EVENT_INTERNAL_H_
#define TRACE_INTERNAL_EVENT_INTERNAL_H_

#include "trace/internal/event_args.h"

#ifdef __cplusplus
extern "C" {
#endif

/* TRACE_DURATION, entry with the category enabled: copies the arguments into
 * the scope's own array (they stay unregistered literals until the end
 * helper writes them), takes the start time and releases the context. The
 * scope is written at exit by trace_internal_duration_scope_end(). */
static inline void trace_internal_duration_scope_start(trace_internal_duration_scope_t* scope,
                                                       trace_context_t* context,
                                                       const char* category_literal,
                                                       const char* name_literal, trace_site_t* site,
                                                       trace_arg_t* storage,
                                                       const trace_arg_t* args, size_t num_args) {
  if (num_args != 0) memcpy(storage, args, num_args * sizeof(*args));
  scope->category_literal = category_literal;
  scope->name_literal = name_literal;
  scope->site = site;
  scope->args = storage;
  scope->num_args = num_args;
  trace_ticks_t now = trace_context_ticks_now();
  scope->start_time = now != 0 ? now : 1; /* 0 means "not started" */
  trace_release_context(context);
}

/* TRACE_DURATION, scope exit: the out-of-line end is called only for a scope
 * that started, so a disabled TRACE_DURATION costs one more load and branch
 * at exit, never a call. */
static inline void trace_internal_duration_scope_cleanup(trace_internal_duration_scope_t* scope) {
  if (__builtin_expect(scope->start_time != 0, 0)) trace_internal_duration_scope_end(scope);
}

#ifdef __cplusplus
} /* extern "C" */

namespace trace_internal {

/* The C++ form of the cleanup: the same start/end functions from a
 * destructor. Only start_time is set until the scope starts. */
class DurationScope {
 public:
  DurationScope() noexcept { scope_.start_time = 0; }
  ~DurationScope() { trace_internal_duration_scope_cleanup(&scope_); }
  DurationScope(const DurationScope&) = delete;
  DurationScope& operator=(const DurationScope&) = delete;
  trace_internal_duration_scope_t* get() noexcept { return &scope_; }

 private:
  trace_internal_duration_scope_t scope_;
};

}  // namespace trace_internal

#define TRACE_INTERNAL_SCOPE_DECLARE(label) ::trace_internal::DurationScope label
#define TRACE_INTERNAL_SCOPE_PTR(label) (label.get())
#else
#define TRACE_INTERNAL_SCOPE_DECLARE(label)                       \
  __attribute__((cleanup(trace_internal_duration_scope_cleanup))) \
  trace_internal_duration_scope_t label;                          \
  label.start_time = 0
#define TRACE_INTERNAL_SCOPE_PTR(label) (&label)
#endif

/* Names the `call` argument of the record macros below may use. */
#define TRACE_INTERNAL_CONTEXT trace_internal_context
#define TRACE_INTERNAL_CATEGORY_REF (&trace_internal_category_ref)
#ifndef NTRACE
#define TRACE_INTERNAL_SITE (&trace_internal_site)
#else
#define TRACE_INTERNAL_SITE trace_internal_site_ptr
#endif
#define TRACE_INTERNAL_SITE_STATE trace_internal_site_state

/* The trailing `args, num_args` of a write helper, from the items of the
 * event macro (call as TRACE_INTERNAL_EVENT_ARGS(_, ##__VA_ARGS__)). */
#define TRACE_INTERNAL_EVENT_ARGS(dummy, ...)                                                \
  TRACE_INTERNAL_ARGS(TRACE_INTERNAL_MAKE_VALUE, TRACE_INTERNAL_NUM_ITEMS(_, ##__VA_ARGS__), \
                      ##__VA_ARGS__)

#define TRACE_INTERNAL_NONCE() (trace_generate_nonce())

/* TRACE_INSTANT, the record path inline (trace-engine/record_path.h): with
 * the site enabled in this trace, the thread's record for it cached and
 * every argument a scalar, the event is the enter, the clock, the
 * reservation, the stores and the commit, all here; the argument types are
 * constants of the expansion, so the loops below unroll into plain stores.
 * Everything else goes to the out-of-line helper, which also fills the
 * cache. */
static inline __attribute__((always_inline)) void trace_internal_instant(
    trace_site_t* site, uint64_t state, const char* category_literal, const char* name_literal,
    trace_scope_t scope, trace_arg_t* args, size_t num_args) {
  /* The types are constants of the expansion: the loops unroll and fold. */
  size_t words = 3; /* header, timestamp, scope */
  bool scalar = true;
#pragma GCC unroll 15
  for (size_t i = 0; i < num_args; i++) {
    unsigned type = args[i].value.type;
    scalar &= type != TRACE_ARG_STRING && type != TRACE_ARG_BLOB;
    words += 1u + trace_engine__arg_has_value_word(type);
  }
  uint64_t generation = __atomic_load_n(&trace_engine__generation, __ATOMIC_ACQUIRE);
  trace_context_t* w = NULL;
  uint64_t record_header;
  uint16_t names[TRACE_MAX_ARGS + 1];
  if (__builtin_expect(scalar && generation != 0 && state == TRACE_SITE_ENABLED(generation), 1) &&
      __builtin_expect(
          trace_engine__load_record(generation, site, num_args, &w, &record_header, names), 1) &&
      __builtin_expect(trace_engine__enter(w, generation), 1)) {
    trace_ticks_t ticks = trace_clock__now_ns(); /* after the acquire (API.md §2) */
    uint64_t* p = trace_engine__reserve(w, words);
    if (__builtin_expect(p != NULL, 1)) {
      p[1] = ticks;
      uint64_t* q = p + 2;
#pragma GCC unroll 15
      for (size_t i = 0; i < num_args; i++) {
        const trace_arg_value_t* v = &args[i].value;
        if (trace_engine__arg_has_value_word(v->type)) {
          *q++ = trace_engine__arg_header(v->type, 2, names[i]);
          *q++ = v->uint64_value;
        } else {
          *q++ = trace_engine__arg_header(v->type, 1, names[i]) | trace_engine__arg_header_value(v);
        }
      }
      *q = (uint64_t)scope;
      trace_engine__commit(p, record_header | ((uint64_t)words << 4));
      trace_engine__count_written(w);
    }
    trace_engine__release(w);
    return;
  }
  /* A copy for the call: the caller's array then never has its address
   * taken, so on the path above it lives in registers, not on the stack,
   * and no store into the record can alias it. */
  trace_arg_t copy[TRACE_MAX_ARGS];
  if (num_args != 0) memcpy(copy, args, num_args * sizeof(*args));
  trace_internal_write_instant_at_site(site, state, category_literal, name_literal, scope, copy,
                                       num_args);
}

#ifndef NTRACE
/* ---- tracing compiled in ------------------------------------------------- */

#define TRACE_INTERNAL_ENABLED() (trace_is_enabled())

/* Cached like an event site; registers the category string (a string record
 * the first time on the thread) as a side effect, as in Fuchsia. */
#define TRACE_INTERNAL_CATEGORY_ENABLED(category_literal)                                \
  (__extension__({                                                                       \
    static trace_site_t trace_internal_site;                                             \
    trace_string_ref_t trace_internal_category_ref;                                      \
    trace_context_t* trace_internal_context = trace_acquire_context_for_category_cached( \
        (category_literal), &trace_internal_site, &trace_internal_category_ref);         \
    if (__builtin_expect(trace_internal_context != NULL, 0))                             \
      trace_release_context(trace_internal_context);                                     \
    (bool)(trace_internal_context != NULL);                                              \
  }))

/* An event of one category: `call` is the write helper's call, n the item
 * count of the macro's argument list. */
#define TRACE_INTERNAL_EVENT_RECORD(category_literal, n, call)                           \
  do {                                                                                   \
    TRACE_INTERNAL_CHECK_ITEMS(n);                                                       \
    static trace_site_t trace_internal_site;                                             \
    trace_string_ref_t trace_internal_category_ref;                                      \
    trace_context_t* trace_internal_context = trace_acquire_context_for_category_cached( \
        (category_literal), &trace_internal_site, &trace_internal_category_ref);         \
    if (__builtin_expect(trace_internal_context != NULL, 0)) {                           \
      call;                                                                              \
    }                                                                                    \
  } while (0)

/* An event whose one call into the engine does the site check's
 * out-of-line part itself (TRACE_INSTANT): the inline part is one load of
 * the site's state word and one predicted branch; `call` may use
 * TRACE_INTERNAL_SITE and TRACE_INTERNAL_SITE_STATE. */
#define TRACE_INTERNAL_SITE_RECORD(category_literal, n, call)                            \
  do {                                                                                   \
    TRACE_INTERNAL_CHECK_ITEMS(n);                                                       \
    static trace_site_t trace_internal_site;                                             \
    uint64_t trace_internal_site_state;                                                  \
    if (__builtin_expect(trace_site_is_enabled((category_literal), &trace_internal_site, \
                                               &trace_internal_site_state),              \
                         0)) {                                                           \
      call;                                                                              \
    }                                                                                    \
  } while (0)

/* A record with no category check (TRACE_BLOB, TRACE_KERNEL_OBJECT): written
 * whenever tracing is on. */
#define TRACE_INTERNAL_CONTEXT_RECORD(n, call)                         \
  do {                                                                 \
    TRACE_INTERNAL_CHECK_ITEMS(n);                                     \
    trace_context_t* trace_internal_context = trace_acquire_context(); \
    if (__builtin_expect(trace_internal_context != NULL, 0)) {         \
      call;                                                            \
    }                                                                  \
  } while (0)

/* TRACE_DURATION: declarations in the enclosing scope, named after a label
 * unique to the expansion (__COUNTER__), so several can share a block. The
 * argument array outlives the scope object (declared before it). The last
 * declaration takes the user's semicolon. */
#define TRACE_INTERNAL_DURATION(category_literal, name_literal, ...)                            \
  TRACE_INTERNAL_DURATION_SCOPE(TRACE_INTERNAL_UNIQUE(trace_internal_scope_), category_literal, \
                                name_literal, ##__VA_ARGS__)
#define TRACE_INTERNAL_DURATION_SCOPE(label, category_literal, name_literal, ...) \
  TRACE_INTERNAL_DURATION_SCOPE_(label, category_literal, name_literal,           \
                                 TRACE_INTERNAL_NUM_ITEMS(_, ##__VA_ARGS__), ##__VA_ARGS__)
#define TRACE_INTERNAL_DURATION_SCOPE_(label, category_literal, name_literal, n, ...)    \
  static trace_site_t label##_site;                                                      \
  trace_arg_t label##_args[(n) / 2 > 0 && (n) / 2 <= TRACE_MAX_ARGS ? (n) / 2 : 1];      \
  TRACE_INTERNAL_SCOPE_DECLARE(label);                                                   \
  {                                                                                      \
    trace_string_ref_t trace_internal_category_ref;                                      \
    trace_context_t* trace_internal_context = trace_acquire_context_for_category_cached( \
        (category_literal), &label##_site, &trace_internal_category_ref);                \
    if (__builtin_expect(trace_internal_context != NULL, 0)) {                           \
      trace_internal_duration_scope_start(                                               \
          TRACE_INTERNAL_SCOPE_PTR(label), trace_internal_context, (category_literal),   \
          (name_literal), &label##_site, label##_args,                                   \
          TRACE_INTERNAL_ARGS(TRACE_INTERNAL_MAKE_SCOPED_VALUE, n, ##__VA_ARGS__));      \
    }                                                                                    \
  }                                                                                      \
  TRACE_INTERNAL_CHECK_ITEMS(n)

#else /* NTRACE */
/* ---- NTRACE: nothing runs, nothing from the engine is referenced --------------
 * The same calls stay inside `if (0)`, so every argument is still
 * type-checked (and the pair checks still apply), but no code is generated
 * and no engine symbol is referenced, even at -O0. */

#define TRACE_INTERNAL_ENABLED() (false)
#define TRACE_INTERNAL_CATEGORY_ENABLED(category_literal) ((void)(category_literal), false)

#define TRACE_INTERNAL_EVENT_RECORD(category_literal, n, call)                        \
  do {                                                                                \
    TRACE_INTERNAL_CHECK_ITEMS(n);                                                    \
    if (0) {                                                                          \
      trace_string_ref_t trace_internal_category_ref = trace_make_empty_string_ref(); \
      trace_context_t* trace_internal_context = (trace_context_t*)0;                  \
      (void)(category_literal);                                                       \
      call;                                                                           \
    }                                                                                 \
  } while (0)

#define TRACE_INTERNAL_SITE_RECORD(category_literal, n, call)   \
  do {                                                          \
    TRACE_INTERNAL_CHECK_ITEMS(n);                              \
    if (0) {                                                    \
      (void)(category_literal);                                 \
      trace_site_t* trace_internal_site_ptr = (trace_site_t*)0; \
      uint64_t trace_internal_site_state = 0;                   \
      (void)trace_internal_site_ptr;                            \
      (void)trace_internal_site_state;                          \
      call;                                                     \
    }                                                           \
  } while (0)

#define TRACE_INTERNAL_CONTEXT_RECORD(n, call)                       \
  do {                                                               \
    TRACE_INTERNAL_CHECK_ITEMS(n);                                   \
    if (0) {                                                         \
      trace_context_t* trace_internal_context = (trace_context_t*)0; \
      call;                                                          \
    }                                                                \
  } while (0)

/* API.md §1: TRACE_DURATION falls back to the (disabled) begin form. */
#define TRACE_INTERNAL_DURATION(category_literal, name_literal, ...) \
  TRACE_INTERNAL_DURATION_BEGIN(category_literal, name_literal, ##__VA_ARGS__)

#endif /* NTRACE */

/* ---- the event macros, on top of the two record forms ----------------------- */

#define TRACE_INTERNAL_INSTANT(category_literal, name_literal, scope, ...)                       \
  TRACE_INTERNAL_SITE_RECORD(                                                                    \
      category_literal, TRACE_INTERNAL_NUM_ITEMS(_, ##__VA_ARGS__),                              \
      trace_internal_instant(TRACE_INTERNAL_SITE, TRACE_INTERNAL_SITE_STATE, (category_literal), \
                             (name_literal), (trace_scope_t)(scope),                             \
                             TRACE_INTERNAL_EVENT_ARGS(_, ##__VA_ARGS__)))

#define TRACE_INTERNAL_COUNTER(category_literal, name_literal, counter_id, arg1, ...) \
  TRACE_INTERNAL_EVENT_RECORD(                                                        \
      category_literal, TRACE_INTERNAL_NUM_ITEMS(_, arg1, ##__VA_ARGS__),             \
      trace_internal_write_counter_event_record_and_release_context(                  \
          TRACE_INTERNAL_CONTEXT, TRACE_INTERNAL_CATEGORY_REF, (name_literal),        \
          (trace_counter_id_t)(counter_id), TRACE_INTERNAL_EVENT_ARGS(_, arg1, ##__VA_ARGS__)))

#define TRACE_INTERNAL_DURATION_BEGIN(category_literal, name_literal, ...)     \
  TRACE_INTERNAL_EVENT_RECORD(                                                 \
      category_literal, TRACE_INTERNAL_NUM_ITEMS(_, ##__VA_ARGS__),            \
      trace_internal_write_duration_begin_event_record_and_release_context(    \
          TRACE_INTERNAL_CONTEXT, TRACE_INTERNAL_CATEGORY_REF, (name_literal), \
          TRACE_INTERNAL_EVENT_ARGS(_, ##__VA_ARGS__)))

#define TRACE_INTERNAL_DURATION_END(category_literal, name_literal, ...)                          \
  TRACE_INTERNAL_EVENT_RECORD(category_literal, TRACE_INTERNAL_NUM_ITEMS(_, ##__VA_ARGS__),       \
                              trace_internal_write_duration_end_event_record_and_release_context( \
                                  TRACE_INTERNAL_CONTEXT, TRACE_INTERNAL_CATEGORY_REF,            \
                                  (name_literal), TRACE_INTERNAL_EVENT_ARGS(_, ##__VA_ARGS__)))

/* Async and flow events: kind is async_begin, async_instant, async_end,
 * flow_begin, flow_step or flow_end. */
#define TRACE_INTERNAL_ID_EVENT(kind, id_type, category_literal, name_literal, id, ...)       \
  TRACE_INTERNAL_EVENT_RECORD(                                                                \
      category_literal, TRACE_INTERNAL_NUM_ITEMS(_, ##__VA_ARGS__),                           \
      trace_internal_write_##kind##_event_record_and_release_context(                         \
          TRACE_INTERNAL_CONTEXT, TRACE_INTERNAL_CATEGORY_REF, (name_literal), (id_type)(id), \
          TRACE_INTERNAL_EVENT_ARGS(_, ##__VA_ARGS__)))

#define TRACE_INTERNAL_ASYNC_BEGIN(category_literal, name_literal, async_id, ...)                  \
  TRACE_INTERNAL_ID_EVENT(async_begin, trace_async_id_t, category_literal, name_literal, async_id, \
                          ##__VA_ARGS__)
#define TRACE_INTERNAL_ASYNC_INSTANT(category_literal, name_literal, async_id, ...)        \
  TRACE_INTERNAL_ID_EVENT(async_instant, trace_async_id_t, category_literal, name_literal, \
                          async_id, ##__VA_ARGS__)
#define TRACE_INTERNAL_ASYNC_END(category_literal, name_literal, async_id, ...)                  \
  TRACE_INTERNAL_ID_EVENT(async_end, trace_async_id_t, category_literal, name_literal, async_id, \
                          ##__VA_ARGS__)
#define TRACE_INTERNAL_FLOW_BEGIN(category_literal, name_literal, flow_id, ...)                 \
  TRACE_INTERNAL_ID_EVENT(flow_begin, trace_flow_id_t, category_literal, name_literal, flow_id, \
                          ##__VA_ARGS__)
#define TRACE_INTERNAL_FLOW_STEP(category_literal, name_literal, flow_id, ...)                 \
  TRACE_INTERNAL_ID_EVENT(flow_step, trace_flow_id_t, category_literal, name_literal, flow_id, \
                          ##__VA_ARGS__)
#define TRACE_INTERNAL_FLOW_END(category_literal, name_literal, flow_id, ...)                 \
  TRACE_INTERNAL_ID_EVENT(flow_end, trace_flow_id_t, category_literal, name_literal, flow_id, \
                          ##__VA_ARGS__)

/* FXT event types of the flow kinds (event_helpers.h flow_kind). */
#define TRACE_INTERNAL_FLOW_KIND_BEGIN 8u
#define TRACE_INTERNAL_FLOW_KIND_STEP 9u
#define TRACE_INTERNAL_FLOW_KIND_END 10u

#define TRACE_INTERNAL_INSTAFLOW(flow_kind, category_literal, name_literal, flow_id, ...)   \
  TRACE_INTERNAL_EVENT_RECORD(                                                              \
      category_literal, TRACE_INTERNAL_NUM_ITEMS(_, ##__VA_ARGS__),                         \
      trace_internal_write_instaflow_and_release_context(                                   \
          TRACE_INTERNAL_CONTEXT, TRACE_INTERNAL_CATEGORY_REF, (name_literal), (flow_kind), \
          (trace_flow_id_t)(flow_id), TRACE_INTERNAL_EVENT_ARGS(_, ##__VA_ARGS__)))
#define TRACE_INTERNAL_INSTAFLOW_BEGIN(category_literal, name_literal, flow_id, ...)       \
  TRACE_INTERNAL_INSTAFLOW(TRACE_INTERNAL_FLOW_KIND_BEGIN, category_literal, name_literal, \
                           flow_id, ##__VA_ARGS__)
#define TRACE_INTERNAL_INSTAFLOW_STEP(category_literal, name_literal, flow_id, ...)                \
  TRACE_INTERNAL_INSTAFLOW(TRACE_INTERNAL_FLOW_KIND_STEP, category_literal, name_literal, flow_id, \
                           ##__VA_ARGS__)
#define TRACE_INTERNAL_INSTAFLOW_END(category_literal, name_literal, flow_id, ...)                \
  TRACE_INTERNAL_INSTAFLOW(TRACE_INTERNAL_FLOW_KIND_END, category_literal, name_literal, flow_id, \
                           ##__VA_ARGS__)

#define TRACE_INTERNAL_BLOB_EVENT(category_literal, name_literal, blob, blob_size, ...) \
  TRACE_INTERNAL_EVENT_RECORD(                                                          \
      category_literal, TRACE_INTERNAL_NUM_ITEMS(_, ##__VA_ARGS__),                     \
      trace_internal_write_blob_event_record_and_release_context(                       \
          TRACE_INTERNAL_CONTEXT, TRACE_INTERNAL_CATEGORY_REF, (name_literal),          \
          (const void*)(blob), (size_t)(blob_size), TRACE_INTERNAL_EVENT_ARGS(_, ##__VA_ARGS__)))

#define TRACE_INTERNAL_BLOB_ATTACHMENT(category_literal, name_literal, blob, blob_size)        \
  TRACE_INTERNAL_EVENT_RECORD(category_literal, 0,                                             \
                              trace_internal_write_blob_attachment_record_and_release_context( \
                                  TRACE_INTERNAL_CONTEXT, TRACE_INTERNAL_CATEGORY_REF,         \
                                  (name_literal), (const void*)(blob), (size_t)(blob_size)))

#define TRACE_INTERNAL_BLOB(type, name_literal, blob, blob_size)                          \
  TRACE_INTERNAL_CONTEXT_RECORD(0, trace_internal_write_blob_record_and_release_context(  \
                                       TRACE_INTERNAL_CONTEXT, (trace_blob_type_t)(type), \
                                       (name_literal), (const void*)(blob), (size_t)(blob_size)))

#define TRACE_INTERNAL_KERNEL_OBJECT(pid, tid, name, ...)                           \
  TRACE_INTERNAL_CONTEXT_RECORD(                                                    \
      TRACE_INTERNAL_NUM_ITEMS(_, ##__VA_ARGS__),                                   \
      trace_internal_write_kernel_object_record_and_release_context(                \
          TRACE_INTERNAL_CONTEXT, (trace_koid_t)(pid), (trace_koid_t)(tid), (name), \
          TRACE_INTERNAL_EVENT_ARGS(_, ##__VA_ARGS__)))

#define TRACE_INTERNAL_VTHREAD_DURATION(which, category_literal, name_literal, vthread_literal,   \
                                        vthread_id, timestamp, ...)                               \
  TRACE_INTERNAL_EVENT_RECORD(                                                                    \
      category_literal, TRACE_INTERNAL_NUM_ITEMS(_, ##__VA_ARGS__),                               \
      trace_internal_write_vthread_duration_##which##_event_record_and_release_context(           \
          TRACE_INTERNAL_CONTEXT, TRACE_INTERNAL_CATEGORY_REF, (name_literal), (vthread_literal), \
          (trace_vthread_id_t)(vthread_id), (trace_ticks_t)(timestamp),                           \
          TRACE_INTERNAL_EVENT_ARGS(_, ##__VA_ARGS__)))
#define TRACE_INTERNAL_VTHREAD_DURATION_BEGIN(category_literal, name_literal, vthread_literal, \
                                              vthread_id, timestamp, ...)                      \
  TRACE_INTERNAL_VTHREAD_DURATION(begin, category_literal, name_literal, vthread_literal,      \
                                  vthread_id, timestamp, ##__VA_ARGS__)
#define TRACE_INTERNAL_VTHREAD_DURATION_END(category_literal, name_literal, vthread_literal, \
                                            vthread_id, timestamp, ...)                      \
  TRACE_INTERNAL_VTHREAD_DURATION(end, category_literal, name_literal, vthread_literal,      \
                                  vthread_id, timestamp, ##__VA_ARGS__)

#define TRACE_INTERNAL_VTHREAD_FLOW(flow_kind, category_literal, name_literal, vthread_literal,   \
                                    vthread_id, flow_id, timestamp, ...)                          \
  TRACE_INTERNAL_EVENT_RECORD(                                                                    \
      category_literal, TRACE_INTERNAL_NUM_ITEMS(_, ##__VA_ARGS__),                               \
      trace_internal_write_vthread_flow_event_record_and_release_context(                         \
          TRACE_INTERNAL_CONTEXT, TRACE_INTERNAL_CATEGORY_REF, (name_literal), (vthread_literal), \
          (trace_vthread_id_t)(vthread_id), (flow_kind), (trace_flow_id_t)(flow_id),              \
          (trace_ticks_t)(timestamp), TRACE_INTERNAL_EVENT_ARGS(_, ##__VA_ARGS__)))
#define TRACE_INTERNAL_VTHREAD_FLOW_BEGIN(category_literal, name_literal, vthread_literal,    \
                                          vthread_id, flow_id, timestamp, ...)                \
  TRACE_INTERNAL_VTHREAD_FLOW(TRACE_INTERNAL_FLOW_KIND_BEGIN, category_literal, name_literal, \
                              vthread_literal, vthread_id, flow_id, timestamp, ##__VA_ARGS__)
#define TRACE_INTERNAL_VTHREAD_FLOW_STEP(category_literal, name_literal, vthread_literal,    \
                                         vthread_id, flow_id, timestamp, ...)                \
  TRACE_INTERNAL_VTHREAD_FLOW(TRACE_INTERNAL_FLOW_KIND_STEP, category_literal, name_literal, \
                              vthread_literal, vthread_id, flow_id, timestamp, ##__VA_ARGS__)
#define TRACE_INTERNAL_VTHREAD_FLOW_END(category_literal, name_literal, vthread_literal,    \
                                        vthread_id, flow_id, timestamp, ...)                \
  TRACE_INTERNAL_VTHREAD_FLOW(TRACE_INTERNAL_FLOW_KIND_END, category_literal, name_literal, \
                              vthread_literal, vthread_id, flow_id, timestamp, ##__VA_ARGS__)

/* ---- helpers for hand-written events (API.md §3, event_args.h in Fuchsia) -----
 * TRACE_DECLARE_ARGS declares `trace_arg_t var[]` from name/value pairs
 * (evaluated where it stands, tracing on or not; string values are borrowed,
 * as in TRACE_DURATION) and TRACE_NUM_ARGS(var) their number;
 * TRACE_COMPLETE_ARGS
 * registers the names (and literal string values) on an acquired context
 * before a trace_context_write_*_record call. */
#define TRACE_INTERNAL_DECLARE_ARGS(context, var, ...)                                   \
  TRACE_INTERNAL_DECLARE_ARGS_(context, var, TRACE_INTERNAL_NUM_ITEMS(_, ##__VA_ARGS__), \
                               ##__VA_ARGS__)
#define TRACE_INTERNAL_DECLARE_ARGS_(context, var, n, ...)                           \
  TRACE_INTERNAL_CHECK_ITEMS(n);                                                     \
  (void)(context);                                                                   \
  trace_arg_t var[(n) / 2 > 0 && (n) / 2 <= TRACE_MAX_ARGS ? (n) / 2 : 1];           \
  trace_internal_copy_args(                                                          \
      var, TRACE_INTERNAL_ARGS(TRACE_INTERNAL_MAKE_SCOPED_VALUE, n, ##__VA_ARGS__)); \
  const size_t var##_trace_internal_count = (n) / 2 <= TRACE_MAX_ARGS ? (n) / 2 : 0; \
  (void)var##_trace_internal_count
#define TRACE_INTERNAL_NUM_ARGS(var) (var##_trace_internal_count)
#define TRACE_INTERNAL_COMPLETE_ARGS(context, var, num_args) \
  trace_internal_complete_args_inline((context), (var), (num_args))

#ifdef __cplusplus
extern "C" {
#endif

static inline void trace_internal_copy_args(trace_arg_t* storage, const trace_arg_t* args,
                                            size_t num_args) {
  if (num_args != 0) memcpy(storage, args, num_args * sizeof(*args));
}

/* Registers each unregistered literal (encoded 0, inline_string set) among
 * the names and string values: the same rule the write helpers apply. */
static inline void trace_internal_complete_args_inline(trace_context_t* context, trace_arg_t* args,
                                                       size_t num_args) {
  for (size_t i = 0; i < num_args; i++) {
    trace_string_ref_t* name = &args[i].name_ref;
    if (name->encoded_value == TRACE_ENCODED_STRING_REF_EMPTY && name->inline_string != NULL)
      trace_context_register_string_literal(context, name->inline_string, name);
    trace_string_ref_t* value = &args[i].value.string_value_ref;
    if (args[i].value.type == TRACE_ARG_STRING &&
        value->encoded_value == TRACE_ENCODED_STRING_REF_EMPTY && value->inline_string != NULL)
      trace_context_register_string_literal(context, value->inline_string, value);
  }
}

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* TRACE_INTERNAL_EVENT_INTERNAL_H_ */
