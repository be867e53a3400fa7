/* Not part of the public API: use <trace/event.h>. The TRACE_INTERNAL_*
 * implementations of the event macros, in their enabled form and their
 * NTRACE form.
 *
 * Two shapes. TRACE_INSTANT, TRACE_COUNTER, TRACE_DURATION_BEGIN / _END,
 * the async and flow events (TRACE_INTERNAL_SITE_RECORD), and TRACE_DURATION
 * (its own declarations, same check):
 *
 *   do {
 *     static trace_site_t site;              // per call site, zero-initialised
 *     uint64_t state;
 *     if (__builtin_expect(trace_site_is_enabled(cat, &site, &state), 0))
 *       trace_internal_event(&site, state, cat, name, type, payload, args, num_args);
 *   } while (0)
 *
 * where trace_internal_event() writes the record inline from the thread's
 * cache of the site's record, or makes one out-of-line call
 * (event_record.h). The rest (instaflows, blobs, vthreads;
 * TRACE_INTERNAL_EVENT_RECORD) acquire the context inline and call their
 * write helper:
 *
 *   do {
 *     static trace_site_t site;
 *     trace_string_ref_t category_ref;
 *     trace_context_t* context = trace_acquire_context_for_category_cached(cat, &site,
 *                                                                         &category_ref);
 *     if (__builtin_expect(context != NULL, 0))
 *       trace_internal_write_..._and_release_context(context, &category_ref, name, ...,
 *                                                    args, num_args);
 *   } while (0)
 *
 * While the site is disabled (tracing off, or its category off) either is
 * one relaxed load of the site's word and one predicted branch; the
 * arguments (and every other macro parameter but the category) are
 * evaluated only inside the branch. The args array is a temporary of the
 * write call (event_args.h), so the names and values it borrows live until
 * the record is written; every acquire is paired with exactly one release. */
#ifndef TRACE_INTERNAL_EVENT_INTERNAL_H_
#define TRACE_INTERNAL_EVENT_INTERNAL_H_

#include "trace/internal/event_args.h"
#include "trace/internal/event_record.h"

#ifdef __cplusplus
namespace trace_internal {

/* The C++ form of TRACE_DURATION's state: the scope and its arguments'
 * array, with the inline exit in the destructor (so early returns and
 * exceptions end the scope) and the argument count a template constant.
 * Only start_time is set until the scope starts. */
template <size_t N>
class DurationScope {
 public:
  DurationScope() noexcept { scope_.start_time = 0; }
  ~DurationScope() {
    if (__builtin_expect(scope_.start_time != 0, 0))
      trace_internal_duration_scope_finish(&scope_, args_, N);
  }
  DurationScope(const DurationScope&) = delete;
  DurationScope& operator=(const DurationScope&) = delete;
  trace_internal_duration_scope_t* get() noexcept { return &scope_; }
  trace_arg_t* args() noexcept { return args_; }

 private:
  trace_internal_duration_scope_t scope_;
  trace_arg_t args_[N > 0 ? N : 1];
};

}  // namespace trace_internal

/* n: the macro's item count */
#define TRACE_INTERNAL_SCOPE_DECLARE(label, n) \
  ::trace_internal::DurationScope<(n) / 2 <= TRACE_MAX_ARGS ? (n) / 2 : 0> label
#define TRACE_INTERNAL_SCOPE_PTR(label) (label.get())
#define TRACE_INTERNAL_SCOPE_ARGS(label) (label.args())
#else
/* The C form: one object per item count with its own exit as the cleanup
 * (event_record.h). */
#define TRACE_INTERNAL_SCOPE_DECLARE(label, n)                                         \
  __attribute__((cleanup(TRACE_INTERNAL_CAT(trace_internal_duration_scope_exit_, n)))) \
  TRACE_INTERNAL_CAT(TRACE_INTERNAL_CAT(trace_internal_duration_scope_, n), _t) label; \
  label.scope.start_time = 0
#define TRACE_INTERNAL_SCOPE_PTR(label) (&label.scope)
#define TRACE_INTERNAL_SCOPE_ARGS(label) (label.args)
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

