/* The out-of-line halves of the <trace/event.h> macros
 * (include/trace/internal/event_helpers.h). Each runs with the thread's
 * context acquired: timestamp after the acquire (API.md §2), then the thread,
 * the name and the argument names, then the record, then the release. */
#include "trace/internal/event_helpers.h"

#include <string.h>

#include "engine/engine_internal.h"
#include "engine/explicit_name.h"
#include "trace/internal/event_record.h" /* the cached record path, per session below */

/* ---- the record path of the event macros ----
 * The common record has the thread, the category and the name indexed (each
 * was registered before on this thread), and arguments whose names are
 * indexed too and whose values are not blobs: "plain" arguments, a header
 * word, then a value word for 64-bit values or the characters of an inline
 * string. Such a record is written by the short encoder below; anything else
 * (a table full of strings, indexes run out, a blob) by the general one in
 * fxt_encode.h. Both write the same bytes. */

/* Registers the names and literal string values in place, as
 * writer__complete_args() does, and counts the arguments' words if all of
 * them are plain: 0 if one is not (a plain argument takes at least 1). */
static inline size_t complete_plain_args(trace_context_t* w, trace_arg_t* args, size_t num_args) {
  size_t words = 0;
  bool plain = true;
  for (size_t i = 0; i < num_args; i++) {
    trace_string_ref_t* n = &args[i].name_ref;
    if (n->encoded_value == TRACE_ENCODED_STRING_REF_EMPTY && n->inline_string)
      *n = writer__register_literal(w, n->inline_string);
    plain &= !trace_is_inline_string_ref(n);
    trace_arg_value_t* v = &args[i].value;
    if (v->type == TRACE_ARG_STRING) {
      trace_string_ref_t* s = &v->string_value_ref;
      if (s->encoded_value == TRACE_ENCODED_STRING_REF_EMPTY && s->inline_string)
        *s = writer__register_literal(w, s->inline_string);
      words += fxt_string_ref_words(s);
    }
    plain &= v->type != TRACE_ARG_BLOB;
    words += 1u + fxt_arg_has_value_word(v->type);
  }
  return plain ? words : 0;
}

/* fxt_put_arg() for a plain argument: its name is indexed, so there is no
 * name stream to write and the size is known from the type. */
static inline uint64_t* put_plain_arg(uint64_t* p, const trace_arg_t* arg) {
  const trace_arg_value_t* v = &arg->value;
  uint64_t header = FXT_FIELD(v->type, 0, 3) | FXT_FIELD(arg->name_ref.encoded_value, 16, 31) |
                    fxt_arg_header_value(v);
  if (v->type == TRACE_ARG_STRING) {
    const trace_string_ref_t* s = &v->string_value_ref;
    uint64_t* end = fxt_put_string_ref(p + 1, s);
    p[0] = header | FXT_FIELD((uint64_t)(end - p), 4, 15) | FXT_FIELD(s->encoded_value, 32, 47);
    return end;
  }
  if (fxt_arg_has_value_word(v->type)) {
    p[0] = header | FXT_FIELD(2, 4, 15);
    p[1] = v->uint64_value;
    return p + 2;
  }
  p[0] = header | FXT_FIELD(1, 4, 15);
  return p + 1;
}

/* ---- the per-thread site cache (record_path.h, trace_engine_site_record_t) ---- */

/* Remembers the record just written at `site` (its header, and its
 * arguments' name indexes) for the inline record path
 * (trace/internal/event_record.h), which takes the sizes, the values and
 * the string values' references from the call. */
static void fill_site_entry(trace_context_t* w, const trace_site_t* site, uint64_t header,
                            const trace_arg_t* args, size_t num_args) {
  uint16_t names[TRACE_MAX_ARGS];
  for (size_t i = 0; i < num_args; i++) {
    if (args[i].value.type == TRACE_ARG_BLOB) return; /* never inline */
    names[i] = args[i].name_ref.encoded_value;
  }
  trace_engine__fill_record(w, site, header, names, num_args);
}

/* One event record at `ticks` on the current thread: the thread, the name
 * and the argument names, then the record, then the release. Inlined into
 * its callers (one for every helper, one for TRACE_DURATION, one for the
 * site path). `site`: remember the record for the site path, or NULL. */
