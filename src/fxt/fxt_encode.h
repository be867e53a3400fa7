/* Not part of the public API: the FXT record encoder, header-inline, shared by
 * the trace engine, the trace manager, the kernel provider and the tools.
 *
 * Usage is two-step, so that a record can be written in place in a buffer
 * that was reserved for exactly its size:
 *
 *     size_t words = fxt_event_record_words(&thread, &cat, &name, args, n, 1);
 *     uint64_t* p  = reserve(words);            // caller's allocator
 *     if (p && words <= FXT_MAX_RECORD_WORDS)
 *       fxt_write_event_record(p, words, FXT_EVENT_INSTANT, ticks, ...);
 *
 * Invariants:
 *   - `p` is 8-byte aligned and has room for `words` words; every writer
 *     writes exactly `words` words (it returns p + words) and nothing else.
 *   - `words` is the value the matching *_words() function returned for the
 *     same arguments; callers check it against FXT_MAX_RECORD_WORDS (or the
 *     large-record limit, plus fxt_args_fit() for the arguments of a large
 *     record) before writing: writers do not check limits.
 *   - The header word is stored last (fxt_commit), so a record in a shared
 *     buffer is never seen torn.
 *   - Streams are zero-padded to a word boundary, reserved bits are 0, and
 *     every field is masked to its width.
 * Thread-safety: pure functions of their arguments; reentrant. */
#ifndef FXTRACE_FXT_ENCODE_H_
#define FXTRACE_FXT_ENCODE_H_

#include <string.h>

#include "fxt/fxt_format.h"
#include "trace-engine/record_path.h"
#include "trace-engine/types.h"

/* ---- bodies shared by several records ---- */

static inline size_t fxt_string_ref_words(const trace_string_ref_t* ref) {
  return trace_is_inline_string_ref(ref) ? fxt_words_for_bytes(trace_inline_string_ref_length(ref))
                                         : 0u;
}

static inline size_t fxt_thread_ref_words(const trace_thread_ref_t* ref) {
  return trace_is_inline_thread_ref(ref) ? 2u : 0u;
}

static inline uint64_t* fxt_put_stream(uint64_t* p, const void* data, size_t length) {
  if (length == 0) return p;
  size_t words = fxt_words_for_bytes(length);
  p[words - 1] = 0; /* padding; the copy below overwrites the data part */
  memcpy(p, data, length);
  return p + words;
}

static inline uint64_t* fxt_put_string_ref(uint64_t* p, const trace_string_ref_t* ref) {
  if (!trace_is_inline_string_ref(ref)) return p;
  return fxt_put_stream(p, ref->inline_string, trace_inline_string_ref_length(ref));
}

static inline uint64_t* fxt_put_thread_ref(uint64_t* p, const trace_thread_ref_t* ref) {
  if (!trace_is_inline_thread_ref(ref)) return p;
  p[0] = ref->inline_process_koid;
  p[1] = ref->inline_thread_koid;
  return p + 2;
}

/* ---- arguments (FXT.md §10) ---- */

/* The argument types whose value is one word after the name (their
 * members share the first word of the value union, so v->uint64_value reads
 * any), and the value bits an int32, uint32 or bool argument keeps in its
 * header word: the definitions the macros' inline record path uses. */
static inline bool fxt_arg_has_value_word(unsigned type) {
  return trace_engine__arg_has_value_word(type);
}
static inline uint64_t fxt_arg_header_value(const trace_arg_value_t* v) {
  return trace_engine__arg_header_value(v);
}

static inline size_t fxt_arg_words(const trace_arg_t* arg) {
  size_t words = 1u + fxt_string_ref_words(&arg->name_ref);
  if (fxt_arg_has_value_word(arg->value.type)) return words + 1u;
  switch (arg->value.type) {
    case TRACE_ARG_STRING:
      return words + fxt_string_ref_words(&arg->value.string_value_ref);
    case TRACE_ARG_BLOB:
      return words + fxt_words_for_bytes(arg->value.blob_value.size);
    default: /* null, int32, uint32, bool: value in the header */
      return words;
  }
}

