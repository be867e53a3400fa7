/* Reads an archive of stream_producer (test_streaming.py) with libtrace-reader
 * — in C, as the archive is over a GiB; compressed or not — and prints one
 * line of counts:
 *
 *   stream_check FILE ATTEMPTED
 *   -> events=E duplicates=D out_of_range=O no_arg=N records=R skipped=S
 *      bytes=B error=0|1
 *
 * events: instant events "stream"/"tick"; each carries its sequence number
 * "n" (0 .. ATTEMPTED-1), checked for duplicates and range with a bitmap.
 * bytes: the archive's size as read, decompressed. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <trace-reader/reader.h>

static bool is(trace_reader_string_t s, const char* text) {
  return s.length == strlen(text) && memcmp(s.data, text, s.length) == 0;
}

int main(int argc, char** argv) {
  if (argc != 3) {
    fprintf(stderr, "usage: stream_check FILE ATTEMPTED\n");
    return 2;
  }
  FILE* f = fopen(argv[1], "rb");
  if (!f) {
    perror(argv[1]);
    return 2;
  }
  uint64_t attempted = strtoull(argv[2], NULL, 10);
  uint8_t* seen = calloc(attempted / 8 + 1, 1);
  trace_reader_t* reader = trace_reader_open_file(f, NULL);
  if (!seen || !reader) return 2;
  uint64_t events = 0, duplicates = 0, out_of_range = 0, no_arg = 0;
  int error = 0, rc;
  trace_record_t r;
  while ((rc = trace_reader_next(reader, &r)) != TRACE_READ_END) {
    if (rc == TRACE_READ_ERROR) {
      trace_reader_error_t e = trace_reader_error(reader);
      fprintf(stderr, "stream_check: offset %llu: %s\n", (unsigned long long)e.offset, e.message);
      error = 1;
      break;
    }
    if (rc != TRACE_READ_RECORD || r.type != 4 || r.event.event_type != 0) continue;
    if (!is(r.event.category, "stream") || !is(r.event.name, "tick")) continue;
    events++;
    if (r.event.args.count != 1 || !is(r.event.args.items[0].name, "n")) {
      no_arg++;
      continue;
    }
    uint64_t n = r.event.args.items[0].uint64_value;
    if (n >= attempted) {
      out_of_range++;
      continue;
    }
    if (seen[n / 8] & (1u << (n % 8))) duplicates++;
    seen[n / 8] |= (uint8_t)(1u << (n % 8));
  }
  trace_reader_stats_t st = trace_reader_stats(reader);
  printf(
      "events=%llu duplicates=%llu out_of_range=%llu no_arg=%llu records=%llu skipped=%llu "
      "bytes=%llu error=%d\n",
      (unsigned long long)events, (unsigned long long)duplicates, (unsigned long long)out_of_range,
      (unsigned long long)no_arg, (unsigned long long)st.records,
      (unsigned long long)st.records_skipped, (unsigned long long)st.bytes_read, error);
  trace_reader_close(reader);
  fclose(f);
  free(seen);
  return error;
}
