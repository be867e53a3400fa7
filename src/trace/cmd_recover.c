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

#include "fxt/fxt_format.h"
#include "reader/reader_internal.h"
#include "trace-reader/reader.h"
#include "trace/cli.h"
#include "trace/compress_writer.h"

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
    "Every record copied passes the reader's checks: damaged data is left out (each\n"
    "stretch reported on stderr with its offset), a record whose size field is too\n"
    "large is cut to its contents, and the last line on stderr counts the records\n"
    "recovered and what was left out and why; trace dump reads OUT with nothing skipped.\n"
    "\n"
    "Exit status: 0 on success, 1 if FILE is not a raw trace buffer (an archive that\n"
    "is already complete, say), its header is unusable (no OUT is written), it turns\n"
    "out damaged later (a compressed file cut short: the records before are written),\n"
    "or OUT cannot be written (a partial OUT is removed), 2 on a usage error.\n";

static bool same_file(int fd, const char* path) {
  struct stat in, out;
  return fstat(fd, &in) == 0 && stat(path, &out) == 0 && in.st_dev == out.st_dev &&
         in.st_ino == out.st_ino;
}

/* The output, opened at the first record (so that an input that cannot be
 * recovered leaves no file), compressed if its name says so. */
typedef struct output {
  const char* path; /* NULL or "-": stdout */
  FILE* file;       /* NULL until opened */
  FILE* stream;     /* what records are written to: file, or a compressor over it */
  bool to_stdout, removable;
  int err; /* the first write error */
} output_t;

static bool output_open(output_t* o) {
  o->to_stdout = o->path == NULL || strcmp(o->path, "-") == 0;
  o->file = o->to_stdout ? stdout : fopen(o->path, "wb");
  if (!o->file) {
    cli__error("recover", "cannot write '%s': %s", o->path, strerror(errno));
    return false;
  }
  o->removable = !o->to_stdout && cli__is_regular_file(o->file);
  compress_codec_t codec = o->to_stdout ? COMPRESS_NONE : compress__codec_for_name(o->path);
  o->stream = codec == COMPRESS_NONE ? o->file : compress__open(o->file, codec, NULL);
  if (!o->stream) o->err = errno ? errno : ENOMEM;
  return true;
}

static void output_write(output_t* o, const unsigned char* data, size_t size) {
  if (!o->err && fwrite(data, 1, size, o->stream) != size) o->err = errno ? errno : EIO;
}

/* Finishes the output: EXIT_OK, or EXIT_FAILED after saying why (a partial
 * regular file is removed). */
static int output_close(output_t* o) {
  if (!o->file) return EXIT_OK;
  int err = o->err;
  if (o->stream && fflush(o->stream) != 0 && !err) err = errno ? errno : EIO;
  if (o->stream && o->stream != o->file && fclose(o->stream) != 0 && !err)
    err = errno ? errno : EIO;
  if (fflush(o->file) != 0 && !err) err = errno ? errno : EIO;
  if (!o->to_stdout && fclose(o->file) != 0 && !err) err = errno;
  if (!err) return EXIT_OK;
  cli__error("recover", "writing %s failed: %s", o->to_stdout ? "standard output" : o->path,
             strerror(err));
  if (o->removable && unlink(o->path) == 0)
    fprintf(stderr, "trace recover: removed the incomplete '%s'\n", o->path);
  return EXIT_FAILED;
}

/* Writes a record of `size` bytes whose header may declare more (the
 * reader read on after its contents: a damaged size field): with the size
 * field set to its contents, so that every reader frames it as trace
 * recover did. */
static void write_record(output_t* o, const unsigned char* bytes, size_t size) {
  uint64_t header;
  memcpy(&header, bytes, sizeof(header));
  uint64_t words = size / 8;
  if (fxt_record_words(header) == words) {
    output_write(o, bytes, size);
    return;
  }
  unsigned bits = FXT_GET(header, 0, 3) == FXT_RECORD_LARGE ? 32 : 12; /* the size field */
  uint64_t mask = ((UINT64_C(1) << bits) - 1) << 4;
  header = (header & ~mask) | (words << 4);
  output_write(o, (const unsigned char*)&header, sizeof(header));
  output_write(o, bytes + sizeof(header), size - sizeof(header));
}

enum { MAX_SHOWN = 20 }; /* lines about what was left out or cut, then a count */

/* One line about a record left out or cut: the first MAX_SHOWN. */
static void report(uint64_t* shown, const char* what, const trace_reader_error_t* e) {
  if (++*shown <= MAX_SHOWN)
    fprintf(stderr, "trace recover: %s at byte offset %" PRIu64 ": %s\n", what, e->offset,
            e->message);
}

