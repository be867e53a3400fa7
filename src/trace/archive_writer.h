/* Not part of the public API: what `trace record`, `convert` and `recover`
 * write — a stream of records (FXT records, JSON events), plain or
 * compressed — and how it ends when a write fails. The writer is told where
 * the stream it was handed has a record boundary (a "cut point"); after a
 * failed write (a full disk: ENOSPC, EIO, EFBIG...) archive_writer__cut()
 * cuts the file back to the last cut point all of whose bytes reached it, so
 * the file holds whole records only:
 *
 *   - plain: the file is the stream itself; a cut point counts once the
 *     bytes before it are written, so the cut is after the last complete
 *     record in the file;
 *   - compressed: a frame (gzip member) ends at a cut point once at least
 *     FRAME_BYTES of the stream went into it; the cut is after the last
 *     complete frame in the file, which the decompressor reads to its end
 *     without an error, and which ends at a record boundary.
 *
 * A stream that is not a regular file (a pipe, a terminal) cannot be cut:
 * the failure is reported the same way. */
#ifndef FXTRACE_TRACE_ARCHIVE_WRITER_H_
#define FXTRACE_TRACE_ARCHIVE_WRITER_H_

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "trace/compress_writer.h"
#include "trace/output.h"

/* A compressed frame ends at the first cut point after at least this much of
 * the stream went into it and at least this much of the file came out of it.
 * Ending a frame waits for libzstd's worker to finish it (a few ms for a few
 * MiB): frames of at least 1 MiB of the file keep that wait rare even for
 * a trace that compresses 15x, and a full disk loses at most about that. */
enum { ARCHIVE_FRAME_BYTES = 4 << 20, ARCHIVE_FRAME_FILE_BYTES = 1 << 20 };

typedef struct archive_writer {
  output_t* out;             /* borrowed */
  compressor_t* codec;       /* NULL: plain */
  uint64_t start;            /* out->offset when the writer began */
  uint64_t logical;          /* stream bytes handed so far */
  uint64_t frame_start;      /* compressed: the stream offset where the current frame began ... */
  uint64_t frame_file_start; /* ... and the file's */
  uint64_t kept_logical;     /* the last cut point whose bytes are all in the file ... */
  uint64_t kept_file;        /* ... and the file's length there */
  int error;                 /* errno of the first failure (0: none); sticky */
  bool cut;                  /* archive_writer__cut() ran */
} archive_writer_t;

/* Starts writing at out's current offset, compressed unless codec is
 * COMPRESS_NONE. The start of the stream is a cut point. false when out of
 * memory (errno ENOMEM). */
bool archive_writer__init(archive_writer_t* w, output_t* out, compress_codec_t codec);

/* Hands `size` more bytes of the stream. false once a write has failed
 * (`error`); nothing is written after that. */
bool archive_writer__write(archive_writer_t* w, const void* data, size_t size);

/* Plain: how much of the stream is in the file (all of it, unless a write
 * failed). Compressed: how much went into the compressor. */
uint64_t archive_writer__in_file(const archive_writer_t* w);

/* `logical` (at most what was handed) is a record boundary of the stream.
 * Plain: it becomes the cut point when its bytes are in the file (after a
 * failed write too: the caller then names the last boundary within
 * archive_writer__in_file()). Compressed: a boundary at the end of what was
 * handed ends the frame once it is due (ARCHIVE_FRAME_BYTES). false once a
 * write has failed. */
bool archive_writer__boundary(archive_writer_t* w, uint64_t logical);

/* Compressed: whether a cut point `pending` bytes past what was handed would
 * end the frame (json_writer.h hands its text on there). */
bool archive_writer__frame_due(const archive_writer_t* w, uint64_t pending);

/* The end of the stream, itself a boundary: ends the last frame. false if a
 * write failed (now or before). */
bool archive_writer__finish(archive_writer_t* w);

/* After a failure: cuts a regular file after the last cut point (kept_file
 * bytes; kept_logical of the stream). 0, or why it could not (ESPIPE: not a
 * regular file; ftruncate's errno). The writer writes nothing afterwards
 * except through archive_writer__append(). */
int archive_writer__cut(archive_writer_t* w);

/* After archive_writer__cut(): tries to write `size` more bytes of the
 * stream after the cut (JSON's closing brackets), compressed as a frame of
 * their own; on a failure the file is cut back again. true if they are in. */
bool archive_writer__append(archive_writer_t* w, const void* data, size_t size);

/* After a failure: cuts the file (archive_writer__cut), appends `closing`
 * if not NULL (JSON's brackets), and says on stderr what was kept, as
 * "trace CMD: kept NAME: ..., cut at byte N, after the last complete UNIT"
 * (UNIT: "record", "event"; compressed: "... complete zstd frame"), or why
 * nothing could be (not a regular file). A file that kept nothing whole is
 * removed ("trace CMD: removed NAME: ..."). */
void archive_writer__keep(archive_writer_t* w, const char* cmd, const char* unit,
                          const char* closing);

/* Frees the compressor. */
void archive_writer__free(archive_writer_t* w);

#endif /* FXTRACE_TRACE_ARCHIVE_WRITER_H_ */
