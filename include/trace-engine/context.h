/* Public API: registration and record writers on an acquired context
 * (API.md §7). Every function is thread-safe in the sense that each thread
 * writes through its own context; every writer discards the record (and
 * counts it as dropped) when it cannot be written, and never blocks.
 *
 * String literals (categories, names, argument names) are cached per thread
 * by address: pass strings with static storage only. */
#ifndef TRACE_ENGINE_CONTEXT_H_
#define TRACE_ENGINE_CONTEXT_H_

#include "trace-engine/instrumentation.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- registration ---- */

TRACE_EXPORT bool trace_context_is_category_enabled(trace_context_t* context,
                                                    const char* category_literal);

/* Indexed ref for a literal (cached per thread by address; the first use
 * writes a string record); inline when the table is full; NULL or "" give
 * the empty ref. */
TRACE_EXPORT void trace_context_register_string_literal(trace_context_t* context,
                                                        const char* string_literal,
                                                        trace_string_ref_t* out_ref);

/* Always takes a new index and writes a string record; inline when indexes or
 * space have run out (out_ref then borrows `string`). */
TRACE_EXPORT void trace_context_register_string_copy(trace_context_t* context, const char* string,
                                                     size_t length, trace_string_ref_t* out_ref);

/* false (and *out_ref untouched) if the category is disabled. */
TRACE_EXPORT bool trace_context_register_category_literal(trace_context_t* context,
                                                          const char* category_literal,
                                                          trace_string_ref_t* out_ref);

/* The calling thread: the first time per trace it writes a thread-info
 * kernel-object record (name from the OS, arg "process" = pid) and a thread
 * record. Inline ref when the 255 thread indexes are used up. */
TRACE_EXPORT void trace_context_register_current_thread(trace_context_t* context,
                                                        trace_thread_ref_t* out_ref);

/* A virtual thread of process_koid (0 = this process): koid =
 * vthread_id | 1 << 63, named vthread_literal; up to 4 cached per thread. */
TRACE_EXPORT void trace_context_register_vthread(trace_context_t* context,
                                                 trace_koid_t process_koid,
                                                 const char* vthread_literal,
                                                 trace_vthread_id_t vthread_id,
                                                 trace_thread_ref_t* out_ref);

/* Takes a new thread index and writes a thread record; the caller writes the
 * thread-info record if it wants a name. */
TRACE_EXPORT void trace_context_register_thread(trace_context_t* context, trace_koid_t process_koid,
                                                trace_koid_t thread_koid,
                                                trace_thread_ref_t* out_ref);

/* ---- event records (FXT.md §8.5) ---- */

TRACE_EXPORT void trace_context_write_instant_event_record(
    trace_context_t* context, trace_ticks_t ticks, const trace_thread_ref_t* thread_ref,
    const trace_string_ref_t* category_ref, const trace_string_ref_t* name_ref, trace_scope_t scope,
    const trace_arg_t* args, size_t num_args);

TRACE_EXPORT void trace_context_write_counter_event_record(
    trace_context_t* context, trace_ticks_t ticks, const trace_thread_ref_t* thread_ref,
    const trace_string_ref_t* category_ref, const trace_string_ref_t* name_ref,
    trace_counter_id_t counter_id, const trace_arg_t* args, size_t num_args);

/* One duration-complete record. */
TRACE_EXPORT void trace_context_write_duration_event_record(
    trace_context_t* context, trace_ticks_t start_ticks, trace_ticks_t end_ticks,
    const trace_thread_ref_t* thread_ref, const trace_string_ref_t* category_ref,
    const trace_string_ref_t* name_ref, const trace_arg_t* args, size_t num_args);

TRACE_EXPORT void trace_context_write_duration_begin_event_record(
    trace_context_t* context, trace_ticks_t ticks, const trace_thread_ref_t* thread_ref,
    const trace_string_ref_t* category_ref, const trace_string_ref_t* name_ref,
    const trace_arg_t* args, size_t num_args);

TRACE_EXPORT void trace_context_write_duration_end_event_record(
    trace_context_t* context, trace_ticks_t ticks, const trace_thread_ref_t* thread_ref,
    const trace_string_ref_t* category_ref, const trace_string_ref_t* name_ref,
    const trace_arg_t* args, size_t num_args);

#define TRACE_INTERNAL_DECLARE_ID_WRITER(name, id_type)                                       \
  TRACE_EXPORT void trace_context_write_##name##_event_record(                                \
      trace_context_t* context, trace_ticks_t ticks, const trace_thread_ref_t* thread_ref,    \
      const trace_string_ref_t* category_ref, const trace_string_ref_t* name_ref, id_type id, \
      const trace_arg_t* args, size_t num_args)
