/* TRACE_ALERT through the engine (src/engine/alerts.c), with the harness as
 * the provider: each alert reaches send_alert once, in order, after its
 * instant event (argument alert_sent) is in the buffer; a disabled category
 * does nothing; a run-time name over 14 bytes is cut and counted; a storm is
 * limited and every alert accounted for (sent + dropped = raised, each
 * marked in the trace). Nothing here depends on timing: the limit admits at
 * least 16 and at most 16 per second-window, and a storm of 2000 cannot fit
 * in the windows it spans unless it took over two minutes. */
#include <string.h>

#include "harness.h"
#include "trace-reader/reader.h"
#include "trace/event.h"

typedef struct alert_events {
  size_t count, sent, not_sent, truncated;
  char first_name[32];
} alert_events_t;

/* The instant events of category "alerts" in the harness's archive. */
static void read_alert_events(harness_t* h, alert_events_t* out) {
  memset(out, 0, sizeof(*out));
  harness_records_t it;
  for (harness_records_open(&it, h); harness_records_next(&it);) {
    const trace_record_t* rec = &it.rec;
    if (rec->type != 4 || strcmp(rec->event.category.data, "alerts") != 0) continue;
    ASSERT_EQ(rec->event.event_type, 0u); /* instant */
    if (out->count++ == 0)
      snprintf(out->first_name, sizeof(out->first_name), "%s", rec->event.name.data);
    bool sent = false, found = false;
    for (size_t i = 0; i < rec->event.args.count; i++) {
      const char* name = rec->event.args.items[i].name.data;
      if (strcmp(name, "alert_sent") == 0) {
        sent = rec->event.args.items[i].bool_value;
        found = true;
      }
      if (strcmp(name, "alert_truncated") == 0) out->truncated++;
    }
    ASSERT_TRUE(found);
    if (sent)
      out->sent++;
    else
      out->not_sent++;
  }
}

static void test_alert_sent_with_marker(void) {
  harness_t h;
  ASSERT_EQ(harness_start(&h, TRACE_BUFFERING_MODE_ONESHOT, 1 << 20, "alerts"), 0);
  TRACE_ALERT("alerts", "boom");
  TRACE_ALERT("other", "quiet"); /* disabled category: nothing */
  harness_stop(&h);
  ASSERT_EQ(h.alert_count, 1u);
  ASSERT_STREQ(h.alerts[0], "boom");
  alert_events_t e;
  read_alert_events(&h, &e);
  ASSERT_EQ(e.count, 1u);
  ASSERT_EQ(e.sent, 1u);
  ASSERT_STREQ(e.first_name, "boom");
  trace_engine_alert_stats_t stats;
  ASSERT_EQ(trace_engine_get_alert_stats(&stats), 0);
  ASSERT_EQ(stats.alerts_sent, 1u);
  ASSERT_EQ(stats.alerts_dropped, 0u);
  ASSERT_EQ(stats.alerts_truncated, 0u);
  harness_free(&h);
}

static void test_disabled_category_does_nothing(void) {
  harness_t h;
  ASSERT_EQ(harness_start(&h, TRACE_BUFFERING_MODE_ONESHOT, 1 << 20, "something_else"), 0);
  for (int i = 0; i < 100; i++) TRACE_ALERT("alerts", "boom");
  harness_stop(&h);
  ASSERT_EQ(h.alert_count, 0u);
  alert_events_t e;
  read_alert_events(&h, &e);
  ASSERT_EQ(e.count, 0u);
  trace_engine_alert_stats_t stats;
  trace_engine_get_alert_stats(&stats);
  ASSERT_EQ(stats.alerts_sent + stats.alerts_dropped, 0u);
  harness_free(&h);
}

static void test_runtime_name_truncated(void) {
  harness_t h;
  ASSERT_EQ(harness_start(&h, TRACE_BUFFERING_MODE_ONESHOT, 1 << 20, "alerts"), 0);
  char name[64];
  snprintf(name, sizeof(name), "%s", "abcdefghijklmnopqrstuvwxyz");
  TRACE_ALERT("alerts", name);
  const char* fourteen = "abcdefghijklmn";
  TRACE_ALERT("alerts", fourteen);
  harness_stop(&h);
  ASSERT_EQ(h.alert_count, 2u);
  ASSERT_STREQ(h.alerts[0], "abcdefghijklmn");
  ASSERT_STREQ(h.alerts[1], "abcdefghijklmn");
  alert_events_t e;
  read_alert_events(&h, &e);
  ASSERT_EQ(e.count, 2u);
  ASSERT_EQ(e.truncated, 1u);
  ASSERT_STREQ(e.first_name, "abcdefghijklmn");
  trace_engine_alert_stats_t stats;
  trace_engine_get_alert_stats(&stats);
  ASSERT_EQ(stats.alerts_truncated, 1u);
  ASSERT_EQ(stats.alerts_sent, 2u);
  harness_free(&h);
}

static void test_storm_limited_and_counted(void) {
  enum { RAISED = 2000 };
  harness_t h;
  ASSERT_EQ(harness_start(&h, TRACE_BUFFERING_MODE_ONESHOT, 1 << 20, "alerts"), 0);
  for (int i = 0; i < RAISED; i++) TRACE_ALERT("alerts", "storm");
  harness_stop(&h);
  trace_engine_alert_stats_t stats;
  trace_engine_get_alert_stats(&stats);
  ASSERT_EQ(stats.alerts_sent + stats.alerts_dropped, (uint64_t)RAISED);
  ASSERT_TRUE(stats.alerts_sent >= 1);
  ASSERT_TRUE(stats.alerts_dropped >= 1);
  ASSERT_EQ(h.alert_count, stats.alerts_sent); /* every one admitted reached the handler */
  alert_events_t e;
  read_alert_events(&h, &e);
  ASSERT_EQ(e.count, (size_t)RAISED);
  ASSERT_EQ(e.sent, stats.alerts_sent);
  ASSERT_EQ(e.not_sent, stats.alerts_dropped);
  harness_free(&h);
}

int main(void) {
  test_alert_sent_with_marker();
  test_disabled_category_does_nothing();
  test_runtime_name_truncated();
  test_storm_limited_and_counted();
  printf("ok\n");
  return 0;
}
