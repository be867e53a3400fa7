/* The record path's slow parts: attaching a thread, getting a chunk (steps F-H
 * of docs/buffer-layout.md), switching rolling buffers, durable allocation,
 * and string / thread registration. Everything here runs on writer threads,
 * between start and stop, and therefore takes no lock, makes no syscall and
 * allocates nothing — except attaching a writer (writer__attach_and_enter:
 * a thread's first record of a trace) and the single eventfd write per
 * streaming switch. */
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <unistd.h>

#include "engine/buffer_scan.h"
#include "engine/engine_internal.h"
#include "engine/explicit_name.h"
#include "engine/thread_exits.h"

__thread trace_context_t* trace_engine__self[TRACE_ENGINE_MAX_SESSIONS]
    __attribute__((tls_model("initial-exec")));

static pthread_key_t exit_keys[TRACE_ENGINE_MAX_SESSIONS]; /* one writer per session */
static pthread_once_t exit_key_once = PTHREAD_ONCE_INIT;

enum { MAX_WRITERS = UINT16_MAX };

/* ---- chunks ---- */

static void scrub(uint8_t* chunk, uint64_t bytes);

/* A multi-chunk run left over from two or more switches ago (circular): its
 * first chunk may have been skipped by the allocator (this thread owned it)
 * while the others get handed out once released, and then the large record
 * at its start would claim chunks that now hold someone else's records. So
 * the run is cleared, while this thread still owns it, before release (a
 * run of small records too: its old records would otherwise show in the
 * current round). */
static void clear_stale_run(trace_context_t* w) {
  engine_t* e = engine__of(w);
  uint64_t epoch = ATOMIC_LOAD(&e->hot->epoch);
  if ((epoch & ~UINT64_C(0xffffff)) != (w->chunk_epoch & ~UINT64_C(0xffffff))) return;
  uint64_t now = ATOMIC_LOAD(&e->header->rolling_alloc) >> TRACE_BUFFER_ALLOC_OFFSET_BITS;
  /* the segment is reused `segments` switches after it was filled */
  if (((now - w->chunk_epoch) & 0xffffff) < e->segments) return; /* the data is still current */
  uint32_t C = e->chunk_size;
  /* a run of small records: only the chunks entered hold records (the
   * others hold zeros or a provisional header) */
  uint32_t n = w->run_entered < w->chunk_count ? w->run_entered : w->chunk_count;
  for (uint32_t i = 0; i < n; i++) {
    uint32_t chunk = w->chunk + i;
    if (ATOMIC_LOAD(&e->owners[chunk]) != w->token) continue;
    uint32_t b = chunk / e->chunks_per_buffer;
    scrub(engine__segment_base(e, b) + (uint64_t)(chunk % e->chunks_per_buffer) * C, C);
  }
}

void writer__release_chunk(trace_context_t* w) {
  if (w->chunk == NO_CHUNK) return;
  engine_t* e = engine__of(w);
  if (w->owners != e->owners) { /* a chunk of an earlier engine */
    w->chunk = NO_CHUNK;
    w->pos = w->end = NULL;
    return;
  }
  /* A chunk run of n chunks ends at w->end; tokens are set on each. Release
   * with a CAS: after a start or a streaming save the engine may have reset
   * the token, and someone else may own the chunk by now. Release order
   * publishes this thread's records to the next owner, who zeroes them. */
  uint32_t n = w->chunk_count;
  if (n > 1) clear_stale_run(w);
  for (uint32_t i = 0; i < n; i++) {
    uint16_t expected = w->token;
    __atomic_compare_exchange_n(&e->owners[w->chunk + i], &expected, 0, false, __ATOMIC_RELEASE,
                                __ATOMIC_RELAXED);
  }
  w->chunk = NO_CHUNK;
  w->pos = w->end = NULL;
}

/* memset(p, 0, bytes), 1 KiB at a time, each step first asking for the
 * lines of the next: a reused chunk is rarely in this core's caches, and a
 * plain memset waits for each line's fetch in turn. On a 64 MiB circular
 * buffer that wraps (bench_fxtrace instant2, 1 thread, 2-core VM), over the
 * same loop on a buffer that does not wrap: one memset 2.5 ns per event,
 * this 0.8 ns. A write prefetch (prefetchw) and steps of 512 or 2048
 * bytes did no better (bench/RESULTS.md, "Clearing a reused chunk"). */
static void zero_prefetched(uint8_t* p, uint64_t bytes) {
  enum { STEP = 1024, LINE = 64 };
  for (uint64_t i = 0; i < STEP && i < bytes; i += LINE) __builtin_prefetch(p + i, 0, 3);
  for (uint64_t off = 0; off < bytes; off += STEP) {
    for (uint64_t i = off + STEP; i < off + 2 * STEP && i < bytes; i += LINE)
      __builtin_prefetch(p + i, 0, 3);
    writer__zero_piece(p + off, bytes - off < STEP ? bytes - off : STEP);
  }
}

