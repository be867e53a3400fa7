/* bench_fxt_count: counts the records of an FXT archive, for bench/run's
 * streaming scenarios (bench/README.md), and prints one line
 *   events=N event_bytes=B records=R bytes=T
 *   events=N event_bytes=B records=R bytes=T file_bytes=F
 * (event records = FXT record type 4, and their bytes; the records of the
 * providers' data; the manager's wall-clock anchors, events of the reserved
 * provider CLOCK_ANCHOR_PROVIDER_ID (docs/merge.md), are none of these; the archive's bytes; the
 * file's bytes, fewer than T for an archive compressed with zstd or gzip, which it reads through
 * libtrace-reader's input layer). It reads record framing only, with the
 * scan `trace record` uses (src/trace/archive_scan.h), fast enough for
 * gigabyte archives; a damaged or truncated archive exits with status 1. */
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "anchor/clock_anchor.h"
#include "reader/input.h"
#include "trace/archive_scan.h"

typedef struct counts {
  uint64_t events, event_bytes, records;
} counts_t;

static void count(void* context, const archive_scan_provider_t* provider, unsigned type,
                  uint64_t bytes) {
  /* the manager's clock anchors: not the benchmark's records */
  if (provider->id == CLOCK_ANCHOR_PROVIDER_ID) return;
  counts_t* c = context;
  c->records++;
  if (type == 4) c->events++, c->event_bytes += bytes;
}

int main(int argc, char** argv) {
  if (argc != 2) {
    fprintf(stderr, "usage: bench_fxt_count FILE.fxt\n");
    return 2;
  }
  FILE* f = fopen(argv[1], "rb");
  if (!f) {
    perror(argv[1]);
    return 1;
  }
  enum { BUF = 1 << 22 };
  archive_scan_t* scan = malloc(sizeof(*scan));
  if (!scan) return 1;
  counts_t c = {0};
  archive_scan__init(scan);
  archive_scan__on_record(scan, count, &c);
  input_t in;
  input__init_file(&in, f);
  ptrdiff_t n;
  while ((n = input__ensure(&in, BUF)) > 0) {
    archive_scan__feed(scan, in.buf + in.start, (size_t)n);
    input__consume(&in, (size_t)n);
  }
  if (n < 0 || in.read_errno || in.damage || !archive_scan__finish(scan)) {
    fprintf(stderr, "bench_fxt_count: %s: %s\n", argv[1],
            n < 0           ? "out of memory"
            : in.read_errno ? strerror(in.read_errno)
            : in.damage     ? in.damage
                            : scan->damage);
    return 1;
  }
  struct stat st;
  uint64_t file_bytes = fstat(fileno(f), &st) == 0 ? (uint64_t)st.st_size : 0;
  printf("events=%" PRIu64 " event_bytes=%" PRIu64 " records=%" PRIu64 " bytes=%" PRIu64
         " file_bytes=%" PRIu64 "\n",
         c.events, c.event_bytes, c.records, scan->offset, file_bytes);
  input__free(&in);
  fclose(f);
  free(scan);
  return 0;
}
