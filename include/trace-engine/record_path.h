/* Not for direct use: the engine's record path, inline, for the event
 * macros (<trace/event.h>) and the code TRACE_EVENT() generates, so that an
 * enabled event with a cached record costs no call into the library: the
 * thread's writer, the checks, the clock, the reservation, the stores and
 * the commit all read top to bottom at the call site. Everything that is
 * not the common case (a thread's first record, a new chunk, a record not
 * cached yet, a trace stopping) is one out-of-line call.
 *
 * The layouts below are the library's own (src/engine uses these very
 * definitions): they are part of libfxtrace's ABI and change only with its
 * SONAME. docs/buffer-layout.md argues the protocol (the Dekker pair of
 * enter and stop, the epoch check, the commit). */
#ifndef TRACE_ENGINE_RECORD_PATH_H_
#define TRACE_ENGINE_RECORD_PATH_H_

#include <stdbool.h>
#include <stdint.h>
#include <string.h>
#if defined(__x86_64__)
#include <x86intrin.h>
#endif

#include "trace-engine/instrumentation.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- the clock (src/engine/clock.h has the calibration and docs/clock.md
 * the mapping to CLOCK_MONOTONIC) ----
 * Read on every event; grouped in one cache line. mult and the product are
 * signed so that TSC values earlier than base_tsc (ftrace events recorded
 * before init) convert too; mult < 2^62 and |tsc - base_tsc| < 2^63 keep the
 * product inside 126 bits. */
typedef struct trace_clock_params {
  bool use_tsc;      /* false until init picks the TSC */
  unsigned shift;    /* fixed-point position of mult */
  int64_t mult;      /* ns per tick, scaled by 2^shift */
  uint64_t base_tsc; /* a TSC value read during calibration */
  uint64_t base_ns;  /* its CLOCK_MONOTONIC time (fitted) */
} __attribute__((aligned(64))) trace_clock_params_t;

TRACE_EXPORT extern trace_clock_params_t trace_clock__params;

/* CLOCK_MONOTONIC in ns (clock_gettime, the vDSO on x86_64: no syscall);
 * out of line, so that this header needs no POSIX feature macros. */
TRACE_EXPORT uint64_t trace_clock__monotonic_ns(void);

/* The line, shared by the hot path and trace_clock__tsc_to_ns(). The right
 * shift of the signed product rounds toward minus infinity, the same way for
 * every input, so the conversion is monotonic. */
static inline uint64_t trace_clock__tsc_line(const trace_clock_params_t* p, uint64_t tsc) {
  int64_t delta = (int64_t)(tsc - p->base_tsc);
  __extension__ typedef __int128 wide_t; /* no -Wpedantic warning in C++ */
  wide_t scaled = (wide_t)delta * p->mult;
  return p->base_ns + (uint64_t)(int64_t)(scaled >> p->shift);
}

/* The hot path: rdtsc + one 64x64->128 multiply on the TSC source. rdtsc is
 * not ordered with the loads and stores around it; the engine's ordering
 * comes from the acquire before it (API.md §2: timestamp after acquire). */
static inline uint64_t trace_clock__now_ns(void) {
#if defined(__x86_64__)
  if (__builtin_expect(trace_clock__params.use_tsc, 1))
    return trace_clock__tsc_line(&trace_clock__params, __rdtsc());
#endif
  return trace_clock__monotonic_ns();
}

/* ---- the engine's words every record reads, one line per session ---- */
typedef struct trace_engine_hot {
  /* (generation << 24) | switch count of the current rolling buffer; 0 when
   * no record may be written (stopped, durable full, oneshot full). A chunk
   * is usable only while its epoch equals this. */
  uint64_t epoch;
  /* the session's trace_engine__generation, which the enter re-checks
   * (reached through the writer's pointer to this line, no index) */
  uint64_t generation;
} __attribute__((aligned(64))) trace_engine_hot_t;

TRACE_EXPORT extern trace_engine_hot_t trace_engine__hot[TRACE_ENGINE_MAX_SESSIONS];
/* No membarrier(2) in this process: writers fence themselves. */
TRACE_EXPORT extern bool trace_engine__fence_needed;

/* ---- the writer: one per thread that records (trace_context_t) ---- */

enum {
  TRACE_ENGINE_SITE_CACHE_SIZE = 64, /* records cached per thread, by site address */
};

