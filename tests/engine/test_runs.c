/* Runs of chunks (src/engine/writer.c, "runs"; docs/buffer-layout.md):
 *   - a thread that keeps recording claims runs that double up to the
 *     engine's maximum; after every record its write position lies inside
 *     one chunk of its run (records never cross a chunk boundary), and
 *     every record is read back in order;
 *   - a segment filled by one thread is used to its last chunk (the run
 *     that meets the end takes the chunks left);
 *   - threads that record once each take one chunk each (a new thread on a
 *     reused writer starts again at one chunk);
 *   - a run left at a switch after only its first chunk halves the next;
 *   - in a reused (dirty) segment, the chunks of a run not entered yet hold
 *     a provisional header, never an earlier round's records, and each is
 *     cleared when entered: a circular buffer keeps a contiguous suffix;
 *   - an idle thread's run in a reused segment: the claims that meet it
 *     keep their free stretches, so no other chunk is left empty;
 *   - a record larger than a chunk amid a run: its own chunks, the next
 *     run half as long;
 *   - two threads recording at once, streaming: runs longer than a chunk,
 *     every kept record of each in order. */
#include <pthread.h>

#include "engine/engine_internal.h"
#include "engine_test_util.h"
#include "harness.h"

enum { BIG_BUFFER = 32 << 20 }; /* circular: 2 segments of ~900 chunks */

static trace_buffer_header_t* header_of(harness_t* h) { return (trace_buffer_header_t*)h->buffer; }

static uint64_t alloc_offset(harness_t* h) {
  return __atomic_load_n(&header_of(h)->rolling_alloc, __ATOMIC_ACQUIRE) &
         TRACE_BUFFER_ALLOC_OFFSET_MASK;
}

static uint64_t switch_count(harness_t* h) {
  return __atomic_load_n(&header_of(h)->rolling_alloc, __ATOMIC_ACQUIRE) >>
         TRACE_BUFFER_ALLOC_OFFSET_BITS;
}

static trace_context_t* my_writer(void) { return trace_engine__self[0]; }

/* The run the calling thread holds: chunks owned and entered. */
typedef struct run {
  uint32_t chunk, count, entered;
} run_t;

static run_t my_run(void) {
  trace_context_t* w = my_writer();
  ASSERT_TRUE(w != NULL);
  run_t r = {w->chunk, w->chunk_count, w->run_entered};
  return r;
}

/* The start of chunk `chunk` (an index over all segments, as w->chunk). */
static const uint64_t* chunk_start(uint32_t chunk) {
  const engine_t* e = engine__of(my_writer());
  return (const uint64_t*)(engine__segment_base(e, chunk / e->chunks_per_buffer) +
                           (uint64_t)(chunk % e->chunks_per_buffer) * e->chunk_size);
}

/* The calling thread writes inside the chunk of its run it entered last. */
static void check_position(void) {
  trace_context_t* w = my_writer();
  if (w->run_entered > w->chunk_count) return; /* a large record's chunks */
  const uint64_t* start = chunk_start(w->chunk + w->run_entered - 1);
  ASSERT_TRUE(w->end == start + engine__of(w)->chunk_size / 8);
  ASSERT_TRUE(w->pos > start && w->pos <= w->end);
}

/* Records until the calling thread claims a new run; returns its length. */
static uint32_t record_until_new_run(uint64_t* seq) {
  uint32_t first = my_run().chunk;
  while (my_run().chunk == first) {
    emit_seq((*seq)++);
    check_position();
  }
  return my_run().count;
}

static void check_in_order(const archive_summary_t* s, uint64_t tid, uint64_t from, uint64_t n) {
  uint64_t next = from;
  for (size_t i = 0; i < s->seq_count; i++)
    if (s->seqs[i].tid == tid && s->seqs[i].seq >= from && s->seqs[i].seq < from + n)
      ASSERT_EQ(s->seqs[i].seq, next++);
  ASSERT_EQ(next, from + n);
}

/* Runs fn(arg) on a thread of its own, to its end. */
static void on_thread(void* (*fn)(void*), void* arg) {
  pthread_t t;
  ASSERT_EQ(pthread_create(&t, NULL, fn, arg), 0);
  pthread_join(t, NULL);
}

