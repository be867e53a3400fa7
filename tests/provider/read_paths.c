/* Reads FILE with libtrace-reader through each input path (memory, memory at
 * an odd address, FILE*, file descriptor) and prints one line per path:
 *   PATH recovered=0|1 records=N skipped=N events=N result=end|error [error=...]
 * and, for memory, whether the caller's bytes were left untouched:
 *   memory unchanged=0|1
 * test_file_mode.py checks that the paths agree (a raw trace buffer is
 * recovered the same way from each). */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "trace-reader/reader.h"

static void read_all(const char* name, trace_reader_t* r) {
  if (!r) {
    printf("%s open failed\n", name);
    return;
  }
  trace_record_t rec;
  int rc;
  unsigned long long events = 0;
  while ((rc = trace_reader_next(r, &rec)) != TRACE_READ_END && rc != TRACE_READ_ERROR)
    if (rc == TRACE_READ_RECORD && rec.type == 4) events++;
  trace_reader_stats_t st = trace_reader_stats(r);
  printf("%s recovered=%d records=%llu skipped=%llu events=%llu result=%s", name,
         trace_reader_recovered(r) ? 1 : 0, (unsigned long long)st.records,
         (unsigned long long)st.records_skipped, events, rc == TRACE_READ_END ? "end" : "error");
  if (rc == TRACE_READ_ERROR) printf(" error=%s", trace_reader_error(r).message);
  putchar('\n');
  trace_reader_close(r);
}

int main(int argc, char** argv) {
  if (argc != 2) {
    fputs("usage: read_paths FILE\n", stderr);
    return 2;
  }
  FILE* f = fopen(argv[1], "rb");
  if (!f) {
    perror(argv[1]);
    return 1;
  }
  size_t size = 0, cap = 1 << 20;
  unsigned char* data = malloc(cap);
  for (size_t n; data && (n = fread(data + size, 1, cap - size, f)) > 0;) {
    size += n;
    if (size == cap) data = realloc(data, cap *= 2);
  }
  if (!data) return 1;
  unsigned char* copy = malloc(size ? size : 1);
  if (!copy) return 1;
  memcpy(copy, data, size);
  read_all("memory", trace_reader_open_memory(data, size, NULL));
  printf("memory unchanged=%d\n", memcmp(copy, data, size) == 0);
  /* memory at an odd address: the reader must not assume any alignment */
  unsigned char* odd = malloc(size + 1);
  if (!odd) return 1;
  memcpy(odd + 1, data, size);
  read_all("memory-unaligned", trace_reader_open_memory(odd + 1, size, NULL));
  free(odd);
  rewind(f);
  read_all("file", trace_reader_open_file(f, NULL));
  fclose(f);
  int fd = open(argv[1], O_RDONLY);
  if (fd < 0) return 1;
  read_all("fd", trace_reader_open_fd(fd, NULL));
  close(fd);
  free(copy);
  free(data);
  return 0;
}
