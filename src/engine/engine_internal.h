/* Not part of the public API: the engine's state and the record path shared by
 * engine.c (lifecycle), writer.c (slow paths), context.c (record writers) and
 * event_helpers.c (the macros' helpers). docs/buffer-layout.md is the design;
 * the invariants it argues are restated where the code relies on them.
 *
 * Threads:
 *   - writer threads: any thread that records. Each owns one trace_context
 *     (its "writer"), reached through a thread-local pointer. Between start
 *     and stop a record takes no lock, makes no syscall and allocates nothing;
 *     a thread's first record of a trace attaches it (mutex, malloc) once.
 *   - the engine thread: one per initialized session, created by
 *     trace_engine_session_initialize(); runs that session's stops,
 *     streaming saves, observers and handler callbacks. It may block.
 *   - API callers (start/stop/terminate): take the session's engine.lock.
 *
 * Sessions (docs/sessions.md): engine__sessions[i] is session i, with its
 * own buffer, handler, generation, writers and hot line
 * (trace_engine__hot[i], trace_engine__generation[i]). A thread has one
 * writer per session it records in (trace_engine__self[i]); a writer
 * belongs to one session for its whole life. What is per process: the
 * clock, the call-site list (sites.c, reset at every start and stop of any
 * session), observers, pending events (pending.c, session 0). */
#ifndef FXTRACE_ENGINE_ENGINE_INTERNAL_H_
#define FXTRACE_ENGINE_ENGINE_INTERNAL_H_

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#include "engine/buffer_header.h"
#include "engine/clock.h"
#include "engine/engine.h"
#include "fxt/fxt_encode.h"
#include "trace-engine/context.h"
#include "trace-engine/handler.h"
#include "trace-engine/record_path.h"

#define ATOMIC_LOAD(p) __atomic_load_n((p), __ATOMIC_RELAXED)
#define ATOMIC_STORE(p, v) __atomic_store_n((p), (v), __ATOMIC_RELAXED)
#define ATOMIC_ACQUIRE(p) __atomic_load_n((p), __ATOMIC_ACQUIRE)
#define ATOMIC_RELEASE(p, v) __atomic_store_n((p), (v), __ATOMIC_RELEASE)
#define LIKELY(x) __builtin_expect(!!(x), 1)
#define UNLIKELY(x) __builtin_expect(!!(x), 0)

enum {
  WRITER_STRING_CACHE_SIZE = TRACE_ENGINE_STRING_CACHE_SIZE,
  WRITER_SITE_CACHE_SIZE = TRACE_ENGINE_SITE_CACHE_SIZE,
  WRITER_VTHREAD_CACHE_SIZE = TRACE_ENGINE_VTHREAD_CACHE_SIZE,
  NO_CHUNK = UINT32_MAX,
  /* a run is at most this many chunks, and at most 1/WRITER_RUNS_PER_SEGMENT
   * of a segment (writer.c, runs) */
  WRITER_MAX_RUN_CHUNKS = 16,
  WRITER_RUNS_PER_SEGMENT = 32,
};

/* The writer (struct trace_context), its caches and the record path the
 * macros inline are in trace-engine/record_path.h. */
typedef trace_engine_string_entry_t string_cache_entry_t;
typedef trace_engine_site_record_t site_cache_entry_t;
typedef trace_engine_vthread_entry_t vthread_cache_entry_t;