static void* record_once(void* arg) {
  (void)arg;
  emit_seq(7);
  return NULL;
}

static void test_runs_grow(void) {
  harness_t h;
  archive_summary_t s;
  ASSERT_EQ(harness_start(&h, TRACE_BUFFERING_MODE_CIRCULAR, BIG_BUFFER, NULL), 0);
  /* another thread's chunk first: the runs below then do not end exactly
   * at the segment's end (991 chunks: 1 + 15 + 16 k + 15) */
  on_thread(record_once, NULL);
  uint64_t seq = 0;
  emit_seq(seq++);
  ASSERT_EQ(my_run().count, 1u); /* a thread starts with one chunk */
  uint32_t max = writer__run_max(header_of(&h)->rolling_buffer_size / header_of(&h)->chunk_size);
  ASSERT_EQ(max, (uint32_t)WRITER_MAX_RUN_CHUNKS);
  ASSERT_TRUE(max >= 4);
  /* each run filled in the segment it was claimed in doubles the next */
  for (uint32_t want = 2; want <= max; want *= 2) ASSERT_EQ(record_until_new_run(&seq), want);
  ASSERT_EQ(record_until_new_run(&seq), max); /* and stays at the maximum */
  ASSERT_EQ(switch_count(&h), 0u);            /* all of it in the first segment */
  /* to the segment's end: the last run takes what is left, and every chunk
   * of the segment holds records */
  while (switch_count(&h) == 0) {
    emit_seq(seq++);
    check_position();
  }
  const engine_t* e = engine__of(my_writer());
  for (uint32_t c = 0; c < e->chunks_per_buffer; c++) ASSERT_TRUE(*chunk_start(c) != 0);
  uint64_t tid = 0;
  harness_finish(&h, &s);
  ASSERT_EQ(s.skipped, 0u);
  ASSERT_EQ(s.seq_count, seq + 1); /* and the other thread's */
  for (size_t i = 0; i < s.seq_count && tid == 0; i++)
    if (s.seqs[i].seq != 7) tid = s.seqs[i].tid;
  check_in_order(&s, tid, 0, seq);
  ASSERT_EQ(h.stats.records_dropped, 0u);
  free(s.seqs);
  harness_free(&h);
}

static void* record_busy(void* arg) {
  uint64_t* seq = arg;
  emit_seq((*seq)++);
  for (int i = 0; i < 3; i++) record_until_new_run(seq);
  ASSERT_TRUE(my_run().count > 1);
  return NULL;
}

static void test_sparse_threads_take_one_chunk(void) {
  harness_t h;
  archive_summary_t s;
  ASSERT_EQ(harness_start(&h, TRACE_BUFFERING_MODE_CIRCULAR, BIG_BUFFER, NULL), 0);
  /* one busy thread first, whose writer the later threads reuse: its run
   * length must not carry over to them */
  uint64_t seq = 0;
  on_thread(record_busy, &seq);
  uint64_t before = alloc_offset(&h);
  uint32_t C = header_of(&h)->chunk_size;
  enum { THREADS = 24 };
  for (int i = 0; i < THREADS; i++) on_thread(record_once, NULL);
  ASSERT_EQ(alloc_offset(&h) - before, (uint64_t)THREADS * C);
  harness_finish(&h, &s);
  ASSERT_EQ(s.skipped, 0u);
  ASSERT_EQ(s.seq_count, seq + THREADS);
  free(s.seqs);
  harness_free(&h);
}

/* Another thread records until the buffer switches to its next segment. */
static void* record_until_switch(void* arg) {
  harness_t* h = arg;
  uint64_t sw = switch_count(h);
  for (uint64_t i = 0; switch_count(h) == sw; i++) emit_seq(1000000000u + i);
  return NULL;
}

