/* Shared by the engine tests: emit numbered events through the same path the
 * macros use, and read an archive back, checking every record. */
#ifndef FXTRACE_TESTS_ENGINE_ENGINE_TEST_UTIL_H_
#define FXTRACE_TESTS_ENGINE_ENGINE_TEST_UTIL_H_

#include <stdlib.h>
#include <string.h>

#include "test.h"
#include "trace-reader/reader.h"
#include "trace/internal/event_helpers.h"

/* One TRACE_INSTANT("test", "seq", thread scope, "n", seq) the way the macro
 * expands, without depending on the macro header. */
static inline void emit_seq(uint64_t seq) {
  static trace_site_t site;
  trace_string_ref_t category;
  trace_context_t* context = trace_acquire_context_for_category_cached("test", &site, &category);
  if (!context) return;
  trace_arg_t args[1] = {
      trace_make_arg(trace_internal_make_literal_ref("n"), trace_make_uint64_arg_value(seq))};
  trace_internal_write_instant_event_record_and_release_context(context, &category, "seq",
                                                                TRACE_SCOPE_THREAD, args, 1);
}

typedef struct seq_event {
  uint64_t tid;
  uint64_t seq;
} seq_event_t;

typedef struct archive_summary {
  size_t records, events, skipped;
  size_t init_records, process_objects, thread_objects, thread_records, string_records;
  size_t stop_names; /* thread objects the stop wrote (name_at): not in thread_objects */
  size_t overflow_events;
  seq_event_t* seqs; /* "seq" events in archive order */
  size_t seq_count;
} archive_summary_t;

/* Reads every record; fails the test on a read error or a record whose
 * strings or thread did not resolve. */
static inline void summarize_archive(const uint8_t* data, size_t length, archive_summary_t* s) {
  memset(s, 0, sizeof(*s));
  s->seqs = (seq_event_t*)malloc(sizeof(seq_event_t) * (length / 32 + 1));
  ASSERT_TRUE(s->seqs != NULL);
  trace_reader_t* r = trace_reader_open_memory(data, length, NULL);
  ASSERT_TRUE(r != NULL);
  trace_record_t rec;
  int status;
  while ((status = trace_reader_next(r, &rec)) != TRACE_READ_END) {
    if (status == TRACE_READ_SKIPPED) {
      fprintf(stderr, "skipped record at %llu: %s\n",
              (unsigned long long)trace_reader_error(r).offset, trace_reader_error(r).message);
      s->skipped++;
      continue;
    }
    if (status == TRACE_READ_ERROR) {
      fprintf(stderr, "read error at %llu: %s\n", (unsigned long long)trace_reader_error(r).offset,
              trace_reader_error(r).message);
    }
    ASSERT_EQ(status, TRACE_READ_RECORD);
    s->records++;
    switch (rec.type) {
      case 0:
        if (rec.metadata.type == 3) s->overflow_events++;
        break;
      case 1:
        s->init_records++;
        break;
      case 2:
        s->string_records++;
        break;
      case 3:
        s->thread_records++;
        break;
      case 7:
        if (rec.kernel_object.object_type == 1) s->process_objects++;
        if (rec.kernel_object.object_type == 2) {
          bool at_stop = false;
          for (size_t i = 0; i < rec.kernel_object.args.count; i++)
            at_stop |= strcmp(rec.kernel_object.args.items[i].name.data, "name_at") == 0;
          if (at_stop)
            s->stop_names++;
          else
            s->thread_objects++;
        }
        break;
      case 4:
        s->events++;
        if (strcmp(rec.event.name.data, "seq") == 0) {
          ASSERT_STREQ(rec.event.category.data, "test");
          ASSERT_EQ(rec.event.args.count, 1u);
          ASSERT_STREQ(rec.event.args.items[0].name.data, "n");
          seq_event_t* e = &s->seqs[s->seq_count++];
          e->tid = rec.event.thread_koid;
          e->seq = rec.event.args.items[0].uint64_value;
        }
        break;
      default:
        break;
    }
  }
  ASSERT_TRUE(!trace_reader_truncated(r));
  trace_reader_close(r);
}

#endif /* FXTRACE_TESTS_ENGINE_ENGINE_TEST_UTIL_H_ */
