/* `trace formats`: every typed-event format an archive holds, in the
 * layout of tracefs's events/SYSTEM/EVENT/format files (docs/event-formats.md). */
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "trace-reader/formats.h"
#include "trace-reader/reader.h"
#include "trace/cli.h"
#include "trace/text_escape.h"

static const char kUsage[] =
    "Usage: trace formats FILE\n"
    "\n"
    "Lists the format of every typed event (TRACE_EVENT(), kernel SYSTEM/EVENT) that\n"
    "the FXT archive FILE ('-' for stdin) defines, as tracefs's events/*/*/format\n"
    "files show them, each after a 'category:' line and a '# provider' comment, with\n"
    "an empty line between formats. A later format of the same provider, category\n"
    "and name replaces the earlier one. Exit status: 0 on success, 1 if the archive\n"
    "is damaged or holds a malformed format (reported on stderr), 2 on a usage error.\n";

static int list(const char* path, trace_reader_t* reader) {
  trace_format_set_t* formats = trace_format_set_new();
  if (!formats) {
    cli__error("formats", "out of memory");
    return EXIT_FAILED;
  }
  /* provider names, by id, as the formats are taken */
  enum { MAX_NAMED = 256 };
  static char names[MAX_NAMED][128];
  trace_record_t record;
  int rc;
  int status = EXIT_OK;
  cli_warnings_t warnings = {"formats", path, 0};
  while ((rc = trace_reader_next(reader, &record)) != TRACE_READ_END && rc != TRACE_READ_ERROR) {
    if (rc != TRACE_READ_RECORD) continue;
    cli__note_warning(&warnings, reader);
    trace_reader_error_t error;
    int taken = trace_format_set_add_record(formats, &record, &error);
    if (taken < 0) {
      cli__error("formats", "%s: at byte offset %" PRIu64 ": bad format: %s", path, error.offset,
                 error.message);
      status = EXIT_FAILED;
    } else if (taken > 0 && record.provider->id < MAX_NAMED) {
      snprintf(names[record.provider->id], sizeof(names[0]), "%.*s",
               (int)record.provider->name.length, record.provider->name.data);
    }
  }
  for (size_t i = 0; i < trace_format_set_count(formats); i++) {
    const trace_event_format_t* f = trace_format_set_at(formats, i);
    if (i) putchar('\n');
    const char* name = f->provider_id < MAX_NAMED ? names[f->provider_id] : "";
    printf("# provider %" PRIu32 " ", f->provider_id);
    text__put_escaped(stdout, name, strlen(name), NULL, false);
    putchar('\n');
    /* the format file's own layout (lines, tabs) stays; nothing else raw */
    text__put_escaped(stdout, f->text, f->text_length, "\n\t", false);
    if (f->text_length == 0 || f->text[f->text_length - 1] != '\n') putchar('\n');
  }
  trace_format_set_free(formats);
  cli__warnings_done(&warnings);
  cli__warn_if_recovered(path, reader);
  if (fflush(stdout) != 0 || ferror(stdout)) {
    cli__error("formats", "writing standard output failed");
    return EXIT_FAILED;
  }
  if (rc == TRACE_READ_ERROR) {
    trace_reader_error_t e = trace_reader_error(reader);
    cli__error("formats", "%s: at byte offset %" PRIu64 ": %s", path, e.offset, e.message);
    return EXIT_FAILED;
  }
  return status;
}

int cmd__formats(int argc, char** argv) {
  static const struct option kLong[] = {{"help", no_argument, NULL, 'h'}, {NULL, 0, NULL, 0}};
  int opt;
  opterr = 0;
  optind = 1;
  while ((opt = getopt_long(argc, argv, "h", kLong, NULL)) != -1) {
    if (opt == 'h') {
      fputs(kUsage, stdout);
      return EXIT_OK;
    }
    return cli__usage_error("formats", "unknown option '%s'", argv[optind - 1]);
  }
  if (optind != argc - 1)
    return cli__usage_error("formats",
                            optind == argc ? "missing the input FILE" : "expected one input FILE");
  int fd = cli__open_input("formats", argv[optind]);
  if (fd < 0) return EXIT_FAILED;
  trace_reader_t* reader = trace_reader_open_fd(fd, NULL);
  int rc = EXIT_FAILED;
  if (reader) rc = list(argv[optind], reader);
  trace_reader_close(reader);
  if (fd != STDIN_FILENO) close(fd);
  return rc;
}