/* Clears [chunk, chunk + bytes) so that a scan, even after a crash mid-way
 * (SIGKILL, or a live copy for a snapshot), never reads the old contents:
 * first a provisional header over the whole area, which scans skip whole;
 * then the rest; then the header 0 (the data ends there). A zero header
 * first would not do: a process killed mid-memset leaves [0, 0, ..., old
 * records], and the scan's resync (buffer_scan.c) takes a zero header
 * followed by whole records for a damaged header, reporting damage and
 * emitting the old records as current ones. */
static void scrub(uint8_t* chunk, uint64_t bytes) {
  ATOMIC_STORE((uint64_t*)chunk, buffer__provisional_header(bytes / 8));
  __atomic_thread_fence(__ATOMIC_RELEASE);
  zero_prefetched(chunk + 8, bytes - 8);
  ATOMIC_RELEASE((uint64_t*)chunk, 0);
}

/* Whether the segment of switch count `sw` is in use again (read after
 * this thread published tokens in it: see claim). */
static bool reused_since(const engine_t* e, uint64_t sw) {
  uint64_t now = __atomic_load_n(&e->header->rolling_alloc, __ATOMIC_SEQ_CST);
  return (now >> TRACE_BUFFER_ALLOC_OFFSET_BITS) >= sw + e->segments;
}

/* Clears the chunks [offset, offset + count * C) of the buffer of switch
 * count `sw` that this thread was handed but does not use, unless a stale
 * writer owns one (it keeps it) or the round is over: takes each free one,
 * marks them all with a provisional header, then zeroes each and lets it
 * go (so that a scan meanwhile, or after a kill, skips them whole). */
static void clear_chunks(trace_context_t* w, uint64_t sw, uint64_t offset, uint32_t count) {
  engine_t* e = engine__of(w);
  uint32_t b = engine__segment(e, sw);
  uint32_t C = e->chunk_size;
  uint32_t first = b * e->chunks_per_buffer + (uint32_t)(offset / C);
  uint8_t* base = engine__segment_base(e, b) + offset;
  bool any = false;
  for (uint32_t i = 0; i < count; i++) {
    uint16_t expected = 0;
    any |= __atomic_compare_exchange_n(&e->owners[first + i], &expected, w->token, false,
                                       __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST);
  }
  if (!any) return;
  bool clear = !reused_since(e, sw) && ATOMIC_LOAD(&e->dirty[b]);
  for (int pass = clear ? 0 : 2; pass < 3; pass++)
    for (uint32_t i = 0; i < count; i++) {
      if (ATOMIC_LOAD(&e->owners[first + i]) != w->token) continue; /* a stale writer's */
      uint8_t* chunk = base + (uint64_t)i * C;
      if (pass == 0)
        ATOMIC_RELEASE((uint64_t*)chunk, buffer__provisional_header(C / 8));
      else if (pass == 1)
        scrub(chunk, C);
      else
        ATOMIC_RELEASE(&e->owners[first + i], 0);
    }
}

/* Takes chunks [offset, offset + bytes) of the buffer of switch count `sw`,
 * which this thread got from the allocation word. Two races make this more
 * than setting owner words:
 *   - a stale writer (circular) may still own one of them: that chunk keeps
 *     its owner's records; a large record's run is then given up, while a
 *     run of small records (`run`) becomes its longest stretch of free
 *     chunks from the first free one (those after it are cleared);
 *   - this thread may have been preempted between the fetch-add and here for
 *     two whole switches, so that the buffer is in use again and the chunks
 *     were handed out anew. Dekker-style, with sequentially consistent
 *     order: this thread publishes its tokens, then re-reads the allocation
 *     word; an allocator hands a chunk out (RMW on that word), then reads its
 *     token. At least one of the two sees the other, and backs off.
 * false: nothing owned, nothing written. */