static void test_run_halves_after_switch(void) {
  harness_t h;
  archive_summary_t s;
  ASSERT_EQ(harness_start(&h, TRACE_BUFFERING_MODE_CIRCULAR, BIG_BUFFER, NULL), 0);
  uint64_t seq = 0;
  emit_seq(seq++);
  uint32_t max = WRITER_MAX_RUN_CHUNKS;
  while (record_until_new_run(&seq) < max) {
  }
  /* a fresh run of the maximum, only its first chunk entered */
  run_t r = my_run();
  ASSERT_EQ(r.count, max);
  ASSERT_EQ(r.entered, 1u);
  on_thread(record_until_switch, &h);
  emit_seq(seq++); /* leaves the old run: the next is half as long */
  ASSERT_EQ(my_run().count, max / 2);
  ASSERT_EQ(my_run().entered, 1u);
  /* filled in its segment, it doubles again */
  ASSERT_EQ(record_until_new_run(&seq), max);
  harness_finish(&h, &s);
  ASSERT_EQ(s.skipped, 0u);
  ASSERT_EQ(h.stats.records_dropped, 0u);
  free(s.seqs);
  harness_free(&h);
}

static void test_run_in_dirty_segment(void) {
  harness_t h;
  archive_summary_t s;
  ASSERT_EQ(harness_start(&h, TRACE_BUFFERING_MODE_CIRCULAR, 8 << 20, NULL), 0);
  uint32_t C = header_of(&h)->chunk_size;
  uint64_t seq = 0;
  emit_seq(seq++);
  /* both segments written, the first one reused */
  while (switch_count(&h) < 2) emit_seq(seq++);
  uint32_t max = engine__of(my_writer())->run_max;
  ASSERT_TRUE(max >= 4);
  while (record_until_new_run(&seq) < max) {
  }
  ASSERT_EQ(switch_count(&h), 2u); /* still in the reused segment */
  run_t r = my_run();
  ASSERT_EQ(r.entered, 1u);
  for (uint32_t i = 1; i < r.count; i++)
    ASSERT_EQ(*chunk_start(r.chunk + i), buffer__provisional_header(C / 8));
  /* entering the next chunk clears it: nothing of the earlier round left */
  while (my_run().entered < 2) emit_seq(seq++);
  const uint64_t* second = chunk_start(r.chunk + 1);
  ASSERT_TRUE(second[0] != 0 && second[0] != buffer__provisional_header(C / 8));
  uint64_t record_words = (second[0] >> 4) & 0xfff;
  for (uint64_t i = record_words; i < C / 8; i++) ASSERT_EQ(second[i], 0u);
  ASSERT_EQ(*chunk_start(r.chunk + 2), buffer__provisional_header(C / 8));
  harness_finish(&h, &s);
  ASSERT_EQ(s.skipped, 0u);
  /* circular: the newest records, a contiguous suffix ending at the last */
  ASSERT_TRUE(s.seq_count > 0 && s.seq_count < seq);
  check_in_order(&s, s.seqs[0].tid, seq - s.seq_count, s.seq_count);
  free(s.seqs);
  harness_free(&h);
}

/* A thread that grows its run to the maximum, enters only its first chunk
 * and then waits, holding the run, until told to record once more. */
typedef struct idle {
  pthread_mutex_t lock;
  pthread_cond_t cond;
  int step; /* 1: holding its run; 2: record again; 3: done */
  run_t run;
} idle_t;

static void* idle_thread(void* arg) {
  idle_t* t = arg;
  uint64_t seq = 2000000000u;
  emit_seq(seq++);
  while (record_until_new_run(&seq) < WRITER_MAX_RUN_CHUNKS) {
  }
  pthread_mutex_lock(&t->lock);
  t->run = my_run();
  t->step = 1;
  pthread_cond_broadcast(&t->cond);
  while (t->step != 2) pthread_cond_wait(&t->cond, &t->lock);
  pthread_mutex_unlock(&t->lock);
  emit_seq(seq++); /* leaves its stale run */
  pthread_mutex_lock(&t->lock);
  t->step = 3;
  pthread_mutex_unlock(&t->lock);
  return NULL;
}

