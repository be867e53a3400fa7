/* `trace recover`: the FXT archive of a program that crashed while tracing in
 * file mode, rebuilt from the raw image of its trace buffer (the live buffer
 * its placeholder names, cli__open_input() follows it; or a raw buffer). */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "reader/reader_internal.h"
#include "trace-reader/reader.h"
#include "trace/archive_scan.h"
#include "trace/archive_writer.h"
#include "trace/cli.h"
#include "trace/compress_writer.h"
#include "trace/fxt_writer.h"
#include "trace/output.h"

static const char kUsage[] =
    "Usage: trace recover FILE [-o OUT]\n"
    "\n"
    "FILE is the FXTRACE_OUTPUT of a program traced in file mode that crashed or was\n"
    "killed before finishing it: a placeholder naming the live buffer in shared memory\n"
    "(/dev/shm/fxtrace-PID-XXXXXX), which is read with the streamed saves the file\n"
    "holds; or such a raw trace buffer itself. Writes the FXT archive\n"
    "the program would have written: every record it had committed, under a\n"
    "provider named \"recovered\". 'trace dump' and 'trace convert' read such a file\n"
    "directly; this command keeps the archive for other tools (Perfetto, ...). OUT may\n"
    "be FILE itself (the archive then replaces the placeholder). The live buffer is\n"
    "left in place: remove it once recovered.\n"
    "FILE may be compressed with zstd or gzip ('-' reads stdin).\n"
    "\n"
    "Options:\n"
    "  -o, --output=OUT   write to OUT ('-' for stdout, the default); OUT named\n"
    "                     *.zst or *.gz is compressed with zstd or gzip\n"
    "  -h, --help         show this help\n"
    "\n"
    "Exit status: 0 on success, 1 if FILE is not a raw trace buffer (an archive that\n"
    "is already complete, say), its header is unusable, or OUT cannot be written\n"
    "(what was written is kept, cut after its last complete record), 2 on a usage\n"
    "error.\n";

static bool same_file(int fd, const char* path) {
  struct stat in, out;
  return fstat(fd, &in) == 0 && stat(path, &out) == 0 && in.st_dev == out.st_dev &&
         in.st_ino == out.st_ino;
}

static void no_record(void* context, const archive_scan_provider_t* provider, unsigned type,
                      uint64_t bytes) {
  (void)context, (void)provider, (void)type, (void)bytes;
}

/* Why `input` cannot be recovered, said; the reader's first answer was rc. */
static void say_unrecoverable(const char* input, trace_reader_t* reader, int rc,
                              const trace_record_t* record) {
  trace_reader_error_t e = trace_reader_error(reader);
  if (reader->raw_seen)
    cli__error("recover", "%s: %s", input, e.message);
  else if (rc == TRACE_READ_RECORD && record->type == 0 && record->metadata.type == 4)
    cli__error("recover", "%s is already a complete FXT archive: nothing to recover", input);
  else if (rc == TRACE_READ_ERROR && (reader->input.read_errno || reader->input.damage))
    cli__error("recover", "cannot read '%s': %s", input, e.message);
  else
    cli__error("recover", "%s is not a raw trace buffer (no buffer magic number)", input);
}

/* Reads `input` through the reader, which rebuilds the archive of a raw
 * buffer as it streams (reader/recover.h), and writes its records to
 * `output` as they come (opened at the first, so that an input that cannot
 * be recovered leaves no file); a failed write stops at once and keeps the
 * file cut after its last complete record (archive_writer.h). */
static int recover(const char* input, trace_reader_t* reader, const char* output) {
  trace_record_t record;
  int rc = trace_reader_next(reader, &record);
  if (!trace_reader_recovered(reader)) {
    say_unrecoverable(input, reader, rc, &record);
    return EXIT_FAILED;
  }
  bool to_stdout = output == NULL || strcmp(output, "-") == 0;
  output_t out;
  if (!output__open(&out, "recover", to_stdout ? "-" : output)) return EXIT_FAILED;
  compress_codec_t codec = to_stdout ? COMPRESS_NONE : compress__codec_for_name(output);
  archive_writer_t w;
  static archive_scan_t scan; /* large: off the stack */
  archive_scan__init(&scan, no_record, NULL);
  bool ok = archive_writer__init(&w, &out, codec);
  if (!ok) {
    cli__error("recover", "cannot start compressing: %s", strerror(errno));
  } else {
    for (; ok && rc != TRACE_READ_END && rc != TRACE_READ_ERROR;
         rc = trace_reader_next(reader, &record)) {
      const unsigned char* bytes;
      size_t size;
      if (reader__record_bytes(reader, &bytes, &size))
        ok = fxt_writer__write(&w, &scan, bytes, size);
    }
    ok = ok && archive_writer__finish(&w);
    if (!ok) {
      cli__error("recover", "writing %s failed: %s", out.name, strerror(w.error));
      archive_writer__keep(&w, "recover", "record", NULL);
    }
  }
  if (output__close(&out) != 0 && ok) {
    cli__error("recover", "writing %s failed: %s", out.name, strerror(out.error));
    ok = false;
  }
  if (!ok && out.offset == 0) output__remove(&out); /* nothing at all in it */
  archive_writer__free(&w);
  if (ok && rc == TRACE_READ_ERROR) {
    trace_reader_error_t e = trace_reader_error(reader);
    cli__error("recover", "%s: at byte offset %" PRIu64 ": %s", input, e.offset, e.message);
    return EXIT_FAILED;
  }
  return ok ? EXIT_OK : EXIT_FAILED;
}

int cmd__recover(int argc, char** argv) {
  static const struct option kLong[] = {{"output", required_argument, NULL, 'o'},
                                        {"help", no_argument, NULL, 'h'},
                                        {NULL, 0, NULL, 0}};
  const char* output = NULL;
  int opt;
  opterr = 0;
  optind = 1;
  while ((opt = getopt_long(argc, argv, ":o:h", kLong, NULL)) != -1) {
    switch (opt) {
      case 'o':
        output = optarg;
        break;
      case 'h':
        fputs(kUsage, stdout);
        return EXIT_OK;
      case ':':
        return cli__usage_error("recover", "option '%s' needs a value", argv[optind - 1]);
      default:
        return cli__usage_error("recover", "unknown option '%s'", argv[optind - 1]);
    }
  }
  if (optind != argc - 1)
    return cli__usage_error("recover",
                            optind == argc ? "missing the input FILE" : "expected one input FILE");
  const char* input = argv[optind];
  int fd = cli__open_input("recover", input);
  if (fd < 0) return EXIT_FAILED;
  if (output && strcmp(output, "-") != 0 && same_file(fd, output)) {
    cli__error("recover", "the output '%s' is the input; refusing to overwrite it", output);
    if (fd != STDIN_FILENO) close(fd);
    return EXIT_FAILED;
  }
  trace_reader_t* reader = trace_reader_open_fd(fd, NULL);
  int rc = EXIT_FAILED;
  if (reader)
    rc = recover(input, reader, output);
  else
    cli__error("recover", "out of memory");
  trace_reader_close(reader);
  if (fd != STDIN_FILENO) close(fd);
  return rc;
}
