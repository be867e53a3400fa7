/* libtrace-reader on compressed archives (issue 12), through each input
 * path: the sample archive, repeated to a few MiB (several zstd blocks),
 * compressed with zstd and gzip by the codec libraries directly:
 *  - memory, FILE* and fd (a pipe fed in odd-sized chunks by a child) give
 *    exactly the results of the plain archive, offsets included (offsets in
 *    the decompressed archive); so do two frames / members back to back;
 *  - every cut of the compressed file gives a prefix of the plain archive's
 *    records, then a TRACE_READ_ERROR with trace_reader_truncated() true, and
 *    a cut near the end still gives most of the records;
 *  - damaged bytes end with an error after valid results only (never a
 *    crash, never a silent clean end). */
#include <stdbool.h>
#include <sys/wait.h>
#include <unistd.h>
#include <zlib.h>
#include <zstd.h>

#include "../../fuzz/record_touch.h"
#include "test.h"
#include "trace-reader/reader.h"
#include "trace/sample.h"

typedef struct result {
  int rc;
  uint64_t offset;
  uint32_t type;
  uint64_t size_words;
} result_t;

typedef struct results {
  result_t* items;
  size_t count, capacity;
  bool truncated;
  trace_reader_stats_t stats;
  char last_error[256];
} results_t;

static void push(results_t* out, result_t r) {
  if (out->count == out->capacity) {
    out->capacity = out->capacity ? out->capacity * 2 : 1024;
    out->items = realloc(out->items, out->capacity * sizeof(result_t));
    ASSERT_TRUE(out->items != NULL);
  }
  out->items[out->count++] = r;
}

static void read_all(trace_reader_t* r, results_t* out) {
  ASSERT_TRUE(r != NULL);
  out->count = 0;
  out->last_error[0] = '\0';
  for (;;) {
    trace_record_t rec;
    int rc = trace_reader_next(r, &rec);
    result_t res = {rc, 0, 0, 0};
    if (rc == TRACE_READ_RECORD) {
      touch_record(&rec);
      res.offset = rec.offset;
      res.type = rec.type;
      res.size_words = rec.size_words;
    } else if (rc != TRACE_READ_END) {
      trace_reader_error_t e = trace_reader_error(r);
      res.offset = e.offset;
      snprintf(out->last_error, sizeof(out->last_error), "%s", e.message);
    }
    push(out, res);
    if (rc == TRACE_READ_END || rc == TRACE_READ_ERROR) break;
  }
  out->truncated = trace_reader_truncated(r);
  out->stats = trace_reader_stats(r);
  trace_reader_close(r);
}

static bool same_result(const result_t* a, const result_t* b) {
  return a->rc == b->rc && a->offset == b->offset && a->type == b->type &&
         a->size_words == b->size_words;
}

static void assert_same(const results_t* a, const results_t* b, const char* what) {
  ASSERT_MSG(a->count == b->count, "%s: %zu results vs %zu", what, a->count, b->count);
  for (size_t i = 0; i < a->count; i++)
    ASSERT_MSG(same_result(&a->items[i], &b->items[i]), "%s: result %zu differs", what, i);
  ASSERT_EQ(a->stats.bytes_read, b->stats.bytes_read);
}

/* ---- compressing (the codec libraries directly, not trace's writer) ---- */

static unsigned char* zstd_compress(const void* data, size_t size, size_t* out_size) {
  size_t bound = ZSTD_compressBound(size);
  unsigned char* out = malloc(bound);
  ASSERT_TRUE(out != NULL);
  ZSTD_CCtx* c = ZSTD_createCCtx();
  ZSTD_CCtx_setParameter(c, ZSTD_c_compressionLevel, 1);
  ZSTD_CCtx_setParameter(c, ZSTD_c_checksumFlag, 1);
  size_t n = ZSTD_compress2(c, out, bound, data, size);
  ASSERT_TRUE(!ZSTD_isError(n));
  ZSTD_freeCCtx(c);
  *out_size = n;
  return out;
}

static unsigned char* gzip_compress(const void* data, size_t size, size_t* out_size) {
  z_stream z;
  memset(&z, 0, sizeof(z));
  ASSERT_EQ(deflateInit2(&z, 1, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY), Z_OK);
  size_t bound = deflateBound(&z, (uLong)size);
  unsigned char* out = malloc(bound);
  ASSERT_TRUE(out != NULL);
  z.next_in = (Bytef*)data;
  z.avail_in = (uInt)size;
  z.next_out = out;
  z.avail_out = (uInt)bound;
  ASSERT_EQ(deflate(&z, Z_FINISH), Z_STREAM_END);
  *out_size = bound - z.avail_out;
  deflateEnd(&z);
  return out;
}

typedef unsigned char* (*compress_fn)(const void*, size_t, size_t*);

/* ---- input paths ---- */

static void read_memory(const void* data, size_t size, results_t* out) {
  read_all(trace_reader_open_memory(data, size, NULL), out);
}

