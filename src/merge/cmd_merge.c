/* `trace merge A.fxt B.fxt ... -o OUT [--host-names=a,b,...]
 *  [--align=anchor|first] [--order-memory=SIZE]` (docs/merge.md): archives
 * recorded separately, on different hosts, merged into one archive on one
 * timeline, through the ordered view (one input per archive), in bounded
 * memory. Each input is read twice: once for its anchor, once to merge. */
#include <errno.h>
#include <getopt.h>
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

static const char kUsage[] =
    "usage: trace merge FILE FILE... -o OUT [--host-names=NAME,NAME,...]\n"
    "                   [--align=anchor|first] [--order-memory=SIZE]\n"
    "\n"
    "Merges FXT archives recorded on different hosts into one archive on one timeline,\n"
    "aligned by the wall-clock anchors trace record writes (as good as the hosts'\n"
    "NTP/PTP synchronization). Each host's processes and threads keep koids of their\n"
    "own and are named \"HOST: NAME\", as are its providers; its CPUs become CPU lanes\n"
    "of their own. Flow and async ids pass through unchanged.\n"
    "\n"
    "  -o, --output=OUT            the merged archive (.zst/.gz: compressed; - stdout)\n"
    "      --host-names=LIST       one name per input, in order (default: the hostname\n"
    "                              in each archive's anchor; the file's base name when\n"
    "                              it has none or two inputs share it)\n"
    "      --align=anchor|first    anchor (default): by the wall-clock anchors; first:\n"
    "                              by each archive's earliest timestamp (for archives\n"
    "                              without anchors; their relative timing is lost)\n"
    "      --order-memory=SIZE     memory for putting records in time order (default\n"
    "                              64M; beyond it through a temporary file in TMPDIR)\n"
    "  -h, --help                  this help\n";

typedef struct merge_options {
  const char* output;
  char* host_names; /* the --host-names value, split in place */
  bool align_first;
  size_t order_memory;
  char** inputs;
  size_t input_count;
} merge_options_t;

/* 0: parsed; -1: --help printed; else the exit status. */
static int parse_options(int argc, char** argv, merge_options_t* o) {
  static const struct option kLong[] = {
      {"output", required_argument, NULL, 'o'}, {"host-names", required_argument, NULL, 'n'},
      {"align", required_argument, NULL, 'a'},  {"order-memory", required_argument, NULL, 'm'},
      {"help", no_argument, NULL, 'h'},         {NULL, 0, NULL, 0}};
  memset(o, 0, sizeof(*o));
  optind = 1;
  opterr = 0;
  int c, rc;
  while ((c = getopt_long(argc, argv, ":o:h", kLong, NULL)) != -1) {
    switch (c) {
      case 'o':
        o->output = optarg;
        break;
      case 'n':
        o->host_names = optarg;
        break;
      case 'a':
        if (strcmp(optarg, "first") == 0)
          o->align_first = true;
        else if (strcmp(optarg, "anchor") != 0)
          return cli__usage_error("merge", "--align: expected anchor or first, not '%s'", optarg);
        break;
      case 'm':
        if ((rc = cli__parse_order_memory("merge", optarg, &o->order_memory)) != 0) return rc;
        break;
      case 'h':
        fputs(kUsage, stdout);
        return -1;
      case ':':
        return cli__usage_error("merge", "option '%s' needs a value", argv[optind - 1]);
      default:
        return cli__usage_error("merge", "unknown option '%s'", argv[optind - 1]);
    }
  }
  if (!o->output) return cli__usage_error("merge", "missing the output: -o OUT");
  o->inputs = argv + optind;
  o->input_count = (size_t)(argc - optind);
  if (o->input_count == 0) return cli__usage_error("merge", "missing the input FILEs");
  if (o->input_count > MERGE_MAX_INPUTS)
    return cli__usage_error("merge", "at most %u inputs", MERGE_MAX_INPUTS);
  for (size_t i = 0; i < o->input_count; i++)
    if (strcmp(o->inputs[i], "-") == 0)
      return cli__usage_error("merge",
                              "an input cannot be standard input: merge reads each "
                              "input twice (its anchor, then its records)");
  return 0;
}

