/* Test harness: the trace engine on an in-memory buffer, with a handler that
 * plays the trace manager's part (categories, streaming saves) and builds the
 * archive at the end, so tests read what the engine wrote through the reader.
 *
 *   harness_t h;
 *   harness_start(&h, TRACE_BUFFERING_MODE_ONESHOT, 1 << 20, NULL);  // all categories
 *   ... instrumented code ...
 *   harness_stop(&h);                       // waits for the engine to stop
 *   size_t n; const uint8_t* fxt = harness_archive(&h, &n);
 *   harness_free(&h);                       // terminates the engine
 *
 * To read the archive, record by record (each read must succeed, and the
 * archive must end whole, not truncated):
 *   harness_records_t it;
 *   for (harness_records_open(&it, &h); harness_records_next(&it);) use(&it.rec);
 *
 * harness_start_session() runs the harness as one of the engine's sessions
 * (trace_engine_session_*); harness_start() is session 0.
 *
 * Streaming saves are done at once unless hold_saves is set; then they wait,
 * in order, for harness_release_saves() (to test dropping while no segment is
 * free, and a slow consumer). */
#ifndef FXTRACE_TESTS_ENGINE_HARNESS_H_
#define FXTRACE_TESTS_ENGINE_HARNESS_H_

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "engine/buffer_scan.h"
#include "engine/categories.h"
#include "test.h"
#include "trace-engine/handler.h"
#include "trace-reader/reader.h"

typedef struct harness {
  trace_handler_t handler; /* first */
  unsigned session;        /* the engine's session index */
  category_set_t categories;
  trace_buffering_mode_t mode;
  uint8_t* buffer;
  size_t size;
  pthread_mutex_t lock;
  pthread_cond_t cond;
  bool stopped, terminated, started;
  int disposition;
  bool hold_saves;
  /* held saves, oldest first (the engine reports segments without waiting
   * for the earlier ones' marks: at most segment_count - 1 wait) */
  size_t saves_waiting;
  uint32_t save_wrapped[TRACE_BUFFER_MAX_SEGMENTS];
  uint64_t save_durable_end[TRACE_BUFFER_MAX_SEGMENTS];
  uint64_t durable_saved; /* durable bytes already in `saved` */
  uint64_t saves;
  size_t prefixed_saves; /* saves whose chunk prefixes took records */
  uint8_t* saved;        /* records of streaming saves, in order */
  size_t saved_len, saved_cap;
  uint8_t* archive;
  size_t archive_len, archive_cap;
  trace_engine_stats_t stats; /* at stop */
  char alerts[64][15];        /* send_alert's names, in order (the first 64) */
  size_t alert_count;         /* every send_alert call */
} harness_t;

static inline int harness_append(uint8_t** data, size_t* len, size_t* cap, const void* p,
                                 size_t n) {
  if (*len + n > *cap) {
    size_t c = *cap ? *cap * 2 : 1 << 16;
    while (c < *len + n) c *= 2;
    uint8_t* d = (uint8_t*)realloc(*data, c);
    if (!d) return -1;
    *data = d;
    *cap = c;
  }
  memcpy(*data + *len, p, n);
  *len += n;
  return 0;
}

static inline int harness_emit_saved(void* arg, const void* p, size_t n) {
  harness_t* h = (harness_t*)arg;
  return harness_append(&h->saved, &h->saved_len, &h->saved_cap, p, n);
}

static inline int harness_emit_archive(void* arg, const void* p, size_t n) {
  harness_t* h = (harness_t*)arg;
  return harness_append(&h->archive, &h->archive_len, &h->archive_cap, p, n);
}

static inline bool harness_is_category_enabled(trace_handler_t* handler, const char* category) {
  return categories__match(&((harness_t*)handler)->categories, category);
}

static inline void harness_started(trace_handler_t* handler) {
  harness_t* h = (harness_t*)handler;
  pthread_mutex_lock(&h->lock);
  h->started = true;
  pthread_cond_broadcast(&h->cond);
  pthread_mutex_unlock(&h->lock);
}