static inline size_t fxt_args_words(const trace_arg_t* args, size_t num_args) {
  size_t words = 0;
  for (size_t i = 0; i < num_args; i++) words += fxt_arg_words(&args[i]);
  return words;
}

/* True when every argument fits its 12-bit size field. Normal records are
 * bounded by FXT_MAX_RECORD_WORDS anyway; large records must check this. */
static inline bool fxt_args_fit(const trace_arg_t* args, size_t num_args) {
  for (size_t i = 0; i < num_args; i++)
    if (fxt_arg_words(&args[i]) > FXT_MAX_ARG_WORDS) return false;
  return true;
}

/* One argument, fxt_arg_words(arg) words. The header goes in first with its
 * size field taken from the words actually written, so that the value is
 * classified by one switch instead of being re-sized here. */
static inline uint64_t* fxt_put_arg(uint64_t* p, const trace_arg_t* arg) {
  const trace_arg_value_t* v = &arg->value;
  uint64_t* const start = p++;
  uint64_t header = FXT_FIELD(v->type, 0, 3) | FXT_FIELD(arg->name_ref.encoded_value, 16, 31) |
                    fxt_arg_header_value(v);
  p = fxt_put_string_ref(p, &arg->name_ref);
  switch (v->type) {
    case TRACE_ARG_STRING:
      header |= FXT_FIELD(v->string_value_ref.encoded_value, 32, 47);
      p = fxt_put_string_ref(p, &v->string_value_ref);
      break;
    case TRACE_ARG_BLOB:
      header |= FXT_FIELD(v->blob_value.size, 32, 63);
      p = fxt_put_stream(p, v->blob_value.data, v->blob_value.size);
      break;
    default: /* null, int32, uint32, bool: the header alone */
      if (fxt_arg_has_value_word(v->type)) *p++ = v->uint64_value;
      break;
  }
  *start = header | FXT_FIELD((uint64_t)(p - start), 4, 15);
  return p;
}

static inline uint64_t* fxt_put_args(uint64_t* p, const trace_arg_t* args, size_t num_args) {
  for (size_t i = 0; i < num_args; i++) p = fxt_put_arg(p, &args[i]);
  return p;
}

static inline uint64_t fxt_header(unsigned type, size_t words) {
  return FXT_FIELD(type, 0, 3) | FXT_FIELD(words, 4, 15);
}

/* Every writer stores the header word last, with release order: a record in
 * a shared buffer exists once its header is non-zero, and whoever reads a
 * non-zero header with acquire order sees the whole body (the engine's
 * commit rule, docs/buffer-layout.md). On x86 this is a plain store. */
static inline void fxt_commit(uint64_t* record, uint64_t header) {
  __atomic_store_n(record, header, __ATOMIC_RELEASE);
}

/* ---- metadata (type 0, FXT.md §8.1) ---- */

static inline uint64_t* fxt_write_magic_record(uint64_t* p) {
  *p = FXT_MAGIC_RECORD;
  return p + 1;
}

/* Names are truncated to 255 bytes (the 8-bit length field). */
static inline size_t fxt_provider_info_words(size_t name_length) {
  if (name_length > FXT_MAX_PROVIDER_NAME_LENGTH) name_length = FXT_MAX_PROVIDER_NAME_LENGTH;
  return 1u + fxt_words_for_bytes(name_length);
}

static inline uint64_t* fxt_write_provider_info_record(uint64_t* p, uint32_t provider_id,
                                                       const char* name, size_t name_length) {
  if (name_length > FXT_MAX_PROVIDER_NAME_LENGTH) name_length = FXT_MAX_PROVIDER_NAME_LENGTH;
  uint64_t* const record = p++;
  uint64_t* const end = fxt_put_stream(p, name, name_length);
  fxt_commit(record, fxt_header(FXT_RECORD_METADATA, fxt_provider_info_words(name_length)) |
                         FXT_FIELD(FXT_METADATA_PROVIDER_INFO, 16, 19) |
                         FXT_FIELD(provider_id, 20, 51) | FXT_FIELD(name_length, 52, 59));
  return end;
}

