/* Public API: what instrumentation uses to reach the trace engine
 * (API.md §6, Fuchsia's <lib/trace-engine/instrumentation.h> on Linux).
 *
 * A "context" is the calling thread's writer: acquiring it marks the thread
 * as inside a record (one plain store to a thread-local line, no shared
 * counter), so the engine can tell when every writer has left a buffer.
 * Acquire, write, release promptly, on the same thread; never block while
 * holding a context.
 *
 * Cost of a disabled call site, tracing stopped or its category off: one
 * load of the site's state word and one predictable branch
 * (trace_acquire_context_for_category_cached). The engine resets the words
 * of disabled sites at every start and stop, and an enabled site's word
 * names its trace, so a category set change takes effect at the next trace. */
#ifndef TRACE_ENGINE_INSTRUMENTATION_H_
#define TRACE_ENGINE_INSTRUMENTATION_H_

#include "trace-engine/types.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum {
  TRACE_STOPPED = 0,
  TRACE_STARTED = 1,
  TRACE_STOPPING = 2,
} trace_state_t;

/* The calling thread's writer; opaque. */
typedef struct trace_context trace_context_t;
/* A long-lived reference that keeps the engine from finishing a stop. */
typedef struct trace_prolonged_context trace_prolonged_context_t;

/* Sessions: the engine records into up to TRACE_ENGINE_MAX_SESSIONS traces
 * at once (docs/sessions.md), each with its own buffer, categories and
 * generation. Session 0 is the one of the single-session API
 * (trace_engine_initialize() and the rest of handler.h). */
#define TRACE_ENGINE_MAX_SESSIONS 4u

/* Per-call-site category cache: a zero-initialised object with static
 * storage (Fuchsia's per-site state word). state is
 *   - TRACE_SITE_DISABLED: no started session enables the category (the
 *     inline check returns NULL);
 *   - TRACE_SITE_ENABLED(generation): exactly one session enables it, the
 *     one whose trace is `generation` (its low bits name the session:
 *     TRACE_GENERATION_SESSION);
 *   - TRACE_SITE_SEVERAL(epoch, mask): several sessions enable it, those of
 *     the bits of mask, as decided in sessions epoch `epoch`; never equal to
 *     any TRACE_SITE_ENABLED. It stands while the epoch holds
 *     (trace_site_several_current()), and the macros then write the event
 *     into each of those sessions in turn (trace/internal/event_record.h);
 *   - 0 (unknown: the out-of-line part decides and stores the answer).
 * `next` links the sites the engine resets at every start and stop of any
 * session (NULL: not linked); the engine's. */
typedef struct trace_site {
  uint64_t state;
  struct trace_site* next;
} trace_site_t;

#define TRACE_SITE_DISABLED 1u
#define TRACE_SITE_ENABLED(generation) ((uint64_t)(generation) << 1)
#define TRACE_SITE_SEVERAL_FLAG (UINT64_C(1) << 63)
#define TRACE_SITE_SEVERAL(epoch, mask) \
  (TRACE_SITE_SEVERAL_FLAG | ((uint64_t)(epoch) << 5) | ((uint64_t)(mask) << 1))
/* A generation's session: generations are (counter << 2) | session. */
#define TRACE_GENERATION_SESSION(generation) ((unsigned)((generation)&3u))
/* The session a TRACE_SITE_ENABLED word names (any value for others). */
#define TRACE_SITE_SESSION(state) TRACE_GENERATION_SESSION((state) >> 1)

/* Per session: non-zero exactly while that session is STARTED; a new value
 * at every start (its low bits the session), so call-site caches from an
 * earlier trace never match. Read relaxed. */
TRACE_EXPORT extern uint64_t trace_engine__generation[TRACE_ENGINE_MAX_SESSIONS];

/* The sessions epoch: changes at every start and stop of any session, so
 * that a TRACE_SITE_SEVERAL word, which holds the epoch it was decided in,
 * stands exactly while the epoch holds (trace_site_several_current()). */
TRACE_EXPORT extern uint64_t trace_engine__sessions_epoch;

/* The epoch bits a TRACE_SITE_SEVERAL word keeps. */
#define TRACE_SITE_SEVERAL_EPOCH(epoch) ((uint64_t)(epoch) & (UINT64_MAX >> 6))

/* Whether `state` is a TRACE_SITE_SEVERAL word of the current sessions
 * epoch: its mask then names the sessions enabling the site's category (the
 * site's answer, as trace_engine__resolve_site() would give it). */
static inline bool trace_site_several_current(uint64_t state) {
  return (state & TRACE_SITE_SEVERAL_FLAG) != 0 &&
         ((state & ~TRACE_SITE_SEVERAL_FLAG) >> 5) ==
             TRACE_SITE_SEVERAL_EPOCH(
                 __atomic_load_n(&trace_engine__sessions_epoch, __ATOMIC_ACQUIRE));
}

/* A never-zero id for async and flow events: an atomic counter from 1,
 * plus the process id (mod 2^21) shifted left by 32, so that the ids of
 * different processes differ too (Perfetto drops flow ids begun in several
 * processes). Always below 2^53. */
TRACE_EXPORT uint64_t trace_generate_nonce(void);

TRACE_EXPORT trace_state_t trace_state(void);

/* True while the engine is STARTED or STOPPING. */
TRACE_EXPORT bool trace_is_enabled(void);

