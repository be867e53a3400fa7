/* The merge proper (merge.h): the inputs through the ordered view, each
 * with its host's clock map, re-encoded into one archive. Shared by `trace
 * merge` (clocks from the wall-clock anchors) and `trace record --host`
 * (clocks from the round trips over each host's channel). */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "merge/merge.h"
#include "trace/archive_scan.h"
#include "trace/archive_writer.h"
#include "trace/cli.h"
#include "trace/fxt_writer.h"

enum { BATCH_BYTES = 256 << 10, MAX_REPORTED_SKIPS = 10 };

typedef struct sink {
  output_t out;
  archive_scan_t scan;
  archive_writer_t writer;
  bool ok;
  unsigned char* batch;
  size_t used;
} sink_t;

static bool sink_flush(sink_t* s) {
  if (s->ok && s->used) s->ok = fxt_writer__write(&s->writer, &s->scan, s->batch, s->used);
  s->used = 0;
  return s->ok;
}

/* Whole records only: a batch ends at a record boundary. */
static bool sink_write(void* context, const void* data, size_t bytes) {
  sink_t* s = context;
  if (s->used + bytes > BATCH_BYTES && !sink_flush(s)) return false;
  if (bytes > BATCH_BYTES) return s->ok = fxt_writer__write(&s->writer, &s->scan, data, bytes);
  memcpy(s->batch + s->used, data, bytes);
  s->used += bytes;
  return s->ok;
}

typedef struct notes {
  const merge_job_t* job;
  uint32_t* cpu_count;
  uint64_t skipped;
} notes_t;

static void on_record(void* context, size_t input, const trace_reader_t* reader) {
  notes_t* n = context;
  merge__note_cpu(reader, &n->cpu_count[input]);
}

static void on_skip(void* context, size_t input, const trace_reader_error_t* e) {
  notes_t* n = context;
  if (++n->skipped <= MAX_REPORTED_SKIPS)
    cli__warning(n->job->cmd, "%s: skipped the record at byte offset %" PRIu64 ": %s",
                 n->job->labels[input], e->offset, e->message);
}

static void report_counts(const char* cmd, const merge_counts_t* c) {
  if (c->high_koids)
    cli__warning(cmd, "%" PRIu64 " koids of 2^22 or more (not pids) kept as they were",
                 c->high_koids);
  if (c->lanes_widened)
    cli__warning(cmd,
                 "%" PRIu64
                 " legacy context switches past CPU lane 255 written as context "
                 "switch records (without process koids and priorities)",
                 c->lanes_widened);
  if (c->lanes_lost)
    cli__warning(cmd, "%" PRIu64 " scheduling records past CPU lane 65535 left out", c->lanes_lost);
  if (c->too_large)
    cli__warning(cmd, "%" PRIu64 " records too large once re-encoded left out", c->too_large);
  if (c->truncated) cli__warning(cmd, "%" PRIu64 " strings cut to 32000 bytes", c->truncated);
}

typedef struct inputs {
  int* fds;
  trace_reader_t** readers;
  uint32_t* cpu_count;
} inputs_t;

static bool open_inputs(const merge_job_t* job, inputs_t* in) {
  in->fds = calloc(job->count, sizeof(int));
  in->readers = calloc(job->count, sizeof(trace_reader_t*));
  in->cpu_count = calloc(job->count, sizeof(uint32_t));
  if (!in->fds || !in->readers || !in->cpu_count) {
    cli__error(job->cmd, "out of memory");
    return false;
  }
  for (size_t i = 0; i < job->count; i++) in->fds[i] = -1;
  for (size_t i = 0; i < job->count; i++) {
    in->fds[i] = cli__open_input(job->cmd, job->paths[i]);
    if (in->fds[i] < 0) return false;
    if (!(in->readers[i] = trace_reader_open_fd(in->fds[i], NULL))) {
      cli__error(job->cmd, "out of memory");
      return false;
    }
  }
  return true;
}

static void close_inputs(const merge_job_t* job, inputs_t* in) {
  for (size_t i = 0; i < job->count; i++) {
    if (in->readers) trace_reader_close(in->readers[i]);
    if (in->fds && in->fds[i] >= 0) close(in->fds[i]);
  }
  free(in->fds);
  free(in->readers);
  free(in->cpu_count);
}

static void print_inputs(const merge_job_t* job, uint64_t written, const char* output_name,
                         const ordered_stats_t* st) {
  fprintf(stderr, "trace %s: %zu %s, %" PRIu64 " records into %s", job->cmd, job->count,
          strcmp(job->cmd, "merge") == 0 ? "archives" : "hosts", written, output_name);
  if (st->runs) fprintf(stderr, " (ordered through %" PRIu64 " runs in TMPDIR)", st->runs);
  fputc('\n', stderr);
  for (size_t i = 0; i < job->count; i++) {
    const merge_host_t* h = &job->hosts[i];
    fprintf(stderr, "  %s: %s, koids + %" PRIu64, h->name, job->notes[i], h->koid_base);
    if (h->cpu_count)
      fprintf(stderr, ", CPU lanes %u-%u", h->cpu_base, h->cpu_base + h->cpu_count - 1);
    fputc('\n', stderr);
  }
}

