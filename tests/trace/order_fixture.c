/* Writes two archives of the same records for test_summary_order.py:
 *
 *   SORTED    magic, provider, every string, thread and thread-name record,
 *             then the events in time order;
 *   SHUFFLED  the order fxtrace's engine in streaming mode produces
 *             (docs/buffer-layout.md): each thread writes into a chunk of its
 *             own, taken from the rolling buffer in the order threads need
 *             one; a full buffer is saved as the strings and threads first
 *             used since the last save (the durable part), then its chunks
 *             in chunk order; after a save every thread takes a new chunk.
 *             A complete duration is written when it ends, with its
 *             beginning as timestamp; a few instants carry a time older
 *             than their neighbours' (a writer preempted between reading the
 *             clock and committing).
 *
 * The events are a pipeline like examples/demo.c: a producer begins an async
 * span per item (and a flow) inside a complete "produce" duration; three
 * slower workers take the items and end the spans on their own threads
 * inside "process" begin/end pairs enclosing complete "compute" durations;
 * counters; a complete "main" around everything, written last. Every
 * timestamp is distinct, so time order is one order, whatever the ties rule.
 * Deterministic (a fixed pseudo-random sequence).
 *
 * Prints, for the test: the items, and how far SHUFFLED is from time order
 * (async ends before their begin in the file, records earlier than one
 * before them).
 *
 * Usage: order_fixture SORTED SHUFFLED */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fxt/fxt_buffer.h"
#include "fxt/fxt_encode.h"

enum { PID = 10, THREADS = 4, ITEMS = 300 };
/* small chunks and buffers, so that an archive of 300 items has many */
enum { CHUNK_WORDS = 64, BUFFER_CHUNKS = 16 };
static const uint64_t kBase = 1000000000u;

/* Strings, by their fixed index. */
enum {
  S_CAT = 1,
  S_START,
  S_MAIN,
  S_PRODUCE,
  S_ITEM,
  S_HANDOFF,
  S_QUEUE,
  S_DEPTH,
  S_PROCESS,
  S_COMPUTE,
  S_STAGE,
  S_PROCESSING,
  S_PROGRESS,
  S_DONE,
  S_TICK,
  S_NUMBER,
  S_STRINGS
};
static const char* const kStrings[S_STRINGS] = {
    NULL,      "demo",    "start", "main",       "produce",  "item", "handoff", "queue", "depth",
    "process", "compute", "stage", "processing", "progress", "done", "tick",    "number"};
static const char* const kThreadNames[THREADS] = {"producer", "worker-1", "worker-2", "worker-3"};

typedef struct rec {
  uint64_t write_ns; /* when the engine writes it */
  uint64_t ts;       /* its timestamp: the sort key */
  uint32_t seq;      /* generation order */
  int thread;        /* 0 producer, 1.. workers */
  uint32_t strings;  /* bit i: uses string i */
  unsigned type;     /* event type */
  uint64_t payload;
  size_t first, words; /* its words in g_pool */
} rec_t;

static fxt_buffer_t g_pool;
static rec_t g_recs[ITEMS * 16];
static size_t g_count;
static uint64_t g_seed = 0x2545f4914f6cdd1du;

static uint64_t below(uint64_t n) { /* xorshift64 */
  g_seed ^= g_seed << 13;
  g_seed ^= g_seed >> 7;
  g_seed ^= g_seed << 17;
  return g_seed % n;
}

static uint64_t* reserve(fxt_buffer_t* b, size_t words) {
  uint64_t* p = fxt_buffer_reserve(b, words);
  if (!p) {
    fprintf(stderr, "order_fixture: out of memory\n");
    exit(1);
  }
  return p;
}

/* Thread k's times are 8n + k + 1: distinct across threads. Generated times
 * are at least 10 ns apart on a thread, so the rounding keeps their order. */
static uint64_t at(int thread, uint64_t ns) { return (ns & ~(uint64_t)7) | (uint64_t)(thread + 1); }

