/* Not part of the public API: the reader's decompression of a zstd- or
 * gzip-compressed archive, recognized by its magic bytes (zstd 28 B5 2F FD,
 * gzip 1F 8B 08). Streaming, in memory bounded by the codec's window:
 * zstd frames whose window is above 8 MiB are refused (ZSTD_d_windowLogMax
 * 23, decompress_codecs.c; libzstd's own limit is 128 MiB); gzip's is
 * 32 KiB.
 * Several concatenated zstd frames or gzip members are read as one stream,
 * as `zstd -d` and `gunzip` do. */
#ifndef FXTRACE_READER_DECOMPRESS_H_
#define FXTRACE_READER_DECOMPRESS_H_

#include <stdbool.h>
#include <stddef.h>

typedef enum decompress_codec {
  DECOMPRESS_PLAIN = 0,
  DECOMPRESS_ZSTD = 1,
  DECOMPRESS_GZIP = 2,
} decompress_codec_t;

/* The bytes a decision needs: fewer only when the input is that short. */
enum { DECOMPRESS_MAGIC_BYTES = 4 };

/* The codec whose magic the first `size` bytes of an input start with. */
decompress_codec_t decompress__detect(const unsigned char* data, size_t size);

const char* decompress__codec_name(decompress_codec_t codec);

typedef struct decompress decompress_t;

/* False in the build without codecs (libfxtrace): decompress__create then
 * always returns NULL. */
bool decompress__supported(void);

/* NULL when out of memory. */
decompress_t* decompress__create(decompress_codec_t codec);
void decompress__free(decompress_t* d);

/* Decompresses from in[0, in_size) into out[0, out_size) (out_size > 0):
 * returns the bytes written to `out`, and in *used the input bytes taken;
 * -1 when the compressed data is damaged (decompress__message says how).
 * The bytes decoded before the damage come first: the step that finds it
 * returns them, and the next returns -1. */
ptrdiff_t decompress__step(decompress_t* d, const unsigned char* in, size_t in_size, size_t* used,
                           unsigned char* out, size_t out_size);

/* True between two frames (members): the compressed input may end here.
 * An input that ends elsewhere is truncated. */
bool decompress__at_boundary(const decompress_t* d);

/* Why decompress__step failed. */
const char* decompress__message(const decompress_t* d);

#endif /* FXTRACE_READER_DECOMPRESS_H_ */
