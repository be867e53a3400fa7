/* Regression tests for edge cases an independent review of the engine found:
 *   - a second context acquired on the same thread (nested) is allowed and
 *     its events are recorded, not dropped;
 *   - a thread that exits while holding a context does not poison the writer
 *     that the next thread inherits;
 *   - a small blob record whose inline name would overflow the 12-bit size
 *     field is dropped and counted, never written with a wrapped size;
 *   - a multi-chunk record that is reserved but never committed is skipped
 *     by the scan as a whole, never read from its middle as records. */
#include <pthread.h>

#include "engine_test_util.h"
#include "harness.h"

static void finish(harness_t* h, archive_summary_t* s) {
  harness_stop(h);
  size_t length;
  const uint8_t* fxt = harness_archive(h, &length);
  summarize_archive(fxt, length, s);
  ASSERT_EQ(s->skipped, 0u);
}

static void test_nested_contexts(void) {
  harness_t h;
  archive_summary_t s;
  ASSERT_EQ(harness_start(&h, TRACE_BUFFERING_MODE_ONESHOT, 1 << 16, NULL), 0);
  trace_context_t* outer = trace_acquire_context();
  ASSERT_TRUE(outer != NULL);
  ASSERT_TRUE(trace_is_category_enabled("test"));
  emit_seq(1); /* acquires and releases a second context */
  trace_release_context(outer);
  emit_seq(2);
  finish(&h, &s);
  ASSERT_EQ(s.seq_count, 2u);
  ASSERT_EQ(h.stats.records_dropped, 0u);
  ASSERT_EQ(h.disposition, 0);
  free(s.seqs);
  harness_free(&h);
}

static void* exit_holding_context(void* arg) {
  (void)arg;
  emit_seq(10);
  ASSERT_TRUE(trace_acquire_context() != NULL);
  pthread_exit(NULL); /* never releases it */
}

static void* emit_some(void* arg) {
  (void)arg;
  for (uint64_t i = 0; i < 1000; i++) emit_seq(100 + i);
  return NULL;
}

static void test_thread_exit_holding_context(void) {
  harness_t h;
  archive_summary_t s;
  ASSERT_EQ(harness_start(&h, TRACE_BUFFERING_MODE_ONESHOT, 1 << 20, NULL), 0);
  pthread_t t;
  ASSERT_EQ(pthread_create(&t, NULL, exit_holding_context, NULL), 0);
  pthread_join(t, NULL);
  ASSERT_EQ(pthread_create(&t, NULL, emit_some, NULL), 0); /* reuses the writer */
  pthread_join(t, NULL);
  finish(&h, &s);
  ASSERT_EQ(s.seq_count, 1001u);
  ASSERT_EQ(h.stats.records_dropped, 0u);
  free(s.seqs);
  harness_free(&h);
}

static void test_blob_with_long_name(void) {
  harness_t h;
  archive_summary_t s;
  ASSERT_EQ(harness_start(&h, TRACE_BUFFERING_MODE_ONESHOT, 1 << 20, NULL), 0);
  static char name[1001];
  memset(name, 'n', 1000);
  static uint8_t blob[TRACE_MAX_BLOB_SIZE];
  for (size_t i = 0; i < sizeof(blob); i += 8) /* looks like string records if misread */
    memcpy(blob + i, &(uint64_t){UINT64_C(0x0000000100010012)}, 8);
  trace_context_t* c = trace_acquire_context();
  ASSERT_TRUE(c != NULL);
  trace_string_ref_t name_ref = trace_make_inline_c_string_ref(name);
  trace_context_write_blob_record(c, TRACE_BLOB_TYPE_DATA, &name_ref, blob, sizeof(blob));
  trace_string_ref_t short_ref = trace_make_inline_c_string_ref("small");
  trace_context_write_blob_record(c, TRACE_BLOB_TYPE_DATA, &short_ref, blob, 64);
  trace_release_context(c);
  finish(&h, &s);
  ASSERT_EQ(h.stats.records_dropped, 1u);
  ASSERT_EQ(s.string_records, 0u);
  free(s.seqs);
  harness_free(&h);
}

static void test_uncommitted_large_record(void) {
  harness_t h;
  archive_summary_t s;
  ASSERT_EQ(harness_start(&h, TRACE_BUFFERING_MODE_ONESHOT, 1 << 20, NULL), 0);
  emit_seq(1);
  trace_context_t* c = trace_acquire_context();
  ASSERT_TRUE(c != NULL);
  size_t bytes = 40 * 1024; /* several chunks */
  uint64_t* p = trace_context_alloc_record(c, bytes);
  ASSERT_TRUE(p != NULL);
  /* a body full of plausible records, and never a commit */
  for (size_t i = 1; i < bytes / 8; i++) p[i] = UINT64_C(0x0000000100010012);
  trace_release_context(c);
  emit_seq(2);
  finish(&h, &s);
  ASSERT_EQ(s.seq_count, 2u);
  ASSERT_EQ(s.string_records, 5u); /* "test", "seq", "n", the thread name, "process" */
  free(s.seqs);
  harness_free(&h);
}

int main(void) {
  test_nested_contexts();
  test_thread_exit_holding_context();
  test_blob_with_long_name();
  test_uncommitted_large_record();
  printf("engine edges: ok\n");
  return 0;
}