/* An event of `thread` at ts, written at write_ns; arg_name 0: no argument. */
static void ev(unsigned type, int thread, uint64_t ts, uint64_t write_ns, int name, int arg_name,
               trace_arg_value_t value, uint64_t payload) {
  if (g_count == sizeof(g_recs) / sizeof(g_recs[0])) {
    fprintf(stderr, "order_fixture: too many records\n");
    exit(1);
  }
  trace_thread_ref_t t = trace_make_indexed_thread_ref((trace_thread_index_t)(thread + 1));
  trace_string_ref_t c = trace_make_indexed_string_ref(S_CAT);
  trace_string_ref_t n = trace_make_indexed_string_ref((trace_string_index_t)name);
  trace_arg_t arg =
      trace_make_arg(trace_make_indexed_string_ref((trace_string_index_t)arg_name), value);
  size_t nargs = arg_name ? 1 : 0;
  size_t words = fxt_event_record_words(type, &t, &c, &n, &arg, nargs);
  rec_t* r = &g_recs[g_count];
  *r = (rec_t){write_ns, ts,      (uint32_t)g_count, thread, 1u << S_CAT | 1u << name,
               type,     payload, g_pool.count,      words};
  if (arg_name) r->strings |= 1u << arg_name;
  if (value.type == TRACE_ARG_STRING) r->strings |= 1u << value.string_value_ref.encoded_value;
  fxt_write_event_record(reserve(&g_pool, words), words, type, ts, &t, &c, &n, &arg, nargs,
                         payload);
  g_count++;
}

static trace_arg_value_t none(void) { return trace_make_null_arg_value(); }

/* A complete duration, written when it ends. */
static void complete(int thread, uint64_t begin, uint64_t end, int name) {
  ev(FXT_EVENT_DURATION_COMPLETE, thread, begin, end, name, 0, none(), end);
}

static void generate(void) {
  uint64_t t = kBase + 1000;
  uint64_t free_at[THREADS] = {0};
  ev(FXT_EVENT_INSTANT, 0, at(0, kBase), at(0, kBase), S_START, 0, none(), TRACE_SCOPE_GLOBAL);
  uint64_t main_begin = at(0, kBase + 500);
  uint64_t done = 0;
  for (uint64_t i = 0; i < ITEMS; i++) {
    uint64_t id = 1000 + i;
    uint64_t begin = at(0, t), end = at(0, t + 300 + below(200) * 10);
    uint64_t ready = at(0, t + 160);
    ev(FXT_EVENT_ASYNC_BEGIN, 0, at(0, t + 100), at(0, t + 100), S_ITEM, S_NUMBER,
       trace_make_uint32_arg_value((uint32_t)i), id);
    ev(FXT_EVENT_FLOW_BEGIN, 0, at(0, t + 130), at(0, t + 130), S_HANDOFF, 0, none(), id);
    ev(FXT_EVENT_COUNTER, 0, ready, ready, S_QUEUE, S_DEPTH,
       trace_make_uint32_arg_value((uint32_t)(i % 8)), 0);
    complete(0, begin, end, S_PRODUCE);
    t = end + 10 + below(5) * 10;
    /* the worker free first takes the item */
    int w = 1;
    for (int k = 2; k < THREADS; k++)
      if (free_at[k] < free_at[w]) w = k;
    uint64_t s = (ready > free_at[w] ? ready : free_at[w]) + 20;
    uint64_t work = 600 + below(120) * 10; /* slower than the producer: chunks last longer */
    ev(FXT_EVENT_DURATION_BEGIN, w, at(w, s), at(w, s), S_PROCESS, 0, none(), 0);
    ev(FXT_EVENT_FLOW_END, w, at(w, s + 10), at(w, s + 10), S_HANDOFF, 0, none(), id);
    ev(FXT_EVENT_ASYNC_INSTANT, w, at(w, s + 20), at(w, s + 20), S_ITEM, S_STAGE,
       trace_make_string_arg_value(trace_make_indexed_string_ref(S_PROCESSING)), id);
    complete(w, at(w, s + 30), at(w, s + 30 + work), S_COMPUTE);
    ev(FXT_EVENT_ASYNC_END, w, at(w, s + 40 + work), at(w, s + 40 + work), S_ITEM, 0, none(), id);
    ev(FXT_EVENT_DURATION_END, w, at(w, s + 50 + work), at(w, s + 50 + work), S_PROCESS, 0, none(),
       0);
    if (i % 7 == 3) { /* committed 1-2 us after it read the clock */
      uint64_t late = s + 60 + work;
      ev(FXT_EVENT_INSTANT, w, at(w, late - 1000 - below(100) * 10), at(w, late), S_TICK, 0, none(),
         TRACE_SCOPE_THREAD);
    }
    ev(FXT_EVENT_COUNTER, w, at(w, s + 70 + work), at(w, s + 70 + work), S_PROGRESS, S_DONE,
       trace_make_uint64_arg_value(++done), 1);
    free_at[w] = s + 80 + work;
  }
  uint64_t last = 0;
  for (int k = 1; k < THREADS; k++)
    if (free_at[k] > last) last = free_at[k];
  if (t > last) last = t;
  complete(0, main_begin, at(0, last + 100), S_MAIN);
}

