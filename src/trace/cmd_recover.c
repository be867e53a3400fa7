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
    "Every record copied passes the reader's checks: damaged data is left out (each\n"
    "stretch reported on stderr with its offset), a record whose size field is too\n"
    "large is cut to its contents, and the last line on stderr counts the records\n"
    "recovered (those OUT holds) and what was left out and why, and those a failed\n"
    "write kept out of OUT; trace dump reads OUT with nothing skipped.\n"
    "\n"
    "Exit status: 0 on success, 1 if FILE is not a raw trace buffer (an archive that\n"
    "is already complete, say), its header is unusable (no OUT is written), it turns\n"
    "out damaged later (a compressed file cut short: the records before are written),\n"
    "or OUT cannot be written (what was written is kept, cut after its last complete\n"
    "record), 2 on a usage error.\n";

static bool same_file(int fd, const char* path) {
  struct stat in, out;
  return fstat(fd, &in) == 0 && stat(path, &out) == 0 && in.st_dev == out.st_dev &&
         in.st_ino == out.st_ino;
}

/* The archive being written: a failed write stops at once and keeps the
 * file cut after its last complete record (archive_writer.h). The records
 * counted as recovered are those in the kept file: the end offset (in the
 * stream) of each record handed to the writer waits in `ends` until the
 * writer's cut point (kept_logical, which only grows) passes it, so a cut
 * file is counted as it is, not as it was handed (a compressed frame cut
 * off loses up to ARCHIVE_FRAME_BYTES of records). */
typedef struct recovered {
  output_t out;
  archive_writer_t writer;
  archive_scan_t scan; /* the writer's record boundaries */
  bool ok;
  uint64_t handed_bytes; /* stream bytes of the records handed so far */
  uint64_t handed;       /* records handed to the writer */
  uint64_t kept;         /* of those, records all of whose bytes are before the cut point */
  uint64_t* ends;        /* [head, count): ends of handed records past the cut point */
  size_t head, count, capacity;
  bool ends_lost; /* out of memory for `ends`: kept is then a lower bound */
} recovered_t;

/* Counts the records the cut point has passed. */
static void recovered_settle(recovered_t* r) {
  while (r->head < r->count && r->ends[r->head] <= r->writer.kept_logical) {
    r->head++;
    r->kept++;
  }
  if (r->head == r->count) r->head = r->count = 0;
}

/* A record of `size` bytes was handed to the writer. */
static void recovered_handed(recovered_t* r, size_t size) {
  r->handed++;
  r->handed_bytes += size;
  recovered_settle(r);
  if (r->count == r->capacity && r->head > 0) { /* reuse the settled front */
    memmove(r->ends, r->ends + r->head, (r->count - r->head) * sizeof(*r->ends));
    r->count -= r->head;
    r->head = 0;
  }
  if (r->count == r->capacity) {
    size_t capacity = r->capacity ? r->capacity * 2 : 4096;
    uint64_t* grown = realloc(r->ends, capacity * sizeof(*grown));
    if (!grown) {
      r->ends_lost = true;
      return;
    }
    r->ends = grown;
    r->capacity = capacity;
  }
  r->ends[r->count++] = r->handed_bytes;
}

/* Opens `path` (NULL or "-": stdout), compressed if its name says so. */
static bool recovered_open(recovered_t* r, const char* path) {
  bool to_stdout = path == NULL || strcmp(path, "-") == 0;
  memset(r, 0, sizeof(*r));
  if (!output__open(&r->out, "recover", to_stdout ? "-" : path)) return false;
  archive_scan__init(&r->scan);
  compress_codec_t codec = to_stdout ? COMPRESS_NONE : compress__codec_for_name(path);
  r->ok = archive_writer__init(&r->writer, &r->out, codec);
  if (!r->ok) cli__error("recover", "cannot start compressing: %s", strerror(errno));
  return true;
}

static void output_write(recovered_t* r, const unsigned char* data, size_t size) {
  if (r->ok) r->ok = fxt_writer__write(&r->writer, &r->scan, data, size);
}

/* Finishes the output: EXIT_OK, or EXIT_FAILED after saying why (what was
 * written is kept, cut after its last complete record; a file with nothing
 * in it is removed). */