static inline uint64_t* fxt_write_provider_section_record(uint64_t* p, uint32_t provider_id) {
  *p = fxt_header(FXT_RECORD_METADATA, 1) | FXT_FIELD(FXT_METADATA_PROVIDER_SECTION, 16, 19) |
       FXT_FIELD(provider_id, 20, 51);
  return p + 1;
}

static inline uint64_t* fxt_write_provider_event_record(uint64_t* p, uint32_t provider_id,
                                                        unsigned event_id) {
  *p = fxt_header(FXT_RECORD_METADATA, 1) | FXT_FIELD(FXT_METADATA_PROVIDER_EVENT, 16, 19) |
       FXT_FIELD(provider_id, 20, 51) | FXT_FIELD(event_id, 52, 55);
  return p + 1;
}

/* ---- initialization, string, thread (types 1-3) ---- */

static inline uint64_t* fxt_write_initialization_record(uint64_t* p, uint64_t ticks_per_second) {
  p[1] = ticks_per_second;
  fxt_commit(p, fxt_header(FXT_RECORD_INITIALIZATION, 2));
  return p + 2;
}

static inline size_t fxt_string_record_words(size_t length) {
  return 1u + fxt_words_for_bytes(length);
}

/* length <= TRACE_ENCODED_STRING_REF_MAX_LENGTH; index in 1..0x7fff. */
static inline uint64_t* fxt_write_string_record(uint64_t* p, trace_string_index_t index,
                                                const char* string, size_t length) {
  uint64_t* const record = p++;
  uint64_t* const end = fxt_put_stream(p, string, length);
  fxt_commit(record, fxt_header(FXT_RECORD_STRING, fxt_string_record_words(length)) |
                         FXT_FIELD(index, 16, 30) | FXT_FIELD(length, 32, 46));
  return end;
}

static inline uint64_t* fxt_write_thread_record(uint64_t* p, trace_thread_index_t index,
                                                trace_koid_t process_koid,
                                                trace_koid_t thread_koid) {
  p[1] = process_koid;
  p[2] = thread_koid;
  fxt_commit(p, fxt_header(FXT_RECORD_THREAD, 3) | FXT_FIELD(index, 16, 23));
  return p + 3;
}

/* ---- events (type 4, FXT.md §8.5) ----
 * payload_words is 1 for every event type but duration begin and end, which
 * have none. For instants the payload is the scope word (trace_scope_t),
 * which Fuchsia's writers emit and its C++ reader requires. */

static inline size_t fxt_event_payload_words(unsigned event_type) {
  return (event_type == FXT_EVENT_DURATION_BEGIN || event_type == FXT_EVENT_DURATION_END) ? 0u : 1u;
}

static inline size_t fxt_event_record_words(unsigned event_type, const trace_thread_ref_t* thread,
                                            const trace_string_ref_t* category,
                                            const trace_string_ref_t* name, const trace_arg_t* args,
                                            size_t num_args) {
  return 2u + fxt_thread_ref_words(thread) + fxt_string_ref_words(category) +
         fxt_string_ref_words(name) + fxt_args_words(args, num_args) +
         fxt_event_payload_words(event_type);
}

