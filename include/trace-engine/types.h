/* Public API: the value types shared by the trace engine, the FXT encoder and
 * the instrumentation macros. Any program may include it.
 *
 * Names and values follow Fuchsia's <lib/trace-engine/types.h> (API.md §5),
 * with Linux types where Fuchsia uses Zircon ones (koid = pid / tid). */
#ifndef TRACE_ENGINE_TYPES_H_
#define TRACE_ENGINE_TYPES_H_

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(__GNUC__)
#define TRACE_EXPORT __attribute__((visibility("default")))
#else
#define TRACE_EXPORT
#endif

typedef uint64_t trace_ticks_t;
typedef uint64_t trace_koid_t; /* a pid or tid; 0 means invalid */
typedef uint64_t trace_counter_id_t;
typedef uint64_t trace_async_id_t;
typedef uint64_t trace_flow_id_t;
typedef uint64_t trace_vthread_id_t;
typedef uint32_t trace_thread_state_t;
typedef uint32_t trace_cpu_number_t;
typedef uint32_t trace_thread_priority_t;
typedef uint16_t trace_string_index_t;
typedef uint16_t trace_encoded_string_ref_t;
typedef uint32_t trace_thread_index_t;
typedef uint32_t trace_encoded_thread_ref_t;

#define TRACE_ENCODED_STRING_REF_EMPTY ((trace_encoded_string_ref_t)0u)
#define TRACE_ENCODED_STRING_REF_INLINE_FLAG ((trace_encoded_string_ref_t)0x8000u)
#define TRACE_ENCODED_STRING_REF_LENGTH_MASK ((trace_encoded_string_ref_t)0x7fffu)
#define TRACE_ENCODED_STRING_REF_MAX_LENGTH 32000u
#define TRACE_ENCODED_STRING_REF_MIN_INDEX ((trace_encoded_string_ref_t)0x1u)
#define TRACE_ENCODED_STRING_REF_MAX_INDEX ((trace_encoded_string_ref_t)0x7fffu)

#define TRACE_ENCODED_THREAD_REF_INLINE ((trace_encoded_thread_ref_t)0u)
#define TRACE_ENCODED_THREAD_REF_MIN_INDEX ((trace_encoded_thread_ref_t)0x01u)
#define TRACE_ENCODED_THREAD_REF_MAX_INDEX ((trace_encoded_thread_ref_t)0xffu)

#define TRACE_ENCODED_INLINE_LARGE_RECORD_MAX_SIZE ((size_t)1u << 18)
#define TRACE_MAX_ARGS 15u
#define TRACE_MAX_BLOB_SIZE 32000u

typedef enum {
  TRACE_SCOPE_THREAD = 0,
  TRACE_SCOPE_PROCESS = 1,
  TRACE_SCOPE_GLOBAL = 2,
} trace_scope_t;

typedef enum {
  TRACE_BLOB_FORMAT_EVENT = 0,
  TRACE_BLOB_FORMAT_ATTACHMENT = 1,
} trace_blob_format_t;

typedef enum {
  TRACE_ARG_NULL = 0,
  TRACE_ARG_INT32 = 1,
  TRACE_ARG_UINT32 = 2,
  TRACE_ARG_INT64 = 3,
  TRACE_ARG_UINT64 = 4,
  TRACE_ARG_DOUBLE = 5,
  TRACE_ARG_STRING = 6,
  TRACE_ARG_POINTER = 7,
  TRACE_ARG_KOID = 8,
  TRACE_ARG_BOOL = 9,
  TRACE_ARG_BLOB = 10, /* newest FXT doc only; readers skip it by size */
} trace_arg_type_t;

typedef enum {
  TRACE_BLOB_TYPE_DATA = 1,
  TRACE_BLOB_TYPE_LAST_BRANCH = 2,
  TRACE_BLOB_TYPE_PERFETTO = 3,
} trace_blob_type_t;

typedef enum {
  TRACE_BUFFERING_MODE_ONESHOT = 0,
  TRACE_BUFFERING_MODE_CIRCULAR = 1,
  TRACE_BUFFERING_MODE_STREAMING = 2,
} trace_buffering_mode_t;

/* A string reference: empty, an index into the string table, or inline.
 * inline_string is non-NULL only for inline refs and is borrowed: it must
 * stay valid until the record has been written. */