typedef struct engine {
  /* Read by every record; written only at start, stop, switches. */
  struct {
    trace_engine_hot_t* hot; /* &trace_engine__hot[session] */
    uint64_t* current;       /* &trace_engine__generation[session] */
    /* and trace_engine__hot[session] (record_path.h): the epoch, the generation */
    trace_buffer_header_t* header;
    uint8_t* rolling; /* segment i at rolling + i * rolling_size */
    uint8_t* durable;
    uint64_t rolling_size; /* each segment */
    uint64_t durable_size;
    uint32_t chunk_size;
    uint32_t mode;              /* trace_buffering_mode_t */
    uint32_t segments;          /* rolling segments (header segment_count) */
    uint16_t* owners;           /* chunk tokens, private memory: segments * chunks_per_buffer */
    uint32_t chunks_per_buffer; /* per segment */
    uint32_t run_max;           /* chunks a writer claims at once, at most (writer.c, runs) */
  } __attribute__((aligned(64)));

  /* Written by the switch winner (atomics). */
  bool dirty[TRACE_BUFFER_MAX_SEGMENTS]; /* segment holds old data: zero chunks before use */
  uint64_t saves_done;                   /* streaming: segments saved so far this trace */
  uint64_t save_request; /* streaming: switch counts below it are full (atomic max) */

  /* Streaming saves (lock): the switch count the next save hands over;
   * those from saves_done up to it are handed over, not yet marked saved. */
  uint64_t next_save;

  /* Off the record path. */
  pthread_mutex_t lock;
  pthread_cond_t cond;
  trace_handler_t* handler;
  trace_state_t state;        /* atomic; written under lock */
  uint64_t generation;        /* this trace; trace_engine__generation mirrors it */
  uint64_t generations;       /* traces so far */
  uint64_t started_ns;        /* trace clock at this trace's start */
  uint64_t cache_epoch;       /* changes when string and thread tables reset */
  uint32_t next_string_index; /* atomic; next index to hand out */
  uint32_t next_thread_index; /* atomic */
  int disposition;
  bool initialized;
  bool terminate_pending;
  bool stop_pending;
  bool started_pending;
  bool forked;        /* this is a fork child: never trace */
  bool thread_detach; /* terminated from a callback: the thread detaches */
  bool thread_running;
  pthread_t thread;
  int wake_fd; /* eventfd: wakes the engine thread */
  struct trace_context* writers;
  uint16_t writer_count;
  uint32_t prolonged;      /* atomic */
  uint32_t askers;         /* atomic: threads asking the handler (writer__session_enables) */
  uint64_t engine_written; /* records the engine wrote itself (lock) */
  uint64_t engine_dropped; /* this trace: losses reported by engine__add_dropped (lock) */
  trace_koid_t pid;
  uint32_t session; /* its index in engine__sessions */
} engine_t;

extern engine_t engine__sessions[TRACE_ENGINE_MAX_SESSIONS];

/* The session of a trace generation, and of a writer. */
static inline engine_t* engine__of_generation(uint64_t generation) {
  return &engine__sessions[TRACE_GENERATION_SESSION(generation)];
}
static inline engine_t* engine__of(const trace_context_t* w) {
  return &engine__sessions[w->session];
}
/* trace_engine__sessions_epoch (instrumentation.h) changes under
 * engine__sessions_lock. */
extern pthread_mutex_t engine__sessions_lock;

/* writer.c */

/* The sessions an event of `site` goes to (a mask of session bits; 0:
 * none), from the word `state` its inline check read, asking again when it
 * is not a current answer (event_helpers.c). */
unsigned engine__site_sessions(trace_site_t* site, uint64_t state, const char* category_literal,
                               uint64_t* decided);
/* Whether session e is started and its handler enables the category. */
bool writer__session_enables(engine_t* e, const char* category);
/* Whether session e's handler enables the category, started or not (the
 * handler must stay valid meanwhile: pending.c, before the start). */
bool writer__handler_enables(engine_t* e, const char* category);
/* count: whether a failure counts as a dropped record (metadata records do
 * not: their users fall back to inline references). */
uint64_t* writer__reserve_durable(trace_context_t* w, size_t words);
void writer__release_chunk(trace_context_t* w);
/* The longest run (chunks a writer claims at once) for segments of
 * `chunks_per_segment` chunks (writer.c, runs). */
uint32_t writer__run_max(uint32_t chunks_per_segment);
/* memset(p, 0, bytes), out of line (zero_piece.c). */
void writer__zero_piece(void* p, size_t bytes);
/* Whether w, if it is inside its outermost record now, cannot write into a
 * segment older than that of `switch_count`: its chunk is in this trace's
 * segment of `switch_count` or a later one, and nothing it reserved before
 * it claimed that chunk was left open (writer.c, claim). Read by the engine
 * thread while w writes. */
bool writer__quiet_from(const engine_t* e, const trace_context_t* w, uint64_t switch_count);
trace_string_ref_t writer__register_literal_slow(trace_context_t* w, const char* literal);
trace_thread_ref_t writer__register_current_thread_slow(trace_context_t* w);
trace_string_ref_t writer__register_copy(trace_context_t* w, const char* s, size_t length);
trace_thread_ref_t writer__register_thread(trace_context_t* w, trace_koid_t pid, trace_koid_t tid,
                                           const char* name, size_t name_length);