static int merge_view(const merge_job_t* job, inputs_t* in) {
  const char* cmd = job->cmd;
  notes_t notes = {job, in->cpu_count, 0};
  ordered_options_t view_options = {.memory_bytes = job->order_memory,
                                    .on_skip = on_skip,
                                    .on_record = on_record,
                                    .context = &notes};
  ordered_t* view = ordered__open(&view_options);
  bool ok = view != NULL;
  for (size_t i = 0; ok && i < job->count; i++)
    ok = ordered__add_input(view, in->readers[i]) &&
         ordered__set_input_clock(view, i, &job->hosts[i].clock);
  if (!ok || ordered__load(view) == ORDERED_ERROR) {
    cli__error(cmd, "%s", view ? ordered__error(view) : "out of memory (or a bad clock map)");
    ordered__close(view);
    return EXIT_FAILED;
  }
  uint32_t lane = 0;
  for (size_t i = 0; i < job->count; i++) {
    job->hosts[i].koid_base = (uint64_t)i * MERGE_KOID_STRIDE;
    job->hosts[i].cpu_base = lane;
    job->hosts[i].cpu_count = in->cpu_count[i];
    lane += in->cpu_count[i];
  }
  sink_t s;
  memset(&s, 0, sizeof(s));
  s.batch = malloc(BATCH_BYTES);
  merge_writer_t* w = merge__writer_open(job->hosts, job->count, sink_write, &s);
  if (!s.batch || !w) {
    cli__error(cmd, "out of memory");
    free(s.batch);
    merge__writer_close(w);
    ordered__close(view);
    return EXIT_FAILED;
  }
  if (!output__open(&s.out, cmd, job->output)) {
    free(s.batch);
    merge__writer_close(w);
    ordered__close(view);
    return EXIT_FAILED;
  }
  archive_scan__init(&s.scan);
  s.ok = archive_writer__init(&s.writer, &s.out, (compress_codec_t)job->codec);
  if (!s.ok) cli__error(cmd, "cannot start compressing: %s", strerror(errno));
  int rc = ORDERED_END;
  ordered_record_t r;
  if (s.ok) s.ok = merge__writer_start(w);
  if (s.ok && job->preamble_bytes) s.ok = sink_write(&s, job->preamble, job->preamble_bytes);
  while (s.ok && (rc = ordered__next(view, &r)) == ORDERED_RECORD)
    if (!merge__write_record(w, &r) && s.ok) {
      cli__error(cmd, "out of memory");
      rc = ORDERED_ERROR;
      break;
    }
  bool view_failed = rc == ORDERED_ERROR;
  if (view_failed && s.ok) cli__error(cmd, "%s", ordered__error(view));
  bool wrote = sink_flush(&s) && archive_writer__finish(&s.writer);
  if (!wrote && s.writer.error) {
    cli__error(cmd, "writing %s failed: %s", s.out.name, strerror(s.writer.error));
    archive_writer__keep(&s.writer, cmd, "record", NULL);
  }
  if (output__close(&s.out) != 0 && wrote) {
    cli__error(cmd, "writing %s failed: %s", s.out.name, strerror(s.out.error));
    wrote = false;
  }
  if (!wrote && s.out.offset == 0) output__remove(&s.out);
  archive_writer__free(&s.writer);
  free(s.batch);
  merge_counts_t counts = merge__writer_counts(w);
  merge__writer_close(w);
  report_counts(cmd, &counts);
  if (notes.skipped > MAX_REPORTED_SKIPS)
    cli__warning(cmd, "%" PRIu64 " records skipped in all", notes.skipped);
  bool damaged = false;
  for (size_t i = 0; i < job->count; i++)
    if (ordered__input_failed(view, i)) {
      trace_reader_error_t e = trace_reader_error(in->readers[i]);
      cli__error(cmd, "%s: at byte offset %" PRIu64 ": %s (its records before it are merged)",
                 job->labels[i], e.offset, e.message);
      damaged = true;
    }
  ordered_stats_t st = ordered__stats(view);
  ordered__close(view);
  if (wrote && !view_failed) print_inputs(job, counts.written, s.out.name, &st);
  return wrote && !view_failed && !damaged ? EXIT_OK : EXIT_FAILED;
}

int merge__run(const merge_job_t* job) {
  inputs_t in;
  memset(&in, 0, sizeof(in));
  int rc = open_inputs(job, &in) ? merge_view(job, &in) : EXIT_FAILED;
  close_inputs(job, &in);
  return rc;
}