typedef struct trace_string_ref {
  trace_encoded_string_ref_t encoded_value;
  const char* inline_string;
} trace_string_ref_t;

/* A thread reference: an index into the thread table, or inline koids. */
typedef struct trace_thread_ref {
  trace_encoded_thread_ref_t encoded_value;
  trace_koid_t inline_process_koid;
  trace_koid_t inline_thread_koid;
} trace_thread_ref_t;

typedef struct trace_arg_value {
  trace_arg_type_t type;
  union {
    int32_t int32_value;
    uint32_t uint32_value;
    int64_t int64_value;
    uint64_t uint64_value;
    double double_value;
    trace_string_ref_t string_value_ref;
    uintptr_t pointer_value;
    trace_koid_t koid_value;
    bool bool_value;
    struct {
      const void* data; /* borrowed until the record is written */
      uint32_t size;
    } blob_value;
    uintptr_t reserved_for_future_expansion[2];
  };
} trace_arg_value_t;

typedef struct trace_arg {
  trace_string_ref_t name_ref;
  trace_arg_value_t value;
} trace_arg_t;

/* ---- string references ---- */

static inline bool trace_is_empty_string_ref(const trace_string_ref_t* ref) {
  return ref->encoded_value == TRACE_ENCODED_STRING_REF_EMPTY;
}

static inline bool trace_is_inline_string_ref(const trace_string_ref_t* ref) {
  return (ref->encoded_value & TRACE_ENCODED_STRING_REF_INLINE_FLAG) != 0;
}

static inline bool trace_is_indexed_string_ref(const trace_string_ref_t* ref) {
  return ref->encoded_value != TRACE_ENCODED_STRING_REF_EMPTY && !trace_is_inline_string_ref(ref);
}

static inline size_t trace_inline_string_ref_length(const trace_string_ref_t* ref) {
  return ref->encoded_value & TRACE_ENCODED_STRING_REF_LENGTH_MASK;
}

static inline trace_string_ref_t trace_make_empty_string_ref(void) {
  trace_string_ref_t ref;
  ref.encoded_value = TRACE_ENCODED_STRING_REF_EMPTY;
  ref.inline_string = NULL;
  return ref;
}

/* Lengths over TRACE_ENCODED_STRING_REF_MAX_LENGTH are truncated; 0 gives the
 * empty ref, as the FXT writers do. */
static inline trace_string_ref_t trace_make_inline_string_ref(const char* string, size_t length) {
  if (length == 0 || string == NULL) return trace_make_empty_string_ref();
  if (length > TRACE_ENCODED_STRING_REF_MAX_LENGTH) length = TRACE_ENCODED_STRING_REF_MAX_LENGTH;
  trace_string_ref_t ref;
  ref.encoded_value =
      (trace_encoded_string_ref_t)(TRACE_ENCODED_STRING_REF_INLINE_FLAG | (uint16_t)length);
  ref.inline_string = string;
  return ref;
}

static inline trace_string_ref_t trace_make_inline_c_string_ref(const char* string) {
  return trace_make_inline_string_ref(string, string ? strlen(string) : 0u);
}

/* An index outside 1..TRACE_ENCODED_STRING_REF_MAX_INDEX gives the empty
 * string, never another entry's index. */
static inline trace_string_ref_t trace_make_indexed_string_ref(trace_string_index_t index) {
  trace_string_ref_t ref;
  ref.encoded_value =
      (trace_encoded_string_ref_t)(index <= TRACE_ENCODED_STRING_REF_MAX_INDEX ? index : 0u);
  ref.inline_string = NULL;
  return ref;
}

/* ---- thread references ---- */

static inline bool trace_is_inline_thread_ref(const trace_thread_ref_t* ref) {
  return ref->encoded_value == TRACE_ENCODED_THREAD_REF_INLINE;
}

static inline bool trace_is_indexed_thread_ref(const trace_thread_ref_t* ref) {
  return ref->encoded_value != TRACE_ENCODED_THREAD_REF_INLINE;
}

static inline bool trace_is_unknown_thread_ref(const trace_thread_ref_t* ref) {
  return trace_is_inline_thread_ref(ref) && ref->inline_process_koid == 0 &&
         ref->inline_thread_koid == 0;
}

static inline trace_thread_ref_t trace_make_inline_thread_ref(trace_koid_t process_koid,
                                                              trace_koid_t thread_koid) {
  trace_thread_ref_t ref;
  ref.encoded_value = TRACE_ENCODED_THREAD_REF_INLINE;
  ref.inline_process_koid = process_koid;
  ref.inline_thread_koid = thread_koid;
  return ref;
}

