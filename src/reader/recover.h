/* Not part of the public API: turning the raw image of the trace buffer a
 * traced program leaves when it dies before finishing (docs/file-mode.md:
 * the live buffer, then the streamed saves its FXTRACE_OUTPUT holds) into
 * the FXT archive it would have written.
 *
 * The archive is what src/provider/file_provider.c writes at exit: the
 * prologue (magic, provider info "recovered", a buffer-overflow event if the
 * header counted drops), the streamed saves [total_size, total_size +
 * streamed_bytes) as they are, then the committed records still in the
 * buffer (engine/buffer_scan.h). The buffer is untrusted input: every offset
 * is checked by the scan, and nothing is read outside [raw, raw + size). */
#ifndef FXTRACE_READER_RECOVER_H_
#define FXTRACE_READER_RECOVER_H_

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The first 8 bytes of a raw buffer file (TRACE_BUFFER_HEADER_MAGIC, LE). */
bool recover__is_raw_buffer(const void* data, size_t size);

/* Builds the archive of the raw buffer file `raw` of `size` bytes into a
 * malloc'ed block (*out, *out_size). `owned` is NULL, or `raw` itself when
 * it is a malloc'ed block the caller gives up: it is then reused for the
 * result (or freed), which keeps the peak memory near the file's size plus
 * the buffer's records. Returns NULL on success, else why not ("out of
 * memory" or the header problem), with `owned` freed either way. */
const char* recover__archive(const unsigned char* raw, size_t size, unsigned char* owned,
                             unsigned char** out, size_t* out_size);

#endif /* FXTRACE_READER_RECOVER_H_ */