void writer__write_thread_info(trace_context_t* w, trace_koid_t pid, trace_koid_t tid,
                               const trace_string_ref_t* name_ref);

/* sites.c: call-site state words */
/* Stores `state` (DISABLED or SEVERAL) decided in sessions epoch `epoch`,
 * repairing it if a start or stop came meanwhile. */
void sites__set(trace_site_t* site, uint64_t state, uint64_t epoch);
/* after publishing a new generation (or 0) and a new sessions epoch, under
 * engine__sessions_lock */
void sites__reset(void);
void sites__forget(void);
/* Takes one site off the list (a TRACE_EVENT() descriptor of a library
 * being unloaded). Under engine__sessions_lock. */
void sites__unlink(trace_site_t* site);

/* pending.c: events before a start the process waits for (docs/provider.md) */
extern uint64_t engine__pending_word; /* engine__begin_pending(), engine.h; bit 63: pending */
/* From trace_engine__resolve_site() with no trace started: true (and the
 * event counted when its category is enabled) while a start is pending;
 * the site must then not cache "disabled". */
bool engine__count_if_pending(const char* category_literal);
/* At start, under engine.lock, after the new generation is published: the
 * count (reported on stderr), now owned by the trace's dropped records; 0
 * when nothing was pending. */
uint64_t engine__take_pending_locked(void);
/* A fork child: nothing is pending there. */
void engine__forget_pending(void);

/* The segment of switch count `sw`, and its start. */
static inline uint32_t engine__segment(const engine_t* e, uint64_t sw) {
  return (uint32_t)(sw % e->segments);
}
static inline uint8_t* engine__segment_base(const engine_t* e, uint32_t segment) {
  return e->rolling + (uint64_t)segment * e->rolling_size;
}

/* engine.c */
void engine__request_save(engine_t* e, uint64_t switch_count);
bool engine__wait_writers_quiet(engine_t* e, bool bounded, uint64_t saving_below);
void engine__totals(engine_t* e, uint64_t* written, uint64_t* dropped, uint32_t* threads);
/* hook(session, arg) is called by trace_engine_session_stop() on the
 * stopping thread while that session is still started (records can be
 * written into it), before its stop begins, for every session that stops,
 * whether others stay started or not; stops the engine makes itself (buffer
 * full) do not call it. The kernel provider drains ftrace into the stopping
 * session there (src/kernel). NULL removes it. */
void engine__set_stop_hook(void (*hook)(unsigned session, void* arg), void* arg);
/* Adds records lost outside the engine (ftrace overruns) to the trace of
 * session `session`: its dropped count (header num_records_dropped). */
void engine__add_dropped(unsigned session, uint64_t count);
/* Wakes session e's engine thread (one eventfd write; never blocks). */
void engine__wake_thread(engine_t* e);

/* alerts.c: TRACE_ALERT's queue to each session's engine thread */
void engine__reset_alerts(engine_t* e); /* at start, under engine.lock */
/* Engine thread: hands every queued alert of e to handler->ops->send_alert, in order. */
void engine__deliver_alerts(engine_t* e);
/* At stop: alerts dropped or cut, on stderr (nothing if none). */
void engine__report_alerts(engine_t* e);

static inline void writer__count_written(trace_context_t* w) { trace_engine__count_written(w); }

/* A dropped record: the slow path only (buffer full, too big, a signal
 * handler inside a reservation). The shared header's counter is what the
 * manager reads, also after this process died (docs/buffer-layout.md); the
 * writer's own count feeds trace_engine_get_stats(). Called only inside a
 * record (nesting > 0), so the header is mapped. */
static inline void writer__count_dropped(trace_context_t* w) {
  ATOMIC_STORE(&w->records_dropped, w->records_dropped + 1);
  __atomic_fetch_add(&engine__of(w)->header->num_records_dropped, 1, __ATOMIC_RELAXED);
}

/* Reserves `words` in the thread's chunk (steps A, B and E of the design;
 * record_path.h). The record is then written with an fxt_write_* function,
 * which stores the header last (the commit, step D). NULL: dropped and
 * counted. */
static inline uint64_t* writer__reserve(trace_context_t* w, size_t words) {
  return trace_engine__reserve(w, words);
}

/* Where durable records go: the durable buffer, or the thread's chunk in
 * oneshot mode (which has none; a thread's chunks are scanned in allocation
 * order, so its definitions precede its uses). A failure is not counted as a
 * dropped record: registration falls back to inline references. */
