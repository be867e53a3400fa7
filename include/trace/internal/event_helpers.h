/* Not for direct use: the out-of-line functions behind the <trace/event.h>
 * macros (Fuchsia's trace_internal_write_*_and_release_context, API.md §2).
 *
 * Argument arrays come from the macros with names not yet registered:
 *   args[i].name_ref = { encoded_value 0, inline_string = the name literal }.
 * A string value in the same "unregistered literal" form (encoded_value 0,
 * inline_string != NULL) is interned like a name (TA_STRING_LITERAL); an
 * inline ref (trace_make_inline_*) is copied into the record (TA_STRING).
 * Each helper takes the timestamp (unless given), registers the thread, the
 * name and the argument names, writes the record and releases the context.
 * It never fails visibly: a record that cannot be written is counted as
 * dropped. */
#ifndef TRACE_INTERNAL_EVENT_HELPERS_H_
#define TRACE_INTERNAL_EVENT_HELPERS_H_

#include "trace-engine/context.h"
#include "trace-engine/record_path.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The "unregistered literal" string ref. */
static inline trace_string_ref_t trace_internal_make_literal_ref(const char* literal) {
  trace_string_ref_t ref;
  ref.encoded_value = TRACE_ENCODED_STRING_REF_EMPTY;
  ref.inline_string = literal;
  return ref;
}

TRACE_EXPORT void trace_internal_write_instant_event_record_and_release_context(
    trace_context_t* context, const trace_string_ref_t* category_ref, const char* name_literal,
    trace_scope_t scope, trace_arg_t* args, size_t num_args);

/* The out-of-line half of a call site's inline record path (event_record.h:
 * TRACE_INSTANT, TRACE_COUNTER, TRACE_DURATION_BEGIN / _END, async and flow
 * events), made when the site's state word (read by the inline check into
 * `state`) is not TRACE_SITE_DISABLED and the inline path could not write the
 * record: the rest of the site check, then, if the category is on, the record
 * of FXT event type `event_type` with `payload` as its payload word (the
 * instant's scope, the counter, async or flow id; ignored by duration begin
 * and end), the thread's cache of the site's record filled, the release. */
TRACE_EXPORT void trace_internal_write_event_at_site(trace_site_t* site, uint64_t state,
                                                     const char* category_literal,
                                                     const char* name_literal, unsigned event_type,
                                                     uint64_t payload, trace_arg_t* args,
                                                     size_t num_args);

/* The same for an instant (the form of the first inline TRACE_INSTANT). */
TRACE_EXPORT void trace_internal_write_instant_at_site(trace_site_t* site, uint64_t state,
                                                       const char* category_literal,
                                                       const char* name_literal,
                                                       trace_scope_t scope, trace_arg_t* args,
                                                       size_t num_args);

/* TRACE_ALERT with the site not disabled: the rest of the site check, then
 * the alert's instant event and the alert itself (src/engine/alerts.c). */
TRACE_EXPORT void trace_internal_alert_at_site(trace_site_t* site, uint64_t state,
                                               const char* category_literal,
                                               const char* alert_name);

TRACE_EXPORT void trace_internal_write_counter_event_record_and_release_context(
    trace_context_t* context, const trace_string_ref_t* category_ref, const char* name_literal,
    trace_counter_id_t counter_id, trace_arg_t* args, size_t num_args);

TRACE_EXPORT void trace_internal_write_duration_begin_event_record_and_release_context(
    trace_context_t* context, const trace_string_ref_t* category_ref, const char* name_literal,
    trace_arg_t* args, size_t num_args);

TRACE_EXPORT void trace_internal_write_duration_end_event_record_and_release_context(
    trace_context_t* context, const trace_string_ref_t* category_ref, const char* name_literal,
    trace_arg_t* args, size_t num_args);

#define TRACE_INTERNAL_DECLARE_ID_HELPER(kind, id_type)                                           \
  TRACE_EXPORT void trace_internal_write_##kind##_event_record_and_release_context(               \
      trace_context_t* context, const trace_string_ref_t* category_ref, const char* name_literal, \
      id_type id, trace_arg_t* args, size_t num_args)
TRACE_INTERNAL_DECLARE_ID_HELPER(async_begin, trace_async_id_t);
TRACE_INTERNAL_DECLARE_ID_HELPER(async_instant, trace_async_id_t);
TRACE_INTERNAL_DECLARE_ID_HELPER(async_end, trace_async_id_t);
TRACE_INTERNAL_DECLARE_ID_HELPER(flow_begin, trace_flow_id_t);
TRACE_INTERNAL_DECLARE_ID_HELPER(flow_step, trace_flow_id_t);
TRACE_INTERNAL_DECLARE_ID_HELPER(flow_end, trace_flow_id_t);
#undef TRACE_INTERNAL_DECLARE_ID_HELPER

/* TRACE_INSTAFLOW_*: duration begin (with the args), the flow event (no
 * args) and duration end (no args), all with one timestamp. flow_kind is 8
 * (begin), 9 (step) or 10 (end), the FXT event types. */
