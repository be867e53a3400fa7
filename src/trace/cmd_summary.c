/* `trace summary`: the figures people open a viewer for, in the terminal
 * (docs/summary.md). */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ordered/ordered.h"
#include "trace-reader/reader.h"
#include "trace/cli.h"
#include "trace/summary.h"
#include "trace/summary_report.h"
#include "trace/time_range.h"

enum { MAX_REPORTED_SKIPS = 10, DEFAULT_TOP = 20 };

static const char kUsage[] =
    "Usage: trace summary FILE [--top=N] [--sort=FIELD] [--time-range=START,END]\n"
    "                          [--format=text|json] [--order-memory=SIZE]\n"
    "\n"
    "Summarizes the FXT archive FILE ('-' for stdin), read in time order:\n"
    "  providers   records, whether records were dropped, time span\n"
    "  durations   per category:name (complete events, begin/end pairs on a thread,\n"
    "              async spans): count, total, mean, p50, p90, p99, max, and when and\n"
    "              on which thread the slowest began\n"
    "  counters    per series: samples, min, mean, max\n"
    "  threads     time inside top-level durations; with kernel scheduling records,\n"
    "              CPU time, context switches and runnable wait (wakeup to switch-in)\n"
    "Percentiles are within 0.4% of the exact nearest-rank value.\n"
    "\n"
    "Options:\n"
    "      --top=N                   rows per table (default 20; 0: all)\n"
    "      --sort=FIELD              durations by count, total (default), mean, max,\n"
    "                                p50, p90, p99 or name; threads by busy, cpu,\n"
    "                                wait, switches or tid\n"
    "      --time-range=START,END    only what happens between START and END seconds\n"
    "                                from the trace's start (either may be empty)\n"
    "      --format=text|json        json: the stable schema of docs/summary.md\n"
    "      --order-memory=SIZE       memory for putting records in time order (default\n"
    "                                64M, at least 4K; K, M, G: KiB, MiB, GiB); past it\n"
    "                                sorted runs go to a temporary file in TMPDIR\n"
    "  -h, --help                    show this help\n"
    "\n"
    "Exit status: 0 on success, 1 if the archive is damaged (the figures of the\n"
    "records before the damage are printed) or the output cannot be written,\n"
    "2 on a usage error.\n";

typedef struct summary_options {
  const char* input;
  time_range_t range;
  summary_report_options_t report;
  size_t order_memory; /* 0: the ordered view's default */
} summary_options_t;

static int parse_top(const char* text, size_t* top) {
  char* end;
  errno = 0;
  unsigned long long v = strtoull(text, &end, 10);
  if (errno || *end || end == text || text[0] == '-')
    return cli__usage_error("summary", "--top: not a number: '%s'", text);
  *top = (size_t)v;
  return 0;
}

static int parse_options(int argc, char** argv, summary_options_t* o) {
  static const struct option kLong[] = {{"top", required_argument, NULL, 'n'},
                                        {"sort", required_argument, NULL, 's'},
                                        {"time-range", required_argument, NULL, 'r'},
                                        {"format", required_argument, NULL, 'f'},
                                        {"order-memory", required_argument, NULL, 'm'},
                                        {"help", no_argument, NULL, 'h'},
                                        {NULL, 0, NULL, 0}};
  memset(o, 0, sizeof(*o));
  o->report.top = DEFAULT_TOP;
  int opt, rc;
  opterr = 0;
  optind = 1;
  while ((opt = getopt_long(argc, argv, ":h", kLong, NULL)) != -1) {
    switch (opt) {
      case 'n':
        if ((rc = parse_top(optarg, &o->report.top)) != 0) return rc;
        break;
      case 's':
        o->report.sort = summary_report__parse_sort(optarg);
        if (o->report.sort == SORT_DEFAULT)
          return cli__usage_error("summary", "--sort: unknown field '%s' (one of: %s)", optarg,
                                  summary_report__sort_names);
        break;
      case 'r':
        if (time_range__parse(optarg, &o->range) != 0)
          return cli__usage_error("summary",
                                  "--time-range: expected START,END in seconds with START <= "
                                  "END (e.g. 1.5,3 or 2,), not '%s'",
                                  optarg);
        break;
      case 'f':
        if (strcmp(optarg, "json") == 0)
          o->report.json = true;
        else if (strcmp(optarg, "text") == 0)
          o->report.json = false;
        else
          return cli__usage_error("summary", "unknown format '%s' (text or json)", optarg);
        break;
      case 'm':
        if ((rc = cli__parse_order_memory("summary", optarg, &o->order_memory)) != 0) return rc;
        break;
      case 'h':
        fputs(kUsage, stdout);
        return -1;
      case ':':
        return cli__usage_error("summary", "option '%s' needs a value", argv[optind - 1]);
      default:
        return cli__usage_error("summary", "unknown option '%s'", argv[optind - 1]);
    }
  }
  if (optind != argc - 1)
    return cli__usage_error("summary",
                            optind == argc ? "missing the input FILE" : "expected one input FILE");
  o->input = argv[optind];
  return 0;
}