static bool claim(trace_context_t* w, uint64_t sw, uint64_t offset, uint64_t bytes,
                  uint64_t generation_bits, bool run) {
  engine_t* e = engine__of(w);
  uint32_t b = engine__segment(e, sw);
  uint32_t C = e->chunk_size;
  uint32_t first = b * e->chunks_per_buffer + (uint32_t)(offset / C);
  uint32_t n = (uint32_t)(bytes / C);
  uint32_t from = 0, taken = 0; /* the stretch [from, from + taken) */
  while (from + taken < n) {
    uint16_t expected = 0;
    if (__atomic_compare_exchange_n(&e->owners[first + from + taken], &expected, w->token, false,
                                    __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST))
      taken++;
    else if (run && taken == 0)
      from++; /* a stale writer's, before the stretch */
    else
      break;
  }
  bool reused = reused_since(e, sw);
  if (reused || taken == 0 || (!run && taken < n)) {
    for (uint32_t i = 0; i < taken; i++) ATOMIC_RELEASE(&e->owners[first + from + i], 0);
    /* chunks handed to this thread that it will not use must not show a
     * scan records from an earlier round: clear each free one */
    if (!reused && n > 1) clear_chunks(w, sw, offset, n);
    return false;
  }
  /* past the stretch: a stale writer's chunk, then ones to clear */
  if (from + taken + 1 < n)
    clear_chunks(w, sw, offset + (uint64_t)(from + taken + 1) * C, n - (from + taken + 1));
  first += from;
  uint8_t* base = engine__segment_base(e, b) + offset + (uint64_t)from * C;
  bytes = (uint64_t)taken * C;
  if (ATOMIC_LOAD(&e->dirty[b])) {
    if (run) { /* a run of small records: see "runs" below */
      for (uint64_t at = C; at < bytes; at += C)
        ATOMIC_RELEASE((uint64_t*)(base + at), buffer__provisional_header(C / 8));
      scrub(base, C); /* after the marks: a scan never meets the others' old records */
    } else {
      scrub(base, bytes);
    }
  }
  w->chunk = first;
  w->chunk_count = taken;
  w->owners = e->owners;
  w->pos = (uint64_t*)base;
  w->end = (uint64_t*)(base + bytes);
  /* Whether every record this thread reserved before this claim is
   * committed: yes at nesting 1 (no record of a signal handler's or of
   * traced code called inside a record is open around this one: those run
   * at nesting 2 and up) with no trace_context_alloc_record() left
   * uncommitted (every other way to reserve commits its record before it
   * reserves again at the same nesting: a TRACE_EVENT() record stays open
   * across its assignment, but whatever that runs reserves at nesting 2).
   * Stored before chunk_epoch, both with release: a save that reads the
   * new chunk_epoch reads this value or a later one, and the commits made
   * before (engine__wait_writers_quiet, writer__quiet_from). */
  uint64_t epoch = generation_bits | (sw & 0xffffff);
  ATOMIC_RELEASE(&w->quiet_epoch, w->nesting == 1 && w->open_allocs == 0 ? epoch : 0);
  ATOMIC_RELEASE(&w->chunk_epoch, epoch);
  return true;
}

bool writer__quiet_from(const engine_t* e, const trace_context_t* w, uint64_t switch_count) {
  uint64_t epoch = ATOMIC_LOAD(&e->hot->epoch);
  uint64_t chunk_epoch = ATOMIC_ACQUIRE(&w->chunk_epoch);
  uint64_t quiet_epoch = ATOMIC_ACQUIRE(&w->quiet_epoch);
  if (epoch == 0 || quiet_epoch != chunk_epoch ||
      (epoch & ~UINT64_C(0xffffff)) != (chunk_epoch & ~UINT64_C(0xffffff)))
    return false;
  return ((chunk_epoch - switch_count) & 0xffffff) < 0x800000; /* modulo the 24-bit count */
}

/* Raises the epoch to `target` unless it is 0 (stopped) or already past it:
 * winners of successive switches may publish out of order. */
static void publish_epoch(engine_t* e, uint64_t target) {
  uint64_t cur = ATOMIC_LOAD(&e->hot->epoch);
  while (cur != 0 && cur < target &&
         !__atomic_compare_exchange_n(&e->hot->epoch, &cur, target, true, __ATOMIC_RELEASE,
                                      __ATOMIC_RELAXED)) {
  }
}

/* The winner of the switch from `sw` to `sw + 1` (circular, streaming). The
 * data-end marks are indexed by switch count & 1: the previous segment's
 * and the current one's (docs/buffer-layout.md). */
static void switched(engine_t* e, uint64_t sw, uint64_t generation_bits) {
  trace_buffer_header_t* h = e->header;
  unsigned old = (unsigned)(sw & 1);
  ATOMIC_STORE(&h->rolling_data_end[old], e->rolling_size); /* its full mark */
  ATOMIC_STORE(&h->rolling_data_end[old ^ 1], 0);
  /* a monotonic maximum (modulo the 24-bit switch count): with more than
   * two segments, the winner of the next switch may get here first */
  uint32_t target = (uint32_t)((sw + 1) & 0xffffff);
  uint32_t cur = ATOMIC_LOAD(&h->wrapped_count);
  while (((target - cur) & 0xffffff) != 0 && ((target - cur) & 0xffffff) < 0x800000 &&
         !__atomic_compare_exchange_n(&h->wrapped_count, &cur, target, true, __ATOMIC_RELAXED,
                                      __ATOMIC_RELAXED)) {
  }
  publish_epoch(e, generation_bits | ((sw + 1) & 0xffffff));
}

/* Oneshot full, or the durable buffer full: no record is written any more in
 * this trace (PROTOCOL.md §7.5), so none can refer to a lost string. */
static void stop_recording(engine_t* e) { ATOMIC_STORE(&e->hot->epoch, 0); }

static uint64_t* take(trace_context_t* w, size_t words) {
  uint64_t* p = w->pos;
  w->pos = p + words;
  return p;
}

