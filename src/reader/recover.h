/* Not part of the public API: reading the raw image of the trace buffer a
 * traced program leaves when it dies before finishing (docs/file-mode.md:
 * the live buffer, then the streamed saves its FXTRACE_OUTPUT holds) as the
 * FXT archive it would have written.
 *
 * That archive is what src/provider/file_provider.c writes at exit, in
 * three segments: the prologue (magic, provider info "recovered", a
 * buffer-overflow event if the header counted drops), the streamed saves
 * [total_size, total_size + streamed_bytes) of the image as they are, then
 * the committed records still in the buffer (engine/buffer_scan.h). The
 * reader frames records in each segment in turn (a record never spans two):
 * the prologue as an archive, the other two, which fxtrace's engine wrote,
 * with raw_frame.c's checks, so that damage in them is skipped.
 *
 * Memory: the buffer (total_size bytes, which the header's checked
 * geometry bounds; all-zero stretches cost none) while its records are
 * collected, then those records; the saves, which nothing bounds, are not
 * buffered: they are the input itself, read as it streams. The image is
 * untrusted: its header is checked as soon as its bytes arrive, before
 * anything else is read, every offset is checked by the scan, and nothing
 * is read outside the image. */
#ifndef FXTRACE_READER_RECOVER_H_
#define FXTRACE_READER_RECOVER_H_

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "engine/buffer_scan.h"
#include "reader/input.h"

/* The first 8 bytes of a raw buffer file (TRACE_BUFFER_HEADER_MAGIC, LE). */
bool recover__is_raw_buffer(const void* data, size_t size);

typedef struct recover recover_t;

/* Reads the raw image at the start of `in` (whose first bytes are the
 * buffer magic) up to its streamed saves: checks the header, then reads the
 * buffer and keeps its committed records. NULL on success (*out set), else
 * why not: "out of memory", the header's problem, or that the input ended
 * first (*truncated then true; a read error or damaged compressed data is
 * in `in`, which the caller reports instead). */
const char* recover__open(input_t* in, recover_t** out, bool* truncated);

/* The input to frame the next segment from, starting at archive offset
 * `offset` (where the previous segment ended), or NULL after the last: the
 * prologue, then `source` itself limited to the header's streamed_bytes,
 * then the rest of `source` if it holds more than one save (a damaged
 * streamed_bytes: recover__past), then the buffer's records. `records`:
 * the records the reader returned so far. */
input_t* recover__next_segment(recover_t* image, input_t* source, uint64_t offset,
                               uint64_t records);

/* "streamed saves", "saves past the header's streamed_bytes" or
 * "buffer's records" while one of those is the
 * segment being read (framed by raw_frame.c), NULL for the prologue. */
const char* recover__segment_name(const recover_t* image);

/* What the scan of the buffer found (records, and headers whose size did
 * not fit even measured, skipped with the rest of their chunk: how many,
 * and where the first was in the buffer). */
buffer_scan_stats_t recover__scan_stats(const recover_t* image);

/* Records of the buffer whose size field covered words past their
 * contents (damaged: the engine writes exact sizes): collected cut to their
 * contents, with a size field that says so. */
uint64_t recover__trimmed(const recover_t* image);

/* Why the buffer's header contradicts itself (buffer_scan__inconsistency:
 * records may be duplicated or missing), or NULL. */
const char* recover__inconsistency(const recover_t* image);

/* Bytes of saves the file held past the header's streamed_bytes (more than
 * one save: the header's value was damaged), read as saves; 0 if none.
 * *streamed_bytes: the header's value; *records: the records read there. */
uint64_t recover__past(const recover_t* image, uint64_t* streamed_bytes, uint64_t* records);

void recover__free(recover_t* image);

#endif /* FXTRACE_READER_RECOVER_H_ */