/* A call site's record as this thread writes it: everything but the
 * timestamp, the size and the values is the same at every call of the site
 * on the thread while its string and thread tables last (the writer's
 * cache_epoch). Filled by the library's slow path for events whose thread,
 * category, name and argument names are all indexed. */
typedef struct trace_engine_site_record {
  const void* key;     /* the site: a trace_site_t (TRACE_INSTANT) or a trace_tracepoint_t */
  uint64_t generation; /* the trace it was filled in: valid for that trace only */
  uint64_t header;     /* record type, event type, argument count, thread, category, name */
  uint16_t names[TRACE_MAX_ARGS]; /* argument name indexes, in argument order */
  uint8_t num_args;
} __attribute__((aligned(64))) trace_engine_site_record_t;

typedef struct trace_engine_string_entry {
  const char* literal;
  trace_encoded_string_ref_t ref; /* indexed, or 0 = string indexes ran out: inline */
} trace_engine_string_entry_t;

typedef struct trace_engine_vthread_entry {
  const char* literal;
  trace_koid_t process_koid;
  trace_vthread_id_t id;
  trace_thread_ref_t ref;
} trace_engine_vthread_entry_t;

enum {
  /* per thread, by literal address (API.md §7); a power of 2. A full table
   * leaves later literals inline in TRACE_INSTANT's records and drops (and
   * counts) TRACE_EVENT() records, whose argument names must be indexed. */
  TRACE_ENGINE_STRING_CACHE_SIZE = 1024,
  TRACE_ENGINE_VTHREAD_CACHE_SIZE = 4,
  /* TRACE_EVENT() ids (1, 2, ...) whose format a writer tracks itself in
   * oneshot mode (tracepoints.c); a multiple of 64 */
  TRACE_ENGINE_WRITER_FORMAT_IDS = 1024,
};

/* One per thread that records. Fields are written only by the owning
 * thread; the engine thread reads `nesting` and the counters with atomic
 * loads. The struct outlives its thread: it stays on the engine's list and
 * is reused by a later thread, so the engine thread never sees it freed
 * while the engine is initialized. */
struct trace_context {
  /* the record path, in one cache line */
  uint64_t* pos;        /* next free word of the owned chunk */
  uint64_t* end;        /* end of the owned chunk */
  uint64_t chunk_epoch; /* engine epoch the chunk belongs to */
  uint32_t chunk;       /* first owned chunk (index over all rolling segments) or NO_CHUNK */
  uint32_t nesting;     /* contexts held by the thread (atomic); > 0 = inside a record */
  uint32_t chunk_count; /* owned chunks from `chunk` on: the run (below) */
  uint32_t reserving;   /* 1 while pos/end/chunk change (signal-handler guard) */
  const trace_engine_hot_t* hot; /* its session's line of trace_engine__hot */
  uint64_t generation;           /* trace the caches below belong to */
  uint64_t records_written;      /* this trace (atomic, owner increments) */
  uint64_t records_dropped;      /* this trace (atomic, owner increments) */
  /* the caches, valid while cache_epoch is the engine's */
  uint64_t cache_epoch;
  trace_engine_site_record_t sites[TRACE_ENGINE_SITE_CACHE_SIZE];
  trace_engine_string_entry_t strings[TRACE_ENGINE_STRING_CACHE_SIZE];
  trace_engine_vthread_entry_t vthreads[TRACE_ENGINE_VTHREAD_CACHE_SIZE];
  unsigned vthread_next;
  /* The other sessions (a mask) the event this context was acquired for
   * goes to, and its category: set by every acquire of a category site
   * (several sessions enabling it: the first session's context, these the
   * rest), taken by the event helpers, which write into each of them
   * (event_helpers.c); 0 otherwise. */
  unsigned further_sessions;
  const char* further_category;
  /* the thread */
  bool thread_registered;
  trace_thread_ref_t thread_ref;
  trace_koid_t tid;
  char name[16]; /* the thread's OS name, read when it attaches */
  /* the engine's (under its lock) */
  uint16_t token;   /* chunk ownership token: slot + 1 */
  uint8_t session;  /* the session it writes in (trace_engine__self[session]) */
  uint16_t* owners; /* the token array `chunk` indexes */
  bool in_use;      /* a live thread owns it */
  struct trace_context* next;
  /* Streaming: the count word of this writer's drop counter in the shared
   * buffer's durable area (docs/buffer-layout.md, "The drop counter"), or
   * NULL; valid while drop_slot_epoch is cache_epoch. Engine-only, after
   * everything the inline record path reads (no offset above moves). */
  uint64_t* drop_slot;
  uint64_t drop_slot_epoch;
  /* Streaming saves (engine.c, engine__wait_writers_quiet): chunk_epoch's
   * value when this writer claimed its chunk at nesting 1 with no record
   * of its own open (none of trace_context_alloc_record's left
   * uncommitted), else 0. Engine-only, like the two above. */
  uint64_t quiet_epoch;
  uint32_t open_allocs; /* trace_context_alloc_record()s not committed yet */
  /* Oneshot mode: the TRACE_EVENT() ids whose format this writer wrote in
   * its own chunks (tracepoints.c); reset with the caches. Engine-only. */
  uint64_t formats_written[TRACE_ENGINE_WRITER_FORMAT_IDS / 64];
  /* The run of chunks claimed at once (src/engine/writer.c, "runs"): how
   * many of `chunk_count` the writer has entered (the current chunk is the
   * last of them; chunk_count + 1 for the chunks of a record larger than a
   * chunk), and how many the next claim asks for (0 counts as 1).
   * Engine-only. */
  uint32_t run_entered;
  uint32_t run_want;
} __attribute__((aligned(64)));