/* The last line: what was recovered, what was left out and why. */
static void report_totals(const trace_reader_t* reader, uint64_t written, uint64_t shown) {
  if (shown > MAX_SHOWN)
    fprintf(stderr, "trace recover: (%" PRIu64 " more lines like those above not shown)\n",
            shown - MAX_SHOWN);
  buffer_scan_stats_t scan = recover__scan_stats(reader->raw);
  uint64_t bad = scan.bad_records;
  uint64_t cut = reader->trimmed_records + recover__trimmed(reader->raw);
  fprintf(stderr, "trace recover: %" PRIu64 " records recovered; ", written);
  if (reader->damaged_runs + bad == 0) fprintf(stderr, "nothing left out");
  if (reader->damaged_runs)
    fprintf(stderr,
            "left out %" PRIu64 " stretch(es) of damaged data (%" PRIu64
            " bytes, with any record in them)",
            reader->damaged_runs, reader->damaged_bytes);
  if (bad)
    fprintf(stderr,
            "%s%" PRIu64
            " record(s) of the buffer whose size did not fit their chunk, with the "
            "rest of that chunk (the first at byte %" PRIu64 " of the buffer)",
            reader->damaged_runs ? " and " : "left out ", bad, scan.first_bad_offset);
  if (cut)
    fprintf(stderr, "; %" PRIu64 " record(s) cut to their contents (a size field too large)", cut);
  fputc('\n', stderr);
}

/* Reads `input` through the reader, which rebuilds the archive of a raw
 * buffer as it streams (reader/recover.h) and checks every record of the
 * streamed saves and of the buffer (reader/raw_frame.c), and copies the
 * records it returns to `o`: each decodes cleanly in the archive they make,
 * so no reader rejects or skips anything in it. What the reader skipped
 * (damaged data) is left out, and reported with its offset. */
static int recover(const char* input, trace_reader_t* reader, output_t* o) {
  trace_record_t record;
  int rc = trace_reader_next(reader, &record);
  if (!trace_reader_recovered(reader)) {
    trace_reader_error_t e = trace_reader_error(reader);
    if (reader->raw_seen)
      cli__error("recover", "%s: %s", input, e.message);
    else if (rc == TRACE_READ_RECORD && record.type == 0 && record.metadata.type == 4)
      cli__error("recover", "%s is already a complete FXT archive: nothing to recover", input);
    else if (rc == TRACE_READ_ERROR && (reader->input.read_errno || reader->input.damage))
      cli__error("recover", "cannot read '%s': %s", input, e.message);
    else
      cli__error("recover", "%s is not a raw trace buffer (no buffer magic number)", input);
    return EXIT_FAILED;
  }
  if (!output_open(o)) return EXIT_FAILED;
  uint64_t written = 0, shown = 0;
  for (; rc != TRACE_READ_END && rc != TRACE_READ_ERROR; rc = trace_reader_next(reader, &record)) {
    trace_reader_error_t e;
    const unsigned char* bytes;
    size_t size;
    if (rc != TRACE_READ_RECORD) {
      e = trace_reader_error(reader);
      report(&shown, "left out", &e);
    } else if (reader__record_bytes(reader, &bytes, &size)) {
      write_record(o, bytes, size);
      written++;
      if (trace_reader_warning(reader, &e)) report(&shown, "cut to its contents", &e);
    }
  }
  int status = output_close(o);
  if (rc == TRACE_READ_ERROR) {
    trace_reader_error_t e = trace_reader_error(reader);
    cli__error("recover", "%s: at byte offset %" PRIu64 ": %s", input, e.offset, e.message);
    status = EXIT_FAILED;
  }
  report_totals(reader, written, shown);
  return status;
}

int cmd__recover(int argc, char** argv) {
  static const struct option kLong[] = {{"output", required_argument, NULL, 'o'},
                                        {"help", no_argument, NULL, 'h'},
                                        {NULL, 0, NULL, 0}};
  output_t out = {0};
  int opt;
  opterr = 0;
  optind = 1;
  while ((opt = getopt_long(argc, argv, ":o:h", kLong, NULL)) != -1) {
    switch (opt) {
      case 'o':
        out.path = optarg;
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
  if (out.path && strcmp(out.path, "-") != 0 && same_file(fd, out.path)) {
    cli__error("recover", "the output '%s' is the input; refusing to overwrite it", out.path);
    if (fd != STDIN_FILENO) close(fd);
    return EXIT_FAILED;
  }
  trace_reader_t* reader = trace_reader_open_fd(fd, NULL);
  int rc = EXIT_FAILED;
  if (reader)
    rc = recover(input, reader, &out);
  else
    cli__error("recover", "out of memory");
  trace_reader_close(reader);
  if (fd != STDIN_FILENO) close(fd);
  return rc;
}