static inline __attribute__((always_inline)) void write_and_release(
    trace_context_t* w, unsigned type, trace_ticks_t ticks, const trace_string_ref_t* category,
    const char* name, trace_arg_t* args, size_t num_args, uint64_t payload,
    const trace_site_t* site) {
  const trace_thread_ref_t* thread = writer__current_thread(w);
  trace_string_ref_t name_ref = writer__register_literal(w, name);
  size_t args_words = complete_plain_args(w, args, num_args);
  bool plain = (args_words != 0 || num_args == 0) && num_args <= TRACE_MAX_ARGS &&
               !trace_is_inline_thread_ref(thread) && !trace_is_inline_string_ref(category) &&
               !trace_is_inline_string_ref(&name_ref);
  size_t words = 2u + args_words + fxt_event_payload_words(type);
  if (UNLIKELY(!plain || words > FXT_MAX_RECORD_WORDS)) {
    /* The general encoder; it drops (and counts) a record that is too large. */
    writer__write_event(w, type, ticks, thread, category, &name_ref, args, num_args, payload);
  } else {
    /* FXT.md §8.5: header, timestamp, (thread, category and name are
     * indexed: in the header), arguments, payload. The header is stored
     * last: the commit. */
    uint64_t* p = writer__reserve(w, words);
    if (LIKELY(p != NULL)) {
      uint64_t* q = p + 1;
      *q++ = ticks;
      for (size_t i = 0; i < num_args; i++) q = put_plain_arg(q, &args[i]);
      if (fxt_event_payload_words(type)) *q = payload;
      uint64_t header = fxt_header(FXT_RECORD_EVENT, words) | FXT_FIELD(type, 16, 19) |
                        FXT_FIELD(num_args, 20, 23) | FXT_FIELD(thread->encoded_value, 24, 31) |
                        FXT_FIELD(category->encoded_value, 32, 47) |
                        FXT_FIELD(name_ref.encoded_value, 48, 63);
      fxt_commit(p, header);
      writer__count_written(w);
      if (site) fill_site_entry(w, site, header, args, num_args);
    }
  }
  writer__release(w);
}

/* The common shape: the timestamp is taken after the acquire (API.md §2). */
static inline void event_and_release(trace_context_t* w, unsigned type,
                                     const trace_string_ref_t* category, const char* name,
                                     trace_arg_t* args, size_t num_args, uint64_t payload) {
  write_and_release(w, type, trace_clock__now_ns(), category, name, args, num_args, payload, NULL);
}

static bool is_site_event_type(unsigned type) {
  return type <= FXT_EVENT_FLOW_END && type != FXT_EVENT_DURATION_COMPLETE;
}

/* The sessions an event of `site` goes to (a mask of session bits; 0:
 * none), from the word `state` its inline check read, asking again when it
 * is not a current answer. *decided (when not NULL): the word the mask
 * comes from (for session_enables()). */
unsigned engine__site_sessions(trace_site_t* site, uint64_t state, const char* category_literal,
                               uint64_t* decided) {
  uint64_t unused;
  if (!decided) decided = &unused;
  *decided = state;
  if (!(state & TRACE_SITE_SEVERAL_FLAG)) {
    /* acquire: orders the reads of the engine's set-up after its publication */
    uint64_t generation = ATOMIC_ACQUIRE(&trace_engine__generation[TRACE_SITE_SESSION(state)]);
    if (LIKELY(generation != 0 && state == TRACE_SITE_ENABLED(generation)))
      return 1u << TRACE_SITE_SESSION(state);
  } else {
    /* several: the sessions the caller has not written yet (the inline
     * path writes some itself, event_record.h), as decided in this epoch;
     * else those still enabling the category now (never one written) */
    unsigned given = (unsigned)(state >> 1) & 0xfu;
    if (trace_site_several_current(state)) return given;
    uint64_t now = trace_engine__resolve_site(category_literal, site);
    *decided = now;
    if (now == TRACE_SITE_DISABLED) return 0;
    return given & (now & TRACE_SITE_SEVERAL_FLAG ? (unsigned)(now >> 1) & 0xfu
                                                  : 1u << TRACE_SITE_SESSION(now));
  }
  state = trace_engine__resolve_site(category_literal, site);
  *decided = state;
  if (state == TRACE_SITE_DISABLED) return 0;
  return state & TRACE_SITE_SEVERAL_FLAG ? (unsigned)(state >> 1) & 0xfu
                                         : 1u << TRACE_SITE_SESSION(state);
}