/* ---- archives ---- */

static void header(fxt_buffer_t* out) {
  fxt_write_magic_record(reserve(out, 1));
  static const char kName[] = "ordered-fixture";
  size_t n = sizeof(kName) - 1;
  fxt_write_provider_info_record(reserve(out, fxt_provider_info_words(n)), 1, kName, n);
}

static void string_record(fxt_buffer_t* out, int index) {
  size_t n = strlen(kStrings[index]);
  fxt_write_string_record(reserve(out, fxt_string_record_words(n)), (trace_string_index_t)index,
                          kStrings[index], n);
}

/* The thread record and its name (a thread kernel object). */
static void thread_records(fxt_buffer_t* out, int thread) {
  uint64_t tid = PID + 1 + (uint64_t)thread;
  fxt_write_thread_record(reserve(out, 3), (trace_thread_index_t)(thread + 1), PID, tid);
  trace_string_ref_t name = trace_make_inline_c_string_ref(kThreadNames[thread]);
  trace_arg_t arg =
      trace_make_arg(trace_make_inline_c_string_ref("process"), trace_make_koid_arg_value(PID));
  size_t words = fxt_kernel_object_record_words(&name, &arg, 1);
  fxt_write_kernel_object_record(reserve(out, words), words, tid, 2 /* thread */, &name, &arg, 1);
}

static void copy(fxt_buffer_t* out, const rec_t* r) {
  memcpy(reserve(out, r->words), g_pool.words + r->first, r->words * sizeof(uint64_t));
}

static int by_time(const void* a, const void* b) {
  const rec_t *x = a, *y = b;
  if (x->ts != y->ts) return x->ts < y->ts ? -1 : 1;
  return x->seq < y->seq ? -1 : x->seq > y->seq;
}

static int by_write(const void* a, const void* b) {
  const rec_t *x = a, *y = b;
  if (x->write_ns != y->write_ns) return x->write_ns < y->write_ns ? -1 : 1;
  return x->seq < y->seq ? -1 : x->seq > y->seq;
}

static void sorted_archive(fxt_buffer_t* out) {
  uint32_t used = 0;
  for (size_t i = 0; i < g_count; i++) used |= g_recs[i].strings;
  header(out);
  for (int s = 1; s < S_STRINGS; s++)
    if (used & 1u << s) string_record(out, s);
  for (int k = 0; k < THREADS; k++) thread_records(out, k);
  qsort(g_recs, g_count, sizeof(g_recs[0]), by_time);
  for (size_t i = 0; i < g_count; i++) copy(out, &g_recs[i]);
}

