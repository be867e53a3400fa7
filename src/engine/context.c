/* <trace-engine/context.h>: registration and record writers on an acquired
 * context. Each writer sizes the record, reserves it in the thread's chunk
 * (or the durable buffer), and writes it in place; the FXT writer stores the
 * header last, which commits the record. */
#include <string.h>

#include "engine/engine_internal.h"
#include "fxt/fxt_blob_chain.h"

/* Space for a record that passed its size checks (`fits`), or NULL: a record
 * that cannot be written at all is dropped and counted like one that found
 * no room. */
static uint64_t* reserve_if(trace_context_t* w, bool fits, size_t words) {
  if (!fits) {
    writer__count_dropped(w);
    return NULL;
  }
  return writer__reserve(w, words);
}

/* ---- registration ---- */

bool trace_context_is_category_enabled(trace_context_t* context, const char* category_literal) {
  /* the context's own session */
  return ATOMIC_LOAD(&trace_engine__generation[context->session]) != 0 &&
         writer__session_enables(engine__of(context), category_literal);
}

void trace_context_register_string_literal(trace_context_t* context, const char* string_literal,
                                           trace_string_ref_t* out_ref) {
  *out_ref = writer__register_literal(context, string_literal);
}

void trace_context_register_string_copy(trace_context_t* context, const char* string, size_t length,
                                        trace_string_ref_t* out_ref) {
  *out_ref = writer__register_copy(context, string, length);
}

bool trace_context_register_category_literal(trace_context_t* context, const char* category_literal,
                                             trace_string_ref_t* out_ref) {
  if (!trace_context_is_category_enabled(context, category_literal)) return false;
  *out_ref = writer__register_literal(context, category_literal);
  return true;
}

void trace_context_register_current_thread(trace_context_t* context, trace_thread_ref_t* out_ref) {
  *out_ref = writer__thread_ref(context);
}

void trace_context_register_vthread(trace_context_t* context, trace_koid_t process_koid,
                                    const char* vthread_literal, trace_vthread_id_t vthread_id,
                                    trace_thread_ref_t* out_ref) {
  trace_context_t* w = context;
  if (process_koid == 0) process_koid = engine__of(w)->pid;
  for (unsigned i = 0; i < WRITER_VTHREAD_CACHE_SIZE; i++) {
    vthread_cache_entry_t* v = &w->vthreads[i];
    if (v->literal == vthread_literal && v->id == vthread_id && v->process_koid == process_koid) {
      *out_ref = v->ref;
      return;
    }
  }
  trace_koid_t koid = vthread_id | (UINT64_C(1) << 63);
  const char* name = vthread_literal ? vthread_literal : "";
  trace_thread_ref_t ref = writer__register_thread(w, process_koid, koid, name, strlen(name));
  vthread_cache_entry_t* v = &w->vthreads[w->vthread_next++ % WRITER_VTHREAD_CACHE_SIZE];
  v->literal = vthread_literal;
  v->id = vthread_id;
  v->process_koid = process_koid;
  v->ref = ref;
  *out_ref = ref;
}

void trace_context_register_thread(trace_context_t* context, trace_koid_t process_koid,
                                   trace_koid_t thread_koid, trace_thread_ref_t* out_ref) {
  *out_ref = writer__register_thread(context, process_koid, thread_koid, NULL, 0);
}

/* ---- events ---- */

void trace_context_write_instant_event_record(trace_context_t* context, trace_ticks_t ticks,
                                              const trace_thread_ref_t* thread_ref,
                                              const trace_string_ref_t* category_ref,
                                              const trace_string_ref_t* name_ref,
                                              trace_scope_t scope, const trace_arg_t* args,
                                              size_t num_args) {
  if ((unsigned)scope > TRACE_SCOPE_GLOBAL) { /* no reader knows it (FXT.md §8.5) */
    writer__count_dropped(context);
    return;
  }
  writer__write_event(context, FXT_EVENT_INSTANT, ticks, thread_ref, category_ref, name_ref, args,
                      num_args, (uint64_t)scope);
}

void trace_context_write_counter_event_record(trace_context_t* context, trace_ticks_t ticks,
                                              const trace_thread_ref_t* thread_ref,
                                              const trace_string_ref_t* category_ref,
                                              const trace_string_ref_t* name_ref,
                                              trace_counter_id_t counter_id,
                                              const trace_arg_t* args, size_t num_args) {
  writer__write_event(context, FXT_EVENT_COUNTER, ticks, thread_ref, category_ref, name_ref, args,
                      num_args, counter_id);
}