static inline void harness_stopped(trace_handler_t* handler, int disposition) {
  harness_t* h = (harness_t*)handler;
  pthread_mutex_lock(&h->lock);
  h->stopped = true;
  h->disposition = disposition;
  pthread_cond_broadcast(&h->cond);
  pthread_mutex_unlock(&h->lock);
}

static inline void harness_terminated(trace_handler_t* handler) {
  harness_t* h = (harness_t*)handler;
  pthread_mutex_lock(&h->lock);
  h->terminated = true;
  pthread_cond_broadcast(&h->cond);
  pthread_mutex_unlock(&h->lock);
}

/* Each run buffer_scan__save_runs emits: whole records, one after the
 * other, appended to a second copy of the save. */
typedef struct harness_runs {
  uint8_t* data;
  size_t len, cap;
  size_t runs;
  bool framed;     /* every run was whole records */
  size_t prefixes; /* chunk prefixes that took records */
} harness_runs_t;

static inline int harness_emit_run(void* arg, const void* p, size_t n) {
  harness_runs_t* r = (harness_runs_t*)arg;
  size_t pos = 0;
  while (pos + 8 <= n) {
    uint64_t header;
    memcpy(&header, (const uint8_t*)p + pos, 8);
    size_t size = (size_t)((header >> 4) & 0xfff) * 8;
    if ((header & 0xf) == 15) size = (size_t)((header >> 4) & 0xffffffff) * 8;
    if (size == 0 || size > n - pos) break;
    pos += size;
  }
  if (pos != n || n == 0) r->framed = false;
  r->runs++;
  return harness_append(&r->data, &r->len, &r->cap, p, n);
}

/* A chunk's prefix (buffer_scan__save_prefixes), as the manager takes it:
 * copied whole, framed in the copy, the whole records kept. */
static inline int64_t harness_emit_prefix(void* arg, const void* p, size_t max, uint64_t* records) {
  harness_runs_t* r = (harness_runs_t*)arg;
  size_t good = 0;
  *records = 0;
  while (good + 8 <= max) {
    uint64_t header;
    memcpy(&header, (const uint8_t*)p + good, 8);
    if (!buffer_scan__is_plain_record(header, max - good)) break;
    good += (size_t)fxt_record_words(header) * 8;
    (*records)++;
  }
  r->prefixes += good > 0;
  if (good && harness_append(&r->data, &r->len, &r->cap, p, good) != 0) return -1;
  return (int64_t)good;
}

/* Whether a save made another way (runs, prefixes) is this one's bytes
 * and counts. */
static inline bool harness_same_save(const harness_t* h, size_t before, const harness_runs_t* r,
                                     const buffer_scan_stats_t* stats,
                                     const buffer_scan_stats_t* one) {
  return r->len == h->saved_len - before && r->framed &&
         (r->len == 0 || memcmp(r->data, h->saved + before, r->len) == 0) &&
         stats->records == one->records && stats->bytes == one->bytes;
}

/* One save: what the manager does on SAVE_BUFFER, then BUFFER_SAVED. The
 * same save emitted in runs and in chunk prefixes (the manager's ways) must
 * be the same bytes. */
