/* Not part of the public API: reads one source of the ordered view (a run,
 * or a stretch of untimed records) record by record, from the slab or from
 * the temporary file through a buffer of ORDERED_IO_BYTES (grown to hold a
 * larger record). The current record stays valid until the cursor advances.
 * Thread-safety: as ordered.h. */
#ifndef FXTRACE_ORDERED_CURSOR_H_
#define FXTRACE_ORDERED_CURSOR_H_

#include <stdbool.h>

#include "ordered/ordered_internal.h"

/* Positions c at the source's first record (c->rec NULL when empty). false:
 * the view failed. */
bool ordered__cursor_open(ordered_t* o, ordered_cursor_t* c, const ordered_source_t* source);

/* To the next record (c->rec NULL past the last). */
bool ordered__cursor_advance(ordered_t* o, ordered_cursor_t* c);

/* Frees the buffer; c is then at its end. Closing a zeroed cursor is fine. */
void ordered__cursor_close(ordered_t* o, ordered_cursor_t* c);

#endif /* FXTRACE_ORDERED_CURSOR_H_ */
