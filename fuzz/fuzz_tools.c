/* libFuzzer target for what `trace convert`, `trace summary` and `trace
 * merge` do with the records libtrace-reader returns (fuzz_reader covers the
 * reader itself): the JSON converter in archive order, and the ordered view
 * feeding the summary and its report and the merge's re-encoding of every
 * record, whose output must read back whole (no record skipped, no error):
 * whatever a reader accepted, the merge writes as valid FXT. The first
 * input byte picks options:
 *   bit 0     the summary report as JSON (else text)
 *   bit 1     prepend the magic-number record
 * The rest is the archive. Every output goes to /dev/null: what is checked
 * is that no record, however odd, makes them read out of bounds, overflow,
 * leak or loop (ASan, UBSan and libFuzzer's timeout). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fxt/fxt_encode.h"
#include "grow_buffer.h"
#include "merge/merge.h"
#include "ordered/ordered.h"
#include "trace-reader/reader.h"
#include "trace/json_events.h"
#include "trace/json_writer.h"
#include "trace/summary.h"
#include "trace/summary_report.h"

static FILE* null_out;

static trace_reader_t* open_input(const uint8_t* data, size_t size) {
  return trace_reader_open_memory(data, size, NULL);
}

static void convert(const uint8_t* data, size_t size) {
  trace_reader_t* r = open_input(data, size);
  if (!r) return;
  static json_writer_t j;
  json_writer__init(&j, null_out);
  json_converter_t c;
  json_converter__begin(&c, &j);
  trace_record_t record;
  int rc;
  while ((rc = trace_reader_next(r, &record)) != TRACE_READ_END && rc != TRACE_READ_ERROR)
    if (rc == TRACE_READ_RECORD) json_converter__record(&c, &record);
  json_converter__end(&c);
  json__flush(&j);
  trace_reader_close(r);
}

/* The merge's writer output read back: every record whole. */
static void check_merged(const grow_buffer_t* g) {
  trace_reader_t* r = trace_reader_open_memory(g->data, g->size, NULL);
  if (!r) abort();
  trace_record_t record;
  int rc;
  while ((rc = trace_reader_next(r, &record)) == TRACE_READ_RECORD) continue;
  if (rc != TRACE_READ_END) {
    trace_reader_error_t e = trace_reader_error(r);
    fprintf(stderr, "fuzz_tools: the merge wrote what its reader %s at %llu: %s\n",
            rc == TRACE_READ_SKIPPED ? "skips" : "fails on", (unsigned long long)e.offset,
            e.message);
    abort();
  }
  trace_reader_close(r);
}

static void merge(const uint8_t* data, size_t size) {
  trace_reader_t* r = open_input(data, size);
  if (!r) return;
  ordered_options_t options = {0};
  ordered_t* view = ordered__open(&options);
  merge_host_t host = {.name = "fuzz", .koid_base = MERGE_KOID_STRIDE, .cpu_count = 256};
  grow_buffer_t out = {0};
  merge_writer_t* w = merge__writer_open(&host, 1, grow_buffer_append, &out);
  bool ok = view && w && ordered__add_input(view, r) && ordered__load(view) != ORDERED_ERROR &&
            merge__writer_start(w);
  ordered_record_t o;
  while (ok && ordered__next(view, &o) == ORDERED_RECORD) ok = merge__write_record(w, &o);
  if (w) merge__writer_close(w);
  if (ok) check_merged(&out);
  free(out.data);
  ordered__close(view);
  trace_reader_close(r);
}

static void summarize(const uint8_t* data, size_t size, bool json) {
  trace_reader_t* r = open_input(data, size);
  if (!r) return;
  summary_t s;
  if (!summary__init(&s, NULL)) {
    trace_reader_close(r);
    return;
  }
  ordered_options_t options = {0};
  ordered_t* view = ordered__open(&options);
  if (view && ordered__add_input(view, r) && ordered__load(view) != ORDERED_ERROR) {
    uint64_t origin_ns;
    if (ordered__input_first_ns(view, 0, &origin_ns)) summary__set_origin(&s, origin_ns);
    ordered_record_t o;
    while (ordered__next(view, &o) == ORDERED_RECORD) summary__record(&s, &o.record);
    summary__finish(&s);
    trace_reader_stats_t stats = trace_reader_stats(r);
    summary_report_options_t report = {.top = 0, .sort = SORT_DEFAULT, .json = json};
    summary_report__write(null_out, &s, &report, &stats);
  }
  ordered__close(view);
  summary__free(&s);
  trace_reader_close(r);
}

int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 1) return 0;
  if (!null_out && !(null_out = fopen("/dev/null", "w"))) abort();
  uint8_t options = data[0];
  data++;
  size--;
  uint8_t* buffer = malloc(size + 8);
  if (!buffer) return 0;
  size_t length = 0;
  if (options & 2) {
    fxt_write_magic_record((uint64_t*)buffer);
    length = 8;
  }
  if (size) memcpy(buffer + length, data, size);
  length += size;
  convert(buffer, length);
  summarize(buffer, length, options & 1);
  merge(buffer, length);
  free(buffer);
  return 0;
}