/* What reading the archive noted: records skipped, records with words past
 * their contents (cli.h). */
typedef struct read_notes {
  uint64_t skipped;
  cli_warnings_t warnings;
} read_notes_t;

static void on_record(void* context, size_t input, const trace_reader_t* reader) {
  (void)input;
  read_notes_t* notes = context;
  cli__note_warning(&notes->warnings, reader);
}

static void on_skip(void* context, size_t input, const trace_reader_error_t* e) {
  (void)input;
  uint64_t* skipped = &((read_notes_t*)context)->skipped;
  if (++*skipped <= MAX_REPORTED_SKIPS)
    fprintf(stderr, "trace summary: warning: skipped record at offset %" PRIu64 ": %s\n", e->offset,
            e->message);
}

/* The records go to the summary in time order (docs/ordered-view.md): pairs
 * whose halves were written by different threads, in different chunks of the
 * archive, then meet in the order they happened. */
static int summarize(const summary_options_t* o, trace_reader_t* reader, summary_t* s) {
  read_notes_t notes = {0, {"summary", o->input, 0}};
  ordered_options_t view_options = {.memory_bytes = o->order_memory,
                                    .on_skip = on_skip,
                                    .on_record = on_record,
                                    .context = &notes};
  ordered_t* view = ordered__open(&view_options);
  int rc = view && ordered__add_input(view, reader) ? ordered__load(view) : ORDERED_ERROR;
  if (rc == ORDERED_ERROR) {
    cli__error("summary", "%s: %s", o->input, view ? ordered__error(view) : "out of memory");
    ordered__close(view);
    return EXIT_FAILED;
  }
  cli__warnings_done(&notes.warnings);
  trace_reader_stats_t stats = trace_reader_stats(reader);
  bool damaged = ordered__input_failed(view, 0);
  if (damaged && stats.records == 0) {
    cli__error("summary", "%s: %s", o->input, trace_reader_error(reader).message);
    ordered__close(view);
    return EXIT_FAILED;
  }
  /* The trace's start is the first timestamped record in archive order, as
   * for convert and dump (docs/summary.md), not the earliest one. */
  uint64_t origin_ns;
  if (ordered__input_first_ns(view, 0, &origin_ns)) summary__set_origin(s, origin_ns);
  ordered_record_t r;
  while ((rc = ordered__next(view, &r)) == ORDERED_RECORD) summary__record(s, &r.record);
  if (rc == ORDERED_ERROR) {
    cli__error("summary", "%s: %s", o->input, ordered__error(view));
    ordered__close(view);
    return EXIT_FAILED;
  }
  ordered__close(view);
  summary__finish(s);
  if (s->out_of_memory) {
    cli__error("summary", "out of memory");
    return EXIT_FAILED;
  }
  if (!summary_report__write(stdout, s, &o->report, &stats)) {
    cli__error("summary", "writing standard output failed");
    return EXIT_FAILED;
  }
  cli__warn_if_recovered(o->input, reader);
  if (damaged) {
    trace_reader_error_t e = trace_reader_error(reader);
    cli__error("summary", "%s: at byte offset %" PRIu64 ": %s", o->input, e.offset, e.message);
    fprintf(stderr, "trace summary: the figures are those of the records before the damage\n");
    return EXIT_FAILED;
  }
  return EXIT_OK;
}

int cmd__summary(int argc, char** argv) {
  summary_options_t o;
  int rc = parse_options(argc, argv, &o);
  if (rc != 0) return rc < 0 ? EXIT_OK : rc;
  int fd = cli__open_input("summary", o.input);
  if (fd < 0) return EXIT_FAILED;
  trace_reader_t* reader = trace_reader_open_fd(fd, NULL);
  summary_t* s = calloc(1, sizeof(*s));
  if (!reader || !s || !summary__init(s, &o.range)) {
    cli__error("summary", "out of memory");
    rc = EXIT_FAILED;
  } else {
    rc = summarize(&o, reader, s);
  }
  if (s) summary__free(s);
  free(s);
  trace_reader_close(reader);
  if (fd != STDIN_FILENO) close(fd);
  return rc;
}
