/* TRACE_EVENT() formats the engine does not write (src/engine/tracepoints.c,
 * docs/trace-event.md "How formats travel"): their events are still
 * recorded, and each format not written counts as a dropped record at the
 * first record of its event, once per trace (once per writer in oneshot
 * mode), so nothing is lost silently.
 *  - formats once the durable buffer is half full (a small circular buffer);
 *  - a format text over the engine's bound, in oneshot mode, where each
 *    writer would write its own. */
#include <pthread.h>
#include <stdio.h>

#include "engine/harness.h"
#include "test.h"
#include "trace-reader/formats.h"
#include "trace-reader/reader.h"
#include "trace/event.h"
#include "tracepoint/tp_formats.h"
#include "tracepoint/tp_test.h"

enum { MAX_NAMES = 64 };

/* The archive's distinct event names starting with `prefix`, and how many
 * of them have no format in it (at each of their records). */
typedef struct names {
  char name[MAX_NAMES][64];
  bool formatted[MAX_NAMES];
  size_t count;
  size_t records;
} names_t;

static void read_names(harness_t* h, const char* prefix, names_t* out) {
  memset(out, 0, sizeof(*out));
  trace_format_set_t* set = trace_format_set_new();
  harness_records_t it;
  for (harness_records_open(&it, h); harness_records_next(&it);) {
    ASSERT_TRUE(trace_format_set_add_record(set, &it.rec, NULL) >= 0);
    const trace_record_t* rec = &it.rec;
    size_t n = strlen(prefix);
    if (rec->type != 4 || rec->event.name.length < n || rec->event.name.length >= 64 ||
        memcmp(rec->event.name.data, prefix, n) != 0)
      continue;
    out->records++;
    char name[64];
    memcpy(name, rec->event.name.data, rec->event.name.length);
    name[rec->event.name.length] = '\0';
    bool formatted = trace_format_set_find_event(set, rec) != NULL;
    size_t i = 0;
    while (i < out->count && strcmp(out->name[i], name) != 0) i++;
    if (i == out->count) {
      ASSERT_TRUE(out->count < MAX_NAMES);
      snprintf(out->name[i], sizeof(out->name[i]), "%s", name);
      out->formatted[i] = formatted;
      out->count++;
    }
    /* formats come first (durable buffer): one event's records agree */
    ASSERT_MSG(out->formatted[i] == formatted, "%s: some records with a format, some without",
               name);
  }
  trace_format_set_free(set);
}

static uint64_t dropped_now(const harness_t* h) {
  trace_engine_stats_t stats;
  ASSERT_EQ(trace_engine_session_get_stats(h->session, &stats), 0);
  return stats.records_dropped;
}

/* The tp_test events of the first half (the last five defined) or of
 * both halves. */
static void record_tp_test(bool both_halves) {
  struct tp_test_pair pair = {-3, 4};
  const unsigned char buf[3] = {1, 2, 3};
  trace_tp_test_fallback(21);
  trace_tp_test_open(1, "file");
  trace_tp_test_close(1, "file");
  trace_tp_test_odd(3, "odd");
  trace_tp_test_positive(9);
  if (!both_halves) return;
  trace_tp_test_ints(1, 2, 3, 4, 5, 6, 7, 8, true);
  trace_tp_test_fp(1.5, 2.5f, NULL);
  trace_tp_test_strs("name", "comm", 'c');
  trace_tp_test_helpers(1, 0, buf, 3, pair);
  trace_tp_test_none(0);
}

static const char* const first_half[] = {"tp_test_fallback", "tp_test_open", "tp_test_close",
                                         "tp_test_odd", "tp_test_positive"};

/* Formats are written only while the durable buffer is under half full: in
 * a 64 KiB circular buffer (4 KiB durable) the tp_test events' formats do
 * not all fit. The engine thread prepares them at start; one given up is
 * counted at the first record of its event, once: a format of an event not
 * recorded is no loss. */
static void durable_half_full(void) {
  harness_t h;
  ASSERT_EQ(harness_start(&h, TRACE_BUFFERING_MODE_CIRCULAR, 64 << 10, "tp_test"), 0);
  ASSERT_EQ(dropped_now(&h), 0); /* formats were given up (below): no record lacks them yet */
  record_tp_test(false);
  uint64_t first = dropped_now(&h);
  for (int round = 0; round < 2; round++) record_tp_test(true); /* a second record: no count */
  harness_stop(&h);
  names_t names;
  read_names(&h, "tp_test_", &names);
  ASSERT_EQ(names.count, 10);   /* every event recorded, with or without its format */
  ASSERT_EQ(names.records, 25); /* none of them dropped */
  size_t missing = 0, missing_first = 0;
  for (size_t i = 0; i < names.count; i++) {
    missing += !names.formatted[i];
    for (size_t k = 0; k < sizeof(first_half) / sizeof(first_half[0]); k++)
      missing_first += !names.formatted[i] && strcmp(names.name[i], first_half[k]) == 0;
  }
  ASSERT_MSG(missing > 0 && missing < names.count,
             "%zu of %zu formats missing: the buffer no longer fills the durable half", missing,
             names.count);
  ASSERT_EQ(first, missing_first);             /* the first half's missing formats only */
  ASSERT_EQ(h.stats.records_dropped, missing); /* each missing format counted, once */
  harness_free(&h);
  printf("durable half full: %zu of %zu formats not written (%zu of the first half), counted\n",
         missing, names.count, missing_first);
}

static void* record_long(void* arg) {
  (void)arg;
  trace_tp_formats_long(1);
  trace_tp_formats_long(2); /* the writer gave up on it already: no second count */
  return NULL;
}

/* In oneshot mode each writer writes the format itself: each one that
 * gives up on it counts it, once. */
static void oneshot_per_writer(void) {
  harness_t h;
  ASSERT_EQ(harness_start(&h, TRACE_BUFFERING_MODE_ONESHOT, 1 << 20, "tp_formats"), 0);
  uint64_t before = dropped_now(&h);
  for (int writer = 1; writer <= 2; writer++) {
    pthread_t t;
    ASSERT_EQ(pthread_create(&t, NULL, record_long, NULL), 0);
    ASSERT_EQ(pthread_join(t, NULL), 0);
    ASSERT_EQ(dropped_now(&h), before + (uint64_t)writer);
  }
  harness_stop(&h);
  names_t names;
  read_names(&h, "tp_formats_", &names);
  ASSERT_EQ(names.count, 1);
  ASSERT_TRUE(!names.formatted[0]);
  ASSERT_EQ(names.records, 4); /* the events themselves are all there */
  ASSERT_EQ(h.stats.records_dropped, before + 2);
  harness_free(&h);
}

int main(void) {
  durable_half_full();
  oneshot_per_writer();
  printf("ok\n");
  return 0;
}
