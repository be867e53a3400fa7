/* `trace convert`: an FXT archive to Chrome Trace Event JSON, streamed. */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "trace-reader/reader.h"
#include "trace/archive_writer.h"
#include "trace/cli.h"
#include "trace/json_events.h"
#include "trace/output.h"
#include "trace/time_range.h"

enum { MAX_REPORTED_SKIPS = 10 };

static const char kUsage[] =
    "Usage: trace convert FILE [-o OUT] [--format=json] [--time-range=START,END]\n"
    "\n"
    "Converts the FXT archive FILE ('-' for stdin) to Catapult / Chrome Trace Event JSON,\n"
    "readable by Perfetto UI and chrome://tracing. Streams: memory use does not grow\n"
    "with the archive.\n"
    "\n"
    "Options:\n"
    "  -o, --output=OUT   write to OUT ('-' for stdout, the default)\n"
    "      --format=json  output format (json is the only one)\n"
    "      --time-range=START,END\n"
    "                     only events between START and END seconds from the\n"
    "                     trace's start (either may be empty; docs/summary.md)\n"
    "  -h, --help         show this help\n"
    "\n"
    "Records JSON cannot hold (blobs, objects, context switches) are counted on stderr.\n"
    "FILE may also be the raw trace buffer that a program traced in file mode leaves\n"
    "when it crashes or is killed: its records are recovered, with a warning.\n"
    "FILE may be compressed with zstd or gzip (recognized by its first bytes).\n"
    "Exit status: 0 on success, 1 if the archive is damaged or the output cannot be\n"
    "written (the events before the damage are still written; after a failed write,\n"
    "a full disk, OUT is kept cut after its last complete event and closed), 2 on a\n"
    "usage error.\n";

typedef struct convert_options {
  const char* input;
  const char* output; /* NULL or "-" for stdout */
  time_range_t range; /* --time-range; inactive by default */
} convert_options_t;

static int parse_options(int argc, char** argv, convert_options_t* o) {
  static const struct option kLong[] = {{"output", required_argument, NULL, 'o'},
                                        {"format", required_argument, NULL, 'f'},
                                        {"help", no_argument, NULL, 'h'},
                                        {"time-range", required_argument, NULL, 'r'},
                                        {NULL, 0, NULL, 0}};
  memset(o, 0, sizeof(*o));
  int opt;
  opterr = 0;
  optind = 1;
  while ((opt = getopt_long(argc, argv, ":o:h", kLong, NULL)) != -1) {
    switch (opt) {
      case 'o':
        o->output = optarg;
        break;
      case 'f':
        if (strcmp(optarg, "json") != 0)
          return cli__usage_error("convert", "unknown format '%s' (only 'json' is supported)",
                                  optarg);
        break;
      case 'r':
        if (time_range__parse(optarg, &o->range) != 0)
          return cli__usage_error("convert",
                                  "--time-range: expected START,END in seconds, not '%s'", optarg);
        break;
      case 'h':
        fputs(kUsage, stdout);
        return -1;
      case ':':
        return cli__usage_error("convert", "option '%s' needs a value", argv[optind - 1]);
      default:
        return cli__usage_error("convert", "unknown option '%s'", argv[optind - 1]);
    }
  }
  if (optind != argc - 1)
    return cli__usage_error("convert",
                            optind == argc ? "missing the input FILE" : "expected one input FILE");
  o->input = argv[optind];
  return 0;
}

static bool to_stdout(const convert_options_t* o) {
  return o->output == NULL || strcmp(o->output, "-") == 0;
}

static void report_skip(trace_reader_t* reader, uint64_t* skipped) {
  trace_reader_error_t e = trace_reader_error(reader);
  if (++*skipped <= MAX_REPORTED_SKIPS)
    fprintf(stderr, "trace convert: warning: skipped record at offset %llu: %s\n",
            (unsigned long long)e.offset, e.message);
}

static void report_omitted(const json_converter_t* c) {
  if (c->omitted_blobs + c->omitted_objects + c->omitted_scheduling + c->omitted_counter_args +
          c->omitted_counters + c->unplaced_threads ==
      0)
    return;
  fprintf(stderr,
          "trace convert: note: not representable in JSON and left out: %llu blob(s), %llu "
          "userspace object(s), %llu scheduling record(s), %llu non-numeric or non-finite "
          "counter argument(s), %llu counter(s) without a finite numeric argument, %llu thread "
          "name(s) without a process\n",
          (unsigned long long)c->omitted_blobs, (unsigned long long)c->omitted_objects,
          (unsigned long long)c->omitted_scheduling, (unsigned long long)c->omitted_counter_args,
          (unsigned long long)c->omitted_counters, (unsigned long long)c->unplaced_threads);
}

