/* Not part of the public API: use <trace/event.h>. The event macros' record
 * path, inline at the call site (over the engine's record path,
 * trace-engine/record_path.h): TRACE_INSTANT, TRACE_COUNTER,
 * TRACE_DURATION_BEGIN / _END, the async and flow events, and both halves
 * of TRACE_DURATION.
 *
 * With the site enabled in this trace and the thread's record of the site
 * cached (its header word and argument names, trace_engine__load_record),
 * an event is the enter, the clock, the reservation in the thread's chunk,
 * the stores and the commit, all here: no call, no string lookup but the
 * thread's table slot of a literal string value, no encoder. The argument
 * types are constants of the expansion (at a TRACE_DURATION's exit too, as
 * long as GCC keeps the scope in registers, which its layout lets it), so
 * the loops below unroll into straight-line stores. Anything else (the
 * site's first record on the thread in a trace, a literal not registered on
 * the thread yet, a blob, a record over FXT's size limit, a new chunk, a
 * trace stopping) is one out-of-line call, which writes the same bytes with
 * the library's encoders and fills the thread's cache.
 *
 * Arguments as the macros build them (event_args.h): names are unregistered
 * literals; a string value is
 *   - an inline ref (TA_STRING, TA_CHAR_ARRAY, std::string): encoded
 *     0x8000 | length (the maker truncated it to 32000 bytes), copied into
 *     the record, zero-padded to a word;
 *   - the empty ref (encoded 0, no pointer: NULL or ""): the reference 0,
 *     no stream;
 *   - an unregistered literal (encoded 0, inline_string = the literal:
 *     TA_STRING_LITERAL, an inferred literal): its index in the thread's
 *     string table, one header word;
 *   - an indexed ref a caller registered itself: written as it is. */
#ifndef TRACE_INTERNAL_EVENT_RECORD_H_
#define TRACE_INTERNAL_EVENT_RECORD_H_

#include "trace/internal/event_helpers.h"