void trace_context_write_duration_event_record(trace_context_t* context, trace_ticks_t start_ticks,
                                               trace_ticks_t end_ticks,
                                               const trace_thread_ref_t* thread_ref,
                                               const trace_string_ref_t* category_ref,
                                               const trace_string_ref_t* name_ref,
                                               const trace_arg_t* args, size_t num_args) {
  writer__write_event(context, FXT_EVENT_DURATION_COMPLETE, start_ticks, thread_ref, category_ref,
                      name_ref, args, num_args, end_ticks);
}

void trace_context_write_duration_begin_event_record(trace_context_t* context, trace_ticks_t ticks,
                                                     const trace_thread_ref_t* thread_ref,
                                                     const trace_string_ref_t* category_ref,
                                                     const trace_string_ref_t* name_ref,
                                                     const trace_arg_t* args, size_t num_args) {
  writer__write_event(context, FXT_EVENT_DURATION_BEGIN, ticks, thread_ref, category_ref, name_ref,
                      args, num_args, 0);
}

void trace_context_write_duration_end_event_record(trace_context_t* context, trace_ticks_t ticks,
                                                   const trace_thread_ref_t* thread_ref,
                                                   const trace_string_ref_t* category_ref,
                                                   const trace_string_ref_t* name_ref,
                                                   const trace_arg_t* args, size_t num_args) {
  writer__write_event(context, FXT_EVENT_DURATION_END, ticks, thread_ref, category_ref, name_ref,
                      args, num_args, 0);
}

#define DEFINE_ID_WRITER(kind, id_type, event_type)                                           \
  void trace_context_write_##kind##_event_record(                                             \
      trace_context_t* context, trace_ticks_t ticks, const trace_thread_ref_t* thread_ref,    \
      const trace_string_ref_t* category_ref, const trace_string_ref_t* name_ref, id_type id, \
      const trace_arg_t* args, size_t num_args) {                                             \
    writer__write_event(context, event_type, ticks, thread_ref, category_ref, name_ref, args, \
                        num_args, id);                                                        \
  }
DEFINE_ID_WRITER(async_begin, trace_async_id_t, FXT_EVENT_ASYNC_BEGIN)
DEFINE_ID_WRITER(async_instant, trace_async_id_t, FXT_EVENT_ASYNC_INSTANT)
DEFINE_ID_WRITER(async_end, trace_async_id_t, FXT_EVENT_ASYNC_END)
DEFINE_ID_WRITER(flow_begin, trace_flow_id_t, FXT_EVENT_FLOW_BEGIN)
DEFINE_ID_WRITER(flow_step, trace_flow_id_t, FXT_EVENT_FLOW_STEP)
DEFINE_ID_WRITER(flow_end, trace_flow_id_t, FXT_EVENT_FLOW_END)
#undef DEFINE_ID_WRITER

/* ---- blobs ---- */

/* A large blob as one reservation holding its chain (fxt/fxt_blob_chain.h):
 * the continuations are written and committed first, then the head, whose
 * commit publishes the chain (a run of several chunks carries a provisional
 * header until then). A blob that no chain holds, or whose chain exceeds the
 * largest reservation, is dropped and counted. */
static uint64_t* reserve_chain(trace_context_t* w, fxt_blob_chain_t* chain, bool fits,
                               size_t meta_words, const trace_string_ref_t* name_ref,
                               const void* blob, size_t blob_size) {
  fits = fxt_blob_chain_plan(chain, meta_words, name_ref, blob_size) && fits &&
         chain->words * 8 <= TRACE_ENCODED_INLINE_LARGE_RECORD_MAX_SIZE;
  uint64_t* p = reserve_if(w, fits, chain->words);
  if (p && chain->pieces) /* (a NULL blob of size 0 has none: no arithmetic on it) */
    fxt_write_blob_chain_continuations(p + chain->head_words, chain, name_ref,
                                       (const unsigned char*)blob + chain->head_bytes,
                                       blob_size - chain->head_bytes);
  return p;
}