/* ---- runs ----
 * A writer claims a run of consecutive chunks at once and fills them one
 * after the other: a record of up to one chunk never crosses a chunk
 * boundary (the chunk's remainder stays zero, where a scan moves on to the
 * next chunk), so the layout and its readers are those of single chunks.
 * Why: on a virtual machine of this project's benchmarks (bench/RESULTS.md,
 * "Runs of chunks"), two threads writing interleaved 16 KiB chunks paid
 * 3-7 ns more per 48-byte record than two threads each writing a region of
 * its own, and nothing at 1 thread; 256 KiB runs cut that to about 1 ns.
 * The run's length adapts: it doubles (up to run_max) each time the writer
 * fills a whole run in the segment it still writes, and halves when the
 * writer leaves a run at a switch having entered only its first chunk, so
 * that a thread that records little holds one chunk, as before, and does
 * not take a segment's space from the others. In a dirty segment the claim
 * stores a provisional header at the start of each chunk but the first,
 * which a scan skips whole (scrub), then clears the first: a scan never
 * finds an earlier round's records in a chunk not entered yet, and each
 * chunk is cleared when the writer enters it, while its lines are about to
 * be written (clearing the whole run at the claim cost a thread 1-3% per
 * event on a wrapping buffer: the run's lines left the nearest cache
 * before the records reached them). */

uint32_t writer__run_max(uint32_t chunks_per_segment) {
  uint32_t n = chunks_per_segment / WRITER_RUNS_PER_SEGMENT;
  return n < 1 ? 1 : n > WRITER_MAX_RUN_CHUNKS ? WRITER_MAX_RUN_CHUNKS : n;
}

/* The length of the next run, in chunks. */
static uint32_t run_length(const trace_context_t* w) {
  uint32_t want = w->run_want == 0 ? 1 : w->run_want;
  uint32_t max = engine__of(w)->run_max;
  return want < max ? want : max;
}

/* The run w leaves (before its release): `current` when it is in the
 * segment now being written. A large record's chunks (run_entered past
 * chunk_count) change nothing; a run left in its segment before its end
 * (for a large record) halves the next, as its rest is lost. */
static void adapt_run(trace_context_t* w, bool current) {
  if (w->chunk == NO_CHUNK || w->run_entered > w->chunk_count) return;
  uint32_t want = run_length(w);
  if (current && w->run_entered == w->chunk_count)
    want = want * 2 <= engine__of(w)->run_max ? want * 2 : engine__of(w)->run_max;
  else if (current || (w->chunk_count > 1 && w->run_entered <= 1))
    want = want > 1 ? want / 2 : 1;
  w->run_want = want;
}

/* The next chunk of w's run, for a record of up to one chunk. The run lies
 * in one segment (claims never cross a segment's end). */
static uint64_t* next_in_run(trace_context_t* w, size_t words) {
  engine_t* e = engine__of(w);
  uint32_t chunk = w->chunk + w->run_entered++;
  uint8_t* base = engine__segment_base(e, chunk / e->chunks_per_buffer) +
                  (uint64_t)(chunk % e->chunks_per_buffer) * e->chunk_size;
  /* in a dirty segment, cleared now: it holds a provisional header */
  if (ATOMIC_LOAD((uint64_t*)base) != 0) scrub(base, e->chunk_size);
  w->pos = (uint64_t*)base;
  w->end = (uint64_t*)(base + e->chunk_size);
  return take(w, words);
}

/* The first record of a run just claimed: a record of up to one chunk
 * starts the run's first chunk; a larger one takes the whole run and first
 * gets a provisional header (a large record of reserved type 15, as long as
 * the record), which scans skip: if the writer dies before the commit
 * replaces it, a scan must not jump to the next chunk boundary, which is
 * the middle of this record's body. */
static uint64_t* start_run(trace_context_t* w, size_t words) {
  uint64_t C = engine__of(w)->chunk_size;
  if ((uint64_t)words * 8 <= C) {
    w->end = w->pos + C / 8;
    w->run_entered = 1;
    return take(w, words);
  }
  w->run_entered = w->chunk_count + 1; /* a large record's: not a run (adapt_run) */
  uint64_t* p = take(w, words);
  ATOMIC_RELEASE(p, buffer__provisional_header(words));
  return p;
}

/* ---- drop counters (streaming) ---- */

/* Reserves this writer's drop counter in the durable buffer: a CAS that
 * never moves durable_alloc past the end (a full durable buffer ends the
 * trace; a counter must not). NULL: no room (then drops go to the header's
 * count, one atomic each, as other drops do). The durable buffer is zero
 * past durable_alloc (cleared at every full clear), so the count starts at
 * 0; the header is stored last, as every durable record's. */
static uint64_t* take_drop_slot(trace_context_t* w) {
  engine_t* e = engine__of(w);
  trace_buffer_header_t* h = e->header;
  const uint64_t bytes = TRACE_BUFFER_DROP_COUNTER_WORDS * 8;
  uint64_t at = ATOMIC_LOAD(&h->durable_alloc);
  do {
    if (at > e->durable_size || bytes > e->durable_size - at) return NULL;
  } while (!__atomic_compare_exchange_n(&h->durable_alloc, &at, at + bytes, true, __ATOMIC_ACQ_REL,
                                        __ATOMIC_RELAXED));
  uint64_t* p = (uint64_t*)(e->durable + at);
  ATOMIC_STORE(&p[TRACE_BUFFER_DROP_COUNTER_WORD], 0);
  ATOMIC_RELEASE(p, buffer__drop_counter_header());
  ATOMIC_STORE(&w->drop_slot_epoch, w->cache_epoch);
  ATOMIC_STORE(&w->drop_slot, &p[TRACE_BUFFER_DROP_COUNTER_WORD]);
  return &p[TRACE_BUFFER_DROP_COUNTER_WORD];
}

