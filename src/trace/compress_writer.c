/* Compressed output (compress_writer.h): libzstd's or zlib's streaming
 * compressor, what comes out written to the output file. */
#include "trace/compress_writer.h"

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>
#include <zstd.h>

enum {
  ZSTD_LEVEL = 1, /* FXT of a streaming trace: ~15x, faster than the disk */
  ZSTD_WORKERS = 1,
  GZIP_LEVEL = 1,
  OUT_CHUNK = 256 << 10,
};

struct compressor {
  compress_codec_t codec;
  output_t* out;
  ZSTD_CCtx* zstd;
  bool zstd_started; /* compress_first() ran */
  z_stream gzip;
  bool gzip_ready;
  bool in_frame; /* bytes were given since the last frame ended */
  int error;     /* errno of the first failure; every later call fails with it */
  unsigned char chunk[OUT_CHUNK];
};

bool compress__parse_codec(const char* text, compress_codec_t* codec) {
  if (strcmp(text, "zstd") == 0)
    *codec = COMPRESS_ZSTD;
  else if (strcmp(text, "gzip") == 0)
    *codec = COMPRESS_GZIP;
  else if (strcmp(text, "none") == 0)
    *codec = COMPRESS_NONE;
  else
    return false;
  return true;
}

static bool ends_with(const char* s, const char* suffix) {
  size_t n = strlen(s), k = strlen(suffix);
  return n > k && strcmp(s + n - k, suffix) == 0;
}

compress_codec_t compress__codec_for_name(const char* path) {
  if (ends_with(path, ".zst")) return COMPRESS_ZSTD;
  if (ends_with(path, ".gz")) return COMPRESS_GZIP;
  return COMPRESS_NONE;
}

const char* compress__codec_name(compress_codec_t codec) {
  switch (codec) {
    case COMPRESS_ZSTD:
      return "zstd";
    case COMPRESS_GZIP:
      return "gzip";
    default:
      return "none";
  }
}

/* Writes the first `bytes` of the chunk to the output. */
static bool emit(compressor_t* c, size_t bytes) {
  if (bytes == 0) return true;
  if (output__write(c->out, c->chunk, bytes) != bytes) {
    c->error = c->out->error ? c->out->error : EIO;
    return false;
  }
  return true;
}

/* The first ZSTD_compressStream2() starts libzstd's worker threads, which
 * inherit the calling thread's name: under the name "trace-zstd" they show
 * apart in per-thread CPU figures (top -H, bench/run's sustained trials). */
static size_t compress_first(compressor_t* c, ZSTD_outBuffer* out, ZSTD_inBuffer* in,
                             ZSTD_EndDirective mode) {
  char name[16];
  bool named = pthread_getname_np(pthread_self(), name, sizeof(name)) == 0 &&
               pthread_setname_np(pthread_self(), "trace-zstd") == 0;
  size_t left = ZSTD_compressStream2(c->zstd, out, in, mode);
  if (named) pthread_setname_np(pthread_self(), name);
  c->zstd_started = true;
  return left;
}

/* Compresses `size` bytes (none when ending the frame); true when all went out. */
static bool run_zstd(compressor_t* c, const void* data, size_t size, bool end) {
  ZSTD_inBuffer in = {data, size, 0};
  for (;;) {
    ZSTD_outBuffer out = {c->chunk, sizeof(c->chunk), 0};
    ZSTD_EndDirective mode = end ? ZSTD_e_end : ZSTD_e_continue;
    size_t left = c->zstd_started ? ZSTD_compressStream2(c->zstd, &out, &in, mode)
                                  : compress_first(c, &out, &in, mode);
    if (ZSTD_isError(left)) {
      c->error = EIO;
      return false;
    }
    if (!emit(c, out.pos)) return false;
    /* e_continue: done once the input is taken; e_end: once nothing is left
     * (the context then starts a new frame with the next input) */
    if (end ? left == 0 : in.pos == in.size) return true;
  }
}

static bool run_gzip(compressor_t* c, const void* data, size_t size, bool end) {
  c->gzip.next_in = (Bytef*)data;
  c->gzip.avail_in = (uInt)size; /* callers pass at most UINT_MAX bytes */
  for (;;) {
    c->gzip.next_out = c->chunk;
    c->gzip.avail_out = sizeof(c->chunk);
    int rc = deflate(&c->gzip, end ? Z_FINISH : Z_NO_FLUSH);
    if (rc == Z_STREAM_ERROR) {
      c->error = EIO;
      return false;
    }
    if (!emit(c, sizeof(c->chunk) - c->gzip.avail_out)) return false;
    if (end ? rc == Z_STREAM_END : c->gzip.avail_in == 0 && c->gzip.avail_out != 0) {
      /* a member ended: the next write begins another, header and all */
      if (end && deflateReset(&c->gzip) != Z_OK) c->error = EIO;
      return c->error == 0;
    }
  }
}

int compress__write(compressor_t* c, const void* data, size_t size) {
  size_t done = 0;
  while (c->error == 0 && done < size) {
    size_t step = size - done < (1u << 30) ? size - done : (1u << 30);
    c->in_frame = true;
    bool ok = c->codec == COMPRESS_ZSTD ? run_zstd(c, (const char*)data + done, step, false)
                                        : run_gzip(c, (const char*)data + done, step, false);
    if (!ok) break;
    done += step;
  }
  return c->error;
}

int compress__end_frame(compressor_t* c) {
  if (c->error == 0 && c->in_frame) {
    c->codec == COMPRESS_ZSTD ? run_zstd(c, NULL, 0, true) : run_gzip(c, NULL, 0, true);
    c->in_frame = false;
  }
  return c->error;
}

compress_codec_t compress__codec(const compressor_t* c) { return c->codec; }

void compress__free(compressor_t* c) {
  if (!c) return;
  ZSTD_freeCCtx(c->zstd);
  if (c->gzip_ready) deflateEnd(&c->gzip);
  free(c);
}

static bool setup(compressor_t* c) {
  if (c->codec == COMPRESS_ZSTD) {
    c->zstd = ZSTD_createCCtx();
    if (!c->zstd) return false;
    ZSTD_CCtx_setParameter(c->zstd, ZSTD_c_compressionLevel, ZSTD_LEVEL);
    ZSTD_CCtx_setParameter(c->zstd, ZSTD_c_checksumFlag, 1); /* damage shows when read */
    /* Without libzstd's threads this fails and compression is inline. */
    ZSTD_CCtx_setParameter(c->zstd, ZSTD_c_nbWorkers, ZSTD_WORKERS);
    return true;
  }
  /* 15 + 16: a gzip wrapper around the deflate stream */
  if (deflateInit2(&c->gzip, GZIP_LEVEL, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK)
    return false;
  c->gzip_ready = true;
  return true;
}

compressor_t* compress__new(output_t* out, compress_codec_t codec) {
  compressor_t* c = calloc(1, sizeof(*c));
  if (!c) return NULL;
  c->codec = codec;
  c->out = out;
  if (!setup(c)) {
    compress__free(c);
    return NULL;
  }
  return c;
}