static int recovered_close(recovered_t* r) {
  bool ok = r->ok && archive_writer__finish(&r->writer);
  if (!ok && r->writer.error) {
    cli__error("recover", "writing %s failed: %s", r->out.name, strerror(r->writer.error));
    archive_writer__keep(&r->writer, "recover", "record", NULL);
  }
  if (output__close(&r->out) != 0 && ok) {
    cli__error("recover", "writing %s failed: %s", r->out.name, strerror(r->out.error));
    ok = false;
  }
  if (!ok && r->out.offset == 0) output__remove(&r->out); /* nothing at all in it */
  recovered_settle(r); /* the final cut point: the end, or where the file was cut */
  if (!ok && r->writer.kept_logical == 0) r->kept = 0; /* the file was removed */
  free(r->ends);
  r->ends = NULL;
  archive_writer__free(&r->writer);
  return ok ? EXIT_OK : EXIT_FAILED;
}

/* Writes a record of `size` bytes whose header may declare more (the
 * reader read on after its contents: a damaged size field): with the size
 * field set to its contents, so that every reader frames it as trace
 * recover did. A blob chain's bytes are several whole records: as they are. */
static void write_record(recovered_t* o, const unsigned char* bytes, size_t size) {
  uint64_t header;
  memcpy(&header, bytes, sizeof(header));
  uint64_t words = size / 8;
  recovered_handed(o, size);
  /* shorter than the bytes: a blob chain (reader/blob_chain.c), records
   * whose own size fields are exact */
  if (fxt_record_words(header) <= words) {
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
static void report_totals(const trace_reader_t* reader, const recovered_t* o, uint64_t shown) {
  if (shown > MAX_SHOWN)
    fprintf(stderr, "trace recover: (%" PRIu64 " more lines like those above not shown)\n",
            shown - MAX_SHOWN);
  buffer_scan_stats_t scan = recover__scan_stats(reader->raw);
  uint64_t bad = scan.bad_records;
  uint64_t cut = reader->trimmed_records + recover__trimmed(reader->raw);
  fprintf(stderr, "trace recover: %" PRIu64 " records recovered; ", o->kept);
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
  uint64_t streamed, past_records;
  uint64_t past = recover__past(reader->raw, &streamed, &past_records);
  if (past)
    fprintf(stderr,
            "; the header's streamed_bytes (%" PRIu64 ") is short of the file's saves: %" PRIu64
            " more bytes read as saves (%" PRIu64 " records)",
            streamed, past, past_records);
  const char* inconsistent = recover__inconsistency(reader->raw);
  if (inconsistent)
    fprintf(stderr, "; the buffer's header is damaged (%s): records may be duplicated or missing",
            inconsistent);
  if (cut)
    fprintf(stderr, "; %" PRIu64 " record(s) cut to their contents (a size field too large)", cut);
  if (o->handed > o->kept)
    fprintf(stderr, "; %" PRIu64 " not written: the write failed%s", o->handed - o->kept,
            o->ends_lost ? " (at most: out of memory to count them)" : "");
  fputc('\n', stderr);
}

/* Reads `input` through the reader, which rebuilds the archive of a raw
 * buffer as it streams (reader/recover.h) and checks every record of the
 * streamed saves and of the buffer (reader/raw_frame.c), and copies the
 * records it returns to `o`: each decodes cleanly in the archive they make,
 * so no reader rejects or skips anything in it. What the reader skipped
 * (damaged data) is left out, and reported with its offset. */
static int recover(const char* input, trace_reader_t* reader, const char* output) {
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
  static recovered_t out; /* large: off the stack */
  if (!recovered_open(&out, output)) return EXIT_FAILED;
  recovered_t* o = &out;
  uint64_t shown = 0;
  for (; o->ok && rc != TRACE_READ_END && rc != TRACE_READ_ERROR;
       rc = trace_reader_next(reader, &record)) {
    trace_reader_error_t e;
    const unsigned char* bytes;
    size_t size;
    if (rc != TRACE_READ_RECORD) {
      e = trace_reader_error(reader);
      report(&shown, "left out", &e);
    } else if (reader__record_bytes(reader, &bytes, &size)) {
      write_record(o, bytes, size);
      if (trace_reader_warning(reader, &e)) report(&shown, "cut to its contents", &e);
    }
  }
  int status = recovered_close(o);
  if (rc == TRACE_READ_ERROR) {
    trace_reader_error_t e = trace_reader_error(reader);
    cli__error("recover", "%s: at byte offset %" PRIu64 ": %s", input, e.offset, e.message);
    status = EXIT_FAILED;
  }
  report_totals(reader, o, shown);
  return status;
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
