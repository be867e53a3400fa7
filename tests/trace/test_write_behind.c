/* trace record's write-behind (src/trace/write_behind.h): active only on a
 * regular file, ranges handed on in WRITE_BEHIND_BYTES steps from where the
 * writer began, and the file byte for byte what was written (the page-cache
 * advice must never lose or reorder data). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "test.h"
#include "trace/write_behind.h"

static uint8_t byte_at(uint64_t i) { return (uint8_t)(i * 2654435761u >> 13); }

int main(void) {
  char path[] = "/tmp/fxtrace-write-behind-XXXXXX";
  int fd = mkstemp(path);
  if (fd < 0) return 2;
  const size_t prefix = 100; /* the writer does not begin at offset 0 */
  char p100[100];
  memset(p100, 'p', sizeof(p100));
  if (write(fd, p100, prefix) != (ssize_t)prefix) return 2;

  write_behind_t w;
  write_behind__init(&w, fd);
  ASSERT_MSG(w.active, "a regular file is not written behind");
  ASSERT_MSG(w.start == prefix, "starts at %llu, want %zu", (unsigned long long)w.start, prefix);

  const uint64_t total = 3 * (uint64_t)WRITE_BEHIND_BYTES + 12345;
  uint8_t* piece = malloc(1 << 20);
  if (!piece) return 2;
  for (uint64_t at = 0; at < total;) {
    size_t n = total - at < (1 << 20) ? (size_t)(total - at) : (size_t)1 << 20;
    for (size_t i = 0; i < n; i++) piece[i] = byte_at(at + i);
    ASSERT_MSG(write(fd, piece, n) == (ssize_t)n, "write failed");
    write_behind__wrote(&w, fd, n);
    at += n;
    ASSERT_MSG(w.handed <= w.written && w.written - w.handed < WRITE_BEHIND_BYTES,
               "after %llu bytes, %llu handed on", (unsigned long long)at,
               (unsigned long long)w.handed);
  }
  ASSERT_MSG(w.handed == 3 * (uint64_t)WRITE_BEHIND_BYTES, "handed %llu bytes",
             (unsigned long long)w.handed);
  ASSERT_MSG(w.previous_offset == prefix + 2 * (uint64_t)WRITE_BEHIND_BYTES,
             "last range handed at %llu", (unsigned long long)w.previous_offset);
  ASSERT_MSG(close(fd) == 0, "close failed");

  FILE* in = fopen(path, "rb");
  ASSERT_MSG(in != NULL, "cannot reopen %s", path);
  uint64_t bad = 0, length = 0;
  int c;
  while (in && (c = fgetc(in)) != EOF) {
    uint8_t want = length < prefix ? 'p' : byte_at(length - prefix);
    if ((uint8_t)c != want && bad++ == 0)
      fprintf(stderr, "first difference at byte %llu\n", (unsigned long long)length);
    length++;
  }
  if (in) fclose(in);
  unlink(path);
  ASSERT_MSG(length == prefix + total, "file of %llu bytes, want %llu", (unsigned long long)length,
             (unsigned long long)(prefix + total));
  ASSERT_MSG(bad == 0, "%llu bytes differ", (unsigned long long)bad);

  int p[2];
  if (pipe(p) != 0) return 2;
  write_behind__init(&w, p[1]);
  ASSERT_MSG(!w.active, "a pipe is written behind");
  close(p[1]);
  close(p[0]);
  free(piece);

  printf("ok: write-behind (%llu bytes, intact)\n", (unsigned long long)total);
  return 0;
}