/* A record dropped because every other rolling segment waits for its save:
 * in the writer's own counter, in shared memory (so that the manager reads
 * it after a crash too) on a cache line nobody else writes: a load and a
 * store, no read-modify-write on the header's shared line, which the
 * threads would otherwise pass between their cores at every dropped record.
 * The load and store are not one atomic step, and need not be: only the
 * owner writes the counter, and only from trace_engine__reserve_slow(),
 * which runs inside the writer's `reserving` bracket, where an event from a
 * signal handler is dropped before it can get here (trace_engine__enter).
 * A writer's cache_epoch changes when the durable buffer is cleared (its
 * counter with it); the engine zeroes the counters of a retained durable
 * buffer at start (reset_drop_counters, engine.c). */
static void count_dropped_waiting(trace_context_t* w) {
  ATOMIC_STORE(&w->records_dropped, w->records_dropped + 1);
  uint64_t* slot = w->drop_slot;
  if (UNLIKELY(slot == NULL || w->drop_slot_epoch != w->cache_epoch)) {
    slot = take_drop_slot(w);
    if (slot == NULL) {
      __atomic_fetch_add(&engine__of(w)->header->num_records_dropped, 1, __ATOMIC_RELAXED);
      return;
    }
  }
  ATOMIC_STORE(slot, ATOMIC_LOAD(slot) + 1);
}

/* Steps F-H: a new chunk (or a switch), or the drop. */
static __attribute__((noinline)) uint64_t* reserve_chunk(trace_context_t* w, size_t words,
                                                         bool count) {
  engine_t* e = engine__of(w);
  trace_buffer_header_t* h = e->header;
  uint64_t bytes = (uint64_t)words * 8;
  uint64_t C = e->chunk_size;
  uint64_t need = (bytes + C - 1) & ~(C - 1); /* C is a power of two */
  if (words == 0 || bytes > TRACE_ENCODED_INLINE_LARGE_RECORD_MAX_SIZE || need > e->rolling_size)
    goto drop;
  bool small = need == C; /* a record of one chunk at most: runs */
  for (;;) {
    uint64_t epoch = ATOMIC_LOAD(&e->hot->epoch);
    if (epoch == 0) goto drop;
    uint64_t generation_bits = epoch & ~UINT64_C(0xffffff);
    uint64_t cur = ATOMIC_ACQUIRE(&h->rolling_alloc);
    uint64_t sw = cur >> TRACE_BUFFER_ALLOC_OFFSET_BITS;
    uint64_t offset = cur & TRACE_BUFFER_ALLOC_OFFSET_MASK;
    /* The epoch may lag the allocation word for a moment after a switch;
     * a chunk of the current round is still good. */
    bool current = w->chunk != NO_CHUNK && w->chunk_epoch == (generation_bits | (sw & 0xffffff));
    if (current && words <= (size_t)(w->end - w->pos)) return take(w, words);
    if (current && small && w->run_entered < w->chunk_count) return next_in_run(w, words);
    adapt_run(w, current);
    writer__release_chunk(w);
    /* A run of chunks for a record of up to one chunk, else the chunks
     * the record takes. */
    uint64_t ask = small ? (uint64_t)run_length(w) * C : need;
    /* Allocate while any room is left, even too little for this record: the
     * tail is then taken (a shorter run) or cleared below, so that every
     * chunk under the end of a full buffer holds this round's data or
     * nothing. */
    if (offset < e->rolling_size) {
      uint64_t prev = __atomic_fetch_add(&h->rolling_alloc, ask, __ATOMIC_ACQ_REL);
      uint64_t psw = prev >> TRACE_BUFFER_ALLOC_OFFSET_BITS;
      uint64_t poff = prev & TRACE_BUFFER_ALLOC_OFFSET_MASK;
      if (poff + ask <= e->rolling_size) {
        if (claim(w, psw, poff, ask, generation_bits, small)) return start_run(w, words);
      } else if (small && poff < e->rolling_size) {
        if (claim(w, psw, poff, e->rolling_size - poff, generation_bits, true))
          return start_run(w, words);
      } else if (poff < e->rolling_size) {
        clear_chunks(w, psw, poff, (uint32_t)((e->rolling_size - poff) / C));
      }
      continue;
    }
    /* The current rolling buffer is full (step H). */
    if (e->mode == TRACE_BUFFERING_MODE_ONESHOT) {
      ATOMIC_STORE(&h->rolling_data_end[0], e->rolling_size);
      stop_recording(e);
      goto drop;
    }
    /* Streaming: the next segment held switch count sw + 1 - segments; it
     * is free once that one is saved (saves_done >= sw + 2 - segments).
     * Until then records are dropped, counted in the writer's own counter
     * (no shared line: both threads may drop every record meanwhile). */
    if (e->mode == TRACE_BUFFERING_MODE_STREAMING &&
        ATOMIC_ACQUIRE(&e->saves_done) + e->segments < sw + 2) {
      if (count) count_dropped_waiting(w);
      return NULL;
    }
    ATOMIC_STORE(&e->dirty[engine__segment(e, sw)], true); /* before anyone can come back to it */
    uint64_t next = ((sw + 1) << TRACE_BUFFER_ALLOC_OFFSET_BITS) | ask;
    if (__atomic_compare_exchange_n(&h->rolling_alloc, &cur, next, false, __ATOMIC_ACQ_REL,
                                    __ATOMIC_RELAXED)) {
      switched(e, sw, generation_bits);
      bool claimed = claim(w, sw + 1, 0, ask, generation_bits, small);
      /* after the claim: the save need not wait for this thread, now in
       * the new segment (engine__wait_writers_quiet) */
      if (e->mode == TRACE_BUFFERING_MODE_STREAMING) engine__request_save(e, sw);
      if (claimed) return start_run(w, words);
    }
  }
drop:
  if (count) writer__count_dropped(w);
  return NULL;
}

