/* Writes the seed corpus of fuzz_reader into DIR: the sample archive whole
 * through each input path, some truncations of it, and each of its records
 * alone behind a prepended magic record (so mutations start from every
 * record type). Each seed is the flag byte fuzz_reader.c describes plus the
 * archive bytes.
 *
 *   make_corpus DIR */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fxt/fxt_format.h"
#include "trace/sample.h"

enum { MEMORY = 0, FILE_PATH = 1, FD_PATH = 2, REQUIRE_MAGIC = 4, PREPEND_MAGIC = 8 };

static int write_seed(const char* dir, const char* name, unsigned flags, const void* data,
                      size_t size) {
  char path[4096];
  snprintf(path, sizeof(path), "%s/%s", dir, name);
  FILE* f = fopen(path, "wb");
  if (!f) {
    perror(path);
    return -1;
  }
  unsigned char flag_byte = (unsigned char)flags;
  int ok = fwrite(&flag_byte, 1, 1, f) == 1 && fwrite(data, 1, size, f) == size;
  return fclose(f) == 0 && ok ? 0 : -1;
}

int main(int argc, char** argv) {
  if (argc != 2) {
    fprintf(stderr, "usage: %s DIR\n", argv[0]);
    return 2;
  }
  const char* dir = argv[1];
  fxt_buffer_t b = {0};
  if (__sample_archive_build(&b, 1) != 0) return 1;
  const unsigned char* data = (const unsigned char*)b.words;
  size_t size = b.count * 8;
  int rc = 0;
  char name[64];

  static const unsigned paths[] = {MEMORY | REQUIRE_MAGIC, FILE_PATH | REQUIRE_MAGIC,
                                   FD_PATH | REQUIRE_MAGIC, MEMORY};
  for (size_t i = 0; i < sizeof(paths) / sizeof(paths[0]); i++) {
    snprintf(name, sizeof(name), "sample-%u", paths[i]);
    rc |= write_seed(dir, name, paths[i], data, size);
  }
  /* Cuts inside and between records. */
  for (size_t cut = 3; cut < size; cut += size / 7 + 5) {
    snprintf(name, sizeof(name), "cut-%zu", cut);
    rc |= write_seed(dir, name, MEMORY | REQUIRE_MAGIC, data, cut);
  }
  /* Each record after the magic one, alone. */
  size_t n = 0;
  for (size_t off = 8; off + 8 <= size; n++) {
    uint64_t header;
    memcpy(&header, data + off, sizeof(header));
    size_t bytes = (size_t)fxt_record_words(header) * 8;
    if (bytes == 0 || bytes > size - off) break;
    snprintf(name, sizeof(name), "record-%03zu-type%u", n, (unsigned)FXT_GET(header, 0, 3));
    rc |= write_seed(dir, name, MEMORY | REQUIRE_MAGIC | PREPEND_MAGIC, data + off, bytes);
    off += bytes;
  }
  fxt_buffer_free(&b);
  if (rc == 0) printf("make_corpus: wrote %zu record seeds and the sample to %s\n", n, dir);
  return rc ? 1 : 0;
}
