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
 * With --formats, writes the seeds of fuzz_format instead: each format of
 * the typed sample, each real kernel format in KERNEL_FORMATS_DIR (tracefs
 * format files, given a `category:` line), and crafted ones (huge widths
 * and precisions, NUL and control characters), each followed by a NUL byte
 * and value bytes (fuzz_format.c).
 *
 *   make_corpus DIR
 *   make_corpus --formats DIR KERNEL_FORMATS_DIR */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "engine/buffer_header.h"
#include "fxt/fxt_format.h"
#include "reader/typed_sample.h"
#include "trace/compress_writer.h"
#include "trace/output.h"
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

/* `data` compressed with `codec` by trace record's compressor (one frame,
 * into a memory file); malloc'ed. */
static unsigned char* compressed(compress_codec_t codec, const void* data, size_t size,
                                 size_t* out_size) {
  int fd = memfd_create("corpus", MFD_CLOEXEC);
  if (fd < 0) return NULL;
  output_t out = {.fd = fd, .name = "memory"};
  compressor_t* z = compress__new(&out, codec);
  bool ok = z && compress__write(z, data, size) == 0 && compress__end_frame(z) == 0;
  compress__free(z);
  unsigned char* buf = ok ? malloc(out.offset ? out.offset : 1) : NULL;
  if (buf && pread(fd, buf, out.offset, 0) != (ssize_t)out.offset) {
    free(buf);
    buf = NULL;
  }
  close(fd);
  if (buf) *out_size = out.offset;
  return buf;
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

/* One fuzz_format seed: the format's text, NUL, then value bytes. */
static int write_format_seed(const char* dir, const char* name, const char* text, size_t size) {
  static const unsigned char kValues[] = {3,   0,   0,    0,   0,  0,   0,   0,   5,   'h',
                                          'e', 'l', 'l',  'o', 27, 255, 255, 255, 255, 127,
                                          0,   0,   0x40, 0,   0,  0,   0,   0,   0,   0};
  char path[4096];
  snprintf(path, sizeof(path), "%s/%s", dir, name);
  FILE* f = fopen(path, "wb");
  if (!f) {
    perror(path);
    return -1;
  }
  int ok = fwrite(text, 1, size, f) == size && fputc(0, f) == 0 &&
           fwrite(kValues, 1, sizeof(kValues), f) == sizeof(kValues);
  return fclose(f) == 0 && ok ? 0 : -1;
}

static int format_seeds(const char* dir, const char* kernel_dir) {
  int rc = 0;
  char name[320];
  size_t n = 0;
  for (size_t i = 0; i < sizeof(typed_sample__formats) / sizeof(typed_sample__formats[0]); i++) {
    snprintf(name, sizeof(name), "typed-%zu", i);
    rc |= write_format_seed(dir, name, typed_sample__formats[i], strlen(typed_sample__formats[i]));
    n++;
  }
  static const char* const crafted[] = {
      "\"fd=%2147483647d p=%.2147483647d s=%-2147483647s f=%2147483647.2147483647f\", REC->fd, "
      "REC->fd, __get_str(peer), REC->fd",
      "\"x=%c|y=%s|%c\", REC->fd, __get_str(peer), 0",
      "\"%99999999999999999999999x %.99999999999999999999e %-0+ #5000.4000lld\", REC->len, "
      "REC->len, REC->fd",
  };
  static const char kHead[] =
      "category: c\nname: n\nID: 1\nformat:\n"
      "\tfield:int fd;\toffset:8;\tsize:4;\tsigned:1;\n"
      "\tfield:size_t len;\toffset:16;\tsize:8;\tsigned:0;\n"
      "\tfield:__data_loc char[] peer;\toffset:12;\tsize:4;\tsigned:0;\n\nprint fmt: ";
  for (size_t i = 0; i < sizeof(crafted) / sizeof(crafted[0]); i++) {
    char text[1024];
    int len = snprintf(text, sizeof(text), "%s%s\n", kHead, crafted[i]);
    snprintf(name, sizeof(name), "crafted-%zu", i);
    rc |= write_format_seed(dir, name, text, (size_t)len);
    n++;
  }
  DIR* d = opendir(kernel_dir);
  if (!d) {
    perror(kernel_dir);
    return -1;
  }
  struct dirent* e;
  while ((e = readdir(d)) != NULL) {
    if (e->d_name[0] == '.') continue;
    char path[4096];
    snprintf(path, sizeof(path), "%s/%s", kernel_dir, e->d_name);
    static char text[32768];
    int head = snprintf(text, sizeof(text), "category: kernel:%s\n", e->d_name);
    FILE* f = fopen(path, "rb");
    if (!f) continue;
    size_t got = fread(text + head, 1, sizeof(text) - (size_t)head, f);
    fclose(f);
    snprintf(name, sizeof(name), "kernel-%s", e->d_name);
    rc |= write_format_seed(dir, name, text, (size_t)head + got);
    n++;
  }
  closedir(d);
  if (rc == 0) printf("make_corpus: wrote %zu format seeds to %s\n", n, dir);
  return rc ? 1 : 0;
}

int main(int argc, char** argv) {
  if (argc == 4 && strcmp(argv[1], "--formats") == 0) return format_seeds(argv[2], argv[3]);
  if (argc != 2) {
    fprintf(stderr, "usage: %s DIR | --formats DIR KERNEL_FORMATS_DIR\n", argv[0]);
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