/* An event written by the inline record path (event_record.h), whose one
 * out-of-line call, if any, does the site check's out-of-line part itself:
 * the inline check is one load of the site's state word and one predicted
 * branch; `call` may use TRACE_INTERNAL_SITE and TRACE_INTERNAL_SITE_STATE. */
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
#define TRACE_INTERNAL_DURATION_SCOPE_(label, category_literal, name_literal, n, ...)             \
  static trace_site_t label##_site;                                                               \
  TRACE_INTERNAL_SCOPE_DECLARE(label, n);                                                         \
  {                                                                                               \
    uint64_t trace_internal_site_state;                                                           \
    if (__builtin_expect(                                                                         \
            trace_site_is_enabled((category_literal), &label##_site, &trace_internal_site_state), \
            0)) {                                                                                 \
      trace_internal_duration_scope_begin(                                                        \
          TRACE_INTERNAL_SCOPE_PTR(label), (category_literal), (name_literal), &label##_site,     \
          trace_internal_site_state, TRACE_INTERNAL_SCOPE_ARGS(label),                            \
          TRACE_INTERNAL_ARGS(TRACE_INTERNAL_MAKE_SCOPED_VALUE, n, ##__VA_ARGS__));               \
    }                                                                                             \
  }                                                                                               \
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

#define TRACE_INTERNAL_COUNTER(category_literal, name_literal, counter_id, arg1, ...)          \
  TRACE_INTERNAL_SITE_RECORD(                                                                  \
      category_literal, TRACE_INTERNAL_NUM_ITEMS(_, arg1, ##__VA_ARGS__),                      \
      trace_internal_event(TRACE_INTERNAL_SITE, TRACE_INTERNAL_SITE_STATE, (category_literal), \
                           (name_literal), TRACE_INTERNAL_EVENT_COUNTER,                       \
                           (uint64_t)(trace_counter_id_t)(counter_id),                         \
                           TRACE_INTERNAL_EVENT_ARGS(_, arg1, ##__VA_ARGS__)))

/* An event of type `type` (event_record.h) whose payload word is `payload`. */
#define TRACE_INTERNAL_TYPED_EVENT(type, payload, category_literal, name_literal, ...)         \
  TRACE_INTERNAL_SITE_RECORD(                                                                  \
      category_literal, TRACE_INTERNAL_NUM_ITEMS(_, ##__VA_ARGS__),                            \
      trace_internal_event(TRACE_INTERNAL_SITE, TRACE_INTERNAL_SITE_STATE, (category_literal), \
                           (name_literal), (type), (payload),                                  \
                           TRACE_INTERNAL_EVENT_ARGS(_, ##__VA_ARGS__)))

#define TRACE_INTERNAL_DURATION_BEGIN(category_literal, name_literal, ...)             \
  TRACE_INTERNAL_TYPED_EVENT(TRACE_INTERNAL_EVENT_DURATION_BEGIN, 0, category_literal, \
                             name_literal, ##__VA_ARGS__)
#define TRACE_INTERNAL_DURATION_END(category_literal, name_literal, ...)                           \
  TRACE_INTERNAL_TYPED_EVENT(TRACE_INTERNAL_EVENT_DURATION_END, 0, category_literal, name_literal, \
                             ##__VA_ARGS__)

/* Async and flow events: kind is ASYNC_BEGIN, ASYNC_INSTANT, ASYNC_END,
 * FLOW_BEGIN, FLOW_STEP or FLOW_END. */
#define TRACE_INTERNAL_ID_EVENT(kind, id_type, category_literal, name_literal, id, ...) \
  TRACE_INTERNAL_TYPED_EVENT(TRACE_INTERNAL_EVENT_##kind, (uint64_t)(id_type)(id),      \
                             category_literal, name_literal, ##__VA_ARGS__)

#define TRACE_INTERNAL_ASYNC_BEGIN(category_literal, name_literal, async_id, ...)                  \
  TRACE_INTERNAL_ID_EVENT(ASYNC_BEGIN, trace_async_id_t, category_literal, name_literal, async_id, \
                          ##__VA_ARGS__)
#define TRACE_INTERNAL_ASYNC_INSTANT(category_literal, name_literal, async_id, ...)        \
  TRACE_INTERNAL_ID_EVENT(ASYNC_INSTANT, trace_async_id_t, category_literal, name_literal, \
                          async_id, ##__VA_ARGS__)
#define TRACE_INTERNAL_ASYNC_END(category_literal, name_literal, async_id, ...)                  \
  TRACE_INTERNAL_ID_EVENT(ASYNC_END, trace_async_id_t, category_literal, name_literal, async_id, \
                          ##__VA_ARGS__)
#define TRACE_INTERNAL_FLOW_BEGIN(category_literal, name_literal, flow_id, ...)                 \
  TRACE_INTERNAL_ID_EVENT(FLOW_BEGIN, trace_flow_id_t, category_literal, name_literal, flow_id, \
                          ##__VA_ARGS__)
#define TRACE_INTERNAL_FLOW_STEP(category_literal, name_literal, flow_id, ...)                 \
  TRACE_INTERNAL_ID_EVENT(FLOW_STEP, trace_flow_id_t, category_literal, name_literal, flow_id, \
                          ##__VA_ARGS__)
#define TRACE_INTERNAL_FLOW_END(category_literal, name_literal, flow_id, ...)                 \
  TRACE_INTERNAL_ID_EVENT(FLOW_END, trace_flow_id_t, category_literal, name_literal, flow_id, \
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

/* TRACE_ALERT. A string literal longer than 14 characters does not compile
 * (__builtin_constant_p is true for a literal, false for a pointer or an
 * array variable, whose names are cut at run time instead). */
#define TRACE_INTERNAL_CHECK_ALERT_NAME(alert_name)                                           \
  TRACE_INTERNAL_STATIC_ASSERT(!__builtin_constant_p(alert_name) || sizeof(alert_name) <= 15, \
                               "TRACE_ALERT: an alert name is at most 14 characters")
#define TRACE_INTERNAL_ALERT(category_literal, alert_name)                           \
  do {                                                                               \
    TRACE_INTERNAL_CHECK_ALERT_NAME(alert_name);                                     \
    TRACE_INTERNAL_SITE_RECORD(                                                      \
        category_literal, 0,                                                         \
        trace_internal_alert_at_site(TRACE_INTERNAL_SITE, TRACE_INTERNAL_SITE_STATE, \
                                     (category_literal), (alert_name)));             \
  } while (0)

#define TRACE_INTERNAL_BLOB(type, name_literal, blob, blob_size)                          \
  TRACE_INTERNAL_CONTEXT_RECORD(0, trace_internal_write_blob_record_and_release_context(  \
                                       TRACE_INTERNAL_CONTEXT, (trace_blob_type_t)(type), \
                                       (name_literal), (const void*)(blob), (size_t)(blob_size)))

#ifndef NTRACE
/* With no trace running, a name the program gives its own process or
 * thread is still remembered (a later trace's stop writes it): programs
 * name their threads at start-up, before anyone traces them. */
#define TRACE_INTERNAL_KERNEL_OBJECT(pid, tid, name, ...)                                       \
  do {                                                                                          \
    TRACE_INTERNAL_CHECK_ITEMS(TRACE_INTERNAL_NUM_ITEMS(_, ##__VA_ARGS__));                     \
    trace_context_t* trace_internal_context = trace_acquire_context();                          \
    if (__builtin_expect(trace_internal_context != NULL, 0)) {                                  \
      trace_internal_write_kernel_object_record_and_release_context(                            \
          TRACE_INTERNAL_CONTEXT, (trace_koid_t)(pid), (trace_koid_t)(tid), (name),             \
          TRACE_INTERNAL_EVENT_ARGS(_, ##__VA_ARGS__));                                         \
    } else {                                                                                    \
      trace_internal_note_kernel_object_name((trace_koid_t)(pid), (trace_koid_t)(tid), (name)); \
    }                                                                                           \
  } while (0)
#else
#define TRACE_INTERNAL_KERNEL_OBJECT(pid, tid, name, ...)                           \
  TRACE_INTERNAL_CONTEXT_RECORD(                                                    \
      TRACE_INTERNAL_NUM_ITEMS(_, ##__VA_ARGS__),                                   \
      trace_internal_write_kernel_object_record_and_release_context(                \
          TRACE_INTERNAL_CONTEXT, (trace_koid_t)(pid), (trace_koid_t)(tid), (name), \
          TRACE_INTERNAL_EVENT_ARGS(_, ##__VA_ARGS__)))
#endif

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