/* Whether trace `generation` of `session` enables the category of `site`:
 * the session may have stopped and started again, with other categories,
 * since the answer `decided` (engine__site_sessions) was made, and the
 * caller read its generation after that. Known without asking when
 * `decided` names that very trace, or when this thread cached the site's
 * record in it (only an event of an enabled category fills the cache);
 * else its handler is asked (a first record of the site on this thread in a
 * trace of several sessions). */
static bool session_enables(trace_site_t* site, unsigned session, uint64_t generation,
                            uint64_t decided, const char* category_literal) {
  if (!(decided & TRACE_SITE_SEVERAL_FLAG) && decided == TRACE_SITE_ENABLED(generation))
    return true;
  trace_context_t* w = trace_engine__self[session];
  if (w && ATOMIC_LOAD(&w->generation) == generation) {
    const trace_engine_site_record_t* r = trace_engine__site_record(w, site);
    if (r->key == site && r->generation == generation) return true;
  }
  return writer__session_enables(&engine__sessions[session], category_literal);
}

/* One site event into each session of `mask`: enter, the record, release.
 * With several sessions, each one's record comes from its writer's cache
 * of the site's record when it is there (the macros' inline path,
 * trace_internal_write_cached(), once per session: about one inline write
 * each); otherwise each session registers the names in its own tables (so
 * each gets a fresh copy of the caller's arguments) and fills its writer's
 * cache. `start_time` != 0: a duration-complete event (the end time taken
 * after each enter). */
static void write_to_sessions(unsigned mask, uint64_t decided, trace_site_t* site,
                              const char* category_literal, const char* name_literal,
                              unsigned event_type, uint64_t payload, trace_ticks_t start_time,
                              const trace_arg_t* args, size_t num_args) {
  bool several = (mask & (mask - 1)) != 0;
  if (num_args > TRACE_MAX_ARGS) num_args = TRACE_MAX_ARGS + 1; /* dropped and counted below */
  trace_internal_payload_t kind = TRACE_INTERNAL_PAYLOAD_WORD;
  if (start_time != 0)
    kind = TRACE_INTERNAL_PAYLOAD_END_TIME;
  else if (event_type == FXT_EVENT_DURATION_BEGIN || event_type == FXT_EVENT_DURATION_END)
    kind = TRACE_INTERNAL_PAYLOAD_NONE;
  for (; mask != 0; mask &= mask - 1) {
    unsigned session = (unsigned)__builtin_ctz(mask);
    uint64_t generation = ATOMIC_ACQUIRE(&trace_engine__generation[session]);
    if (generation == 0) continue; /* stopped meanwhile */
    if (several &&
        trace_internal_write_cached(site, generation, kind, start_time != 0 ? start_time : payload,
                                    args, num_args))
      continue;
    /* (then the enter fails if the session is not in that trace any more) */
    if (!session_enables(site, session, generation, decided, category_literal)) continue;
    trace_context_t* w = writer__enter(generation); /* a first record, a new chunk */
    if (UNLIKELY(w == NULL)) continue;
    trace_arg_t copy[TRACE_MAX_ARGS + 1];
    if (num_args != 0) memcpy(copy, args, num_args * sizeof(*args));
    trace_string_ref_t category = writer__register_literal(w, category_literal);
    trace_ticks_t now = trace_clock__now_ns(); /* after the acquire (API.md §2) */
    if (start_time != 0)
      write_and_release(w, FXT_EVENT_DURATION_COMPLETE, start_time, &category, name_literal, copy,
                        num_args, now, site);
    else
      write_and_release(w, event_type, now, &category, name_literal, copy, num_args, payload, site);
  }
}

/* The out-of-line path of a site's events (event_helpers.h), for what the
 * inline one (trace/internal/event_record.h) does not do: the site's first
 * visit in a trace, a thread's first record, a record not cached yet, a
 * literal string value not registered on the thread yet, a blob, a record
 * too large, a new chunk, a trace stopping, and every event of a site that
 * several sessions enable (written into each). Writes the record and caches
 * it for the thread. */
