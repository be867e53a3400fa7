/* Regression tests for edge cases an independent review of the engine found:
 *   - a second context acquired on the same thread (nested) is allowed and
 *     its events are recorded, not dropped;
 *   - a thread that exits while holding a context does not poison the writer
 *     that the next thread inherits;
 *   - a small blob record whose inline name would overflow the 12-bit size
 *     field is dropped and counted, never written with a wrapped size;
 *   - a multi-chunk record that is reserved but never committed is skipped
 *     by the scan as a whole, never read from its middle as records;
 *   - the inline record path's per-thread record of a site is valid for one
 *     trace only: a site address that another expansion uses in a later
 *     trace whose string tables were kept (a library reloaded between two
 *     traces) gets its own header and argument names;
 *   - a record written from a signal handler that interrupts another record
 *     does not fill the thread's cache (it could mix its names into the
 *     interrupted fill);
 *   - a log message longer than a record holds is cut to fit, at a UTF-8
 *     character boundary, not dropped (an independent FXT audit);
 *   - values the format cannot carry, given to the record writers (a string
 *     or thread index 0 or past its field, ticks per second 0, an unknown
 *     scope, blob type or switch state), are dropped and counted, never
 *     cut into another valid-looking value; an indexed ref past its field
 *     becomes the empty string or the unknown thread (the same audit). */
#include <pthread.h>

#include "engine_test_util.h"
#include "harness.h"
#include "trace/event.h" /* trace_internal_instant, the inline record path */

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
  harness_finish(&h, &s);
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
  harness_finish(&h, &s);
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
  harness_finish(&h, &s);
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
  harness_finish(&h, &s);
  ASSERT_EQ(s.seq_count, 2u);
  ASSERT_EQ(s.string_records, 5u); /* "test", "seq", "n", the thread name, "process" */
  free(s.seqs);
  harness_free(&h);
}

/* TRACE_INSTANT's expansion, by hand, with a given site (event_internal.h). */
static void instant_at(trace_site_t* site, const char* name, trace_arg_t* args, size_t n) {
  uint64_t state;
  if (trace_site_is_enabled("test", site, &state))
    trace_internal_instant(site, state, "test", name, TRACE_SCOPE_THREAD, args, n);
}

static void test_site_record_per_trace(void) {
  harness_t h;
  ASSERT_EQ(harness_start(&h, TRACE_BUFFERING_MODE_CIRCULAR, 1 << 20, NULL), 0);
  static trace_site_t site;
  trace_arg_t one[1] = {
      trace_make_arg(trace_internal_make_literal_ref("x"), trace_make_uint64_arg_value(1))};
  for (int i = 0; i < 3; i++) instant_at(&site, "evA", one, 1); /* cached from the 2nd on */
  harness_stop(&h);
  harness_restart(&h, TRACE_START_CLEAR_NONDURABLE_BUFFER); /* string tables (and caches) kept */
  emit_seq(1); /* the thread joins the new trace through another site */
  trace_arg_t two[2] = {
      trace_make_arg(trace_internal_make_literal_ref("y"), trace_make_uint64_arg_value(2)),
      trace_make_arg(trace_internal_make_literal_ref("z"), trace_make_int32_arg_value(-3))};
  for (int i = 0; i < 3; i++) instant_at(&site, "evB", two, 2);
  harness_stop(&h);
  size_t length;
  const uint8_t* fxt = harness_archive(&h, &length);
  trace_reader_t* r = trace_reader_open_memory(fxt, length, NULL);
  ASSERT_TRUE(r != NULL);
  trace_record_t rec;
  int status, evb = 0;
  while ((status = trace_reader_next(r, &rec)) != TRACE_READ_END) {
    ASSERT_EQ(status, TRACE_READ_RECORD);
    if (rec.type != 4 || strcmp(rec.event.name.data, "seq") == 0) continue;
    ASSERT_STREQ(rec.event.name.data, "evB"); /* the first trace's events were cleared */
    ASSERT_EQ(rec.event.args.count, 2u);
    ASSERT_STREQ(rec.event.args.items[0].name.data, "y");
    ASSERT_EQ(rec.event.args.items[0].uint64_value, 2u);
    ASSERT_STREQ(rec.event.args.items[1].name.data, "z");
    ASSERT_EQ(rec.event.args.items[1].int32_value, -3);
    evb++;
  }
  ASSERT_EQ(evb, 3);
  trace_reader_close(r);
  harness_free(&h);
}