/* The file's base name without .fxt, .zst, .gz. */
static void base_name(const char* path, char* out, size_t size) {
  const char* slash = strrchr(path, '/');
  snprintf(out, size, "%s", slash ? slash + 1 : path);
  static const char* const kExt[] = {".zst", ".gz", ".fxt"};
  for (size_t i = 0; i < 3; i++) {
    size_t n = strlen(out), e = strlen(kExt[i]);
    if (n > e && strcmp(out + n - e, kExt[i]) == 0) out[n - e] = '\0';
  }
}

typedef struct merge_input {
  merge_anchor_t anchor;
  char name[256];
  int fd;
  trace_reader_t* reader;
  uint32_t cpu_count;
} merge_input_t;

static int name_hosts(merge_options_t* o, merge_input_t* in) {
  if (o->host_names) {
    size_t i = 0;
    for (char *save = NULL, *t = strtok_r(o->host_names, ",", &save); t;
         t = strtok_r(NULL, ",", &save), i++)
      if (i < o->input_count) snprintf(in[i].name, sizeof(in[i].name), "%s", t);
    if (i != o->input_count)
      return cli__usage_error("merge", "--host-names: %zu names for %zu inputs", i, o->input_count);
  } else {
    for (size_t i = 0; i < o->input_count; i++) {
      bool shared = !in[i].anchor.hostname[0];
      for (size_t j = 0; j < o->input_count && !shared; j++)
        shared = j != i && strcmp(in[i].anchor.hostname, in[j].anchor.hostname) == 0;
      if (shared)
        base_name(o->inputs[i], in[i].name, sizeof(in[i].name));
      else
        snprintf(in[i].name, sizeof(in[i].name), "%s", in[i].anchor.hostname);
    }
  }
  for (size_t i = 0; i < o->input_count; i++)
    for (size_t j = 0; j < i; j++)
      if (strcmp(in[i].name, in[j].name) == 0)
        return cli__usage_error("merge", "two inputs are named '%s': give --host-names",
                                in[i].name);
  return 0;
}

/* Each input's shift: anchors put every host on the clock of the one whose
 * (realtime - trace clock) is smallest, whose times stay as they are, so no
 * shift is negative; --align=first makes every earliest timestamp the
 * latest one. */
static int compute_shifts(const merge_options_t* o, const merge_input_t* in, merge_host_t* hosts) {
  if (o->align_first) {
    uint64_t target = 0;
    for (size_t i = 0; i < o->input_count; i++)
      if (in[i].anchor.have_first && in[i].anchor.first_ns > target) target = in[i].anchor.first_ns;
    for (size_t i = 0; i < o->input_count; i++)
      hosts[i].shift_ns = in[i].anchor.have_first ? target - in[i].anchor.first_ns : 0;
    cli__warning("merge",
                 "aligned by each archive's earliest timestamp (--align=first): events "
                 "of different hosts are not in their real order");
    return 0;
  }
  int64_t base = INT64_MAX;
  int64_t* delta = calloc(o->input_count, sizeof(*delta));
  if (!delta) {
    cli__error("merge", "out of memory");
    return EXIT_FAILED;
  }
  for (size_t i = 0; i < o->input_count; i++) {
    delta[i] = (int64_t)(in[i].anchor.realtime_ns - in[i].anchor.trace_ns);
    if (delta[i] < base) base = delta[i];
  }
  for (size_t i = 0; i < o->input_count; i++) hosts[i].shift_ns = (uint64_t)(delta[i] - base);
  free(delta);
  return 0;
}

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

static void no_record(void* context, const archive_scan_provider_t* provider, unsigned type,
                      uint64_t bytes) {
  (void)context, (void)provider, (void)type, (void)bytes;
}

typedef struct notes {
  const merge_options_t* o;
  merge_input_t* in;
  uint64_t skipped;
} notes_t;

static void on_record(void* context, size_t input, const trace_reader_t* reader) {
  notes_t* n = context;
  merge__note_cpu(reader, &n->in[input].cpu_count);
}