static inline void harness_do_save(harness_t* h, uint32_t wrapped, uint64_t durable_end) {
  size_t before = h->saved_len;
  buffer_scan_stats_t one, runs_stats;
  buffer_scan__save(h->buffer, h->size, wrapped, h->durable_saved, durable_end, harness_emit_saved,
                    h, &one);
  harness_runs_t runs = {NULL, 0, 0, 0, true, 0};
  buffer_scan__save_runs(h->buffer, h->size, wrapped, h->durable_saved, durable_end,
                         harness_emit_run, &runs, &runs_stats);
  harness_runs_t prefixes = {NULL, 0, 0, 0, true, 0};
  buffer_scan_stats_t prefix_stats;
  buffer_scan__save_prefixes(h->buffer, h->size, wrapped, h->durable_saved, durable_end,
                             harness_emit_run, harness_emit_prefix, &prefixes, &prefix_stats);
  if (!harness_same_save(h, before, &runs, &runs_stats, &one) ||
      (one.records > 0 && (runs.runs == 0 || runs.runs > one.records))) {
    fprintf(stderr, "harness: a save in runs differs from the same save record by record\n");
    abort();
  }
  if (!harness_same_save(h, before, &prefixes, &prefix_stats, &one)) {
    fprintf(stderr, "harness: a save in prefixes differs from the same save record by record\n");
    abort();
  }
  h->prefixed_saves += prefixes.prefixes > 0;
  free(runs.data);
  free(prefixes.data);
  h->durable_saved = durable_end;
  h->saves++;
  if (trace_engine_session_mark_buffer_saved(h->session, wrapped, durable_end) != 0) {
    fprintf(stderr, "harness: mark_buffer_saved refused\n");
    abort();
  }
}

static inline void harness_buffer_full(trace_handler_t* handler, uint32_t wrapped,
                                       uint64_t durable_end) {
  harness_t* h = (harness_t*)handler;
  pthread_mutex_lock(&h->lock);
  if (h->hold_saves || h->saves_waiting) { /* in order: behind the held ones */
    if (h->saves_waiting == TRACE_BUFFER_MAX_SEGMENTS) {
      fprintf(stderr, "harness: more saves waiting than segments\n");
      abort();
    }
    h->save_wrapped[h->saves_waiting] = wrapped;
    h->save_durable_end[h->saves_waiting] = durable_end;
    h->saves_waiting++;
    pthread_cond_broadcast(&h->cond);
    pthread_mutex_unlock(&h->lock);
    return;
  }
  harness_do_save(h, wrapped, durable_end);
  pthread_mutex_unlock(&h->lock);
}

static inline void harness_alert(trace_handler_t* handler, const char* name) {
  harness_t* h = (harness_t*)handler;
  pthread_mutex_lock(&h->lock);
  if (h->alert_count < 64) snprintf(h->alerts[h->alert_count], 15, "%s", name ? name : "");
  h->alert_count++;
  pthread_mutex_unlock(&h->lock);
}

static const trace_handler_ops_t harness_ops = {
    harness_is_category_enabled, harness_started,     harness_stopped,
    harness_terminated,          harness_buffer_full, harness_alert};

/* Performs the oldest held save, if one is waiting; returns whether it did. */
static inline bool harness_release_saves(harness_t* h) {
  pthread_mutex_lock(&h->lock);
  bool waiting = h->saves_waiting > 0;
  if (waiting) {
    uint32_t wrapped = h->save_wrapped[0];
    uint64_t durable_end = h->save_durable_end[0];
    h->saves_waiting--;
    memmove(h->save_wrapped, h->save_wrapped + 1, h->saves_waiting * sizeof(h->save_wrapped[0]));
    memmove(h->save_durable_end, h->save_durable_end + 1,
            h->saves_waiting * sizeof(h->save_durable_end[0]));
    harness_do_save(h, wrapped, durable_end);
  }
  pthread_mutex_unlock(&h->lock);
  return waiting;
}