/* The rolling buffer being filled: per chunk, its records in write order. */
static size_t g_chunk[BUFFER_CHUNKS][CHUNK_WORDS];
static size_t g_chunk_count[BUFFER_CHUNKS];
static int g_chunks_used;
static int g_chunk_of[THREADS];
static size_t g_room[THREADS];
static uint32_t g_defined, g_pending;
static bool g_thread_defined[THREADS], g_thread_pending[THREADS];
static size_t g_order[sizeof(g_recs) / sizeof(g_recs[0])]; /* the events, in archive order */
static size_t g_order_count;

/* A save: the durable records first used since the last one, then the
 * buffer's chunks in order; every thread then needs a new chunk. */
static void save(fxt_buffer_t* out) {
  for (int s = 1; s < S_STRINGS; s++)
    if (g_pending & 1u << s) string_record(out, s);
  for (int k = 0; k < THREADS; k++)
    if (g_thread_pending[k]) thread_records(out, k);
  g_pending = 0;
  memset(g_thread_pending, 0, sizeof(g_thread_pending));
  for (int c = 0; c < g_chunks_used; c++) {
    for (size_t i = 0; i < g_chunk_count[c]; i++) {
      copy(out, &g_recs[g_chunk[c][i]]);
      g_order[g_order_count++] = g_chunk[c][i];
    }
    g_chunk_count[c] = 0;
  }
  g_chunks_used = 0;
  for (int k = 0; k < THREADS; k++) g_chunk_of[k] = -1;
}

static void shuffled_archive(fxt_buffer_t* out) {
  header(out);
  qsort(g_recs, g_count, sizeof(g_recs[0]), by_write);
  for (int k = 0; k < THREADS; k++) g_chunk_of[k] = -1;
  for (size_t i = 0; i < g_count; i++) {
    rec_t* r = &g_recs[i];
    g_pending |= r->strings & ~g_defined;
    g_defined |= r->strings;
    if (!g_thread_defined[r->thread]) g_thread_defined[r->thread] = g_thread_pending[r->thread] = 1;
    int k = r->thread;
    if (g_chunk_of[k] < 0 || g_room[k] < r->words) {
      if (g_chunks_used == BUFFER_CHUNKS) save(out);
      g_chunk_of[k] = g_chunks_used++;
      g_room[k] = CHUNK_WORDS;
    }
    g_chunk[g_chunk_of[k]][g_chunk_count[g_chunk_of[k]]++] = i;
    g_room[k] -= r->words;
  }
  save(out);
}

/* How far the shuffled archive's order (g_order) is from time order. */
static void report(void) {
  size_t inversions = 0, early_ends = 0;
  uint64_t latest = 0;
  static bool begun[ITEMS];
  for (size_t j = 0; j < g_order_count; j++) {
    const rec_t* r = &g_recs[g_order[j]];
    if (r->ts < latest) inversions++;
    if (r->ts > latest) latest = r->ts;
    if (r->type == FXT_EVENT_ASYNC_BEGIN) begun[r->payload - 1000] = true;
    if (r->type == FXT_EVENT_ASYNC_END && !begun[r->payload - 1000]) early_ends++;
  }
  printf("items %d\n", ITEMS);
  printf("events %zu\n", g_count);
  printf("async ends before their begin in the file %zu\n", early_ends);
  printf("records earlier than one before them %zu\n", inversions);
}

static int write_file(const char* path, const fxt_buffer_t* b) {
  FILE* f = fopen(path, "wb");
  if (!f || fwrite(b->words, sizeof(uint64_t), b->count, f) != b->count || fclose(f) != 0) {
    fprintf(stderr, "order_fixture: cannot write %s\n", path);
    return 1;
  }
  return 0;
}

int main(int argc, char** argv) {
  if (argc != 3) {
    fprintf(stderr, "usage: order_fixture SORTED SHUFFLED\n");
    return 2;
  }
  generate();
  fxt_buffer_t sorted = {0}, shuffled = {0};
  sorted_archive(&sorted);
  shuffled_archive(&shuffled);
  report();
  int rc = write_file(argv[1], &sorted) | write_file(argv[2], &shuffled);
  fxt_buffer_free(&sorted);
  fxt_buffer_free(&shuffled);
  fxt_buffer_free(&g_pool);
  return rc;
}