uint64_t* trace_engine__reserve_slow(trace_context_t* w, size_t words, bool count) {
  /* A streaming writer without a chunk while every other segment waits for
   * its save (what each of its records meets until a save is done): the
   * decision of reserve_chunk's steps F and H in a few loads of lines that
   * change only at switches and saves, then its own counter, without
   * reserve_chunk's frame. The record fits a segment (a bigger one is
   * counted as such there). */
  const engine_t* e = engine__of(w);
  if (e->mode == TRACE_BUFFERING_MODE_STREAMING && w->chunk == NO_CHUNK && count && words != 0 &&
      (uint64_t)words * 8 <= TRACE_ENCODED_INLINE_LARGE_RECORD_MAX_SIZE &&
      (uint64_t)words * 8 <= e->rolling_size) {
    uint64_t cur = ATOMIC_ACQUIRE(&e->header->rolling_alloc);
    uint64_t sw = cur >> TRACE_BUFFER_ALLOC_OFFSET_BITS;
    if ((cur & TRACE_BUFFER_ALLOC_OFFSET_MASK) >= e->rolling_size &&
        ATOMIC_ACQUIRE(&e->saves_done) + e->segments < sw + 2 && ATOMIC_LOAD(&e->hot->epoch) != 0) {
      count_dropped_waiting(w);
      return NULL;
    }
  }
  return reserve_chunk(w, words, count);
}

uint64_t* writer__reserve_durable(trace_context_t* w, size_t words) {
  engine_t* e = engine__of(w);
  if (ATOMIC_LOAD(&e->hot->epoch) == 0) return NULL;
  uint64_t bytes = (uint64_t)words * 8;
  uint64_t offset = __atomic_fetch_add(&e->header->durable_alloc, bytes, __ATOMIC_ACQ_REL);
  if (offset + bytes <= e->durable_size) return (uint64_t*)(e->durable + offset);
  if (offset <= e->durable_size) { /* the one that crossed the end */
    ATOMIC_STORE(&e->header->durable_data_end, offset);
    stop_recording(e);
  }
  return NULL;
}

/* ---- strings ---- */

/* The next index from a shared counter, or 0 once `max` was handed out: a
 * capped CAS, so that failed attempts never wrap the counter around to live
 * indexes. */
static uint32_t take_index(uint32_t* counter, uint32_t max) {
  uint32_t index = ATOMIC_LOAD(counter);
  while (index <= max && !__atomic_compare_exchange_n(counter, &index, index + 1, true,
                                                      __ATOMIC_RELAXED, __ATOMIC_RELAXED)) {
  }
  return index <= max ? index : 0;
}

static trace_string_ref_t inline_ref(const char* s) { return trace_make_inline_c_string_ref(s); }

/* A string record with a fresh index, or 0 when indexes or space ran out. */
static trace_string_index_t write_string(trace_context_t* w, const char* s, size_t length) {
  uint32_t index =
      take_index(&engine__of(w)->next_string_index, TRACE_ENCODED_STRING_REF_MAX_INDEX);
  if (index == 0) return 0;
  if (length > TRACE_ENCODED_STRING_REF_MAX_LENGTH) length = TRACE_ENCODED_STRING_REF_MAX_LENGTH;
  uint64_t* p = writer__reserve_metadata(w, fxt_string_record_words(length));
  if (!p) return 0;
  fxt_write_string_record(p, (trace_string_index_t)index, s, length);
  writer__count_written(w);
  return (trace_string_index_t)index;
}