void trace_internal_write_event_at_site(trace_site_t* site, uint64_t state,
                                        const char* category_literal, const char* name_literal,
                                        unsigned event_type, uint64_t payload, trace_arg_t* args,
                                        size_t num_args) {
  if (UNLIKELY(!is_site_event_type(event_type))) return;
  uint64_t decided;
  unsigned mask = engine__site_sessions(site, state, category_literal, &decided);
  if (mask != 0)
    write_to_sessions(mask, decided, site, category_literal, name_literal, event_type, payload, 0,
                      args, num_args);
}

void trace_internal_write_instant_at_site(trace_site_t* site, uint64_t state,
                                          const char* category_literal, const char* name_literal,
                                          trace_scope_t scope, trace_arg_t* args, size_t num_args) {
  trace_internal_write_event_at_site(site, state, category_literal, name_literal, FXT_EVENT_INSTANT,
                                     (uint64_t)scope, args, num_args);
}

void trace_internal_write_instant_event_record_and_release_context(
    trace_context_t* context, const trace_string_ref_t* category_ref, const char* name_literal,
    trace_scope_t scope, trace_arg_t* args, size_t num_args) {
  event_and_release(context, FXT_EVENT_INSTANT, category_ref, name_literal, args, num_args,
                    (uint64_t)scope);
}

void trace_internal_write_counter_event_record_and_release_context(
    trace_context_t* context, const trace_string_ref_t* category_ref, const char* name_literal,
    trace_counter_id_t counter_id, trace_arg_t* args, size_t num_args) {
  event_and_release(context, FXT_EVENT_COUNTER, category_ref, name_literal, args, num_args,
                    counter_id);
}

void trace_internal_write_duration_begin_event_record_and_release_context(
    trace_context_t* context, const trace_string_ref_t* category_ref, const char* name_literal,
    trace_arg_t* args, size_t num_args) {
  event_and_release(context, FXT_EVENT_DURATION_BEGIN, category_ref, name_literal, args, num_args,
                    0);
}

void trace_internal_write_duration_end_event_record_and_release_context(
    trace_context_t* context, const trace_string_ref_t* category_ref, const char* name_literal,
    trace_arg_t* args, size_t num_args) {
  event_and_release(context, FXT_EVENT_DURATION_END, category_ref, name_literal, args, num_args, 0);
}

#define DEFINE_ID_HELPER(kind, id_type, event_type)                                               \
  void trace_internal_write_##kind##_event_record_and_release_context(                            \
      trace_context_t* context, const trace_string_ref_t* category_ref, const char* name_literal, \
      id_type id, trace_arg_t* args, size_t num_args) {                                           \
    event_and_release(context, event_type, category_ref, name_literal, args, num_args, id);       \
  }
DEFINE_ID_HELPER(async_begin, trace_async_id_t, FXT_EVENT_ASYNC_BEGIN)
DEFINE_ID_HELPER(async_instant, trace_async_id_t, FXT_EVENT_ASYNC_INSTANT)
DEFINE_ID_HELPER(async_end, trace_async_id_t, FXT_EVENT_ASYNC_END)
DEFINE_ID_HELPER(flow_begin, trace_flow_id_t, FXT_EVENT_FLOW_BEGIN)
DEFINE_ID_HELPER(flow_step, trace_flow_id_t, FXT_EVENT_FLOW_STEP)
DEFINE_ID_HELPER(flow_end, trace_flow_id_t, FXT_EVENT_FLOW_END)
#undef DEFINE_ID_HELPER

static bool is_flow_kind(unsigned kind) {
  return kind == FXT_EVENT_FLOW_BEGIN || kind == FXT_EVENT_FLOW_STEP || kind == FXT_EVENT_FLOW_END;
}

/* ---- the forms written through a context, into each session of the event ----
 * The context the macro acquired is the first session's; the others that
 * enable the category (further_sessions, set by the acquire) get the same
 * record, one after the other, each through its own context, from the
 * caller's arguments as they were (a write registers their names in place,
 * in its session's tables). One session: nothing more than the write. */

/* The next session of *left, entered, its category registered into
 * *category_ref (`category` NULL: a form without one), or NULL when none
 * is left (a session stopped meanwhile is skipped). */