static void on_skip(void* context, size_t input, const trace_reader_error_t* e) {
  notes_t* n = context;
  if (++n->skipped <= MAX_REPORTED_SKIPS)
    cli__warning("merge", "%s: skipped the record at byte offset %" PRIu64 ": %s",
                 n->o->inputs[input], e->offset, e->message);
}

static void report_counts(const merge_counts_t* c) {
  if (c->high_koids)
    cli__warning("merge", "%" PRIu64 " koids of 2^22 or more (not pids) kept as they were",
                 c->high_koids);
  if (c->lanes_widened)
    cli__warning("merge",
                 "%" PRIu64
                 " legacy context switches past CPU lane 255 written as context "
                 "switch records (without process koids and priorities)",
                 c->lanes_widened);
  if (c->lanes_lost)
    cli__warning("merge", "%" PRIu64 " scheduling records past CPU lane 65535 left out",
                 c->lanes_lost);
  if (c->too_large)
    cli__warning("merge", "%" PRIu64 " records too large once re-encoded left out", c->too_large);
  if (c->truncated) cli__warning("merge", "%" PRIu64 " strings cut to 32000 bytes", c->truncated);
}

/* The merge proper, once every input has its anchor and name. */
static int merge(const merge_options_t* o, merge_input_t* in, merge_host_t* hosts) {
  notes_t notes = {o, in, 0};
  ordered_options_t view_options = {.memory_bytes = o->order_memory,
                                    .on_skip = on_skip,
                                    .on_record = on_record,
                                    .context = &notes};
  ordered_t* view = ordered__open(&view_options);
  bool ok = view != NULL;
  for (size_t i = 0; ok && i < o->input_count; i++)
    ok = ordered__add_input(view, in[i].reader) &&
         ordered__set_input_shift(view, i, hosts[i].shift_ns);
  if (!ok || ordered__load(view) == ORDERED_ERROR) {
    cli__error("merge", "%s", view ? ordered__error(view) : "out of memory");
    ordered__close(view);
    return EXIT_FAILED;
  }
  uint32_t lane = 0;
  for (size_t i = 0; i < o->input_count; i++) {
    hosts[i].cpu_base = lane;
    hosts[i].cpu_count = in[i].cpu_count;
    lane += in[i].cpu_count;
  }
  sink_t s;
  memset(&s, 0, sizeof(s));
  bool to_stdout = strcmp(o->output, "-") == 0;
  s.batch = malloc(BATCH_BYTES);
  merge_writer_t* w = merge__writer_open(hosts, o->input_count, sink_write, &s);
  if (!s.batch || !w) {
    cli__error("merge", "out of memory");
    free(s.batch);
    merge__writer_close(w);
    ordered__close(view);
    return EXIT_FAILED;
  }
  if (!output__open(&s.out, "merge", o->output)) {
    free(s.batch);
    merge__writer_close(w);
    ordered__close(view);
    return EXIT_FAILED;
  }
  archive_scan__init(&s.scan, no_record, NULL);
  s.ok = archive_writer__init(&s.writer, &s.out,
                              to_stdout ? COMPRESS_NONE : compress__codec_for_name(o->output));
  if (!s.ok) cli__error("merge", "cannot start compressing: %s", strerror(errno));
  int rc = ORDERED_END;
  ordered_record_t r;
  if (s.ok) s.ok = merge__writer_start(w);
  while (s.ok && (rc = ordered__next(view, &r)) == ORDERED_RECORD)
    if (!merge__write_record(w, &r) && s.ok) {
      cli__error("merge", "out of memory");
      rc = ORDERED_ERROR;
      break;
    }
  bool view_failed = rc == ORDERED_ERROR;
  if (view_failed && s.ok) cli__error("merge", "%s", ordered__error(view));
  bool wrote = sink_flush(&s) && archive_writer__finish(&s.writer);
  if (!wrote && s.writer.error) {
    cli__error("merge", "writing %s failed: %s", s.out.name, strerror(s.writer.error));
    archive_writer__keep(&s.writer, "merge", "record", NULL);
  }
  if (output__close(&s.out) != 0 && wrote) {
    cli__error("merge", "writing %s failed: %s", s.out.name, strerror(s.out.error));
    wrote = false;
  }
  if (!wrote && s.out.offset == 0) output__remove(&s.out);
  archive_writer__free(&s.writer);
  free(s.batch);
  merge_counts_t counts = merge__writer_counts(w);
  merge__writer_close(w);
  report_counts(&counts);
  if (notes.skipped > MAX_REPORTED_SKIPS)
    cli__warning("merge", "%" PRIu64 " records skipped in all", notes.skipped);
  bool damaged = false;
  for (size_t i = 0; i < o->input_count; i++)
    if (ordered__input_failed(view, i)) {
      trace_reader_error_t e = trace_reader_error(in[i].reader);
      cli__error("merge", "%s: at byte offset %" PRIu64 ": %s (its records before it are merged)",
                 o->inputs[i], e.offset, e.message);
      damaged = true;
    }
  ordered_stats_t st = ordered__stats(view);
  ordered__close(view);
  if (wrote && !view_failed) {
    fprintf(stderr, "trace merge: %zu archives, %" PRIu64 " records into %s", o->input_count,
            counts.written, s.out.name);
    if (st.runs) fprintf(stderr, " (ordered through %" PRIu64 " runs in TMPDIR)", st.runs);
    fputc('\n', stderr);
    for (size_t i = 0; i < o->input_count; i++) {
      fprintf(stderr,
              "  %s: %s, shifted by %" PRIu64 " ns (anchor uncertainty %" PRIu64
              " ns), koids + %" PRIu64,
              hosts[i].name, o->inputs[i], hosts[i].shift_ns, in[i].anchor.uncertainty_ns,
              hosts[i].koid_base);
      if (hosts[i].cpu_count)
        fprintf(stderr, ", CPU lanes %u-%u", hosts[i].cpu_base,
                hosts[i].cpu_base + hosts[i].cpu_count - 1);
      fputc('\n', stderr);
    }
  }
  return wrote && !view_failed && !damaged ? EXIT_OK : EXIT_FAILED;
}

