/* Not part of the public API: use <trace/tracepoint.h>. What the code that
 * TRACE_EVENT() generates shares with the engine (src/engine/tracepoints.c):
 * the static descriptors, the record path and the compile-time helpers.
 *
 * An event's record is an FXT instant event (docs/event-formats.md) whose
 * argument area IS the generated entry struct: each fixed-size field is a
 * word-aligned slot holding the FXT argument header and the value, so
 * TP_fast_assign's `__entry->field = v` stores straight into the buffer.
 *
 *   slot of a field <= 4 bytes (int32/uint32 argument): [32-bit header][value]
 *   slot of a 64-bit, double or pointer field:           [header word][value word]
 *   slot of a struct or array field (string argument):   [header word][bytes, zero-padded]
 *
 * Variable-length fields (__string, __dynamic_array) follow the struct, each
 * as a string argument [header word][bytes]; their lengths are computed from
 * the arguments before the record is reserved, as in the kernel. */
#ifndef TRACE_INTERNAL_TRACEPOINT_TYPES_H_
#define TRACE_INTERNAL_TRACEPOINT_TYPES_H_

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "trace-engine/instrumentation.h"
#include "trace-engine/record_path.h"
#include "trace-engine/types.h"

#ifdef __cplusplus
#include <type_traits>
extern "C" {
#endif

/* Field kinds of the format (docs/event-formats.md, field → argument table). */
enum {
  TRACE_TP_FIELD_SCALAR = 0,     /* __field: integer, enum, bool, float, pointer */
  TRACE_TP_FIELD_STRUCT = 1,     /* __field_struct: raw bytes */
  TRACE_TP_FIELD_ARRAY = 2,      /* __array of anything but char: raw bytes */
  TRACE_TP_FIELD_CHAR_ARRAY = 3, /* __array(char, ...): the bytes up to the first NUL */
  TRACE_TP_FIELD_STRING = 4,     /* __string: __data_loc char[] */
  TRACE_TP_FIELD_DYN_ARRAY = 5,  /* __dynamic_array: __data_loc type[] */
};

/* One field of an event class, in declaration order. */
typedef struct trace_tp_field {
  const char* type; /* the C type as written (the element type of arrays) */
  const char* name;
  uint32_t kind;      /* TRACE_TP_FIELD_* */
  uint32_t size;      /* bytes in the binary entry (4 for __data_loc) */
  uint32_t count;     /* elements of a fixed array, else 0 */
  uint32_t offset;    /* in the binary entry (trace_internal_tp_layout_<class>) */
  uint32_t is_signed; /* 0 or 1 */
} trace_tp_field_t;

/* What DECLARE_EVENT_CLASS defines: the layout shared by its events. */
typedef struct trace_tp_class {
  const trace_tp_field_t* fields;
  uint32_t num_fields;
  const char* print_fmt; /* tracefs form: "\"fmt\", REC->a, ..." */
} trace_tp_class_t;

/* One per DEFINE_EVENT (static storage, zero-initialised but for the
 * constant part). The site comes first: it is the disabled check. Its
 * record (header and argument names) is cached per thread, keyed by the
 * tracepoint's address (trace-engine/record_path.h). */
typedef struct trace_tracepoint {
  trace_site_t site;
  const char* system; /* TRACE_SYSTEM: the category */
  const char* name;
  const trace_tp_class_t* event_class;
  /* engine-owned */
  /* per session: the generation whose format record is written (atomic) */
  uint64_t prepared[TRACE_ENGINE_MAX_SESSIONS];
  uint32_t id;
  uint32_t registered;
  struct trace_tracepoint* next;
} trace_tracepoint_t;

/* A reserved record between trace_internal_tp_begin_fast() (or _slow()) and _end(). */
typedef struct trace_tp_record {
  uint64_t* record;
  trace_context_t* context;
  uint64_t header;                /* all but the size */
  size_t head_words;              /* header, timestamp, inline thread */
  size_t arg_words;               /* as reserved */
  uint16_t names[TRACE_MAX_ARGS]; /* argument name indexes: fixed fields, then variable ones */
  /* the out-of-line begin's: in, the sessions still to write (0: not
   * decided yet, the first call); out, those left after this record */
  unsigned sessions;
} trace_tp_record_t;

/* Registers an event (from a constructor; idempotent). When tracing is on
 * and the category enabled, writes its format at once. */
TRACE_EXPORT void trace_engine__tp_register(trace_tracepoint_t* tp);

/* Forgets an event (from the destructor of the library that defines it,
 * before it is unloaded). */
TRACE_EXPORT void trace_engine__tp_unregister(trace_tracepoint_t* tp);

/* Exact answer for trace_<name>_enabled(): tracing on and category enabled. */
TRACE_EXPORT bool trace_engine__tp_enabled(trace_tracepoint_t* tp);

/* The out-of-line begin (trace_internal_tp_begin): the event's first
 * record on the thread in a trace (its format, its strings, its cached
 * record), an unindexed thread, a trace starting or stopping, and every
 * event of a system several sessions enable. Reserves the record in the
 * first of r->sessions (0: decides them from the site) it can and leaves
 * the others in r->sessions, for the next call. Returns where the
 * arguments go, or NULL (off, category disabled, no room in any session
 * left: nothing to do, no context held). */
TRACE_EXPORT uint64_t* trace_engine__tp_begin(trace_tracepoint_t* tp, size_t arg_words,
                                              trace_tp_record_t* r);

/* The k unused words at `from`, the end of a record that shrank, back to
 * the thread's chunk (or covered by a record readers skip). */
TRACE_EXPORT void trace_engine__tp_give_back(trace_context_t* w, uint64_t* from, size_t k);

/* The disabled check of trace_<name>(): one relaxed load of the event's
 * site word and one predicted branch, the check every category call site
 * makes (trace_acquire_context_for_category_cached(), sites.c): the word is
 * TRACE_SITE_DISABLED while tracing is off or the category disabled, and
 * the engine resets it at each start. Anything else (unknown, enabled, or
 * enabled in an earlier trace) goes to trace_engine__tp_begin(), which
 * decides exactly. The one place to change the call-site check. */
static inline bool trace_internal_tp_active(trace_tracepoint_t* tp) {
  return __atomic_load_n(&tp->site.state, __ATOMIC_RELAXED) != TRACE_SITE_DISABLED;
}

/* Reserves the instant event of `tp` with `arg_words` words for its
 * `num_args` arguments (the record path inline, trace-engine/record_path.h:
 * the enter, the clock, the reservation in the thread's chunk, the
 * thread's cached header and argument names) and returns where the
 * arguments go, or NULL, nothing held: anything but the common case (the
 * event's first record on the thread in this trace, a new chunk, tracing
 * off or stopping) is the out-of-line record function's, which calls
 * nothing here. */
static inline __attribute__((always_inline)) uint64_t* trace_internal_tp_begin_fast(
    trace_tracepoint_t* tp, size_t arg_words, size_t num_args, trace_tp_record_t* r) {
  uint64_t state = __atomic_load_n(&tp->site.state, __ATOMIC_RELAXED);
  uint64_t generation =
      __atomic_load_n(&trace_engine__generation[TRACE_SITE_SESSION(state)], __ATOMIC_ACQUIRE);
  size_t words = 2 + arg_words + 1; /* header, timestamp, arguments, scope */
  trace_context_t* w = NULL;
  /* (state >> 1 == generation != 0: state is TRACE_SITE_ENABLED(generation)) */
  if (__builtin_expect(generation == 0 || (state >> 1) != generation, 0) ||
      __builtin_expect(words > 0xfff, 0) ||
      __builtin_expect(
          !trace_engine__load_record(generation, tp, num_args, &w, &r->header, r->names), 0))
    return NULL;
  const trace_engine_hot_t* hot = w->hot; /* read once: the fences below would read it again */
  if (__builtin_expect(!trace_engine__enter_at(w, hot, generation), 0)) return NULL;
  trace_ticks_t ticks = trace_clock__now_ns(); /* after the acquire (API.md §2) */
  uint64_t* p = trace_engine__try_reserve_at(w, hot, words);
  if (__builtin_expect(p == NULL, 0)) { /* a new chunk: the out-of-line path's */
    trace_engine__release(w);
    return NULL;
  }
  p[1] = ticks;
  r->record = p;
  r->context = w;
  r->head_words = 2;
  r->arg_words = arg_words;
  return p + 2;
}

/* The out-of-line record function's begin: trace_engine__tp_begin(),
 * which decides everything, through a copy of `r` (whose address then
 * stays in this function); r->sessions as there. */
static inline uint64_t* trace_internal_tp_begin_slow(trace_tracepoint_t* tp, size_t arg_words,
                                                     size_t num_args, trace_tp_record_t* r) {
  (void)num_args;
  trace_tp_record_t slow;
  slow.sessions = r->sessions;
  uint64_t* args = trace_engine__tp_begin(tp, arg_words, &slow);
  if (args != NULL) *r = slow;
  return args;
}

/* Commits the record begun with trace_internal_tp_begin_fast() or _slow(): `arg_words` <=
 * the reserved words (char arrays can shrink it); releases the context. */
static inline __attribute__((always_inline)) void trace_internal_tp_end(trace_tp_record_t* r,
                                                                        size_t arg_words) {
  size_t words = r->head_words + arg_words + 1;
  r->record[words - 1] = TRACE_SCOPE_THREAD;
  if (__builtin_expect(arg_words < r->arg_words, 0))
    trace_engine__tp_give_back(r->context, r->record + words, r->arg_words - arg_words);
  trace_engine__commit(r->record, r->header | ((uint64_t)words << 4));
  trace_engine__count_written(r->context);
  trace_engine__release(r->context);
}

/* ---- compile-time classification of a field's type ----
 * __builtin_classify_type: 5 = pointer, 8 = real (GCC and Clang). */
#define TRACE_INTERNAL_TP_IS_POINTER(type) (__builtin_classify_type((type)0) == 5)
#define TRACE_INTERNAL_TP_IS_REAL(type) (__builtin_classify_type((type)0) == 8)
#define TRACE_INTERNAL_TP_IS_SIGNED(type) \
  (TRACE_INTERNAL_TP_IS_POINTER(type) ? 0 : ((type)-1 < (type)1))
#ifdef __cplusplus
#define TRACE_INTERNAL_TP_IS_CHAR(type) (std::is_same<type, char>::value)
#else
#define TRACE_INTERNAL_TP_IS_CHAR(type) (__builtin_types_compatible_p(type, char))
#endif
/* 32-bit halves of a scalar slot's header: 1 (int32/uint32 argument, value
 * in the header's high half) or 2 (a header word, then a value word). */
#define TRACE_INTERNAL_TP_HALVES(type) \
  ((sizeof(type) > 4 || TRACE_INTERNAL_TP_IS_REAL(type)) ? 2 : 1)
/* FXT argument type of a scalar field (docs/event-formats.md). */
#define TRACE_INTERNAL_TP_SCALAR_TYPE(type)                                                      \
  (TRACE_INTERNAL_TP_IS_REAL(type)      ? TRACE_ARG_DOUBLE                                       \
   : TRACE_INTERNAL_TP_IS_POINTER(type) ? TRACE_ARG_POINTER                                      \
   : sizeof(type) > 4 ? (TRACE_INTERNAL_TP_IS_SIGNED(type) ? TRACE_ARG_INT64 : TRACE_ARG_UINT64) \
                      : (TRACE_INTERNAL_TP_IS_SIGNED(type) ? TRACE_ARG_INT32 : TRACE_ARG_UINT32))
#define TRACE_INTERNAL_TP_SLOT __attribute__((aligned(8)))

static inline size_t trace_internal_tp_words(size_t bytes) { return (bytes + 7) / 8; }

/* An argument header word: type, size in words, name, inline string length. */
static inline uint64_t trace_internal_tp_header(unsigned type, size_t words, uint16_t name,
                                                size_t string_length) {
  uint64_t h = (uint64_t)type | ((uint64_t)words << 4) | ((uint64_t)name << 16);
  if (type == TRACE_ARG_STRING) h |= (uint64_t)(0x8000u | (string_length & 0x7fffu)) << 32;
  return h;
}

/* Stores a scalar slot's header: its low half or the whole word. */
static inline void trace_internal_tp_put_header(void* slot, unsigned halves, uint64_t header) {
  if (halves == 1) {
    uint32_t low = (uint32_t)header;
    memcpy(slot, &low, 4);
  } else {
    memcpy(slot, &header, 8);
  }
}

/* After TP_fast_assign: widens a small value in place to the 32-bit FXT
 * value (sign- or zero-extended), or a float to the double value word. */
static inline void trace_internal_tp_widen(void* value, size_t size, bool is_signed, bool is_real) {
  if (is_real) {
    if (size == sizeof(float)) {
      float f;
      memcpy(&f, value, sizeof(f));
      double d = f;
      memcpy(value, &d, sizeof(d));
    }
    return;
  }
  if (size >= 4) return;
  uint32_t out;
  if (size == 1) {
    uint8_t v;
    memcpy(&v, value, 1);
    out = is_signed ? (uint32_t)(int32_t)(int8_t)v : v;
  } else {
    uint16_t v;
    memcpy(&v, value, 2);
    out = is_signed ? (uint32_t)(int32_t)(int16_t)v : v;
  }
  memcpy(value, &out, 4);
}

/* A __string's source: NULL prints as the kernel does. */
static inline const char* trace_internal_tp_str_src(const char* s) { return s ? s : "(null)"; }

/* __assign_str's copy into the record: strings up to 32 bytes (the common
 * case) inline, as two fixed-size copies that overlap in the middle (each
 * reads and writes only bytes of the string), longer ones by memcpy. */
static inline void trace_internal_tp_copy_str(char* dst, const char* src, size_t n) {
  if (n >= 16) {
    if (n > 32) {
      memcpy(dst, src, n);
      return;
    }
    memcpy(dst, src, 16);
    memcpy(dst + n - 16, src + n - 16, 16);
  } else if (n >= 8) {
    memcpy(dst, src, 8);
    memcpy(dst + n - 8, src + n - 8, 8);
  } else if (n >= 4) {
    memcpy(dst, src, 4);
    memcpy(dst + n - 4, src + n - 4, 4);
  } else if (n > 0) {
    dst[0] = src[0];
    dst[n / 2] = src[n / 2];
    dst[n - 1] = src[n - 1];
  }
}

/* Bytes of a __string: strlen, at most what one argument holds. */
static inline size_t trace_internal_tp_str_len(const char* s) {
  size_t n = strlen(trace_internal_tp_str_src(s));
  return n > 0x7fff ? 0x7fff : n;
}

/* A fixed char array's string argument, compacted: its length becomes the
 * bytes before the first NUL and the data after it moves down. `slot` is the
 * array's header word, `capacity` its length, `end` the end of the data.
 * Returns the bytes freed (a multiple of 8). */
static inline size_t trace_internal_tp_compact_chars(uint64_t* slot, size_t capacity, uint16_t name,
                                                     char* end) {
  char* data = (char*)(slot + 1);
  size_t length = 0;
  while (length < capacity && data[length] != '\0') length++;
  size_t old_words = trace_internal_tp_words(capacity);
  size_t new_words = trace_internal_tp_words(length);
  *slot = trace_internal_tp_header(TRACE_ARG_STRING, 1 + new_words, name, length);
  if (length % 8 != 0) memset(data + length, 0, 8 - length % 8);
  size_t freed = (old_words - new_words) * 8;
  if (freed != 0) {
    char* from = data + old_words * 8;
    memmove(data + new_words * 8, from, (size_t)(end - from));
  }
  return freed;
}

#ifdef __cplusplus
} /* extern "C" */
#define TRACE_INTERNAL_TP_STATIC_ASSERT(cond, message) static_assert(cond, message)
#else
#define TRACE_INTERNAL_TP_STATIC_ASSERT(cond, message) _Static_assert(cond, message)
#endif

#endif /* TRACE_INTERNAL_TRACEPOINT_TYPES_H_ */