void trace_context_write_blob_event_record(trace_context_t* context, trace_ticks_t ticks,
                                           const trace_thread_ref_t* thread_ref,
                                           const trace_string_ref_t* category_ref,
                                           const trace_string_ref_t* name_ref, const void* blob,
                                           size_t blob_size, const trace_arg_t* args,
                                           size_t num_args) {
  fxt_blob_chain_t chain;
  size_t meta =
      fxt_large_blob_event_record_words(category_ref, name_ref, thread_ref, args, num_args, 0);
  uint64_t* p =
      reserve_chain(context, &chain, num_args <= TRACE_MAX_ARGS && fxt_args_fit(args, num_args),
                    meta, name_ref, blob, blob_size);
  if (!p) return;
  fxt_write_large_blob_event_record(p, chain.head_words, category_ref, name_ref, ticks, thread_ref,
                                    args, num_args, blob, chain.head_bytes);
  writer__count_written(context);
}

void trace_context_write_blob_attachment_record(trace_context_t* context,
                                                const trace_string_ref_t* category_ref,
                                                const trace_string_ref_t* name_ref,
                                                const void* blob, size_t blob_size) {
  fxt_blob_chain_t chain;
  size_t meta = fxt_large_blob_attachment_record_words(category_ref, name_ref, 0);
  uint64_t* p = reserve_chain(context, &chain, true, meta, name_ref, blob, blob_size);
  if (!p) return;
  fxt_write_large_blob_attachment_record(p, chain.head_words, category_ref, name_ref, blob,
                                         chain.head_bytes);
  writer__count_written(context);
}

void trace_context_write_blob_record(trace_context_t* context, trace_blob_type_t type,
                                     const trace_string_ref_t* name_ref, const void* blob,
                                     size_t blob_size) {
  size_t words = fxt_blob_record_words(name_ref, blob_size);
  /* a long inline name could wrap the size field; the type is one FXT
   * defines (its 8 bits would carry another value cut) */
  bool known = type == TRACE_BLOB_TYPE_DATA || type == TRACE_BLOB_TYPE_LAST_BRANCH ||
               type == TRACE_BLOB_TYPE_PERFETTO;
  uint64_t* p = reserve_if(
      context, known && blob_size <= TRACE_MAX_BLOB_SIZE && words <= FXT_MAX_RECORD_WORDS, words);
  if (!p) return;
  fxt_write_blob_record(p, words, type, name_ref, blob, blob_size);
  writer__count_written(context);
}

/* ---- kernel objects, threads, strings, logs ---- */

void trace_context_write_kernel_object_record(trace_context_t* context, trace_koid_t koid,
                                              uint32_t object_type,
                                              const trace_string_ref_t* name_ref,
                                              const trace_arg_t* args, size_t num_args) {
  size_t words = fxt_kernel_object_record_words(name_ref, args, num_args);
  uint64_t* p =
      reserve_if(context, words <= FXT_MAX_RECORD_WORDS && num_args <= TRACE_MAX_ARGS, words);
  if (!p) return;
  fxt_write_kernel_object_record(p, words, koid, object_type, name_ref, args, num_args);
  writer__count_written(context);
}

void trace_context_write_process_info_record(trace_context_t* context, trace_koid_t process_koid,
                                             const trace_string_ref_t* name_ref) {
  size_t words = fxt_kernel_object_record_words(name_ref, NULL, 0);
  uint64_t* p = writer__reserve_metadata(context, words);
  if (!p) return;
  fxt_write_kernel_object_record(p, words, process_koid, FXT_KOBJ_PROCESS, name_ref, NULL, 0);
  writer__count_written(context);
}

void trace_context_write_thread_info_record(trace_context_t* context, trace_koid_t process_koid,
                                            trace_koid_t thread_koid,
                                            const trace_string_ref_t* name_ref) {
  writer__write_thread_info(context, process_koid, thread_koid, name_ref);
}