static inline uint64_t* fxt_write_event_record(
    uint64_t* p, size_t words, unsigned event_type, trace_ticks_t ticks,
    const trace_thread_ref_t* thread, const trace_string_ref_t* category,
    const trace_string_ref_t* name, const trace_arg_t* args, size_t num_args, uint64_t payload) {
  uint64_t* const record = p++;
  *p++ = ticks;
  p = fxt_put_thread_ref(p, thread);
  p = fxt_put_string_ref(p, category);
  p = fxt_put_string_ref(p, name);
  p = fxt_put_args(p, args, num_args);
  if (fxt_event_payload_words(event_type)) *p++ = payload;
  uint64_t* const end = p;
  fxt_commit(record, fxt_header(FXT_RECORD_EVENT, words) | FXT_FIELD(event_type, 16, 19) |
                         FXT_FIELD(num_args, 20, 23) | FXT_FIELD(thread->encoded_value, 24, 31) |
                         FXT_FIELD(category->encoded_value, 32, 47) |
                         FXT_FIELD(name->encoded_value, 48, 63));
  return end;
}

/* ---- blob (type 5), payload size <= FXT_MAX_SMALL_BLOB_SIZE ---- */

static inline size_t fxt_blob_record_words(const trace_string_ref_t* name, size_t size) {
  return 1u + fxt_string_ref_words(name) + fxt_words_for_bytes(size);
}

static inline uint64_t* fxt_write_blob_record(uint64_t* p, size_t words, unsigned blob_type,
                                              const trace_string_ref_t* name, const void* data,
                                              size_t size) {
  uint64_t* const record = p++;
  p = fxt_put_string_ref(p, name);
  uint64_t* const end = fxt_put_stream(p, data, size);
  fxt_commit(record, fxt_header(FXT_RECORD_BLOB, words) | FXT_FIELD(name->encoded_value, 16, 31) |
                         FXT_FIELD(size, 32, 46) | FXT_FIELD(blob_type, 48, 55));
  return end;
}

/* ---- userspace object (type 6): the thread ref names a process; its inline
 * form adds one word (the process koid), not two. ---- */

static inline size_t fxt_userspace_object_record_words(const trace_thread_ref_t* process,
                                                       const trace_string_ref_t* name,
                                                       const trace_arg_t* args, size_t num_args) {
  return 2u + (trace_is_inline_thread_ref(process) ? 1u : 0u) + fxt_string_ref_words(name) +
         fxt_args_words(args, num_args);
}

static inline uint64_t* fxt_write_userspace_object_record(
    uint64_t* p, size_t words, uintptr_t pointer, const trace_thread_ref_t* process,
    const trace_string_ref_t* name, const trace_arg_t* args, size_t num_args) {
  uint64_t* const record = p++;
  *p++ = (uint64_t)pointer;
  if (trace_is_inline_thread_ref(process)) *p++ = process->inline_process_koid;
  p = fxt_put_string_ref(p, name);
  uint64_t* const end = fxt_put_args(p, args, num_args);
  fxt_commit(record, fxt_header(FXT_RECORD_USERSPACE_OBJECT, words) |
                         FXT_FIELD(process->encoded_value, 16, 23) |
                         FXT_FIELD(name->encoded_value, 24, 39) | FXT_FIELD(num_args, 40, 43));
  return end;
}

/* ---- kernel object (type 7) ---- */

static inline size_t fxt_kernel_object_record_words(const trace_string_ref_t* name,
                                                    const trace_arg_t* args, size_t num_args) {
  return 2u + fxt_string_ref_words(name) + fxt_args_words(args, num_args);
}

static inline uint64_t* fxt_write_kernel_object_record(uint64_t* p, size_t words, trace_koid_t koid,
                                                       unsigned object_type,
                                                       const trace_string_ref_t* name,
                                                       const trace_arg_t* args, size_t num_args) {
  uint64_t* const record = p++;
  *p++ = koid;
  p = fxt_put_string_ref(p, name);
  uint64_t* const end = fxt_put_args(p, args, num_args);
  fxt_commit(record, fxt_header(FXT_RECORD_KERNEL_OBJECT, words) | FXT_FIELD(object_type, 16, 23) |
                         FXT_FIELD(name->encoded_value, 24, 39) | FXT_FIELD(num_args, 40, 43));
  return end;
}

