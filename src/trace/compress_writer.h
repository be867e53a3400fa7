/* Compressed output for `trace record` and `trace recover`: compresses what
 * is written to it into an output file (output.h) as standard zstd frames or
 * gzip members, streaming and in constant memory. `zstd -d` or `gunzip` turn
 * the result into exactly the bytes written.
 *
 * The data goes out as a sequence of frames (members): compress__end_frame()
 * ends the current one, and the next write begins another. A file cut after
 * a complete frame decompresses without an error to the end of that frame
 * (archive_writer.h cuts there after a failed write); each frame carries its
 * checksum (zstd's content checksum, gzip's CRC32).
 *
 * zstd runs with one worker thread of libzstd's own: a write hands the bytes
 * over and returns while the previous block is compressed, so the writer (the
 * thread reading the archive from the trace manager) keeps reading while a
 * second core compresses; libzstd bounds what it holds (a few MiB); ending a
 * frame waits for the worker. gzip compresses on the writer's thread. */
#ifndef FXTRACE_TRACE_COMPRESS_WRITER_H_
#define FXTRACE_TRACE_COMPRESS_WRITER_H_

#include <stdbool.h>
#include <stddef.h>

#include "trace/output.h"

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

typedef struct compressor compressor_t;

/* A compressor writing into `out` (borrowed) with `codec` (not NONE); NULL
 * when out of memory. */
compressor_t* compress__new(output_t* out, compress_codec_t codec);

/* Compresses `size` bytes. 0, or the errno of the failed write of the output
 * (out->error), or EIO when the codec fails; every later call fails with it. */
int compress__write(compressor_t* c, const void* data, size_t size);

/* Ends the current frame (gzip member) and writes all of it: once it
 * returns 0, out->offset is the end of a complete frame. Nothing when no
 * byte was written since the last one. 0 or an errno as above. */
int compress__end_frame(compressor_t* c);

/* The codec it was made with. */
compress_codec_t compress__codec(const compressor_t* c);

/* Frees the compressor (without ending its frame). NULL is ignored. */
void compress__free(compressor_t* c);

#endif /* FXTRACE_TRACE_COMPRESS_WRITER_H_ */