int cmd__merge(int argc, char** argv) {
  merge_options_t o;
  int rc = parse_options(argc, argv, &o);
  if (rc != 0) return rc < 0 ? EXIT_OK : rc;
  merge_input_t* in = calloc(o.input_count, sizeof(*in));
  merge_host_t* hosts = calloc(o.input_count, sizeof(*hosts));
  if (!in || !hosts) {
    cli__error("merge", "out of memory");
    free(in);
    free(hosts);
    return EXIT_FAILED;
  }
  for (size_t i = 0; i < o.input_count; i++) in[i].fd = -1;
  rc = EXIT_OK;
  for (size_t i = 0; rc == EXIT_OK && i < o.input_count; i++) {
    if (!merge__scan_anchor(o.inputs[i], o.align_first, &in[i].anchor)) {
      rc = EXIT_FAILED;
    } else if (!o.align_first && !in[i].anchor.found) {
      cli__error("merge",
                 "%s has no wall-clock anchor (an archive trace record or file mode wrote "
                 "before anchors existed, or another writer's): --align=first aligns the "
                 "archives by their earliest timestamps instead",
                 o.inputs[i]);
      rc = EXIT_FAILED;
    }
  }
  if (rc == EXIT_OK) rc = name_hosts(&o, in);
  for (size_t i = 0; i < o.input_count; i++) {
    hosts[i].name = in[i].name;
    hosts[i].koid_base = (uint64_t)i * MERGE_KOID_STRIDE;
  }
  if (rc == EXIT_OK) rc = compute_shifts(&o, in, hosts);
  for (size_t i = 0; rc == EXIT_OK && i < o.input_count; i++) {
    in[i].fd = cli__open_input("merge", o.inputs[i]);
    if (in[i].fd < 0)
      rc = EXIT_FAILED;
    else if (!(in[i].reader = trace_reader_open_fd(in[i].fd, NULL))) {
      cli__error("merge", "out of memory");
      rc = EXIT_FAILED;
    }
  }
  if (rc == EXIT_OK) rc = merge(&o, in, hosts);
  for (size_t i = 0; i < o.input_count; i++) {
    trace_reader_close(in[i].reader);
    if (in[i].fd >= 0) close(in[i].fd);
  }
  free(in);
  free(hosts);
  return rc;
}