/* Converts every record after `first`; returns the reader's final result. */
static int convert_all(trace_reader_t* reader, trace_record_t* record, json_converter_t* c,
                       uint64_t* skipped, time_range_t* range, cli_warnings_t* warnings) {
  int rc = TRACE_READ_RECORD;
  do {
    if (rc == TRACE_READ_RECORD) {
      cli__note_warning(warnings, reader);
      if (time_range__keep(range, record)) json_converter__record(c, record);
    } else
      report_skip(reader, skipped);
    if (c->out->failed) return TRACE_READ_END; /* the write error is reported by the caller */
    rc = trace_reader_next(reader, record);
  } while (rc != TRACE_READ_END && rc != TRACE_READ_ERROR);
  return rc;
}

/* True when `path` names the file open as `fd` (converting a file onto
 * itself would destroy the archive before it is read). */
static bool same_file(int fd, const char* path) {
  struct stat in, out;
  return fstat(fd, &in) == 0 && stat(path, &out) == 0 && in.st_dev == out.st_dev &&
         in.st_ino == out.st_ino;
}

static bool open_output(const convert_options_t* o, int input_fd, output_t* out) {
  if (!to_stdout(o) && same_file(input_fd, o->output)) {
    cli__error("convert", "the output '%s' is the input archive; refusing to overwrite it",
               o->output);
    return false;
  }
  return output__open(out, "convert", to_stdout(o) ? "-" : o->output);
}

/* Ends the output. On a failed write (reported when it happened) the file is
 * kept, cut after its last complete event and closed (archive_writer.h). */
static bool close_output(output_t* out, archive_writer_t* w, json_writer_t* j) {
  bool ok = json__flush(j) && archive_writer__finish(w);
  if (!ok) {
    cli__error("convert", "writing %s failed: %s", out->name, strerror(w->error));
    archive_writer__keep(w, "convert", "event", JSON_CLOSING_AFTER_CUT);
  }
  if (output__close(out) != 0 && ok) {
    cli__error("convert", "writing %s failed: %s", out->name, strerror(out->error));
    ok = false;
  }
  archive_writer__free(w);
  return ok;
}

static int convert(convert_options_t* o, int input_fd, trace_reader_t* reader) {
  trace_record_t record;
  int rc = trace_reader_next(reader, &record); /* checks the magic before any output */
  if (rc == TRACE_READ_ERROR) {
    trace_reader_error_t e = trace_reader_error(reader);
    cli__error("convert", "%s: %s", o->input, e.message);
    return EXIT_FAILED;
  }
  output_t out;
  archive_writer_t w;
  if (!open_output(o, input_fd, &out)) return EXIT_FAILED;
  archive_writer__init(&w, &out, COMPRESS_NONE); /* plain: nothing to allocate */
  static json_writer_t j; /* 64 KiB: too large for the stack of every caller */
  json_writer__init_archive(&j, &w);
  json_converter_t c;
  uint64_t skipped = 0;
  cli_warnings_t warnings = {"convert", o->input, 0};
  json_converter__begin(&c, &j);
  if (rc != TRACE_READ_END) rc = convert_all(reader, &record, &c, &skipped, &o->range, &warnings);
  json_converter__end(&c); /* after a failed write it only frees */
  if (!close_output(&out, &w, &j)) return EXIT_FAILED;
  if (skipped > MAX_REPORTED_SKIPS)
    fprintf(stderr, "trace convert: warning: %llu records skipped in all\n",
            (unsigned long long)skipped);
  cli__warnings_done(&warnings);
  report_omitted(&c);
  cli__warn_if_recovered(o->input, reader);
  if (rc == TRACE_READ_ERROR) {
    trace_reader_error_t e = trace_reader_error(reader);
    cli__error("convert", "%s: at byte offset %llu: %s", o->input, (unsigned long long)e.offset,
               e.message);
    fprintf(stderr, "trace convert: the %llu events before the damage were written\n",
            (unsigned long long)c.events);
    return EXIT_FAILED;
  }
  return EXIT_OK;
}

int cmd__convert(int argc, char** argv) {
  convert_options_t o;
  int rc = parse_options(argc, argv, &o);
  if (rc != 0) return rc < 0 ? EXIT_OK : rc;
  int fd = cli__open_input("convert", o.input);
  if (fd < 0) return EXIT_FAILED;
  trace_reader_t* reader = trace_reader_open_fd(fd, NULL);
  if (!reader) {
    cli__error("convert", "out of memory");
    rc = EXIT_FAILED;
  } else {
    rc = convert(&o, fd, reader);
    trace_reader_close(reader);
  }
  if (fd != STDIN_FILENO) close(fd);
  return rc;
}
