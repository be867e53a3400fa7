/* libFuzzer target for libtrace-reader. The first input byte picks options,
 * the rest is the archive:
 *   bits 0-1  input path: 0/3 memory, 1 FILE* (fmemopen), 2 fd (memfd)
 *   bit 2     require_magic
 *   bit 3     prepend the magic-number record, so that mutations get past
 *             the first-record check without having to rediscover it
 * An archive compressed with zstd or gzip (make_corpus writes such seeds) is
 * decompressed by the reader: its offsets and byte counts are then bounded
 * by what the input can decompress to, not by the input's size.
 * Every decoded byte is read (record_touch.h) so ASan sees bad pointers.
 * Blob records are offered to a typed-event format set and every event
 * with a format is rendered (<trace-reader/formats.h>). A record's warning
 * (trace_reader_warning()) must be about that record. */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "fxt/fxt_format.h"
#include "reader/decompress.h"
#include "record_touch.h"
#include "trace-reader/formats.h"
#include "trace-reader/reader.h"

/* Keeps the checksum alive so the reads are not optimized away. */
volatile uint64_t fuzz_sink;

static void check(bool ok, const char* what) {
  if (ok) return;
  fprintf(stderr, "fuzz_reader: %s\n", what);
  abort();
}

/* The most a compressed input of `size` bytes decompresses to (zstd's RLE
 * blocks: 128 KiB from 4 bytes), and the most records read from one. */
#define MAX_EXPANSION UINT64_C(32768)
enum { MAX_COMPRESSED_RESULTS = 1 << 20 };

static void read_all(trace_reader_t* r, uint64_t size, bool compressed) {
  check(r != NULL, "open failed");
  uint64_t sum = 0;
  trace_format_set_t* formats = trace_format_set_new();
  check(formats != NULL, "format set allocation failed");
  static char text[4096];
  /* Each result consumes at least 8 bytes: more calls means a loop. */
  for (size_t calls = 0;; calls++) {
    check(calls <= size / 8 + 2, "the reader does not make progress");
    if (compressed && calls == MAX_COMPRESSED_RESULTS) break; /* a bomb: enough */
    trace_record_t rec;
    int rc = trace_reader_next(r, &rec);
    if (rc == TRACE_READ_RECORD) {
      check(rec.offset + rec.size_words * 8 <= size, "record past the end of the input");
      sum += touch_record(&rec);
      trace_reader_error_t warning;
      if (trace_reader_warning(r, &warning)) {
        check(warning.offset == rec.offset, "a warning about another record");
        check(warning.message && warning.message[0], "empty warning");
        sum += touch_bytes(warning.message, strlen(warning.message));
      }
      trace_reader_error_t format_error;
      if (trace_format_set_add_record(formats, &rec, &format_error) < 0)
        check(format_error.message && format_error.message[0], "empty format error");
      const trace_event_format_t* format = trace_format_set_find_event(formats, &rec);
      if (format) {
        trace_format_render(format, &rec, text, sizeof(text));
        sum += touch_bytes(text, strlen(text));
      }
      continue;
    }
    check(rc == TRACE_READ_SKIPPED || rc == TRACE_READ_END || rc == TRACE_READ_ERROR,
          "invalid result code");
    if (rc != TRACE_READ_END) {
      trace_reader_error_t e = trace_reader_error(r);
      check(e.message && e.message[0], "empty error message");
      check(e.offset <= size, "error offset past the end of the input");
      sum += touch_bytes(e.message, strlen(e.message));
    }
    if (rc != TRACE_READ_SKIPPED) {
      check(trace_reader_next(r, &rec) == rc, "final result does not stick");
      break;
    }
  }
  trace_format_set_free(formats);
  trace_reader_stats_t st = trace_reader_stats(r);
  check(st.bytes_read <= size,
        compressed ? "more bytes read than could be decompressed" : "more bytes read than given");
  fuzz_sink = sum;
  trace_reader_close(r);
}

int LLVMFuzzerTestOneInput(const uint8_t* input, size_t input_size) {
  if (input_size == 0) return 0;
  uint8_t flags = input[0];
  input++;
  input_size--;

  /* An exact-size copy, so that ASan flags reads past the end. */
  size_t prefix = (flags & 8) ? 8 : 0;
  size_t size = prefix + input_size;
  unsigned char* data = malloc(size ? size : 1);
  if (!data) return 0;
  if (prefix) {
    uint64_t magic = FXT_MAGIC_RECORD;
    memcpy(data, &magic, sizeof(magic));
  }
  if (input_size) memcpy(data + prefix, input, input_size);

  trace_reader_options_t opt = {.require_magic = (flags & 4) != 0};
  bool compressed = decompress__detect(data, size) != DECOMPRESS_PLAIN;
  uint64_t bound = compressed ? (uint64_t)size * MAX_EXPANSION + 65536 : size;
  switch (flags & 3) {
    case 1: {
      /* fmemopen refuses size 0 on older glibc; read /dev/null instead. */
      FILE* f = size ? fmemopen(data, size, "rb") : fopen("/dev/null", "rb");
      if (!f) break;
      read_all(trace_reader_open_file(f, &opt), bound, compressed);
      fclose(f);
      break;
    }
    case 2: {
      int fd = memfd_create("fuzz_reader", MFD_CLOEXEC);
      if (fd < 0) break;
      bool ok = write(fd, data, size) == (ssize_t)size && lseek(fd, 0, SEEK_SET) == 0;
      if (ok) read_all(trace_reader_open_fd(fd, &opt), bound, compressed);
      close(fd);
      break;
    }
    default:
      read_all(trace_reader_open_memory(data, size, &opt), bound, compressed);
      break;
  }
  free(data);
  return 0;
}