#ifdef __cplusplus
extern "C" {
#endif

/* FXT event types (FXT.md §8.5). */
enum {
  TRACE_INTERNAL_EVENT_INSTANT = 0,
  TRACE_INTERNAL_EVENT_COUNTER = 1,
  TRACE_INTERNAL_EVENT_DURATION_BEGIN = 2,
  TRACE_INTERNAL_EVENT_DURATION_END = 3,
  TRACE_INTERNAL_EVENT_DURATION_COMPLETE = 4,
  TRACE_INTERNAL_EVENT_ASYNC_BEGIN = 5,
  TRACE_INTERNAL_EVENT_ASYNC_INSTANT = 6,
  TRACE_INTERNAL_EVENT_ASYNC_END = 7,
  TRACE_INTERNAL_EVENT_FLOW_BEGIN = 8,
  TRACE_INTERNAL_EVENT_FLOW_STEP = 9,
  TRACE_INTERNAL_EVENT_FLOW_END = 10,
};

/* The word after the arguments (FXT.md §8.5): none (duration begin and
 * end), the caller's (instant scope, counter id, async and flow id), or the
 * end time, taken here (duration complete; the record's timestamp is then
 * the caller's start time). */
typedef enum {
  TRACE_INTERNAL_PAYLOAD_NONE = 0,
  TRACE_INTERNAL_PAYLOAD_WORD = 1,
  TRACE_INTERNAL_PAYLOAD_END_TIME = 2,
} trace_internal_payload_t;

/* The largest record an FXT header can size (a 12-bit count of words). */
#define TRACE_INTERNAL_MAX_RECORD_WORDS 0xfffu

/* The words an argument takes, its header included: a literal string
 * value is its index (no stream). */
static inline size_t trace_internal_arg_words(const trace_arg_value_t* v) {
  if (v->type == TRACE_ARG_STRING) {
    const trace_string_ref_t* s = &v->string_value_ref;
    return 1u + (trace_is_inline_string_ref(s) ? (trace_inline_string_ref_length(s) + 7) / 8 : 0u);
  }
  return 1u + trace_engine__arg_has_value_word(v->type);
}

/* Writes one argument at q, named by index `name`, a string value by
 * reference `ref` (its own, or a literal's index: see
 * trace_internal_write_cached()); returns the word after it. */
static inline __attribute__((always_inline)) uint64_t* trace_internal_put_arg(
    uint64_t* q, const trace_arg_value_t* v, uint16_t name, trace_encoded_string_ref_t ref) {
  if (v->type == TRACE_ARG_STRING) {
    const trace_string_ref_t* s = &v->string_value_ref;
    size_t n =
        __builtin_expect(trace_is_inline_string_ref(s), 1) ? trace_inline_string_ref_length(s) : 0u;
    size_t stream = (n + 7) / 8;
    q[0] = trace_engine__arg_header(TRACE_ARG_STRING, 1u + (unsigned)stream, name) |
           ((uint64_t)ref << 32);
    trace_engine__put_string(q + 1, s->inline_string, n);
    return q + 1 + stream;
  }
  if (trace_engine__arg_has_value_word(v->type)) {
    q[0] = trace_engine__arg_header(v->type, 2, name);
    q[1] = v->uint64_value;
    return q + 2;
  }
  q[0] = trace_engine__arg_header(v->type, 1, name) | trace_engine__arg_header_value(v);
  return q + 1;
}

/* GCC's -Wmaybe-uninitialized, from here to the end of TRACE_DURATION's
 * exit, in the code of whoever includes this header, sees paths that do not
 * exist: a scalar argument leaves the rest of its value union unset (types.h,
 * "argument values") and a string value's pointer is read only when the
 * argument's type is string, but jump threading can make up a path on
 * which such a read looks uninitialized; and a TRACE_DURATION's scope is
 * filled only when the scope starts and read only when it did
 * (start_time != 0), which GCC cannot relate. */
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif

/* The record of `site` from the thread's cache, for trace `generation`,
 * which the caller read with acquire and found the site enabled in (its
 * state word TRACE_SITE_ENABLED(generation)): true when the record was
 * written (or dropped and counted: no room and no chunk left), false when
 * nothing was done and nothing is held: the caller then calls its
 * out-of-line writer. `payload` is the payload word (PAYLOAD_WORD) or the
 * start time (PAYLOAD_END_TIME). The timestamp is taken after the enter
 * (API.md §2), which checks that `generation` is still the trace, unless
 * `*time` holds one already: the time of the same event in an earlier
 * session (several sessions, trace_internal_write_several()); `*time`
 * receives the time used. */
static inline __attribute__((always_inline)) bool trace_internal_write_cached_at(
    trace_site_t* site, uint64_t generation, trace_internal_payload_t payload_kind,
    uint64_t payload, const trace_arg_t* args, size_t num_args, trace_ticks_t* time) {
  size_t words = 2u + (payload_kind != TRACE_INTERNAL_PAYLOAD_NONE); /* header, timestamp */
  bool fits = num_args <= TRACE_MAX_ARGS;
#pragma GCC unroll 15
  for (size_t i = 0; i < num_args; i++) {
    fits &= args[i].value.type != TRACE_ARG_BLOB;
    words += trace_internal_arg_words(&args[i].value);
  }
  trace_context_t* w = NULL;
  uint64_t header;
  uint16_t names[TRACE_MAX_ARGS + 1];
  if (!(__builtin_expect(fits && words <= TRACE_INTERNAL_MAX_RECORD_WORDS, 1) &&
        __builtin_expect(trace_engine__load_record(generation, site, num_args, &w, &header, names),
                         1)))
    return false;
  /* Each string value's reference: a literal's index from the thread's
   * table (before the enter: a table emptied meanwhile belongs to a new
   * trace, and the enter then fails). */
  trace_encoded_string_ref_t refs[TRACE_MAX_ARGS + 1];
  bool registered = true;
  /* (Clang cannot runtime-unroll this loop where the count is not a
   * constant, and says so; where it is, it unrolls it unasked) */
#ifndef __clang__
#pragma GCC unroll 15
#endif
  for (size_t i = 0; i < num_args; i++) {
    refs[i] = 0;
    if (args[i].value.type == TRACE_ARG_STRING) {
      const trace_string_ref_t* s = &args[i].value.string_value_ref;
      refs[i] = s->encoded_value;
      /* (a dynamic value is empty, or a literal, only when the expansion
       * says so: then this folds) */
      if (__builtin_expect(refs[i] == TRACE_ENCODED_STRING_REF_EMPTY, 0) &&
          s->inline_string != NULL) {
        refs[i] = trace_engine__literal_index(w, s->inline_string);
        registered &= refs[i] != 0;
      }
    }
  }
  const trace_engine_hot_t* hot = w->hot; /* read once: the fences below would read it again */
  if (__builtin_expect(!registered, 0) ||
      __builtin_expect(!trace_engine__enter_at(w, hot, generation), 0))
    return false;
  /* after the acquire (API.md §2); or the time an earlier session's record
   * of this event took, after its own acquire and after this session
   * started (the site's word that named this session was decided then) */
  trace_ticks_t now = *time != 0 ? *time : trace_clock__now_ns();
  *time = now;
  uint64_t* p = trace_engine__reserve_counted_at(w, hot, words, true);
  if (__builtin_expect(p != NULL, 1)) {
    p[1] = payload_kind == TRACE_INTERNAL_PAYLOAD_END_TIME ? payload : now;
    uint64_t* q = p + 2;
#pragma GCC unroll 15
    for (size_t i = 0; i < num_args; i++)
      q = trace_internal_put_arg(q, &args[i].value, names[i], refs[i]);
    if (payload_kind != TRACE_INTERNAL_PAYLOAD_NONE)
      *q = payload_kind == TRACE_INTERNAL_PAYLOAD_END_TIME ? now : payload;
    trace_engine__commit(p, header | ((uint64_t)words << 4));
    trace_engine__count_written(w);
  }
  trace_engine__release(w);
  return true;
}

/* The same for an event written into one session: its own time. */
static inline __attribute__((always_inline)) bool trace_internal_write_cached(
    trace_site_t* site, uint64_t generation, trace_internal_payload_t payload_kind,
    uint64_t payload, const trace_arg_t* args, size_t num_args) {
  trace_ticks_t time = 0;
  return trace_internal_write_cached_at(site, generation, payload_kind, payload, args, num_args,
                                        &time);
}

/* Several sessions enable the site's category (`state`: a current
 * TRACE_SITE_SEVERAL word, instrumentation.h): the cached record into each
 * of them in session order, each about one inline write. The first session
 * whose record is not cached (or that stopped meanwhile), and those after
 * it, are the out-of-line writer's: returns the word to hand it, `state`
 * with only their bits, or 0 when every session was written. */
static inline __attribute__((always_inline)) uint64_t trace_internal_write_several(
    trace_site_t* site, uint64_t state, trace_internal_payload_t payload_kind, uint64_t payload,
    const trace_arg_t* args, size_t num_args) {
  uint64_t left = (state >> 1) & 0xfu;
  trace_ticks_t time = 0; /* one event, one time: the first session's clock read */
  while (left != 0) {
    uint64_t generation =
        __atomic_load_n(&trace_engine__generation[__builtin_ctzll(left)], __ATOMIC_ACQUIRE);
    if (generation == 0 || !trace_internal_write_cached_at(site, generation, payload_kind, payload,
                                                           args, num_args, &time))
      break;
    left &= left - 1;
  }
  return left == 0 ? 0 : (state & ~((uint64_t)0xfu << 1)) | (left << 1);
}

/* An event of an enabled site (TRACE_INTERNAL_SITE_RECORD): `state` is the
 * word trace_site_is_enabled() returned, TRACE_SITE_ENABLED(generation).
 * Inline from the cache, or the out-of-line writer with a copy of the
 * arguments (the caller's array then never has its address taken, so on
 * the inline path it lives in registers, not on the stack, and no store
 * into the record can alias it). */
static inline __attribute__((always_inline)) void trace_internal_event(
    trace_site_t* site, uint64_t state, const char* category_literal, const char* name_literal,
    unsigned event_type, uint64_t payload, trace_arg_t* args, size_t num_args) {
  trace_internal_payload_t kind = event_type == TRACE_INTERNAL_EVENT_DURATION_BEGIN ||
                                          event_type == TRACE_INTERNAL_EVENT_DURATION_END
                                      ? TRACE_INTERNAL_PAYLOAD_NONE
                                      : TRACE_INTERNAL_PAYLOAD_WORD;
  if (__builtin_expect(trace_internal_write_cached(site, state >> 1, kind, payload, args, num_args),
                       1))
    return;
  if (__builtin_expect((state & TRACE_SITE_SEVERAL_FLAG) != 0, 0)) {
    state = trace_internal_write_several(site, state, kind, payload, args, num_args);
    if (state == 0) return;
  }
  trace_arg_t copy[TRACE_MAX_ARGS];
  if (num_args != 0) memcpy(copy, args, num_args * sizeof(*args));
  trace_internal_write_event_at_site(site, state, category_literal, name_literal, event_type,
                                     payload, copy, num_args);
}

/* TRACE_INSTANT's form of it (the scope is the payload word). */
static inline __attribute__((always_inline)) void trace_internal_instant(
    trace_site_t* site, uint64_t state, const char* category_literal, const char* name_literal,
    trace_scope_t scope, trace_arg_t* args, size_t num_args) {
  trace_internal_event(site, state, category_literal, name_literal, TRACE_INTERNAL_EVENT_INSTANT,
                       (uint64_t)scope, args, num_args);
}

/* TRACE_DURATION, entry with the site enabled: copies the arguments into the
 * scope's own array `storage` (string values stay borrowed until the exit)
 * and takes the start time. Nothing is held during the scope. The scope's
 * `args` is not set: the inline exit is given the array, and so the scope
 * object never holds its own address (it can then live in registers). */
static inline __attribute__((always_inline)) void trace_internal_duration_scope_begin(
    trace_internal_duration_scope_t* scope, const char* category_literal, const char* name_literal,
    trace_site_t* site, uint64_t state, trace_arg_t* storage, const trace_arg_t* args,
    size_t num_args) {
  if (num_args != 0) memcpy(storage, args, num_args * sizeof(*args));
  scope->category_literal = category_literal;
  scope->name_literal = name_literal;
  scope->site = site;
  scope->num_args = num_args;
  scope->state = state;
  trace_ticks_t now = trace_clock__now_ns();
  scope->start_time = now != 0 ? now : 1; /* 0 means "not started" */
}

/* TRACE_DURATION, exit of a scope that started: the duration-complete
 * record goes to the sessions that enabled the category when the scope
 * began (its word, scope->state) and still run that trace, as one trace's
 * TRACE_DURATION records nothing for a scope that began before its start:
 * inline when that is one session whose record is cached, or several whose
 * word is still current; else out of line (which writes nothing if those
 * traces ended meanwhile). `args` is the scope's array and `num_args` the
 * expansion's constant. */
static inline __attribute__((always_inline)) void trace_internal_duration_scope_finish(
    trace_internal_duration_scope_t* scope, const trace_arg_t* args, size_t num_args) {
  uint64_t state = scope->state;
  uint64_t generation = state >> 1;
  uint64_t current = __atomic_load_n(
      &trace_engine__generation[TRACE_GENERATION_SESSION(generation)], __ATOMIC_ACQUIRE);
  /* (state >> 1 == current != 0: state is TRACE_SITE_ENABLED(current)) */
  if (__builtin_expect(current != 0 && generation == current, 1) &&
      __builtin_expect(
          trace_internal_write_cached(scope->site, generation, TRACE_INTERNAL_PAYLOAD_END_TIME,
                                      scope->start_time, args, num_args),
          1))
    return;
  /* several sessions, inline while the word's epoch holds (else the library
   * keeps those of them that still enable the category) */
  if (__builtin_expect((state & TRACE_SITE_SEVERAL_FLAG) != 0, 0) &&
      trace_site_several_current(state)) {
    state = trace_internal_write_several(scope->site, state, TRACE_INTERNAL_PAYLOAD_END_TIME,
                                         scope->start_time, args, num_args);
    if (state == 0) return;
  }
  /* a copy for the call, as in trace_internal_event(): neither the scope
   * nor its array has its address taken */
  trace_arg_t copy[TRACE_MAX_ARGS];
  if (num_args != 0) memcpy(copy, args, num_args * sizeof(*args));
  trace_internal_write_duration_at_site(scope->site, state, scope->category_literal,
                                        scope->name_literal, scope->start_time, copy, num_args);
}

/* C: a scope of `items` macro items (0 to 30; the counts the checks reject
 * as 0 arguments) is one object, the scope and its arguments' array, with
 * an exit of its own for the cleanup attribute (a function of the object
 * alone): the argument count is a constant there, so the loops over the
 * arguments unroll, and the object's address never leaves the expansion. */
#define TRACE_INTERNAL_DEFINE_SCOPE(items, pairs)                      \
  typedef struct trace_internal_duration_scope_##items {               \
    trace_internal_duration_scope_t scope;                             \
    trace_arg_t args[(pairs) > 0 ? (pairs) : 1];                       \
  } trace_internal_duration_scope_##items##_t;                         \
  static inline void trace_internal_duration_scope_exit_##items(       \
      trace_internal_duration_scope_##items##_t* s) {                  \
    if (__builtin_expect(s->scope.start_time != 0, 0))                 \
      trace_internal_duration_scope_finish(&s->scope, s->args, pairs); \
  }