static void read_file(const void* data, size_t size, results_t* out) {
  FILE* f = fmemopen((void*)data, size, "rb");
  ASSERT_TRUE(f != NULL);
  read_all(trace_reader_open_file(f, NULL), out);
  fclose(f);
}

/* A pipe written by a child in odd-sized pieces: reads return short. */
static void read_pipe(const void* data, size_t size, results_t* out) {
  int p[2];
  ASSERT_TRUE(pipe(p) == 0);
  pid_t pid = fork();
  ASSERT_TRUE(pid >= 0);
  if (pid == 0) {
    close(p[0]);
    const unsigned char* b = data;
    size_t step = 1;
    for (size_t off = 0; off < size;) {
      size_t n = size - off < step ? size - off : step;
      if (write(p[1], b + off, n) != (ssize_t)n) _exit(1);
      off += n;
      step = step * 3 % 70001 + 1;
    }
    _exit(0);
  }
  close(p[1]);
  read_all(trace_reader_open_fd(p[0], NULL), out);
  close(p[0]);
  int status;
  waitpid(pid, &status, 0);
}

int main(void) {
  fxt_buffer_t b = {0};
  ASSERT_EQ(sample_archive__build(&b, 3000), 0);
  const unsigned char* plain = (const unsigned char*)b.words;
  size_t plain_size = b.count * 8;
  ASSERT_TRUE(plain_size > (2u << 20));
  results_t expected = {0}, got = {0};
  read_memory(plain, plain_size, &expected);
  ASSERT_EQ(expected.items[expected.count - 1].rc, TRACE_READ_END);
  size_t records = expected.count - 1;

  static const struct {
    const char* name;
    compress_fn compress;
  } codecs[] = {{"zstd", zstd_compress}, {"gzip", gzip_compress}};
  for (size_t c = 0; c < 2; c++) {
    const char* name = codecs[c].name;
    size_t z_size;
    unsigned char* z = codecs[c].compress(plain, plain_size, &z_size);
    ASSERT_TRUE(z_size < plain_size / 4);

    read_memory(z, z_size, &got);
    assert_same(&expected, &got, name);
    read_file(z, z_size, &got);
    assert_same(&expected, &got, name);
    read_pipe(z, z_size, &got);
    assert_same(&expected, &got, name);

    /* two frames (members), the split inside a record */
    size_t half = plain_size / 2 + 3, a_size, b_size;
    unsigned char* a = codecs[c].compress(plain, half, &a_size);
    unsigned char* rest = codecs[c].compress(plain + half, plain_size - half, &b_size);
    unsigned char* both = malloc(a_size + b_size);
    ASSERT_TRUE(both != NULL);
    memcpy(both, a, a_size);
    memcpy(both + a_size, rest, b_size);
    read_memory(both, a_size + b_size, &got);
    assert_same(&expected, &got, "two frames");
    read_pipe(both, a_size + b_size, &got);
    assert_same(&expected, &got, "two frames, pipe");
    free(a);
    free(rest);
    free(both);

    /* every cut: a prefix of the records, then a truncation error */
    for (size_t cut = 1; cut < z_size; cut += z_size / 37 + 1) {
      unsigned char* copy = malloc(cut); /* exact size: ASan sees overreads */
      ASSERT_TRUE(copy != NULL);
      memcpy(copy, z, cut);
      read_memory(copy, cut, &got);
      free(copy);
      ASSERT_MSG(got.count >= 1 && got.count <= records + 1, "%s cut at %zu: %zu results", name,
                 cut, got.count);
      for (size_t i = 0; i + 1 < got.count; i++)
        ASSERT_MSG(same_result(&got.items[i], &expected.items[i]), "%s cut at %zu: result %zu",
                   name, cut, i);
      ASSERT_MSG(got.items[got.count - 1].rc == TRACE_READ_ERROR && got.truncated,
                 "%s cut at %zu: ends with %d, truncated %d (%s)", name, cut,
                 got.items[got.count - 1].rc, got.truncated, got.last_error);
      ASSERT_MSG(strstr(got.last_error, "truncated") != NULL, "%s cut: message '%s'", name,
                 got.last_error);
    }
    /* a cut near the end still gives most of the records */
    read_pipe(z, z_size - z_size / 20, &got);
    ASSERT_MSG(got.count > records / 2 && got.truncated, "%s cut at 95%%: %zu of %zu records", name,
               got.count - 1, records);

    /* damaged bytes: valid results, then an error; never a clean end */
    for (size_t at = 20; at < z_size; at += z_size / 23 + 7) {
      unsigned char* copy = malloc(z_size);
      ASSERT_TRUE(copy != NULL);
      memcpy(copy, z, z_size);
      copy[at] ^= 0x41;
      read_memory(copy, z_size, &got);
      free(copy);
      int last = got.items[got.count - 1].rc;
      ASSERT_MSG(last == TRACE_READ_ERROR, "%s damaged at %zu: ends with %d", name, at, last);
    }
    free(z);
  }
  free(expected.items);
  free(got.items);
  fxt_buffer_free(&b);
  printf("test_compressed: ok (%zu records, zstd and gzip, three input paths)\n", records);
  return 0;
}
