/* Writes the seed corpus of fuzz_reader into DIR: the sample archive whole
 * through each input path, some truncations of it, and each of its records
 * alone behind a prepended magic record (so mutations start from every
 * record type), and small raw trace buffers (the file a traced program
 * leaves when it crashes, which the reader recovers), oneshot and streaming
 * with streamed saves after the buffer; an archive of typed events with
 * their formats (src/reader/typed_sample.h); and the sample and a raw buffer
 * compressed with zstd and gzip (trace record's own compressor), whole and
 * cut. Each seed is the flag byte fuzz_reader.c describes plus the input
 * bytes.
 *
 *   make_corpus DIR */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/buffer_header.h"
#include "fxt/fxt_format.h"
#include "reader/typed_sample.h"
#include "trace/compress_writer.h"
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

/* A raw trace buffer of TRACE_BUFFER_MIN_SIZE bytes in `mode` holding the
 * records of the archive `data` (after its magic record) chunk by chunk in
 * rolling buffer 0, then, for streaming, `streamed` bytes of the same records
 * appended as a save. Returns the malloc'ed file and its size. */
static unsigned char* raw_buffer(unsigned mode, const unsigned char* data, size_t size,
                                 size_t streamed, size_t* out_size) {
  trace_buffer_geometry_t g;
  if (buffer__compute_geometry(mode, TRACE_BUFFER_MIN_SIZE, &g) != 0) return NULL;
  size_t total = TRACE_BUFFER_MIN_SIZE;
  unsigned char* file = calloc(1, total + streamed);
  if (!file) return NULL;
  trace_buffer_header_t h;
  buffer_header__init(&h, mode, total, &g);
  unsigned char* rolling = file + sizeof(h) + g.durable_size;
  size_t pos = 0, chunk_end = g.chunk_size;
  for (size_t off = 8; off + 8 <= size;) {
    uint64_t header;
    memcpy(&header, data + off, sizeof(header));
    size_t bytes = (size_t)fxt_record_words(header) * 8;
    if (bytes == 0 || bytes > size - off || bytes > g.chunk_size) break;
    if (pos + bytes > chunk_end) { /* on to the next chunk */
      pos = chunk_end;
      chunk_end += g.chunk_size;
      if (chunk_end > g.rolling_size) break;
    }
    memcpy(rolling + pos, data + off, bytes);
    pos += bytes;
    off += bytes;
  }
  h.rolling_alloc = chunk_end;
  /* the streamed save: whole records from the start of the archive */
  size_t saved = 0;
  for (size_t off = 8; off + 8 <= size;) {
    uint64_t header;
    memcpy(&header, data + off, sizeof(header));
    size_t bytes = (size_t)fxt_record_words(header) * 8;
    if (bytes == 0 || bytes > size - off || saved + bytes > streamed) break;
    memcpy(file + total + saved, data + off, bytes);
    saved += bytes;
    off += bytes;
  }
  h.streamed_bytes = saved;
  memcpy(file, &h, sizeof(h));
  *out_size = total + saved;
  return file;
}

/* `data` compressed with `codec` by trace record's compressor; malloc'ed. */
static unsigned char* compressed(compress_codec_t codec, const void* data, size_t size,
                                 size_t* out_size) {
  char* buf = NULL;
  size_t length = 0;
  FILE* mem = open_memstream(&buf, &length);
  if (!mem) return NULL;
  FILE* z = compress__open(mem, codec, NULL);
  bool ok = z && fwrite(data, 1, size, z) == size;
  if (z && fclose(z) != 0) ok = false;
  if (fclose(mem) != 0) ok = false;
  if (!ok) {
    free(buf);
    return NULL;
  }
  *out_size = length;
  return (unsigned char*)buf;
}

/* The compressed seeds: the sample through each input path, cut at a few
 * places, and a compressed raw buffer. */
static int compressed_seeds(const char* dir, const unsigned char* data, size_t size) {
  static const unsigned paths[] = {MEMORY | REQUIRE_MAGIC, FILE_PATH | REQUIRE_MAGIC, FD_PATH};
  int rc = 0;
  char name[64];
  for (compress_codec_t codec = COMPRESS_ZSTD; codec <= COMPRESS_GZIP; codec++) {
    const char* codec_name = compress__codec_name(codec);
    size_t z_size;
    unsigned char* z = compressed(codec, data, size, &z_size);
    if (!z) return -1;
    for (size_t i = 0; i < sizeof(paths) / sizeof(paths[0]); i++) {
      snprintf(name, sizeof(name), "%s-sample-%u", codec_name, paths[i]);
      rc |= write_seed(dir, name, paths[i], z, z_size);
    }
    for (size_t cut = 5; cut < z_size; cut += z_size / 4 + 3) {
      snprintf(name, sizeof(name), "%s-cut-%zu", codec_name, cut);
      rc |= write_seed(dir, name, MEMORY | REQUIRE_MAGIC, z, cut);
    }
    free(z);
    size_t raw_size;
    unsigned char* raw = raw_buffer(2, data, size, 512, &raw_size);
    z = raw ? compressed(codec, raw, raw_size, &z_size) : NULL;
    free(raw);
    if (!z) return -1;
    snprintf(name, sizeof(name), "%s-raw-streaming", codec_name);
    rc |= write_seed(dir, name, MEMORY, z, z_size);
    free(z);
  }
  return rc;
}

int main(int argc, char** argv) {
  if (argc != 2) {
    fprintf(stderr, "usage: %s DIR\n", argv[0]);
    return 2;
  }
  const char* dir = argv[1];
  fxt_buffer_t b = {0};
  if (sample_archive__build(&b, 1) != 0) return 1;
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
  /* Raw trace buffers, through memory and a file descriptor. */
  static const struct {
    const char* name;
    unsigned mode;
    size_t streamed;
    unsigned flags;
  } raws[] = {{"raw-oneshot", 0, 0, MEMORY | REQUIRE_MAGIC},
              {"raw-streaming", 2, 1024, MEMORY | REQUIRE_MAGIC},
              {"raw-streaming-fd", 2, 512, FD_PATH}};
  for (size_t i = 0; i < sizeof(raws) / sizeof(raws[0]); i++) {
    size_t raw_size;
    unsigned char* raw = raw_buffer(raws[i].mode, data, size, raws[i].streamed, &raw_size);
    if (!raw) {
      rc = 1;
      continue;
    }
    rc |= write_seed(dir, raws[i].name, raws[i].flags, raw, raw_size);
    free(raw);
  }
  rc |= compressed_seeds(dir, data, size);
  fxt_buffer_free(&b);
  /* Typed events with their format records (docs/event-formats.md). */
  fxt_buffer_t typed = {0};
  if (typed_sample__build(&typed) != 0) return 1;
  rc |= write_seed(dir, "typed-events", MEMORY | REQUIRE_MAGIC, typed.words, typed.count * 8);
  rc |= write_seed(dir, "typed-events-fd", FD_PATH, typed.words, typed.count * 8);
  fxt_buffer_free(&typed);
  if (rc == 0) printf("make_corpus: wrote %zu record seeds and the sample to %s\n", n, dir);
  return rc ? 1 : 0;
}