/* ---- scheduling (type 8, FXT.md §8.9) ---- */

static inline size_t fxt_legacy_context_switch_record_words(const trace_thread_ref_t* outgoing,
                                                            const trace_thread_ref_t* incoming) {
  return 2u + fxt_thread_ref_words(outgoing) + fxt_thread_ref_words(incoming);
}

static inline uint64_t* fxt_write_legacy_context_switch_record(
    uint64_t* p, size_t words, trace_ticks_t ticks, trace_cpu_number_t cpu,
    trace_thread_state_t outgoing_state, const trace_thread_ref_t* outgoing,
    const trace_thread_ref_t* incoming, trace_thread_priority_t outgoing_priority,
    trace_thread_priority_t incoming_priority) {
  uint64_t* const record = p++;
  *p++ = ticks;
  p = fxt_put_thread_ref(p, outgoing);
  uint64_t* const end = fxt_put_thread_ref(p, incoming);
  fxt_commit(record,
             fxt_header(FXT_RECORD_SCHEDULING, words) | FXT_FIELD(cpu, 16, 23) |
                 FXT_FIELD(outgoing_state, 24, 27) | FXT_FIELD(outgoing->encoded_value, 28, 35) |
                 FXT_FIELD(incoming->encoded_value, 36, 43) | FXT_FIELD(outgoing_priority, 44, 51) |
                 FXT_FIELD(incoming_priority, 52, 59) |
                 FXT_FIELD(FXT_SCHED_LEGACY_CONTEXT_SWITCH, 60, 63));
  return end;
}

static inline size_t fxt_context_switch_record_words(const trace_arg_t* args, size_t num_args) {
  return 4u + fxt_args_words(args, num_args);
}

static inline uint64_t* fxt_write_context_switch_record(uint64_t* p, size_t words,
                                                        trace_ticks_t ticks, trace_cpu_number_t cpu,
                                                        trace_thread_state_t outgoing_state,
                                                        trace_koid_t outgoing_tid,
                                                        trace_koid_t incoming_tid,
                                                        const trace_arg_t* args, size_t num_args) {
  uint64_t* const record = p++;
  *p++ = ticks;
  *p++ = outgoing_tid;
  *p++ = incoming_tid;
  uint64_t* const end = fxt_put_args(p, args, num_args);
  fxt_commit(record, fxt_header(FXT_RECORD_SCHEDULING, words) | FXT_FIELD(num_args, 16, 19) |
                         FXT_FIELD(cpu, 20, 35) | FXT_FIELD(outgoing_state, 36, 39) |
                         FXT_FIELD(FXT_SCHED_CONTEXT_SWITCH, 60, 63));
  return end;
}

static inline size_t fxt_thread_wakeup_record_words(const trace_arg_t* args, size_t num_args) {
  return 3u + fxt_args_words(args, num_args);
}

static inline uint64_t* fxt_write_thread_wakeup_record(uint64_t* p, size_t words,
                                                       trace_ticks_t ticks, trace_cpu_number_t cpu,
                                                       trace_koid_t waking_tid,
                                                       const trace_arg_t* args, size_t num_args) {
  uint64_t* const record = p++;
  *p++ = ticks;
  *p++ = waking_tid;
  uint64_t* const end = fxt_put_args(p, args, num_args);
  fxt_commit(record, fxt_header(FXT_RECORD_SCHEDULING, words) | FXT_FIELD(num_args, 16, 19) |
                         FXT_FIELD(cpu, 20, 35) | FXT_FIELD(FXT_SCHED_THREAD_WAKEUP, 60, 63));
  return end;
}

/* ---- log (type 9), length <= FXT_MAX_LOG_MESSAGE_LENGTH ---- */

static inline size_t fxt_log_record_words(const trace_thread_ref_t* thread, size_t length) {
  return 2u + fxt_thread_ref_words(thread) + fxt_words_for_bytes(length);
}