static void test_idle_run_in_reused_segment(void) {
  harness_t h;
  archive_summary_t s;
  ASSERT_EQ(harness_start(&h, TRACE_BUFFERING_MODE_CIRCULAR, BIG_BUFFER, NULL), 0);
  idle_t idle = {PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, 0, {0, 0, 0}};
  pthread_t t;
  ASSERT_EQ(pthread_create(&t, NULL, idle_thread, &idle), 0);
  pthread_mutex_lock(&idle.lock);
  while (idle.step != 1) pthread_cond_wait(&idle.cond, &idle.lock);
  pthread_mutex_unlock(&idle.lock);
  ASSERT_EQ(idle.run.count, (uint32_t)WRITER_MAX_RUN_CHUNKS);
  ASSERT_EQ(idle.run.entered, 1u);
  /* this thread fills the segments until the idle run's segment is reused
   * and filled past it */
  uint64_t seq = 0;
  emit_seq(seq++);
  const engine_t* e = engine__of(my_writer());
  uint32_t C = e->chunk_size;
  uint32_t idle_first = idle.run.chunk % e->chunks_per_buffer;
  ASSERT_EQ(idle.run.chunk / e->chunks_per_buffer, 0u); /* in segment 0 */
  while (switch_count(&h) < 2 ||
         alloc_offset(&h) < (uint64_t)(idle_first + WRITER_MAX_RUN_CHUNKS + 40) * C) {
    emit_seq(seq++);
    check_position();
  }
  ASSERT_EQ(switch_count(&h), 2u);
  /* below the allocation point every chunk but the idle run's holds this
   * round's records: the claims that met the run kept their free stretches */
  uint32_t used = (uint32_t)(alloc_offset(&h) / C) - 1; /* the last run may be partly entered */
  for (uint32_t c = 0; c < used; c++) {
    bool idles = c >= idle_first && c < idle_first + WRITER_MAX_RUN_CHUNKS;
    if (!idles && *chunk_start(c) == 0) {
      const trace_context_t* w = my_writer();
      bool mine_not_entered = c >= w->chunk % e->chunks_per_buffer + w->run_entered &&
                              c < w->chunk % e->chunks_per_buffer + w->chunk_count;
      ASSERT_TRUE(mine_not_entered);
    }
  }
  /* the idle run: its first chunk holds the idle thread's records of the
   * first round, the others were never written */
  ASSERT_TRUE(*chunk_start(idle_first) != 0);
  for (uint32_t c = idle_first + 1; c < idle_first + WRITER_MAX_RUN_CHUNKS; c++)
    ASSERT_EQ(*chunk_start(c), 0u);
  pthread_mutex_lock(&idle.lock);
  idle.step = 2;
  pthread_cond_broadcast(&idle.cond);
  pthread_mutex_unlock(&idle.lock);
  pthread_join(t, NULL);
  /* leaving it, the idle thread cleared its old records out of this round */
  ASSERT_EQ(*chunk_start(idle_first), 0u);
  harness_finish(&h, &s);
  ASSERT_EQ(s.skipped, 0u);
  /* this thread's newest records, a contiguous suffix */
  uint64_t mine = 0, tid = 0;
  for (size_t i = 0; i < s.seq_count; i++)
    if (s.seqs[i].seq < 2000000000u) mine++, tid = s.seqs[i].tid;
  ASSERT_TRUE(mine > 0 && mine < seq);
  check_in_order(&s, tid, seq - mine, mine);
  free(s.seqs);
  harness_free(&h);
}

static size_t count_blobs(harness_t* h, size_t bytes) {
  size_t n = 0;
  harness_records_t it;
  for (harness_records_open(&it, h); harness_records_next(&it);)
    if (it.rec.type == 5 && it.rec.blob.size == bytes) n++;
  return n;
}