trace_string_ref_t writer__register_literal_slow(trace_context_t* w, const char* literal) {
  if (literal == NULL || literal[0] == '\0') return trace_make_empty_string_ref();
  uint32_t slot = writer__string_home(literal);
  string_cache_entry_t* entry = NULL;
  for (uint32_t probe = 0; probe < WRITER_STRING_CACHE_SIZE; probe++) {
    string_cache_entry_t* e = &w->strings[(slot + probe) % WRITER_STRING_CACHE_SIZE];
    if (e->literal == literal) {
      if (e->ref == 0) return inline_ref(literal); /* no index will ever come */
      trace_string_ref_t ref = {e->ref, NULL};
      return ref;
    }
    if (e->literal == NULL) {
      entry = e;
      break;
    }
  }
  if (entry == NULL) return inline_ref(literal); /* the thread's table is full */
  trace_string_index_t index = write_string(w, literal, strlen(literal));
  if (index == 0) {
    if (ATOMIC_LOAD(&engine__of(w)->next_string_index) > TRACE_ENCODED_STRING_REF_MAX_INDEX) {
      entry->literal = literal; /* indexes are used up: stop asking */
      entry->ref = 0;
    }
    return inline_ref(literal);
  }
  entry->literal = literal;
  entry->ref = index;
  return trace_make_indexed_string_ref(index);
}

trace_string_ref_t writer__register_copy(trace_context_t* w, const char* s, size_t length) {
  if (s == NULL || length == 0) return trace_make_empty_string_ref();
  trace_string_index_t index = write_string(w, s, length);
  if (index == 0) return trace_make_inline_string_ref(s, length);
  return trace_make_indexed_string_ref(index);
}

/* ---- threads ---- */

/* A thread-info kernel object record (durable), then a thread record with a
 * fresh index; an inline ref when indexes or space ran out. */
trace_thread_ref_t writer__register_thread(trace_context_t* w, trace_koid_t pid, trace_koid_t tid,
                                           const char* name, size_t name_length) {
  if (name != NULL && name_length > 0) {
    trace_string_ref_t name_ref = writer__register_copy(w, name, name_length);
    writer__write_thread_info(w, pid, tid, &name_ref);
  }
  uint32_t index =
      take_index(&engine__of(w)->next_thread_index, TRACE_ENCODED_THREAD_REF_MAX_INDEX);
  if (index != 0) {
    uint64_t* p = writer__reserve_metadata(w, 3);
    if (p) {
      fxt_write_thread_record(p, index, pid, tid);
      writer__count_written(w);
      return trace_make_indexed_thread_ref(index);
    }
  }
  return trace_make_inline_thread_ref(pid, tid);
}

void writer__write_thread_info(trace_context_t* w, trace_koid_t pid, trace_koid_t tid,
                               const trace_string_ref_t* name_ref) {
  trace_arg_t arg =
      trace_make_arg(writer__register_literal(w, "process"), trace_make_koid_arg_value(pid));
  size_t words = fxt_kernel_object_record_words(name_ref, &arg, 1);
  uint64_t* p = writer__reserve_metadata(w, words);
  if (!p) return;
  fxt_write_kernel_object_record(p, words, tid, FXT_KOBJ_THREAD, name_ref, &arg, 1);
  writer__count_written(w);
}

trace_thread_ref_t writer__register_current_thread_slow(trace_context_t* w) {
  w->thread_ref = writer__register_thread(w, engine__of(w)->pid, w->tid, w->name, strlen(w->name));
  ATOMIC_RELEASE(&w->thread_registered, true); /* w->name is final (thread_exits.c reads it) */
  return w->thread_ref;
}

/* ---- categories ---- */

bool writer__handler_enables(engine_t* e, const char* category) {
  trace_handler_t* handler = ATOMIC_ACQUIRE(&e->handler);
  return category != NULL && category[0] != '\0' && handler != NULL &&
         handler->ops->is_category_enabled(handler, category);
}

/* The handler is asked only while the session is started, and its
 * termination waits for every question asked (e->askers) before it reports
 * trace_terminated:
 * a thread that read the generation before the stop cannot ask a handler
 * whose owner already freed its categories. Both sides store, then load
 * what the other stored, sequentially consistent (engine.c's Dekker
 * argument): the asker counts itself then loads the generation; the stop
 * clears the generation (at the stop) then loads the count. */
bool writer__session_enables(engine_t* e, const char* category) {
  __atomic_add_fetch(&e->askers, 1, __ATOMIC_SEQ_CST);
  bool enabled =
      __atomic_load_n(e->current, __ATOMIC_SEQ_CST) != 0 && writer__handler_enables(e, category);
  __atomic_sub_fetch(&e->askers, 1, __ATOMIC_RELEASE);
  return enabled;
}

/* ---- attaching threads ---- */

static void on_thread_exit(void* arg) {
  trace_context_t* w = arg;
  engine_t* e = engine__of(w);
  pthread_mutex_lock(&e->lock);
  /* its name at the end, for the stop's names and file mode's archive */
  thread_exits__note(w);
  explicit_name__ended(e->pid, w->tid, trace_clock__now_ns());
  if (e->owners) writer__release_chunk(w);
  w->chunk = NO_CHUNK;
  w->pos = w->end = NULL;
  w->reserving = 0;
  ATOMIC_RELEASE(&w->nesting, 0); /* a thread may exit holding a context */
  w->in_use = false;
  pthread_mutex_unlock(&e->lock);
  trace_engine__self[w->session] = NULL;
}