static inline uint64_t* fxt_write_log_record(uint64_t* p, size_t words, trace_ticks_t ticks,
                                             const trace_thread_ref_t* thread, const char* message,
                                             size_t length) {
  uint64_t* const record = p++;
  *p++ = ticks;
  p = fxt_put_thread_ref(p, thread);
  uint64_t* const end = fxt_put_stream(p, message, length);
  fxt_commit(record, fxt_header(FXT_RECORD_LOG, words) | FXT_FIELD(length, 16, 30) |
                         FXT_FIELD(thread->encoded_value, 32, 39));
  return end;
}

/* ---- large blob (type 15, large type 0, FXT.md §8.11) ----
 * Large records have a 32-bit size, which readers that know only 12-bit sizes
 * (READERS.md) read from bits 4..15: fxtrace writes them under 4096 words
 * only, a longer blob as a chain (fxt/fxt_blob_chain.h). */

static inline uint64_t fxt_large_header(size_t words, unsigned blob_format) {
  return FXT_FIELD(FXT_RECORD_LARGE, 0, 3) | FXT_FIELD(words, 4, 35) |
         FXT_FIELD(FXT_LARGE_BLOB, 36, 39) | FXT_FIELD(blob_format, 40, 43);
}

static inline size_t fxt_large_blob_event_record_words(const trace_string_ref_t* category,
                                                       const trace_string_ref_t* name,
                                                       const trace_thread_ref_t* thread,
                                                       const trace_arg_t* args, size_t num_args,
                                                       size_t size) {
  return 4u + fxt_string_ref_words(category) + fxt_string_ref_words(name) +
         fxt_thread_ref_words(thread) + fxt_args_words(args, num_args) + fxt_words_for_bytes(size);
}

static inline uint64_t* fxt_write_large_blob_event_record(
    uint64_t* p, size_t words, const trace_string_ref_t* category, const trace_string_ref_t* name,
    trace_ticks_t ticks, const trace_thread_ref_t* thread, const trace_arg_t* args, size_t num_args,
    const void* data, size_t size) {
  uint64_t* const record = p++;
  *p++ = FXT_FIELD(category->encoded_value, 0, 15) | FXT_FIELD(name->encoded_value, 16, 31) |
         FXT_FIELD(num_args, 32, 35) | FXT_FIELD(thread->encoded_value, 36, 43);
  p = fxt_put_string_ref(p, category);
  p = fxt_put_string_ref(p, name);
  *p++ = ticks; /* after the strings here, unlike in event records */
  p = fxt_put_thread_ref(p, thread);
  p = fxt_put_args(p, args, num_args);
  *p++ = (uint64_t)size;
  uint64_t* const end = fxt_put_stream(p, data, size);
  fxt_commit(record, fxt_large_header(words, TRACE_BLOB_FORMAT_EVENT));
  return end;
}

static inline size_t fxt_large_blob_attachment_record_words(const trace_string_ref_t* category,
                                                            const trace_string_ref_t* name,
                                                            size_t size) {
  return 3u + fxt_string_ref_words(category) + fxt_string_ref_words(name) +
         fxt_words_for_bytes(size);
}

static inline uint64_t* fxt_write_large_blob_attachment_record(uint64_t* p, size_t words,
                                                               const trace_string_ref_t* category,
                                                               const trace_string_ref_t* name,
                                                               const void* data, size_t size) {
  uint64_t* const record = p++;
  *p++ = FXT_FIELD(category->encoded_value, 0, 15) | FXT_FIELD(name->encoded_value, 16, 31);
  p = fxt_put_string_ref(p, category);
  p = fxt_put_string_ref(p, name);
  *p++ = (uint64_t)size;
  uint64_t* const end = fxt_put_stream(p, data, size);
  fxt_commit(record, fxt_large_header(words, TRACE_BLOB_FORMAT_ATTACHMENT));
  return end;
}

#endif /* FXTRACE_FXT_ENCODE_H_ */