TRACE_INTERNAL_DECLARE_ID_WRITER(async_begin, trace_async_id_t);
TRACE_INTERNAL_DECLARE_ID_WRITER(async_instant, trace_async_id_t);
TRACE_INTERNAL_DECLARE_ID_WRITER(async_end, trace_async_id_t);
TRACE_INTERNAL_DECLARE_ID_WRITER(flow_begin, trace_flow_id_t);
TRACE_INTERNAL_DECLARE_ID_WRITER(flow_step, trace_flow_id_t);
TRACE_INTERNAL_DECLARE_ID_WRITER(flow_end, trace_flow_id_t);
#undef TRACE_INTERNAL_DECLARE_ID_WRITER

/* ---- blobs ---- */

/* Large blob, format 0 (FXT.md §8.11); from 4095 words on a chain of records
 * of under 4096 words each (docs/instrumentation.md, "Large blobs"); dropped
 * and counted if the chain exceeds 256 KiB. */
TRACE_EXPORT void trace_context_write_blob_event_record(
    trace_context_t* context, trace_ticks_t ticks, const trace_thread_ref_t* thread_ref,
    const trace_string_ref_t* category_ref, const trace_string_ref_t* name_ref, const void* blob,
    size_t blob_size, const trace_arg_t* args, size_t num_args);

/* Large blob, format 1; chained and limited the same way. */
TRACE_EXPORT void trace_context_write_blob_attachment_record(trace_context_t* context,
                                                             const trace_string_ref_t* category_ref,
                                                             const trace_string_ref_t* name_ref,
                                                             const void* blob, size_t blob_size);

/* Small blob record (type 5), size <= TRACE_MAX_BLOB_SIZE. */
TRACE_EXPORT void trace_context_write_blob_record(trace_context_t* context, trace_blob_type_t type,
                                                  const trace_string_ref_t* name_ref,
                                                  const void* blob, size_t blob_size);

/* ---- kernel objects, threads, strings, logs ---- */

/* Kernel object record of any type (FXT.md §8.8), in the rolling buffer. */
TRACE_EXPORT void trace_context_write_kernel_object_record(trace_context_t* context,
                                                           trace_koid_t koid, uint32_t object_type,
                                                           const trace_string_ref_t* name_ref,
                                                           const trace_arg_t* args,
                                                           size_t num_args);

/* Process-info kernel object (type PROCESS), durable. */
TRACE_EXPORT void trace_context_write_process_info_record(trace_context_t* context,
                                                          trace_koid_t process_koid,
                                                          const trace_string_ref_t* name_ref);

/* Thread-info kernel object (type THREAD, arg "process" = koid), durable. */
TRACE_EXPORT void trace_context_write_thread_info_record(trace_context_t* context,
                                                         trace_koid_t process_koid,
                                                         trace_koid_t thread_koid,
                                                         const trace_string_ref_t* name_ref);

/* Legacy context switch (scheduling record, sub-type 0). */
TRACE_EXPORT void trace_context_write_context_switch_record(
    trace_context_t* context, trace_ticks_t ticks, trace_cpu_number_t cpu_number,
    trace_thread_state_t outgoing_thread_state, const trace_thread_ref_t* outgoing_thread_ref,
    const trace_thread_ref_t* incoming_thread_ref, trace_thread_priority_t outgoing_priority,
    trace_thread_priority_t incoming_priority);

/* NULL message: nothing. A message longer than one record holds (32744
 * bytes; 32728 with an inline thread) is cut there, at a UTF-8 character
 * boundary. */
TRACE_EXPORT void trace_context_write_log_record(trace_context_t* context, trace_ticks_t ticks,
                                                 const trace_thread_ref_t* thread_ref,
                                                 const char* message, size_t length);

/* Durable. */
TRACE_EXPORT void trace_context_write_initialization_record(trace_context_t* context,
                                                            uint64_t ticks_per_second);

/* Rolling buffer (as in Fuchsia). */
TRACE_EXPORT void trace_context_write_string_record(trace_context_t* context,
                                                    trace_string_index_t index, const char* string,
                                                    size_t length);

/* Durable. */
TRACE_EXPORT void trace_context_write_thread_record(trace_context_t* context,
                                                    trace_thread_index_t index,
                                                    trace_koid_t process_koid,
                                                    trace_koid_t thread_koid);

/* Reserves num_bytes (a multiple of 8, at most 256 KiB) in the rolling
 * buffer; the caller fills it with whole records and then commits it with
 * trace_context_commit_record(), which stores the first record's header
 * last. NULL when full (counted as one dropped record). Each commit goes
 * with one allocation, on the same context while it is held: a streaming
 * save waits for the records allocated and not yet committed. */
TRACE_EXPORT void* trace_context_alloc_record(trace_context_t* context, size_t num_bytes);
TRACE_EXPORT void trace_context_commit_record(trace_context_t* context, void* record,
                                              uint64_t header);

TRACE_EXPORT trace_buffering_mode_t
trace_context_get_buffering_mode(const trace_context_t* context);

/* Current time in the engine's ticks (ns, docs/clock.md). */
TRACE_EXPORT trace_ticks_t trace_context_ticks_now(void);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* TRACE_ENGINE_CONTEXT_H_ */