/* 0, or a negative errno from the engine. categories: comma list, NULL = all. */
static inline int harness_start_session(harness_t* h, unsigned session, trace_buffering_mode_t mode,
                                        size_t buffer_bytes, const char* categories) {
  memset(h, 0, sizeof(*h));
  h->session = session;
  h->handler.ops = &harness_ops;
  h->mode = mode;
  h->size = buffer_bytes;
  pthread_mutex_init(&h->lock, NULL);
  pthread_cond_init(&h->cond, NULL);
  if (categories__parse(&h->categories, categories)) return -12;
  void* b = mmap(NULL, buffer_bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (b == MAP_FAILED) return -12;
  h->buffer = (uint8_t*)b;
  int status = trace_engine_session_initialize(session, &h->handler, mode, h->buffer, buffer_bytes);
  if (status == 0) status = trace_engine_session_start(session, TRACE_START_CLEAR_ENTIRE_BUFFER);
  if (status != 0) return status;
  pthread_mutex_lock(&h->lock);
  while (!h->started) pthread_cond_wait(&h->cond, &h->lock);
  pthread_mutex_unlock(&h->lock);
  return 0;
}

static inline int harness_start(harness_t* h, trace_buffering_mode_t mode, size_t buffer_bytes,
                                const char* categories) {
  return harness_start_session(h, 0, mode, buffer_bytes, categories);
}

/* Starts again after harness_stop(), with `mode` (what the buffer keeps). */
static inline void harness_restart(harness_t* h, trace_start_mode_t mode) {
  h->stopped = h->started = false;
  ASSERT_EQ(trace_engine_session_start(h->session, mode), 0);
  pthread_mutex_lock(&h->lock);
  while (!h->started) pthread_cond_wait(&h->cond, &h->lock);
  pthread_mutex_unlock(&h->lock);
}

/* Stops and builds the archive (prologue, streamed saves, the buffer). */
static inline void harness_stop(harness_t* h) {
  trace_engine_session_stop(h->session, 0);
  pthread_mutex_lock(&h->lock);
  while (!h->stopped) pthread_cond_wait(&h->cond, &h->lock);
  pthread_mutex_unlock(&h->lock);
  trace_engine_session_get_stats(h->session, &h->stats);
  h->archive_len = 0;
  buffer__emit_prologue(1, "harness", h->stats.records_dropped, harness_emit_archive, h);
  if (h->saved_len) harness_emit_archive(h, h->saved, h->saved_len);
  buffer_scan__records(h->buffer, h->size, h->durable_saved, harness_emit_archive, h, NULL);
}

static inline const uint8_t* harness_archive(harness_t* h, size_t* length) {
  *length = h->archive_len;
  return h->archive;
}

/* A reading of a harness's archive (see the top of this file). */
typedef struct harness_records {
  trace_reader_t* reader; /* NULL once the archive has been read to its end */
  trace_record_t rec;     /* the record harness_records_next() last read */
} harness_records_t;

static inline void harness_records_open(harness_records_t* it, harness_t* h) {
  size_t length;
  const uint8_t* data = harness_archive(h, &length);
  it->reader = trace_reader_open_memory(data, length, NULL);
  ASSERT_TRUE(it->reader != NULL);
}

/* true with the next record in it->rec; false at the end, once the archive
 * is known whole and the reader is closed. A failed read fails the test. */
static inline bool harness_records_next(harness_records_t* it) {
  int status = trace_reader_next(it->reader, &it->rec);
  if (status != TRACE_READ_END) {
    ASSERT_EQ(status, TRACE_READ_RECORD);
    return true;
  }
  ASSERT_TRUE(!trace_reader_truncated(it->reader));
  trace_reader_close(it->reader);
  it->reader = NULL;
  return false;
}

static inline void harness_free(harness_t* h) {
  trace_engine_session_terminate(h->session);
  munmap(h->buffer, h->size);
  free(h->saved);
  free(h->archive);
  categories__free(&h->categories);
  pthread_mutex_destroy(&h->lock);
  pthread_cond_destroy(&h->cond);
}

/* Stops the trace and reads its archive back: every record read, none
 * skipped (engine_test_util.h's summary). Include engine_test_util.h
 * first. */
#ifdef FXTRACE_TESTS_ENGINE_ENGINE_TEST_UTIL_H_
static inline void harness_finish(harness_t* h, archive_summary_t* s) {
  harness_stop(h);
  size_t length;
  const uint8_t* fxt = harness_archive(h, &length);
  summarize_archive(fxt, length, s);
  ASSERT_EQ(s->skipped, 0u);
}
#endif

#endif /* FXTRACE_TESTS_ENGINE_HARNESS_H_ */