static trace_context_t* next_session(unsigned* left, const char* category,
                                     trace_string_ref_t* category_ref) {
  while (*left != 0) {
    unsigned session = (unsigned)__builtin_ctz(*left);
    *left &= *left - 1;
    uint64_t generation = ATOMIC_ACQUIRE(&trace_engine__generation[session]);
    trace_context_t* w = generation != 0 ? writer__enter(generation) : NULL;
    if (w == NULL) continue;
    w->further_sessions = 0;
    *category_ref =
        category ? writer__register_literal(w, category) : trace_make_empty_string_ref();
    return w;
  }
  return NULL;
}

/* Runs `write` (which uses EACH_W, EACH_CATEGORY and EACH_ARGS, and does
 * not release) in `context`'s session, then in each further one, releasing
 * each context. More arguments than a record holds: the first session's
 * write drops and counts the record; the others are not tried. */
#define EACH_SESSION(context, category_ref, args, num_args, write)                             \
  do {                                                                                         \
    trace_context_t* EACH_W = (context);                                                       \
    const trace_string_ref_t* EACH_CATEGORY = (category_ref);                                  \
    trace_arg_t* EACH_ARGS = (args);                                                           \
    unsigned each_left = EACH_W->further_sessions;                                             \
    const char* each_category = EACH_W->further_category;                                      \
    EACH_W->further_sessions = 0;                                                              \
    if ((num_args) > TRACE_MAX_ARGS) each_left = 0;                                            \
    trace_arg_t each_original[TRACE_MAX_ARGS];                                                 \
    if (each_left != 0 && (num_args) != 0)                                                     \
      memcpy(each_original, EACH_ARGS, (num_args) * sizeof(trace_arg_t));                      \
    trace_string_ref_t each_category_ref;                                                      \
    trace_arg_t each_copy[TRACE_MAX_ARGS];                                                     \
    for (;;) {                                                                                 \
      write;                                                                                   \
      writer__release(EACH_W);                                                                 \
      if (LIKELY(each_left == 0)) break;                                                       \
      EACH_W = next_session(&each_left, each_category, &each_category_ref);                    \
      if (EACH_W == NULL) break;                                                               \
      EACH_CATEGORY = &each_category_ref;                                                      \
      if ((num_args) != 0) memcpy(each_copy, each_original, (num_args) * sizeof(trace_arg_t)); \
      EACH_ARGS = each_copy;                                                                   \
    }                                                                                          \
  } while (0)

static void instaflow(trace_context_t* w, const trace_string_ref_t* category_ref,
                      const char* name_literal, unsigned flow_kind, trace_flow_id_t flow_id,
                      trace_arg_t* args, size_t num_args) {
  trace_ticks_t ticks = trace_clock__now_ns();
  trace_thread_ref_t thread = writer__thread_ref(w);
  trace_string_ref_t name = writer__register_literal(w, name_literal);
  writer__complete_args(w, args, num_args);
  writer__write_event(w, FXT_EVENT_DURATION_BEGIN, ticks, &thread, category_ref, &name, args,
                      num_args, 0);
  writer__write_event(w, flow_kind, ticks, &thread, category_ref, &name, NULL, 0, flow_id);
  writer__write_event(w, FXT_EVENT_DURATION_END, ticks, &thread, category_ref, &name, NULL, 0, 0);
}

void trace_internal_write_instaflow_and_release_context(trace_context_t* context,
                                                        const trace_string_ref_t* category_ref,
                                                        const char* name_literal,
                                                        unsigned flow_kind, trace_flow_id_t flow_id,
                                                        trace_arg_t* args, size_t num_args) {
  if (!is_flow_kind(flow_kind)) {
    trace_release_context(context);
    return;
  }
  EACH_SESSION(
      context, category_ref, args, num_args,
      instaflow(EACH_W, EACH_CATEGORY, name_literal, flow_kind, flow_id, EACH_ARGS, num_args));
}

static void blob_event(trace_context_t* w, const trace_string_ref_t* category_ref,
                       const char* name_literal, const void* blob, size_t blob_size,
                       trace_arg_t* args, size_t num_args) {
  trace_ticks_t ticks = trace_clock__now_ns();
  trace_thread_ref_t thread = writer__thread_ref(w);
  trace_string_ref_t name = writer__register_literal(w, name_literal);
  writer__complete_args(w, args, num_args);
  trace_context_write_blob_event_record(w, ticks, &thread, category_ref, &name, blob, blob_size,
                                        args, num_args);
}

