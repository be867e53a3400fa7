/* Decompression of compressed archives (decompress.h) with libzstd's and
 * zlib's streaming decoders: the form built into libtrace-reader and `trace`. */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>
#include <zstd.h>
#include <zstd_errors.h>

#include "reader/decompress.h"

/* The largest zstd window accepted, as a power of two: 8 MiB, which every
 * compression level of `zstd` (without --long) and `trace record`'s level 1
 * stay within. libzstd's own limit is 128 MiB: a frame may ask for that
 * much memory whatever its size, and the reader must stay small. */
enum { ZSTD_WINDOW_LOG_MAX = 23 };

struct decompress {
  decompress_codec_t codec;
  ZSTD_DCtx* zstd;
  z_stream gzip;
  bool gzip_ready;
  bool at_boundary; /* no frame (member) begun and not finished */
  bool failed;      /* damage found: every later step fails */
  char message[160];
};

bool decompress__supported(void) { return true; }

decompress_t* decompress__create(decompress_codec_t codec) {
  decompress_t* d = calloc(1, sizeof(*d));
  if (!d) return NULL;
  d->codec = codec;
  d->at_boundary = true;
  if (codec == DECOMPRESS_ZSTD) {
    d->zstd = ZSTD_createDCtx();
    if (!d->zstd ||
        ZSTD_isError(ZSTD_DCtx_setParameter(d->zstd, ZSTD_d_windowLogMax, ZSTD_WINDOW_LOG_MAX)))
      goto fail;
  } else {
    /* 15 + 16: a gzip wrapper only; a raw zlib stream is not an archive */
    if (inflateInit2(&d->gzip, 15 + 16) != Z_OK) goto fail;
    d->gzip_ready = true;
  }
  return d;
fail:
  decompress__free(d);
  return NULL;
}

void decompress__free(decompress_t* d) {
  if (!d) return;
  ZSTD_freeDCtx(d->zstd);
  if (d->gzip_ready) inflateEnd(&d->gzip);
  free(d);
}

static ptrdiff_t step_zstd(decompress_t* d, const unsigned char* in, size_t in_size, size_t* used,
                           unsigned char* out, size_t out_size) {
  ZSTD_inBuffer src = {in, in_size, 0};
  ZSTD_outBuffer dst = {out, out_size, 0};
  size_t hint = ZSTD_decompressStream(d->zstd, &dst, &src);
  *used = src.pos;
  if (ZSTD_isError(hint) && ZSTD_getErrorCode(hint) == ZSTD_error_frameParameter_windowTooLarge) {
    snprintf(d->message, sizeof(d->message),
             "the zstd data needs a window above the %u MiB this reader accepts "
             "(ZSTD_d_windowLogMax %d: recompress without --long or --ultra)",
             1u << (ZSTD_WINDOW_LOG_MAX - 20), ZSTD_WINDOW_LOG_MAX);
    d->failed = true;
    return dst.pos > 0 ? (ptrdiff_t)dst.pos : -1;
  }
  if (ZSTD_isError(hint)) {
    snprintf(d->message, sizeof(d->message), "the zstd data is damaged: %s",
             ZSTD_getErrorName(hint));
    d->failed = true;
    return dst.pos > 0 ? (ptrdiff_t)dst.pos : -1; /* the bytes before it first */
  }
  /* 0: a frame just ended, all of it flushed; else still inside one (or
   * between frames with no byte of the next taken) */
  if (hint == 0)
    d->at_boundary = true;
  else if (src.pos > 0 || dst.pos > 0)
    d->at_boundary = false;
  return (ptrdiff_t)dst.pos;
}

static ptrdiff_t step_gzip(decompress_t* d, const unsigned char* in, size_t in_size, size_t* used,
                           unsigned char* out, size_t out_size) {
  size_t taken = 0, made = 0;
  while (taken < in_size && made < out_size) {
    if (d->at_boundary && inflateReset(&d->gzip) != Z_OK) {
      snprintf(d->message, sizeof(d->message), "the gzip decoder failed");
      return -1;
    }
    uInt in_step = in_size - taken > UINT_MAX ? UINT_MAX : (uInt)(in_size - taken);
    uInt out_step = out_size - made > UINT_MAX ? UINT_MAX : (uInt)(out_size - made);
    d->gzip.next_in = (Bytef*)(in + taken);
    d->gzip.avail_in = in_step;
    d->gzip.next_out = out + made;
    d->gzip.avail_out = out_step;
    int rc = inflate(&d->gzip, Z_NO_FLUSH);
    taken += in_step - d->gzip.avail_in;
    made += out_step - d->gzip.avail_out;
    d->at_boundary = false;
    if (rc == Z_STREAM_END) {
      d->at_boundary = true; /* a member ended: another may follow */
      continue;
    }
    if (rc == Z_OK) continue;
    if (rc == Z_BUF_ERROR) break; /* no progress possible with what it has */
    snprintf(d->message, sizeof(d->message), "the gzip data is damaged: %s",
             d->gzip.msg         ? d->gzip.msg
             : rc == Z_MEM_ERROR ? "out of memory"
                                 : "corrupt data");
    d->failed = true;
    *used = taken;
    return made > 0 ? (ptrdiff_t)made : -1; /* the bytes before it first */
  }
  *used = taken;
  return (ptrdiff_t)made;
}

ptrdiff_t decompress__step(decompress_t* d, const unsigned char* in, size_t in_size, size_t* used,
                           unsigned char* out, size_t out_size) {
  *used = 0;
  if (d->failed) return -1;
  return d->codec == DECOMPRESS_ZSTD ? step_zstd(d, in, in_size, used, out, out_size)
                                     : step_gzip(d, in, in_size, used, out, out_size);
}

bool decompress__at_boundary(const decompress_t* d) { return d->at_boundary; }

const char* decompress__message(const decompress_t* d) { return d->message; }