#ifndef __cplusplus
TRACE_INTERNAL_DEFINE_SCOPE(0, 0)
TRACE_INTERNAL_DEFINE_SCOPE(2, 1)
TRACE_INTERNAL_DEFINE_SCOPE(4, 2)
TRACE_INTERNAL_DEFINE_SCOPE(6, 3)
TRACE_INTERNAL_DEFINE_SCOPE(8, 4)
TRACE_INTERNAL_DEFINE_SCOPE(10, 5)
TRACE_INTERNAL_DEFINE_SCOPE(12, 6)
TRACE_INTERNAL_DEFINE_SCOPE(14, 7)
TRACE_INTERNAL_DEFINE_SCOPE(16, 8)
TRACE_INTERNAL_DEFINE_SCOPE(18, 9)
TRACE_INTERNAL_DEFINE_SCOPE(20, 10)
TRACE_INTERNAL_DEFINE_SCOPE(22, 11)
TRACE_INTERNAL_DEFINE_SCOPE(24, 12)
TRACE_INTERNAL_DEFINE_SCOPE(26, 13)
TRACE_INTERNAL_DEFINE_SCOPE(28, 14)
TRACE_INTERNAL_DEFINE_SCOPE(30, 15)
TRACE_INTERNAL_DEFINE_SCOPE(1, 0)
TRACE_INTERNAL_DEFINE_SCOPE(3, 0)
TRACE_INTERNAL_DEFINE_SCOPE(5, 0)
TRACE_INTERNAL_DEFINE_SCOPE(7, 0)
TRACE_INTERNAL_DEFINE_SCOPE(9, 0)
TRACE_INTERNAL_DEFINE_SCOPE(11, 0)
TRACE_INTERNAL_DEFINE_SCOPE(13, 0)
TRACE_INTERNAL_DEFINE_SCOPE(15, 0)
TRACE_INTERNAL_DEFINE_SCOPE(17, 0)
TRACE_INTERNAL_DEFINE_SCOPE(19, 0)
TRACE_INTERNAL_DEFINE_SCOPE(21, 0)
TRACE_INTERNAL_DEFINE_SCOPE(23, 0)
TRACE_INTERNAL_DEFINE_SCOPE(25, 0)
TRACE_INTERNAL_DEFINE_SCOPE(27, 0)
TRACE_INTERNAL_DEFINE_SCOPE(29, 0)
TRACE_INTERNAL_DEFINE_SCOPE(100, 0)
#endif
#undef TRACE_INTERNAL_DEFINE_SCOPE

#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic pop
#endif

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* TRACE_INTERNAL_EVENT_RECORD_H_ */