/* True if tracing is on and category_literal is enabled. May register the
 * category string (a string record) on the calling thread. */
TRACE_EXPORT bool trace_is_category_enabled(const char* category_literal);

/* NULL when tracing is off; otherwise the thread's context, which must be
 * released with trace_release_context(). */
TRACE_EXPORT trace_context_t* trace_acquire_context(void);

/* As trace_acquire_context(), and NULL (nothing held) if the category is
 * disabled; else *out_ref is the category's string ref. */
TRACE_EXPORT trace_context_t* trace_acquire_context_for_category(const char* category_literal,
                                                                 trace_string_ref_t* out_ref);

/* Out-of-line part of the cached acquire; call the inline function below.
 * `state` is the site's word as the inline check read it. */
TRACE_EXPORT trace_context_t* trace_engine__acquire_context_for_site(const char* category_literal,
                                                                     trace_site_t* site,
                                                                     trace_string_ref_t* out_ref,
                                                                     uint64_t state);

/* The rest of the site check for a site whose word is not
 * TRACE_SITE_DISABLED but not TRACE_SITE_ENABLED(current generation)
 * either (unknown, or from another trace): decides, stores and returns
 * the site's new word (TRACE_SITE_DISABLED or TRACE_SITE_ENABLED). */
TRACE_EXPORT uint64_t trace_engine__resolve_site(const char* category_literal, trace_site_t* site);

/* Whether a site is on, without acquiring: one load and one predicted branch
 * while it is disabled; an enabled site also compares its word with the
 * current generation of its session, and a site of several sessions the
 * epoch of its word with the current one (the library is asked only when
 * neither holds). Used by the event macros, whose record path then
 * enters (and re-checks) itself; `*state` receives the word: when true,
 * TRACE_SITE_ENABLED(g) with g the generation this check read, with
 * acquire (trace_engine__resolve_site() reads it so too), which the record
 * path goes on with instead of reading it again, or a current
 * TRACE_SITE_SEVERAL word (each session's generation is then read by the
 * record path). */
static inline bool trace_site_is_enabled(const char* category_literal, trace_site_t* site,
                                         uint64_t* state) {
  uint64_t s = __atomic_load_n(&site->state, __ATOMIC_RELAXED);
  if (__builtin_expect(s == TRACE_SITE_DISABLED, 1)) return false;
  /* s is neither DISABLED nor 0 here, so it is TRACE_SITE_ENABLED(g) of the
   * current g exactly when s >> 1 == g (a SEVERAL word never is) */
  if ((s == 0 || (s >> 1) != __atomic_load_n(&trace_engine__generation[TRACE_SITE_SESSION(s)],
                                             __ATOMIC_ACQUIRE)) &&
      !trace_site_several_current(s))
    s = trace_engine__resolve_site(category_literal, site);
  *state = s;
  return s != TRACE_SITE_DISABLED;
}

/* The site check every category event uses (and generated TRACE_EVENT()
 * functions may use): NULL, nothing held, unless tracing is on and the
 * category enabled; else the thread's context (release it with
 * trace_release_context()) and *out_ref the category's string ref. A
 * disabled site costs one relaxed load of site->state and one predicted
 * branch; category_literal must be the same string at every call of a site. */
static inline trace_context_t* trace_acquire_context_for_category_cached(
    const char* category_literal, trace_site_t* site, trace_string_ref_t* out_ref) {
  uint64_t state = __atomic_load_n(&site->state, __ATOMIC_RELAXED);
  if (__builtin_expect(state == TRACE_SITE_DISABLED, 1)) return NULL;
  return trace_engine__acquire_context_for_site(category_literal, site, out_ref, state);
}

/* Forgets every call site's cached answer: needed only before unloading a
 * shared object that holds sites. Returns 0, or -EBUSY unless stopped. */
TRACE_EXPORT int trace_engine_flush_category_cache(void);

TRACE_EXPORT void trace_release_context(trace_context_t* context);

/* NULL when tracing is off. At most 127 at once. Not for writing. */
TRACE_EXPORT trace_prolonged_context_t* trace_acquire_prolonged_context(void);
TRACE_EXPORT void trace_release_prolonged_context(trace_prolonged_context_t* context);

/* ---- observers ----
 * Callback observers run on the engine's own thread, after each state change
 * (TRACE_STARTED at start, TRACE_STOPPING at stop-begin, TRACE_STOPPED when
 * stopped). A start is reported to the provider once every callback has
 * returned and every eventfd observer has called
 * trace_notify_observer_updated(). Returns 0, -EINVAL (NULL or already
 * registered) or -ENOMEM. */
typedef void (*trace_observer_callback_t)(trace_state_t state, void* arg);
TRACE_EXPORT int trace_register_observer_callback(trace_observer_callback_t callback, void* arg);
TRACE_EXPORT int trace_unregister_observer_callback(trace_observer_callback_t callback, void* arg);

/* The Fuchsia event-object form: the engine adds 1 to the eventfd on every
 * state change; the observer reads it, calls trace_state(), reconfigures and
 * calls trace_notify_observer_updated(fd). 0, -EINVAL or -ENOMEM; unregister
 * returns -ENOENT if fd is not registered. */
TRACE_EXPORT int trace_register_observer(int eventfd);
TRACE_EXPORT int trace_unregister_observer(int eventfd);
TRACE_EXPORT void trace_notify_observer_updated(int eventfd);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* TRACE_ENGINE_INSTRUMENTATION_H_ */
