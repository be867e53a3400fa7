/* bench_fxt_count: counts the records of an FXT archive, for bench/run's
 * streaming scenarios (bench/README.md): reads the file sequentially and
 * prints one line
 *   events=N event_bytes=B records=R bytes=T
 * (event records = FXT record type 4, their bytes; every record; the file's
 * bytes). Only the record headers' type and size fields are read (FXT: bits
 * 0-3 type, bits 4-15 size in 8-byte words; large records, type 15, bits
 * 4-35); anything that does not fit exits with status 1. The full decoder is
 * libtrace-reader; this is a counter fast enough for gigabyte archives. */
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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
  uint8_t* buf = malloc(BUF);
  if (!buf) return 1;
  uint64_t events = 0, event_bytes = 0, records = 0, total = 0, skip = 0; /* skip: bytes left of a record */
  size_t have = 0;
  for (;;) {
    size_t n = fread(buf + have, 1, BUF - have, f);
    if (n == 0 && have == 0) break;
    if (n == 0) {
      fprintf(stderr, "bench_fxt_count: %zu trailing bytes at offset %" PRIu64 "\n", have, total);
      return 1;
    }
    have += n;
    size_t pos = 0;
    while (pos < have) {
      if (skip) {
        uint64_t s = skip < have - pos ? skip : have - pos;
        skip -= s, pos += s, total += s;
        continue;
      }
      if (have - pos < 8) break;
      uint64_t h;
      memcpy(&h, buf + pos, 8);
      unsigned type = h & 0xf;
      uint64_t words = type == 15 ? (h >> 4) & 0xffffffffu : (h >> 4) & 0xfff;
      if (words == 0) {
        fprintf(stderr, "bench_fxt_count: a record of size 0 at offset %" PRIu64 "\n", total);
        return 1;
      }
      records++;
      if (type == 4) events++, event_bytes += words * 8;
      skip = words * 8;
    }
    memmove(buf, buf + pos, have - pos);
    have -= pos;
  }
  if (skip) {
    fprintf(stderr, "bench_fxt_count: the last record is cut short\n");
    return 1;
  }
  printf("events=%" PRIu64 " event_bytes=%" PRIu64 " records=%" PRIu64 " bytes=%" PRIu64 "\n",
         events, event_bytes, records, total);
  fclose(f);
  free(buf);
  return 0;
}