void trace_internal_write_blob_event_record_and_release_context(
    trace_context_t* context, const trace_string_ref_t* category_ref, const char* name_literal,
    const void* blob, size_t blob_size, trace_arg_t* args, size_t num_args) {
  EACH_SESSION(
      context, category_ref, args, num_args,
      blob_event(EACH_W, EACH_CATEGORY, name_literal, blob, blob_size, EACH_ARGS, num_args));
}

static void blob_attachment(trace_context_t* w, const trace_string_ref_t* category_ref,
                            const char* name_literal, const void* blob, size_t blob_size) {
  trace_string_ref_t name = writer__register_literal(w, name_literal);
  trace_context_write_blob_attachment_record(w, category_ref, &name, blob, blob_size);
}

void trace_internal_write_blob_attachment_record_and_release_context(
    trace_context_t* context, const trace_string_ref_t* category_ref, const char* name_literal,
    const void* blob, size_t blob_size) {
  EACH_SESSION(context, category_ref, (trace_arg_t*)NULL, 0u,
               blob_attachment(EACH_W, EACH_CATEGORY, name_literal, blob, blob_size));
}

static void blob_record(trace_context_t* w, trace_blob_type_t type, const char* name_literal,
                        const void* blob, size_t blob_size) {
  trace_string_ref_t name = writer__register_literal(w, name_literal);
  trace_context_write_blob_record(w, type, &name, blob, blob_size);
}

/* TRACE_BLOB: no category; the context of trace_acquire_context(), whose
 * further sessions are every other started one. */
void trace_internal_write_blob_record_and_release_context(trace_context_t* context,
                                                          trace_blob_type_t type,
                                                          const char* name_literal,
                                                          const void* blob, size_t blob_size) {
  EACH_SESSION(context, (const trace_string_ref_t*)NULL, (trace_arg_t*)NULL, 0u,
               ((void)EACH_CATEGORY, (void)EACH_ARGS,
                blob_record(EACH_W, type, name_literal, blob, blob_size)));
}

static void kernel_object(trace_context_t* w, trace_koid_t pid, trace_koid_t tid, const char* name,
                          trace_arg_t* args, size_t num_args) {
  trace_arg_t all[TRACE_MAX_ARGS + 1];
  size_t n = 0;
  if (tid != 0) /* a thread: the "process" argument readers need (READERS.md) */
    all[n++] =
        trace_make_arg(trace_internal_make_literal_ref("process"), trace_make_koid_arg_value(pid));
  /* the program names its own process or thread: kept over the name /proc
   * has at the end of the archive, from when it was given (explicit_name.h);
   * marked only when the record has room left for the marker (the
   * program's own arguments come first), remembered either way */
  if (pid == engine__of(w)->pid && name) {
    uint64_t ns = trace_clock__now_ns();
    if (n + num_args < TRACE_MAX_ARGS)
      all[n++] = trace_make_arg(trace_internal_make_literal_ref(EXPLICIT_NAME_ARG),
                                trace_make_uint64_arg_value(ns));
    explicit_name__note(pid, tid != 0, tid != 0 ? tid : pid, name, strlen(name), ns);
  }
  for (size_t i = 0; i < num_args && n < TRACE_MAX_ARGS; i++) all[n++] = args[i];
  writer__complete_args(w, all, n);
  trace_string_ref_t name_ref =
      name ? writer__register_copy(w, name, strlen(name)) : trace_make_empty_string_ref();
  trace_context_write_kernel_object_record(
      w, tid != 0 ? tid : pid, tid != 0 ? FXT_KOBJ_THREAD : FXT_KOBJ_PROCESS, &name_ref, all, n);
}

void trace_internal_note_kernel_object_name(trace_koid_t pid, trace_koid_t tid, const char* name) {
  if (name && pid == explicit_name__own_pid())
    explicit_name__note(pid, tid != 0, tid != 0 ? tid : pid, name, strlen(name),
                        trace_clock__now_ns());
}

/* TRACE_KERNEL_OBJECT: as TRACE_BLOB, into every started session. */
void trace_internal_write_kernel_object_record_and_release_context(
    trace_context_t* context, trace_koid_t pid, trace_koid_t tid, const char* name,
    trace_arg_t* args, size_t num_args) {
  EACH_SESSION(context, (const trace_string_ref_t*)NULL, args, num_args,
               ((void)EACH_CATEGORY, kernel_object(EACH_W, pid, tid, name, EACH_ARGS, num_args)));
}