TRACE_EXPORT void trace_internal_write_instaflow_and_release_context(
    trace_context_t* context, const trace_string_ref_t* category_ref, const char* name_literal,
    unsigned flow_kind, trace_flow_id_t flow_id, trace_arg_t* args, size_t num_args);

/* Large blob, format 0 / 1. */
TRACE_EXPORT void trace_internal_write_blob_event_record_and_release_context(
    trace_context_t* context, const trace_string_ref_t* category_ref, const char* name_literal,
    const void* blob, size_t blob_size, trace_arg_t* args, size_t num_args);
TRACE_EXPORT void trace_internal_write_blob_attachment_record_and_release_context(
    trace_context_t* context, const trace_string_ref_t* category_ref, const char* name_literal,
    const void* blob, size_t blob_size);

/* Small blob (TRACE_BLOB): no category; context from trace_acquire_context(). */
TRACE_EXPORT void trace_internal_write_blob_record_and_release_context(trace_context_t* context,
                                                                       trace_blob_type_t type,
                                                                       const char* name_literal,
                                                                       const void* blob,
                                                                       size_t blob_size);

/* TRACE_KERNEL_OBJECT, Linux form: tid 0 → a process-info record for pid;
 * otherwise a thread-info record for (pid, tid), with arg "process" = pid.
 * name (any string, copied; NULL = unnamed) is never looked up in /proc, so
 * this makes no syscall. Custom args follow the engine's own. No category. */
TRACE_EXPORT void trace_internal_write_kernel_object_record_and_release_context(
    trace_context_t* context, trace_koid_t pid, trace_koid_t tid, const char* name,
    trace_arg_t* args, size_t num_args);
/* TRACE_KERNEL_OBJECT with no trace running: a name the program gives its
 * own process or thread is remembered (the stop of a later trace writes
 * it); nothing else. */
TRACE_EXPORT void trace_internal_note_kernel_object_name(trace_koid_t pid, trace_koid_t tid,
                                                         const char* name);

/* Virtual threads: explicit timestamp; the thread is (this process,
 * vthread_id | 1 << 63) named vthread_literal. */
TRACE_EXPORT void trace_internal_write_vthread_duration_begin_event_record_and_release_context(
    trace_context_t* context, const trace_string_ref_t* category_ref, const char* name_literal,
    const char* vthread_literal, trace_vthread_id_t vthread_id, trace_ticks_t ticks,
    trace_arg_t* args, size_t num_args);
TRACE_EXPORT void trace_internal_write_vthread_duration_end_event_record_and_release_context(
    trace_context_t* context, const trace_string_ref_t* category_ref, const char* name_literal,
    const char* vthread_literal, trace_vthread_id_t vthread_id, trace_ticks_t ticks,
    trace_arg_t* args, size_t num_args);
/* flow_kind as for instaflow. */
TRACE_EXPORT void trace_internal_write_vthread_flow_event_record_and_release_context(
    trace_context_t* context, const trace_string_ref_t* category_ref, const char* name_literal,
    const char* vthread_literal, trace_vthread_id_t vthread_id, unsigned flow_kind,
    trace_flow_id_t flow_id, trace_ticks_t ticks, trace_arg_t* args, size_t num_args);

/* TRACE_DURATION's scope object. start_time 0 means "nothing to write"
 * (tracing was off or the category disabled when the scope began). state:
 * the site's word when it began (TRACE_SITE_ENABLED or TRACE_SITE_SEVERAL),
 * which names the sessions the duration can go to. */
typedef struct trace_internal_duration_scope {
  const char* category_literal;
  const char* name_literal;
  trace_site_t* site;
  trace_ticks_t start_time;
  trace_arg_t* args;
  size_t num_args;
  uint64_t state;
} trace_internal_duration_scope_t;

/* At the exit of a TRACE_DURATION that started, out of line (event_record.h
 * has the inline exit): one duration-complete record from start_time to now
 * in each session that enabled the category when the scope began (`state`,
 * the site's word then, a TRACE_SITE_SEVERAL word naming only the sessions
 * the inline exit has not written) and still runs that trace, and the
 * thread's cache of the site's record filled; 0: every session enabling
 * the category now. Takes the scope's fields, not the scope, so that the
 * scope's address never leaves the caller (it then lives in registers). */
TRACE_EXPORT void trace_internal_write_duration_at_site(trace_site_t* site, uint64_t state,
                                                        const char* category_literal,
                                                        const char* name_literal,
                                                        trace_ticks_t start_time, trace_arg_t* args,
                                                        size_t num_args);

/* The same from the scope (the exit of the first inline TRACE_DURATION):
 * nothing when start_time is 0. */
TRACE_EXPORT void trace_internal_duration_scope_end(trace_internal_duration_scope_t* scope);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* TRACE_INTERNAL_EVENT_HELPERS_H_ */