/* The first record of a site on the thread, from a "signal handler" that
 * interrupts another record: it is written, but not cached (the cache
 * fills only outside nested records), and the site's next record outside
 * is cached and correct. */
static void test_nested_record_does_not_fill(void) {
  harness_t h;
  ASSERT_EQ(harness_start(&h, TRACE_BUFFERING_MODE_ONESHOT, 1 << 20, NULL), 0);
  static trace_site_t site;
  trace_arg_t one[1] = {
      trace_make_arg(trace_internal_make_literal_ref("n"), trace_make_uint64_arg_value(7))};
  trace_context_t* outer = trace_acquire_context(); /* as if inside a record */
  ASSERT_TRUE(outer != NULL);
  instant_at(&site, "nested", one, 1);
  const trace_engine_site_record_t* slot = trace_engine__site_record(outer, &site);
  ASSERT_TRUE(slot->key != &site);
  trace_release_context(outer);
  instant_at(&site, "nested", one, 1); /* fills */
  ASSERT_TRUE(slot->key == &site);
  instant_at(&site, "nested", one, 1); /* inline */
  archive_summary_t s;
  harness_finish(&h, &s);
  ASSERT_EQ(s.events, 3u);
  ASSERT_EQ(h.stats.records_dropped, 0u);
  free(s.seqs);
  harness_free(&h);
}

/* The log records' messages, in archive order (lengths and last bytes). */
static size_t read_logs(const uint8_t* fxt, size_t length, size_t* lengths, char* last_bytes,
                        size_t max) {
  trace_reader_t* r = trace_reader_open_memory(fxt, length, NULL);
  ASSERT_TRUE(r != NULL);
  trace_record_t rec;
  size_t n = 0;
  int status;
  while ((status = trace_reader_next(r, &rec)) != TRACE_READ_END) {
    ASSERT_EQ(status, TRACE_READ_RECORD);
    if (rec.type != 9 || n == max) continue;
    lengths[n] = rec.log.message.length;
    last_bytes[n++] = rec.log.message.length ? rec.log.message.data[rec.log.message.length - 1] : 0;
  }
  trace_reader_close(r);
  return n;
}

static void test_long_log_message(void) {
  harness_t h;
  ASSERT_EQ(harness_start(&h, TRACE_BUFFERING_MODE_ONESHOT, 1 << 20, NULL), 0);
  static char text[40000];
  memset(text, 'a', sizeof(text));
  /* "é" (0xc3 0xa9) from byte 32727 on: a cut at 32728 falls inside one */
  static char accented[40000];
  memset(accented, 'b', sizeof(accented));
  for (size_t i = 32727; i + 1 < sizeof(accented); i += 2) {
    accented[i] = (char)0xc3;
    accented[i + 1] = (char)0xa9;
  }
  trace_context_t* c = trace_acquire_context();
  ASSERT_TRUE(c != NULL);
  trace_thread_ref_t inline_thread = trace_make_inline_thread_ref(100, 101);
  trace_thread_ref_t indexed = trace_make_indexed_thread_ref(1);
  trace_context_write_thread_record(c, 1, 100, 102);
  trace_context_write_log_record(c, 1, &indexed, text, 32767); /* the 15-bit maximum */
  trace_context_write_log_record(c, 2, &inline_thread, text, 32767);
  trace_context_write_log_record(c, 3, &indexed, text, 32744); /* fits exactly */
  trace_context_write_log_record(c, 4, &inline_thread, accented, 32767);
  trace_context_write_log_record(c, 5, &indexed, text, 5);
  trace_release_context(c);
  harness_stop(&h);
  size_t length;
  const uint8_t* fxt = harness_archive(&h, &length);
  size_t lengths[8];
  char last[8];
  ASSERT_EQ(read_logs(fxt, length, lengths, last, 8), 5u);
  ASSERT_EQ(lengths[0], 32744u);
  ASSERT_EQ(lengths[1], 32728u);
  ASSERT_EQ(lengths[2], 32744u);
  ASSERT_EQ(lengths[3], 32727u); /* before the "é" the cut would split */
  ASSERT_EQ(last[3], 'b');
  ASSERT_EQ(lengths[4], 5u);
  ASSERT_EQ(h.stats.records_dropped, 0u);
  harness_free(&h);
}