static void vthread_event(trace_context_t* w, unsigned type, const trace_string_ref_t* category,
                          const char* name_literal, const char* vthread_literal,
                          trace_vthread_id_t vthread_id, trace_ticks_t ticks, trace_arg_t* args,
                          size_t num_args, uint64_t payload) {
  EACH_SESSION(w, category, args, num_args, {
    trace_thread_ref_t thread;
    trace_context_register_vthread(EACH_W, 0, vthread_literal, vthread_id, &thread);
    trace_string_ref_t name = writer__register_literal(EACH_W, name_literal);
    writer__complete_args(EACH_W, EACH_ARGS, num_args);
    writer__write_event(EACH_W, type, ticks, &thread, EACH_CATEGORY, &name, EACH_ARGS, num_args,
                        payload);
  });
}

void trace_internal_write_vthread_duration_begin_event_record_and_release_context(
    trace_context_t* context, const trace_string_ref_t* category_ref, const char* name_literal,
    const char* vthread_literal, trace_vthread_id_t vthread_id, trace_ticks_t ticks,
    trace_arg_t* args, size_t num_args) {
  vthread_event(context, FXT_EVENT_DURATION_BEGIN, category_ref, name_literal, vthread_literal,
                vthread_id, ticks, args, num_args, 0);
}

void trace_internal_write_vthread_duration_end_event_record_and_release_context(
    trace_context_t* context, const trace_string_ref_t* category_ref, const char* name_literal,
    const char* vthread_literal, trace_vthread_id_t vthread_id, trace_ticks_t ticks,
    trace_arg_t* args, size_t num_args) {
  vthread_event(context, FXT_EVENT_DURATION_END, category_ref, name_literal, vthread_literal,
                vthread_id, ticks, args, num_args, 0);
}

void trace_internal_write_vthread_flow_event_record_and_release_context(
    trace_context_t* context, const trace_string_ref_t* category_ref, const char* name_literal,
    const char* vthread_literal, trace_vthread_id_t vthread_id, unsigned flow_kind,
    trace_flow_id_t flow_id, trace_ticks_t ticks, trace_arg_t* args, size_t num_args) {
  if (!is_flow_kind(flow_kind)) {
    trace_release_context(context);
    return;
  }
  vthread_event(context, flow_kind, category_ref, name_literal, vthread_literal, vthread_id, ticks,
                args, num_args, flow_id);
}

void trace_internal_write_duration_at_site(trace_site_t* site, uint64_t state,
                                           const char* category_literal, const char* name_literal,
                                           trace_ticks_t start_time, trace_arg_t* args,
                                           size_t num_args) {
  unsigned mask;
  uint64_t decided = state;
  if (state != 0 && !(state & TRACE_SITE_SEVERAL_FLAG)) {
    /* the one session of the scope's start, while it runs that trace */
    uint64_t generation = state >> 1;
    if (ATOMIC_ACQUIRE(&trace_engine__generation[TRACE_GENERATION_SESSION(generation)]) !=
        generation)
      return; /* that trace ended meanwhile: nothing (API.md §3) */
    mask = 1u << TRACE_GENERATION_SESSION(generation);
  } else {
    /* several: those still enabling the category (engine__site_sessions);
     * 0: a scope of older code, which did not keep its word */
    if (state == 0) state = ATOMIC_LOAD(&site->state);
    if (state == TRACE_SITE_DISABLED) return; /* stopped meanwhile: nothing (API.md §3) */
    mask = engine__site_sessions(site, state, category_literal, &decided);
  }
  if (mask != 0)
    write_to_sessions(mask, decided, site, category_literal, name_literal,
                      FXT_EVENT_DURATION_COMPLETE, 0, start_time != 0 ? start_time : 1, args,
                      num_args);
}

void trace_internal_duration_scope_end(trace_internal_duration_scope_t* scope) {
  if (scope->start_time == 0) return;
  trace_internal_write_duration_at_site(scope->site, 0, scope->category_literal,
                                        scope->name_literal, scope->start_time, scope->args,
                                        scope->num_args);
}
