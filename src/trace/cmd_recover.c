/* `trace recover`: the FXT archive of a program that crashed while tracing in
 * file mode, rebuilt from the raw image of its trace buffer (the live buffer
 * its placeholder names, cli__open_input() follows it; or a raw buffer). */
#include <errno.h>
#include <getopt.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fxt/fxt_format.h"
#include "reader/input.h"
#include "reader/recover.h"
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

enum { RECOVER_WRITE_BYTES = 1 << 20 };

/* Reads all of fd into a malloc'ed block, decompressed if it is a zstd or
 * gzip file (the reader's input layer); NULL (with *why) on failure. */
static unsigned char* read_all(int fd, size_t* size, char* why, size_t why_size) {
  input_t in;
  input__init_fd(&in, fd);
  ptrdiff_t n = input__read_all(&in);
  const char* error = n < 0                ? strerror(ENOMEM)
                      : in.read_errno != 0 ? strerror(in.read_errno)
                                           : in.damage;
  if (error) {
    snprintf(why, why_size, "%s", error);
    input__free(&in);
    return NULL;
  }
  unsigned char* data = in.owned;
  if (in.start > 0) memmove(data, data + in.start, (size_t)n);
  in.owned = NULL;
  input__free(&in);
  *size = (size_t)n;
  return data ? data : malloc(1); /* an empty input */
}

static bool same_file(int fd, const char* path) {
  struct stat in, out;
  return fstat(fd, &in) == 0 && stat(path, &out) == 0 && in.st_dev == out.st_dev &&
         in.st_ino == out.st_ino;
}

static void no_record(void* context, const archive_scan_provider_t* provider, unsigned type,
                      uint64_t bytes) {
  (void)context, (void)provider, (void)type, (void)bytes;
}

/* Writes the recovered archive; a failed write keeps the file cut after its
 * last complete record (archive_writer.h). */
static int write_output(const char* output, const unsigned char* data, size_t size) {
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
    for (size_t at = 0; ok && at < size;) { /* in pieces: a compressed frame ends between */
      size_t n = size - at < RECOVER_WRITE_BYTES ? size - at : RECOVER_WRITE_BYTES;
      ok = fxt_writer__write(&w, &scan, data + at, n);
      at += n;
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
  size_t size = 0;
  char why_not[200];
  unsigned char* raw = read_all(fd, &size, why_not, sizeof(why_not));
  if (fd != STDIN_FILENO) close(fd);
  if (!raw) {
    cli__error("recover", "cannot read '%s': %s", input, why_not);
    return EXIT_FAILED;
  }
  if (!recover__is_raw_buffer(raw, size)) {
    uint64_t first = 0;
    if (size >= 8) memcpy(&first, raw, 8);
    free(raw);
    if (first == FXT_MAGIC_RECORD)
      cli__error("recover", "%s is already a complete FXT archive: nothing to recover", input);
    else
      cli__error("recover", "%s is not a raw trace buffer (no buffer magic number)", input);
    return EXIT_FAILED;
  }
  unsigned char* archive;
  size_t archive_size;
  const char* why = recover__archive(raw, size, raw, &archive, &archive_size);
  if (why) {
    cli__error("recover", "%s: the raw trace buffer cannot be recovered: %s", input, why);
    return EXIT_FAILED;
  }
  int rc = write_output(output, archive, archive_size);
  free(archive);
  return rc;
}