static void make_exit_keys(void) {
  for (unsigned i = 0; i < TRACE_ENGINE_MAX_SESSIONS; i++)
    pthread_key_create(&exit_keys[i], on_thread_exit);
}

static trace_context_t* new_writer(engine_t* e) {
  trace_context_t* w = NULL;
  pthread_mutex_lock(&e->lock);
  for (trace_context_t* it = e->writers; it; it = it->next)
    if (!it->in_use) {
      w = it;
      break;
    }
  if (!w && e->writer_count < MAX_WRITERS) {
    w = aligned_alloc(64, sizeof(*w));
    if (w) {
      memset(w, 0, sizeof(*w));
      w->token = ++e->writer_count;
      w->chunk = NO_CHUNK;
      w->session = (uint8_t)e->session;
      w->hot = e->hot;
      w->next = e->writers;
      e->writers = w;
    }
  }
  if (w) {
    w->in_use = true;
    /* atomic: a stop's engine thread may be reading a reused writer's mark */
    ATOMIC_STORE(&w->nesting, 0);
    w->reserving = 0;
    w->open_allocs = 0; /* the thread before may have exited holding one */
    w->run_want = 0;    /* a new thread starts with runs of one chunk */
    w->thread_registered = false;
    w->cache_epoch = 0; /* a new thread: its caches start empty */
  }
  pthread_mutex_unlock(&e->lock);
  return w;
}

/* The thread's attach in progress, per session. A signal handler that
 * records on the thread meanwhile would wait for e->lock, which the attach
 * it interrupted may hold (a self-deadlock), or reset the caches under it:
 * its record is dropped instead, and counted by the thread's next record
 * (writer__attach_and_enter: the header is only written inside a record). */
static __thread bool attaching[TRACE_ENGINE_MAX_SESSIONS];
static __thread uint32_t attach_drops[TRACE_ENGINE_MAX_SESSIONS];

static trace_context_t* attach(engine_t* e, uint64_t generation);

static trace_context_t* writer__attach(uint64_t generation) {
  engine_t* e = engine__of_generation(generation);
  if (attaching[e->session]) {
    attach_drops[e->session]++;
    return NULL;
  }
  attaching[e->session] = true;
  __atomic_signal_fence(__ATOMIC_SEQ_CST);
  trace_context_t* w = attach(e, generation);
  __atomic_signal_fence(__ATOMIC_SEQ_CST);
  attaching[e->session] = false;
  return w;
}

/* writer__enter() for a thread not attached for `generation` yet. */
trace_context_t* writer__attach_and_enter(uint64_t generation) {
  trace_context_t* w = writer__attach(generation);
  if (w == NULL || writer__enter_attached(w, generation) == NULL) return NULL;
  for (uint32_t* handler_drops = &attach_drops[w->session]; *handler_drops != 0; --*handler_drops)
    writer__count_dropped(w); /* inside a record: the header is mapped */
  return w;
}

static trace_context_t* attach(engine_t* e, uint64_t generation) {
  trace_context_t* w = trace_engine__self[e->session];
  if (w == NULL) {
    w = new_writer(e);
    if (w == NULL) return NULL;
    pthread_once(&exit_key_once, make_exit_keys);
    pthread_setspecific(exit_keys[e->session], w);
    trace_engine__self[e->session] = w;
    w->tid = (trace_koid_t)gettid();
  }
  /* The caches and the name are reset before the new generation is
   * published (release): a stop's engine thread that reads this writer's
   * generation as its trace (acquire, thread_exits.c) then reads
   * thread_registered as this trace set it, and w->name only once this
   * thread registered with it (never while it is rewritten here). */
  uint64_t cache_epoch = ATOMIC_LOAD(&e->cache_epoch);
  if (w->cache_epoch != cache_epoch) {
    memset(w->strings, 0, sizeof(w->strings));
    memset(w->sites, 0, sizeof(w->sites));
    memset(w->vthreads, 0, sizeof(w->vthreads));
    memset(w->formats_written, 0, sizeof(w->formats_written));
    ATOMIC_RELEASE(&w->thread_registered, false);
    w->cache_epoch = cache_epoch;
  }
  if (!w->thread_registered) { /* the name may have changed since last trace */
    char name[17] = {0};
    if (prctl(PR_GET_NAME, name) != 0) name[0] = '\0';
    memcpy(w->name, name, sizeof(w->name));
  }
  if (ATOMIC_LOAD(&w->generation) != generation) {
    ATOMIC_STORE(&w->records_written, 0);
    ATOMIC_STORE(&w->records_dropped, 0);
    w->open_allocs = 0; /* an earlier trace's record never committed */
    w->run_want = 0;    /* runs start again at one chunk */
    ATOMIC_RELEASE(&w->generation, generation);
  }
  return w;
}