static void test_values_the_format_cannot_carry(void) {
  harness_t h;
  archive_summary_t s;
  ASSERT_EQ(harness_start(&h, TRACE_BUFFERING_MODE_ONESHOT, 1 << 20, NULL), 0);
  trace_string_ref_t past = trace_make_indexed_string_ref(0x8001);
  ASSERT_EQ(past.encoded_value, 0u); /* the empty string, not index 1 */
  trace_thread_ref_t far = trace_make_indexed_thread_ref(300);
  ASSERT_TRUE(trace_is_unknown_thread_ref(&far)); /* not index 44 */
  ASSERT_EQ(trace_make_indexed_string_ref(7).encoded_value, 7u);
  ASSERT_EQ(trace_make_indexed_thread_ref(9).encoded_value, 9u);
  trace_context_t* c = trace_acquire_context();
  ASSERT_TRUE(c != NULL);
  trace_context_write_string_record(c, 0, "zero", 4);
  trace_context_write_string_record(c, 0x8001, "past", 4);
  trace_context_write_thread_record(c, 0, 1, 2);
  trace_context_write_thread_record(c, 256, 1, 2);
  trace_context_write_initialization_record(c, 0);
  trace_thread_ref_t t = trace_make_inline_thread_ref(1, 2);
  trace_string_ref_t cat = trace_make_inline_c_string_ref("cat");
  trace_string_ref_t name = trace_make_inline_c_string_ref("name");
  trace_context_write_instant_event_record(c, 1, &t, &cat, &name, (trace_scope_t)7, NULL, 0);
  trace_context_write_blob_record(c, (trace_blob_type_t)0, &name, "b", 1);
  trace_context_write_blob_record(c, (trace_blob_type_t)300, &name, "b", 1);
  trace_context_write_context_switch_record(c, 1, 0, 1, &t, &t, 0, 0); /* "running" */
  trace_context_write_context_switch_record(c, 1, 0, 9, &t, &t, 0, 0);
  size_t rejected = 10;
  /* and the same writers with valid values */
  trace_context_write_string_record(c, 0x7fff, "last", 4);
  trace_context_write_thread_record(c, 255, 1, 2);
  trace_context_write_initialization_record(c, 1000000000);
  trace_context_write_instant_event_record(c, 1, &t, &cat, &name, TRACE_SCOPE_GLOBAL, NULL, 0);
  trace_context_write_blob_record(c, TRACE_BLOB_TYPE_PERFETTO, &name, "b", 1);
  trace_context_write_context_switch_record(c, 1, 0, 3, &t, &t, 0, 0);
  trace_release_context(c);
  harness_finish(&h, &s);
  ASSERT_EQ(h.stats.records_dropped, rejected);
  free(s.seqs);
  harness_free(&h);
}

int main(void) {
  test_nested_contexts();
  test_thread_exit_holding_context();
  test_blob_with_long_name();
  test_uncommitted_large_record();
  test_site_record_per_trace();
  test_nested_record_does_not_fill();
  test_long_log_message();
  test_values_the_format_cannot_carry();
  printf("engine edges: ok\n");
  return 0;
}