static void test_large_record_amid_runs(void) {
  harness_t h;
  archive_summary_t s;
  ASSERT_EQ(harness_start(&h, TRACE_BUFFERING_MODE_CIRCULAR, BIG_BUFFER, NULL), 0);
  uint64_t seq = 0;
  emit_seq(seq++);
  for (uint32_t want = 2; want <= WRITER_MAX_RUN_CHUNKS; want *= 2)
    ASSERT_EQ(record_until_new_run(&seq), want);
  emit_seq(seq++); /* inside a fresh run of the maximum */
  ASSERT_EQ(my_run().count, (uint32_t)WRITER_MAX_RUN_CHUNKS);
  enum { BLOB = 20000 }; /* more than a 16 KiB chunk */
  static uint8_t blob[BLOB];
  for (size_t i = 0; i < sizeof(blob); i += 8) /* looks like records if misread */
    memcpy(blob + i, &(uint64_t){UINT64_C(0x0000000100010012)}, 8);
  trace_context_t* c = trace_acquire_context();
  ASSERT_TRUE(c != NULL);
  trace_string_ref_t name = trace_make_inline_c_string_ref("big");
  trace_context_write_blob_record(c, TRACE_BLOB_TYPE_DATA, &name, blob, sizeof(blob));
  trace_release_context(c);
  run_t r = my_run();
  ASSERT_EQ(r.count, 2u); /* the large record's own chunks */
  ASSERT_EQ(r.entered, r.count + 1);
  uint64_t after = seq;
  /* the run it left is lost: the next one is half as long, then grows */
  ASSERT_EQ(record_until_new_run(&seq), (uint32_t)WRITER_MAX_RUN_CHUNKS / 2);
  ASSERT_EQ(record_until_new_run(&seq), (uint32_t)WRITER_MAX_RUN_CHUNKS);
  harness_finish(&h, &s);
  ASSERT_EQ(s.skipped, 0u);
  ASSERT_EQ(s.seq_count, seq);
  check_in_order(&s, s.seqs[0].tid, 0, seq);
  ASSERT_TRUE(seq > after);
  ASSERT_EQ(count_blobs(&h, BLOB), 1u);
  ASSERT_EQ(h.stats.records_dropped, 0u);
  free(s.seqs);
  harness_free(&h);
}

typedef struct worker {
  uint64_t first, count;
  uint32_t longest_run;
} worker_t;

static void* run_worker(void* arg) {
  worker_t* w = arg;
  uint32_t longest = 0;
  for (uint64_t i = 0; i < w->count; i++) {
    emit_seq(w->first + i);
    trace_context_t* c = my_writer();
    if (c != NULL && c->chunk != NO_CHUNK && c->run_entered <= c->chunk_count &&
        c->chunk_count > longest)
      longest = c->chunk_count;
  }
  w->longest_run = longest;
  return NULL;
}

/* Two threads at once, streaming on 8 segments with saves as they come:
 * runs in every segment, switches made by either thread, nothing lost but
 * what the engine counts as dropped (none: the harness saves at once). */
static void test_two_threads_streaming(void) {
  harness_t h;
  archive_summary_t s;
  ASSERT_EQ(harness_start(&h, TRACE_BUFFERING_MODE_STREAMING, 64 << 20, NULL), 0);
  enum { PER_THREAD = 400000 }; /* ~16 MB each: segments of ~7.5 MB */
  pthread_t t[2];
  worker_t work[2] = {{0, PER_THREAD, 0}, {1000000000u, PER_THREAD, 0}};
  for (int i = 0; i < 2; i++) ASSERT_EQ(pthread_create(&t[i], NULL, run_worker, &work[i]), 0);
  for (int i = 0; i < 2; i++) pthread_join(t[i], NULL);
  ASSERT_TRUE(switch_count(&h) >= 3);
  ASSERT_TRUE(work[0].longest_run >= 8 && work[1].longest_run >= 8);
  harness_finish(&h, &s);
  ASSERT_EQ(s.skipped, 0u);
  ASSERT_EQ(s.seq_count + h.stats.records_dropped, 2u * PER_THREAD);
  /* each thread's records that were kept, in its order */
  uint64_t last[2] = {0, 0};
  bool any[2] = {false, false};
  for (size_t i = 0; i < s.seq_count; i++) {
    int k = s.seqs[i].seq >= 1000000000u;
    uint64_t n = s.seqs[i].seq % 1000000000u;
    if (any[k]) ASSERT_TRUE(n > last[k]);
    any[k] = true;
    last[k] = n;
  }
  ASSERT_TRUE(any[0] && any[1]);
  free(s.seqs);
  harness_free(&h);
}

int main(void) {
  test_runs_grow();
  test_sparse_threads_take_one_chunk();
  test_run_halves_after_switch();
  test_run_in_dirty_segment();
  test_idle_run_in_reused_segment();
  test_large_record_amid_runs();
  test_two_threads_streaming();
  printf("test_runs: ok\n");
  return 0;
}