void trace_context_write_context_switch_record(trace_context_t* context, trace_ticks_t ticks,
                                               trace_cpu_number_t cpu_number,
                                               trace_thread_state_t outgoing_thread_state,
                                               const trace_thread_ref_t* outgoing_thread_ref,
                                               const trace_thread_ref_t* incoming_thread_ref,
                                               trace_thread_priority_t outgoing_priority,
                                               trace_thread_priority_t incoming_priority) {
  size_t words = fxt_legacy_context_switch_record_words(outgoing_thread_ref, incoming_thread_ref);
  /* FXT.md §8.9.1: the outgoing state is a thread state (0 new .. 5 dead),
   * any but 1, running */
  bool valid = outgoing_thread_state <= 5 && outgoing_thread_state != 1;
  uint64_t* p = reserve_if(context, valid, words);
  if (!p) return;
  fxt_write_legacy_context_switch_record(p, words, ticks, cpu_number, outgoing_thread_state,
                                         outgoing_thread_ref, incoming_thread_ref,
                                         outgoing_priority, incoming_priority);
  writer__count_written(context);
}

void trace_context_write_log_record(trace_context_t* context, trace_ticks_t ticks,
                                    const trace_thread_ref_t* thread_ref, const char* message,
                                    size_t length) {
  if (message == NULL) return;
  /* Cut to what one record holds (FXT_MAX_LOG_MESSAGE_LENGTH, 0x7fff, is
   * more than the 4095 words of a record leave after the header, time and
   * thread: 32744 bytes, 32728 with an inline thread), at a UTF-8 character
   * boundary: a long message loses its end, never the whole record. */
  size_t room = (FXT_MAX_RECORD_WORDS - fxt_log_record_words(thread_ref, 0)) * 8;
  if (length > room) {
    length = room;
    for (int back = 0; back < 3 && length > 0 && ((uint8_t)message[length] & 0xc0) == 0x80; back++)
      length--;
  }
  size_t words = fxt_log_record_words(thread_ref, length);
  uint64_t* p = reserve_if(context, words <= FXT_MAX_RECORD_WORDS, words);
  if (!p) return;
  fxt_write_log_record(p, words, ticks, thread_ref, message, length);
  writer__count_written(context);
}

void trace_context_write_initialization_record(trace_context_t* context,
                                               uint64_t ticks_per_second) {
  if (ticks_per_second == 0) { /* no time could be read (readers reject it) */
    writer__count_dropped(context);
    return;
  }
  uint64_t* p = writer__reserve_metadata(context, 2);
  if (!p) return;
  fxt_write_initialization_record(p, ticks_per_second);
  writer__count_written(context);
}

void trace_context_write_string_record(trace_context_t* context, trace_string_index_t index,
                                       const char* string, size_t length) {
  if (length > TRACE_ENCODED_STRING_REF_MAX_LENGTH) length = TRACE_ENCODED_STRING_REF_MAX_LENGTH;
  /* an index outside 1..0x7fff would be cut into another entry's (FXT.md §8.3) */
  bool valid = index != 0 && index <= TRACE_ENCODED_STRING_REF_MAX_INDEX;
  uint64_t* p = reserve_if(context, valid, fxt_string_record_words(length));
  if (!p) return;
  fxt_write_string_record(p, index, string, length);
  writer__count_written(context);
}

void trace_context_write_thread_record(trace_context_t* context, trace_thread_index_t index,
                                       trace_koid_t process_koid, trace_koid_t thread_koid) {
  /* an index outside 1..255 would be cut into another entry's (FXT.md §5) */
  if (index == 0 || index > TRACE_ENCODED_THREAD_REF_MAX_INDEX) {
    writer__count_dropped(context);
    return;
  }
  uint64_t* p = writer__reserve_metadata(context, 3);
  if (!p) return;
  fxt_write_thread_record(p, index, process_koid, thread_koid);
  writer__count_written(context);
}

void* trace_context_alloc_record(trace_context_t* context, size_t num_bytes) {
  if (num_bytes == 0 || num_bytes % 8 || num_bytes > TRACE_ENCODED_INLINE_LARGE_RECORD_MAX_SIZE) {
    writer__count_dropped(context);
    return NULL;
  }
  void* record = writer__reserve(context, num_bytes / 8);
  if (record) context->open_allocs++; /* a save must wait for it (writer.c, claim) */
  return record;
}

void trace_context_commit_record(trace_context_t* context, void* record, uint64_t header) {
  fxt_commit(record, header);
  if (context->open_allocs) context->open_allocs--;
  writer__count_written(context);
}

trace_buffering_mode_t trace_context_get_buffering_mode(const trace_context_t* context) {
  return (trace_buffering_mode_t)engine__of(context)->mode;
}

trace_ticks_t trace_context_ticks_now(void) { return trace_clock__now_ns(); }