/* The calling thread's writer in each session, or NULL before its first
 * record there. A thread has one writer per session it records in. */
TRACE_EXPORT extern __thread trace_context_t* trace_engine__self[TRACE_ENGINE_MAX_SESSIONS]
    __attribute__((tls_model("initial-exec")));

/* Out of line: a new chunk for `words` (NULL: dropped; counted if `count`). */
TRACE_EXPORT uint64_t* trace_engine__reserve_slow(trace_context_t* w, size_t words, bool count);

static inline trace_engine_site_record_t* trace_engine__site_record(trace_context_t* w,
                                                                    const void* key) {
  uint64_t home = ((uint64_t)(uintptr_t)key * UINT64_C(0x9E3779B97F4A7C15)) >> 58;
  return &w->sites[home & (TRACE_ENGINE_SITE_CACHE_SIZE - 1)];
}

/* The slot of a literal in the thread's string table: its home, where a
 * literal seen before on this thread almost always is (the library's slow
 * path probes further on a collision). */
static inline uint32_t trace_engine__string_home(const char* literal) {
  uint64_t h = (uint64_t)(uintptr_t)literal * UINT64_C(0x9E3779B97F4A7C15);
  return (uint32_t)(h >> (64 - __builtin_ctz(TRACE_ENGINE_STRING_CACHE_SIZE)));
}

/* A literal's string index as this thread registered it, from its home
 * slot; 0 when it is not there (not registered yet on this thread, a
 * collision, or indexes ran out): the caller then takes the slow path,
 * which registers it. Valid while the thread's generation is the caller's:
 * the table is emptied only when the thread attaches to a new trace whose
 * tables restart (trace_engine__enter() then fails for the old one). */
static inline trace_encoded_string_ref_t trace_engine__literal_index(const trace_context_t* w,
                                                                     const char* literal) {
  const trace_engine_string_entry_t* e = &w->strings[trace_engine__string_home(literal)];
  return e->literal == literal ? e->ref : 0;
}

/* Copies this thread's cached record of `key` for trace `generation`: its
 * header (without the size) and its `num_names` argument names. false: not
 * attached yet, another trace, not cached (or cached for another argument
 * count: a site address reused by a library loaded since). A signal handler that
 * runs on this thread meanwhile and fills the same slot for another site
 * (trace_engine__fill_record) is caught by the second look at the key; the
 * copies are then never used. */
static inline bool trace_engine__load_record(uint64_t generation, const void* key, size_t num_names,
                                             trace_context_t** out, uint64_t* header,
                                             uint16_t* names) {
  trace_context_t* w = trace_engine__self[TRACE_GENERATION_SESSION(generation)];
  if (__builtin_expect(w == NULL, 0) ||
      __builtin_expect(__atomic_load_n(&w->generation, __ATOMIC_RELAXED) != generation, 0))
    return false;
  const trace_engine_site_record_t* r = trace_engine__site_record(w, key);
  if (__builtin_expect(r->key != key || r->generation != generation || r->num_args != num_names, 0))
    return false;
  *header = r->header;
#pragma GCC unroll 15
  for (size_t i = 0; i < num_names; i++) names[i] = r->names[i];
  __atomic_signal_fence(__ATOMIC_SEQ_CST);
  if (__builtin_expect(r->key != key, 0)) return false;
  *out = w;
  return true;
}

