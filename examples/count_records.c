/* Example: count the records of an FXT archive by type with libtrace-reader.
 *
 *     cc count_records.c $(pkg-config --cflags --libs fxtrace) -o count_records
 *     ./count_records trace.fxt
 */
#include <stdio.h>
#include <trace-reader/reader.h>

int main(int argc, char** argv) {
  if (argc != 2) {
    fprintf(stderr, "usage: %s FILE.fxt\n", argv[0]);
    return 2;
  }
  FILE* f = fopen(argv[1], "rb");
  if (!f) {
    perror(argv[1]);
    return 1;
  }
  trace_reader_t* reader = trace_reader_open_file(f, NULL);
  unsigned long long counts[16] = {0};
  trace_record_t record;
  int rc;
  while ((rc = trace_reader_next(reader, &record)) != TRACE_READ_END) {
    if (rc == TRACE_READ_ERROR) break;
    if (rc == TRACE_READ_RECORD) counts[record.type & 15]++;
  }
  int status = 0;
  if (rc == TRACE_READ_ERROR) {
    trace_reader_error_t e = trace_reader_error(reader);
    fprintf(stderr, "%s: offset %llu: %s\n", argv[1], (unsigned long long)e.offset, e.message);
    status = 1;
  }
  for (unsigned t = 0; t < 16; t++)
    if (counts[t]) printf("%s %llu\n", trace_record_type_name(t), counts[t]);
  trace_reader_close(reader);
  fclose(f);
  return status;
}
