/* Compressed output for `trace record` and `trace recover`: a FILE* that
 * compresses what is written to it into another FILE*, as one standard zstd
 * frame or gzip member, streaming and in constant memory. `zstd -d` or
 * `gunzip` turn the result into exactly the bytes written to the stream.
 *
 * zstd runs with one worker thread of libzstd's own: fwrite() hands the
 * bytes over and returns while the previous block is compressed, so the
 * writer (the thread reading the archive from the trace manager) keeps
 * reading while a second core compresses; libzstd bounds what it holds
 * (a few MiB). gzip compresses on the writer's thread. Either way a regular
 * output file is written behind (write_behind.h). */
#ifndef FXTRACE_TRACE_COMPRESS_WRITER_H_
#define FXTRACE_TRACE_COMPRESS_WRITER_H_

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

typedef enum compress_codec {
  COMPRESS_NONE = 0,
  COMPRESS_ZSTD = 1,
  COMPRESS_GZIP = 2,
} compress_codec_t;

/* "zstd", "gzip" or "none" (--compress's values); false if unknown. */
bool compress__parse_codec(const char* text, compress_codec_t* codec);

/* The codec an output name asks for: "*.zst" zstd, "*.gz" gzip, else none. */
compress_codec_t compress__codec_for_name(const char* path);

const char* compress__codec_name(compress_codec_t codec);

/* A write-only stream compressing into `out` with `codec` (not NONE).
 * fclose() of the stream ends the compressed data and flushes `out`, but
 * leaves `out` open for its owner. A failed write of `out` makes fwrite()
 * (or fclose()) of the stream fail with that write's errno. `written`, if
 * not NULL, counts the compressed bytes written to `out` (it must outlive
 * the stream). NULL (errno set) if out of memory. */
FILE* compress__open(FILE* out, compress_codec_t codec, uint64_t* written);

#endif /* FXTRACE_TRACE_COMPRESS_WRITER_H_ */