/* Fills this thread's slot for `key` (the library's slow paths, with the
 * context held). The key is cleared first and set last, so a signal
 * handler that interrupts the fill and looks the slot up sees no record
 * rather than half of one; a handler's own record (nesting > 1) never
 * fills, so it cannot mix its names into an interrupted fill. */
static inline void trace_engine__fill_record(trace_context_t* w, const void* key, uint64_t header,
                                             const uint16_t* names, size_t num_names) {
  if (w->nesting != 1) return;
  trace_engine_site_record_t* r = trace_engine__site_record(w, key);
  r->key = NULL;
  __atomic_signal_fence(__ATOMIC_SEQ_CST);
  r->generation = w->generation;
  r->num_args = (uint8_t)num_names;
  r->header = header & ~((uint64_t)0xfff << 4); /* the size is the caller's */
  for (size_t i = 0; i < num_names; i++) r->names[i] = names[i];
  __atomic_signal_fence(__ATOMIC_SEQ_CST);
  r->key = key;
}

/* Enters a record on an attached writer for `generation` (the writer side
 * of the Dekker pair with stop, engine.c): marks the thread inside a record,
 * then re-checks the generation. false: nothing held (the trace is
 * stopping, or a signal handler interrupted a reservation: the slow path
 * decides and counts). */
static inline bool trace_engine__enter_at(trace_context_t* w, const trace_engine_hot_t* hot,
                                          uint64_t generation);
static inline bool trace_engine__enter(trace_context_t* w, uint64_t generation) {
  return trace_engine__enter_at(w, w->hot, generation);
}

/* The same with w->hot read by the caller (a record path that reads it once
 * for the enter and the reservation: the fences between them would make
 * the compiler read it again). */
static inline bool trace_engine__enter_at(trace_context_t* w, const trace_engine_hot_t* hot,
                                          uint64_t generation) {
  uint32_t nesting = w->nesting;
  if (__builtin_expect(nesting != 0 && w->reserving, 0)) return false;
  __atomic_store_n(&w->nesting, nesting + 1, __ATOMIC_RELAXED);
  if (__builtin_expect(trace_engine__fence_needed, 0))
    __atomic_thread_fence(__ATOMIC_SEQ_CST);
  else
    __atomic_signal_fence(__ATOMIC_SEQ_CST);
  if (__builtin_expect(__atomic_load_n(&hot->generation, __ATOMIC_RELAXED) != generation, 0)) {
    __atomic_store_n(&w->nesting, nesting, __ATOMIC_RELEASE);
    return false;
  }
  return true;
}

/* Reserves `words` in the thread's chunk, the common case only: NULL when
 * the chunk has no room (or belongs to another epoch), nothing reserved,
 * nothing counted. The record is then stored and committed (header last).
 * `reserving` brackets the moment pos/end/chunk change: an event from a
 * signal handler that interrupts it is dropped (trace_engine__enter);
 * anywhere else a nested record simply lands after the interrupted one's
 * space. */
static inline uint64_t* trace_engine__try_reserve_at(trace_context_t* w,
                                                     const trace_engine_hot_t* hot, size_t words) {
  w->reserving = 1;
  __atomic_signal_fence(__ATOMIC_SEQ_CST);
  uint64_t* p = w->pos;
  if (__builtin_expect(words <= (size_t)(w->end - p) &&
                           w->chunk_epoch == __atomic_load_n(&hot->epoch, __ATOMIC_RELAXED),
                       1))
    w->pos = p + words;
  else
    p = NULL;
  __atomic_signal_fence(__ATOMIC_SEQ_CST);
  w->reserving = 0;
  return p;
}

static inline uint64_t* trace_engine__try_reserve(trace_context_t* w, size_t words) {
  return trace_engine__try_reserve_at(w, w->hot, words);
}

/* The same, then a new chunk out of line (in its own `reserving` bracket:
 * the slow path computes from the current pos/end, so a handler's record
 * between the two brackets is harmless). NULL: dropped (counted if
 * `count`). */
