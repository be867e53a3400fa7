/* Public API: the instrumentation macros (Fuchsia's <lib/trace/event.h>,
 * API.md §1-§4), in C11 and C++17. This is the only header instrumented
 * code includes; docs/instrumentation.md is the guide.
 *
 *     #include <trace/event.h>
 *
 *     void DoSomething(int a, const char* b) {
 *       TRACE_DURATION("example", "DoSomething", "a", TA_INT32(a), "b", TA_STRING(b));
 *       ...
 *     }
 *
 * Rules shared by every event macro:
 *  - category_literal, name_literal and vthread_literal are NUL-terminated
 *    strings with static storage (the engine caches them by address for the
 *    whole trace); argument names must be string literals.
 *  - Arguments are "name", value pairs, 0 to TRACE_MAX_ARGS (15); more, or an
 *    odd number of items, is a compile error. A value is a TA_* macro or a
 *    plain value whose type is inferred (_Generic in C, overloads in C++).
 *  - Nothing but the category is evaluated unless the category is enabled;
 *    while tracing is off a call site costs one load and one predicted
 *    branch.
 *  - Thread-safe and lock-free; a macro never blocks and never fails
 *    visibly: a record that does not fit is dropped and counted.
 *  - With NTRACE defined before the include, every macro compiles to
 *    nothing that runs and references no engine symbol; the arguments are
 *    still type-checked. TRACE_NONCE() still calls trace_generate_nonce().
 *    TRACE_ALERT sends nothing.
 *
 * The macros are statements (do { } while (0)) except TRACE_DURATION, which
 * declares objects in the enclosing block, and the expressions
 * TRACE_ENABLED, TRACE_CATEGORY_ENABLED, TRACE_NONCE and TA_*. */
#ifndef TRACE_EVENT_H_
#define TRACE_EVENT_H_

#include "trace/internal/event_internal.h"

/* ---- state ------------------------------------------------------------------ */

/* bool: tracing is on (the engine is started or stopping). */
#define TRACE_ENABLED() TRACE_INTERNAL_ENABLED()

/* bool: tracing is on and category_literal is enabled. Uses a per-call-site
 * cache; may write the category's string record. Use it to skip computing
 * expensive arguments. */
#define TRACE_CATEGORY_ENABLED(category_literal) TRACE_INTERNAL_CATEGORY_ENABLED(category_literal)

/* uint64_t: a process-unique, never-zero id for async and flow events. Not
 * disabled by NTRACE. */
#define TRACE_NONCE() TRACE_INTERNAL_NONCE()

/* ---- events ----------------------------------------------------------------- */

/* Instant event; scope is TRACE_SCOPE_THREAD, TRACE_SCOPE_PROCESS or
 * TRACE_SCOPE_GLOBAL. */