static inline trace_thread_ref_t trace_make_unknown_thread_ref(void) {
  return trace_make_inline_thread_ref(0, 0);
}

/* An index outside 1..TRACE_ENCODED_THREAD_REF_MAX_INDEX gives the unknown
 * thread (inline koids 0), never another entry's index. */
static inline trace_thread_ref_t trace_make_indexed_thread_ref(trace_thread_index_t index) {
  trace_thread_ref_t ref;
  ref.encoded_value =
      (trace_encoded_thread_ref_t)(index <= TRACE_ENCODED_THREAD_REF_MAX_INDEX ? index : 0u);
  ref.inline_process_koid = 0;
  ref.inline_thread_koid = 0;
  return ref;
}

/* ---- argument values ----
 * Built field by field, in C as in C++: no memset and no initializer. The
 * macros build arrays of these on every enabled event. An initializer
 * ({.type = k, .field = v}) zeroes the rest of the union, so GCC assembles
 * the value in a stack temporary (narrow stores over a zeroed block) and then
 * copies it into the array with 16-byte loads: store-forwarding stalls, about
 * 40% of an event with two arguments. Assigned field by field, the value is
 * stored straight into the array element, two stores. Bytes of the union
 * beyond the member of the given type are unspecified and never read. */

#define TRACE_INTERNAL_ARG_VALUE(kind, field, v) \
  trace_arg_value_t arg;                         \
  arg.type = (kind);                             \
  arg.field = (v);                               \
  return arg

static inline trace_arg_value_t trace_make_null_arg_value(void) {
  TRACE_INTERNAL_ARG_VALUE(TRACE_ARG_NULL, uint64_value, 0);
}
static inline trace_arg_value_t trace_make_int32_arg_value(int32_t v) {
  TRACE_INTERNAL_ARG_VALUE(TRACE_ARG_INT32, int32_value, v);
}
static inline trace_arg_value_t trace_make_uint32_arg_value(uint32_t v) {
  TRACE_INTERNAL_ARG_VALUE(TRACE_ARG_UINT32, uint32_value, v);
}
static inline trace_arg_value_t trace_make_int64_arg_value(int64_t v) {
  TRACE_INTERNAL_ARG_VALUE(TRACE_ARG_INT64, int64_value, v);
}
static inline trace_arg_value_t trace_make_uint64_arg_value(uint64_t v) {
  TRACE_INTERNAL_ARG_VALUE(TRACE_ARG_UINT64, uint64_value, v);
}
static inline trace_arg_value_t trace_make_double_arg_value(double v) {
  TRACE_INTERNAL_ARG_VALUE(TRACE_ARG_DOUBLE, double_value, v);
}
static inline trace_arg_value_t trace_make_string_arg_value(trace_string_ref_t v) {
  TRACE_INTERNAL_ARG_VALUE(TRACE_ARG_STRING, string_value_ref, v);
}
static inline trace_arg_value_t trace_make_pointer_arg_value(uintptr_t v) {
  TRACE_INTERNAL_ARG_VALUE(TRACE_ARG_POINTER, pointer_value, v);
}
static inline trace_arg_value_t trace_make_koid_arg_value(trace_koid_t v) {
  TRACE_INTERNAL_ARG_VALUE(TRACE_ARG_KOID, koid_value, v);
}
static inline trace_arg_value_t trace_make_bool_arg_value(bool v) {
  TRACE_INTERNAL_ARG_VALUE(TRACE_ARG_BOOL, bool_value, v);
}
static inline trace_arg_value_t trace_make_blob_arg_value(const void* data, uint32_t size) {
  trace_arg_value_t arg;
  arg.type = TRACE_ARG_BLOB;
  arg.blob_value.data = data;
  arg.blob_value.size = size;
  return arg;
}

static inline trace_arg_t trace_make_arg(trace_string_ref_t name_ref, trace_arg_value_t value) {
#ifdef __cplusplus
  trace_arg_t arg;
  arg.name_ref = name_ref;
  arg.value = value;
#else
  trace_arg_t arg = {.name_ref = name_ref, .value = value}; /* see "argument values" */
#endif
  return arg;
}

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* TRACE_ENGINE_TYPES_H_ */