static inline uint64_t* writer__reserve_metadata(trace_context_t* w, size_t words) {
  if (engine__of(w)->mode != TRACE_BUFFERING_MODE_ONESHOT) return writer__reserve_durable(w, words);
  return trace_engine__reserve_counted(w, words, false);
}

/* writer__enter() on w, attached for `generation` already. */
static inline trace_context_t* writer__enter_attached(trace_context_t* w, uint64_t generation) {
  if (UNLIKELY(w->nesting != 0 && w->reserving)) { /* a signal handler interrupted a reservation */
    writer__count_dropped(w);
    return NULL;
  }
  return trace_engine__enter(w, generation) ? w : NULL;
}

trace_context_t* writer__attach_and_enter(uint64_t generation);

/* Acquire for `generation` (non-zero), the Dekker half on the writer side
 * (see the top of engine.c): the thread marks itself inside a record, then
 * re-checks the generation. NULL: nothing held. */
static inline trace_context_t* writer__enter(uint64_t generation) {
  trace_context_t* w = trace_engine__self[TRACE_GENERATION_SESSION(generation)];
  if (UNLIKELY(w == NULL || ATOMIC_LOAD(&w->generation) != generation))
    return writer__attach_and_enter(generation);
  return writer__enter_attached(w, generation);
}

static inline uint32_t writer__string_home(const char* literal) {
  return trace_engine__string_home(literal);
}

/* A literal's ref: one probe when it was seen before on this thread (and
 * landed in its home slot; others are found by the slow path's probing). */
static inline trace_string_ref_t writer__register_literal(trace_context_t* w, const char* literal) {
  string_cache_entry_t* e = &w->strings[writer__string_home(literal)];
  if (LIKELY(e->literal == literal && e->ref != 0)) {
    trace_string_ref_t ref = {e->ref, NULL};
    return ref;
  }
  return writer__register_literal_slow(w, literal);
}

static inline trace_thread_ref_t writer__thread_ref(trace_context_t* w) {
  if (LIKELY(w->thread_registered)) return w->thread_ref;
  return writer__register_current_thread_slow(w);
}

/* The same, by reference: the ref stays in the writer (no 24-byte copy). */
static inline const trace_thread_ref_t* writer__current_thread(trace_context_t* w) {
  if (UNLIKELY(!w->thread_registered)) writer__register_current_thread_slow(w);
  return &w->thread_ref;
}

/* trace_release_context(), inline for the engine's own callers. */
static inline void writer__release(trace_context_t* w) { trace_engine__release(w); }

/* The macros' argument names and literal string values (event_helpers.h). */
static inline void writer__complete_args(trace_context_t* w, trace_arg_t* args, size_t num_args) {
  for (size_t i = 0; i < num_args; i++) {
    trace_string_ref_t* n = &args[i].name_ref;
    if (n->encoded_value == TRACE_ENCODED_STRING_REF_EMPTY && n->inline_string)
      *n = writer__register_literal(w, n->inline_string);
    if (args[i].value.type == TRACE_ARG_STRING) {
      trace_string_ref_t* v = &args[i].value.string_value_ref;
      if (v->encoded_value == TRACE_ENCODED_STRING_REF_EMPTY && v->inline_string)
        *v = writer__register_literal(w, v->inline_string);
    }
  }
}

/* One event record (FXT.md §8.5), written in place. */
static inline void writer__write_event(trace_context_t* w, unsigned type, trace_ticks_t ticks,
                                       const trace_thread_ref_t* thread,
                                       const trace_string_ref_t* category,
                                       const trace_string_ref_t* name, const trace_arg_t* args,
                                       size_t num_args, uint64_t payload) {
  size_t words = fxt_event_record_words(type, thread, category, name, args, num_args);
  if (UNLIKELY(words > FXT_MAX_RECORD_WORDS || num_args > TRACE_MAX_ARGS)) {
    writer__count_dropped(w);
    return;
  }
  uint64_t* p = writer__reserve(w, words);
  if (UNLIKELY(p == NULL)) return;
  fxt_write_event_record(p, words, type, ticks, thread, category, name, args, num_args, payload);
  writer__count_written(w);
}

#endif /* FXTRACE_ENGINE_ENGINE_INTERNAL_H_ */