#define TRACE_INSTANT(category_literal, name_literal, scope, ...) \
  TRACE_INTERNAL_INSTANT(category_literal, name_literal, scope, ##__VA_ARGS__)

/* Counter event: at least one argument, each a numeric series; counter_id
 * (trace_counter_id_t) separates counters of the same name. */
#define TRACE_COUNTER(category_literal, name_literal, counter_id, arg1, ...) \
  TRACE_INTERNAL_COUNTER(category_literal, name_literal, counter_id, arg1, ##__VA_ARGS__)

/* Scoped duration: starts when the statement runs (if the category is
 * enabled then) and writes one duration-complete event when the enclosing
 * block exits (if the category is still enabled). A declaration: put it
 * where a declaration may stand. The argument values are taken at entry;
 * string values are borrowed until the block exits. */
#define TRACE_DURATION(category_literal, name_literal, ...) \
  TRACE_INTERNAL_DURATION(category_literal, name_literal, ##__VA_ARGS__)

/* Duration begin / end events; pair them on one thread (they nest). */
#define TRACE_DURATION_BEGIN(category_literal, name_literal, ...) \
  TRACE_INTERNAL_DURATION_BEGIN(category_literal, name_literal, ##__VA_ARGS__)
#define TRACE_DURATION_END(category_literal, name_literal, ...) \
  TRACE_INTERNAL_DURATION_END(category_literal, name_literal, ##__VA_ARGS__)

/* Async events, matched by (process, category, name, async_id). */
#define TRACE_ASYNC_BEGIN(category_literal, name_literal, async_id, ...) \
  TRACE_INTERNAL_ASYNC_BEGIN(category_literal, name_literal, async_id, ##__VA_ARGS__)
#define TRACE_ASYNC_INSTANT(category_literal, name_literal, async_id, ...) \
  TRACE_INTERNAL_ASYNC_INSTANT(category_literal, name_literal, async_id, ##__VA_ARGS__)
#define TRACE_ASYNC_END(category_literal, name_literal, async_id, ...) \
  TRACE_INTERNAL_ASYNC_END(category_literal, name_literal, async_id, ##__VA_ARGS__)

/* Flow events, matched by (category, name, flow_id); each attaches to the
 * enclosing duration. */
#define TRACE_FLOW_BEGIN(category_literal, name_literal, flow_id, ...) \
  TRACE_INTERNAL_FLOW_BEGIN(category_literal, name_literal, flow_id, ##__VA_ARGS__)
#define TRACE_FLOW_STEP(category_literal, name_literal, flow_id, ...) \
  TRACE_INTERNAL_FLOW_STEP(category_literal, name_literal, flow_id, ##__VA_ARGS__)
#define TRACE_FLOW_END(category_literal, name_literal, flow_id, ...) \
  TRACE_INTERNAL_FLOW_END(category_literal, name_literal, flow_id, ##__VA_ARGS__)

/* A flow point with its own zero-length duration: duration begin (with the
 * arguments), the flow event and duration end, all with one timestamp. */
#define TRACE_INSTAFLOW_BEGIN(category_literal, name_literal, flow_id, ...) \
  TRACE_INTERNAL_INSTAFLOW_BEGIN(category_literal, name_literal, flow_id, ##__VA_ARGS__)
#define TRACE_INSTAFLOW_STEP(category_literal, name_literal, flow_id, ...) \
  TRACE_INTERNAL_INSTAFLOW_STEP(category_literal, name_literal, flow_id, ##__VA_ARGS__)
#define TRACE_INSTAFLOW_END(category_literal, name_literal, flow_id, ...) \
  TRACE_INTERNAL_INSTAFLOW_END(category_literal, name_literal, flow_id, ##__VA_ARGS__)

/* Large blob record, format 0 (timestamp, thread, arguments), or format 1
 * (category and name only). From about 32 KiB on, a chain of records that
 * readers knowing only 12-bit sizes skip right (docs/instrumentation.md,
 * "Large blobs"); dropped and counted if the chain would exceed 256 KiB
 * (largest blob: 262,056 bytes for an attachment). */
#define TRACE_BLOB_EVENT(category_literal, name_literal, blob, blob_size, ...) \
  TRACE_INTERNAL_BLOB_EVENT(category_literal, name_literal, blob, blob_size, ##__VA_ARGS__)
#define TRACE_BLOB_ATTACHMENT(category_literal, name_literal, blob, blob_size) \
  TRACE_INTERNAL_BLOB_ATTACHMENT(category_literal, name_literal, blob, blob_size)

/* Alert (API.md §3, PROTOCOL.md §6.2): if category_literal is enabled,
 * records an instant event named alert_name on this thread (argument
 * alert_sent: whether the alert went out) and sends the alert to the trace
 * manager, which passes it to the controlling client (`trace record
 * --trigger=NAME:stop` stops the trace there; docs/flight-recorder.md).
 * alert_name: at most 14 characters; a longer string literal does not
 * compile, a longer run-time string is cut to 14 (and counted). It need not
 * be a literal (it is copied). Never blocks: at most 16 alerts a second per
 * process go out; the rest are dropped, counted and marked in the trace
 * (alert_sent=false). Disabled, it costs what any disabled call site costs. */
#define TRACE_ALERT(category_literal, alert_name) TRACE_INTERNAL_ALERT(category_literal, alert_name)

/* Small blob record (deprecated in Fuchsia); type is a trace_blob_type_t,
 * blob_size <= TRACE_MAX_BLOB_SIZE. No category check: written whenever
 * tracing is on. */
#define TRACE_BLOB(type, name_literal, blob, blob_size) \
  TRACE_INTERNAL_BLOB(type, name_literal, blob, blob_size)

/* Kernel object record, the Linux form of Fuchsia's TRACE_KERNEL_OBJECT(handle):
 * tid 0 → a process-info record for pid, else a thread-info record for
 * (pid, tid) with the "process" argument; name is any string (copied, NULL =
 * unnamed); the arguments follow the engine's own. No category check. */
#define TRACE_KERNEL_OBJECT(pid, tid, name, ...) \
  TRACE_INTERNAL_KERNEL_OBJECT(pid, tid, name, ##__VA_ARGS__)

/* Events on a virtual thread (koid vthread_id | 1 << 63 in this process,
 * named vthread_literal), with an explicit timestamp in the engine's ticks
 * (trace_context_ticks_now()). */
#define TRACE_VTHREAD_DURATION_BEGIN(category_literal, name_literal, vthread_literal, vthread_id, \
                                     timestamp, ...)                                              \
  TRACE_INTERNAL_VTHREAD_DURATION_BEGIN(category_literal, name_literal, vthread_literal,          \
                                        vthread_id, timestamp, ##__VA_ARGS__)
#define TRACE_VTHREAD_DURATION_END(category_literal, name_literal, vthread_literal, vthread_id,    \
                                   timestamp, ...)                                                 \
  TRACE_INTERNAL_VTHREAD_DURATION_END(category_literal, name_literal, vthread_literal, vthread_id, \
                                      timestamp, ##__VA_ARGS__)
#define TRACE_VTHREAD_FLOW_BEGIN(category_literal, name_literal, vthread_literal, vthread_id,    \
                                 flow_id, timestamp, ...)                                        \
  TRACE_INTERNAL_VTHREAD_FLOW_BEGIN(category_literal, name_literal, vthread_literal, vthread_id, \
                                    flow_id, timestamp, ##__VA_ARGS__)
#define TRACE_VTHREAD_FLOW_STEP(category_literal, name_literal, vthread_literal, vthread_id,    \
                                flow_id, timestamp, ...)                                        \
  TRACE_INTERNAL_VTHREAD_FLOW_STEP(category_literal, name_literal, vthread_literal, vthread_id, \
                                   flow_id, timestamp, ##__VA_ARGS__)
#define TRACE_VTHREAD_FLOW_END(category_literal, name_literal, vthread_literal, vthread_id,    \
                               flow_id, timestamp, ...)                                        \
  TRACE_INTERNAL_VTHREAD_FLOW_END(category_literal, name_literal, vthread_literal, vthread_id, \
                                  flow_id, timestamp, ##__VA_ARGS__)

/* ---- argument values: each expands to a trace_arg_value_t ------------------ */

#define TA_NULL() TRACE_INTERNAL_TA_NULL()
#define TA_BOOL(b) TRACE_INTERNAL_TA_BOOL(b)
#define TA_INT32(v) TRACE_INTERNAL_TA_INT32(v)
#define TA_UINT32(v) TRACE_INTERNAL_TA_UINT32(v)
#define TA_INT64(v) TRACE_INTERNAL_TA_INT64(v)
#define TA_UINT64(v) TRACE_INTERNAL_TA_UINT64(v)
#define TA_DOUBLE(v) TRACE_INTERNAL_TA_DOUBLE(v)
/* (ptr, length) copied into the record; truncated at 32000 bytes. */
#define TA_CHAR_ARRAY(ptr, len) TRACE_INTERNAL_TA_CHAR_ARRAY(ptr, len)
/* A NUL-terminated string copied into the record (NULL → empty). In C++ also
 * a std::string or std::string_view. */
#define TA_STRING(cstr) TRACE_INTERNAL_TA_STRING(cstr)
/* A string literal, interned in the string table (written once per thread). */
#define TA_STRING_LITERAL(lit) TRACE_INTERNAL_TA_STRING_LITERAL(lit)
#define TA_POINTER(p) TRACE_INTERNAL_TA_POINTER(p)
#define TA_KOID(k) TRACE_INTERNAL_TA_KOID(k)

/* ---- building your own events (API.md §3 helper macros) -------------------
 *
 *     trace_string_ref_t cat;
 *     trace_context_t* c = trace_acquire_context_for_category("cat", &cat);
 *     if (c) {
 *       TRACE_DECLARE_ARGS(c, args, "x", 1);
 *       TRACE_COMPLETE_ARGS(c, args, TRACE_NUM_ARGS(args));
 *       ... trace_context_write_instant_event_record(c, my_ticks, ..., args,
 *                                                    TRACE_NUM_ARGS(args));
 *       trace_release_context(c);
 *     }
 */
#define TRACE_DECLARE_ARGS(context, var, ...) \
  TRACE_INTERNAL_DECLARE_ARGS(context, var, ##__VA_ARGS__)
#define TRACE_COMPLETE_ARGS(context, var, num_args) \
  TRACE_INTERNAL_COMPLETE_ARGS(context, var, num_args)
#define TRACE_NUM_ARGS(var) TRACE_INTERNAL_NUM_ARGS(var)

#endif /* TRACE_EVENT_H_ */
