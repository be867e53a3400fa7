/* Not part of the public API: the ordered view's temporary file. Created on
 * the first run written, in options.tmpdir ($TMPDIR, else /tmp), without a
 * name (O_TMPFILE; else created and unlinked at once), so nothing is left
 * behind whatever happens to the process. Runs are appended through one
 * ORDERED_IO_BYTES buffer and read back by offset; the space of runs merged
 * into others is given back (hole punching, where the file system can).
 * Thread-safety: as ordered.h. */
#ifndef FXTRACE_ORDERED_SPILL_H_
#define FXTRACE_ORDERED_SPILL_H_

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ordered/ordered_internal.h"

/* The offset the next appended byte gets. */
uint64_t ordered__spill_end(const ordered_t* o);

/* Appends n bytes. false (the view failed) when the file cannot be created
 * or written. */
bool ordered__spill_append(ordered_t* o, const void* data, size_t n);

/* No more appends: writes what is buffered and frees the write buffer. */
bool ordered__spill_seal(ordered_t* o);

/* Reads n bytes at off, which must lie before ordered__spill_end(). */
bool ordered__spill_read(ordered_t* o, uint64_t off, void* dst, size_t n);

/* The bytes [off, off + len) will not be read again. */
void ordered__spill_discard(ordered_t* o, uint64_t off, uint64_t len);

void ordered__spill_close(ordered_t* o);

#endif /* FXTRACE_ORDERED_SPILL_H_ */