static inline uint64_t* trace_engine__reserve_counted_at(trace_context_t* w,
                                                         const trace_engine_hot_t* hot,
                                                         size_t words, bool count) {
  uint64_t* p = trace_engine__try_reserve_at(w, hot, words);
  if (__builtin_expect(p != NULL, 1)) return p;
  w->reserving = 1;
  __atomic_signal_fence(__ATOMIC_SEQ_CST);
  p = trace_engine__reserve_slow(w, words, count);
  __atomic_signal_fence(__ATOMIC_SEQ_CST);
  w->reserving = 0;
  return p;
}

static inline uint64_t* trace_engine__reserve_counted(trace_context_t* w, size_t words,
                                                      bool count) {
  return trace_engine__reserve_counted_at(w, w->hot, words, count);
}

static inline uint64_t* trace_engine__reserve(trace_context_t* w, size_t words) {
  return trace_engine__reserve_counted(w, words, true);
}

/* The commit: the header word, stored last with release (FXT's size field
 * tells a reader where the record ends; a zero header is "not yet"). */
static inline void trace_engine__commit(uint64_t* record, uint64_t header) {
  __atomic_store_n(record, header, __ATOMIC_RELEASE);
}

static inline void trace_engine__count_written(trace_context_t* w) {
  __atomic_store_n(&w->records_written, w->records_written + 1, __ATOMIC_RELAXED);
}

static inline void trace_engine__release(trace_context_t* w) {
  __atomic_store_n(&w->nesting, w->nesting - 1, __ATOMIC_RELEASE);
}

/* An inline string's stream (FXT.md: the bytes, zero-padded to a word):
 * (n + 7) / 8 words at `dst`. The padding word is stored first and the
 * bytes over it. Up to 32 bytes (the common case) the copy is inline, two
 * fixed-size copies that overlap in the middle (each reads and writes only
 * bytes of the string); longer strings are one memcpy. `src` holds n bytes;
 * the compiler is not told which object it points to: where n comes from a
 * record's stored length, GCC can see the object's size but not that n is
 * within it, and would warn (-Warray-bounds) about the copies of lengths
 * the object cannot have, in the code of whoever includes this header. */
static inline void trace_engine__put_string(uint64_t* dst, const char* src, size_t n) {
  if (__builtin_expect(n == 0, 0)) return;
  __asm__("" : "+r"(src));
  dst[(n - 1) / 8] = 0;
  char* d = (char*)dst;
  if (n >= 16) {
    if (__builtin_expect(n > 32, 0)) {
      memcpy(d, src, n);
      return;
    }
    memcpy(d, src, 16);
    memcpy(d + n - 16, src + n - 16, 16);
  } else if (n >= 8) {
    memcpy(d, src, 8);
    memcpy(d + n - 8, src + n - 8, 8);
  } else if (n >= 4) {
    memcpy(d, src, 4);
    memcpy(d + n - 4, src + n - 4, 4);
  } else {
    d[0] = src[0];
    d[n / 2] = src[n / 2];
    d[n - 1] = src[n - 1];
  }
}

/* An argument's header word (FXT.md §8.2) for a scalar argument of `type`
 * named by string index `name`, with a value of `size_words` - 1 words. */
static inline uint64_t trace_engine__arg_header(unsigned type, unsigned size_words, uint16_t name) {
  return (uint64_t)(type & 0xf) | ((uint64_t)size_words << 4) | ((uint64_t)name << 16);
}

/* Whether an argument of `type` has a value word (FXT.md §8.2): 64-bit
 * values do; 32-bit values and booleans are in the header. */
static inline bool trace_engine__arg_has_value_word(unsigned type) {
  return type == TRACE_ARG_INT64 || type == TRACE_ARG_UINT64 || type == TRACE_ARG_DOUBLE ||
         type == TRACE_ARG_POINTER || type == TRACE_ARG_KOID;
}

/* The value bits an argument keeps in its header word. */
static inline uint64_t trace_engine__arg_header_value(const trace_arg_value_t* v) {
  switch (v->type) {
    case TRACE_ARG_INT32:
      return (uint64_t)(uint32_t)v->int32_value << 32;
    case TRACE_ARG_UINT32:
      return (uint64_t)v->uint32_value << 32;
    case TRACE_ARG_BOOL:
      return (uint64_t)(v->bool_value ? 1u : 0u) << 32;
    default:
      return 0;
  }
}

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* TRACE_ENGINE_RECORD_PATH_H_ */
