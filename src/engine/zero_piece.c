/* One piece of a reused chunk's scrub (writer.c, zero_prefetched). Out of
 * line, in its own object, so that a test can interrupt a scrub half-way
 * (tests/provider/scrub_kill.c links with --wrap=writer__zero_piece); the
 * call costs nothing measurable against the kilobyte it clears. */
#include <string.h>

#include "engine/engine_internal.h"

void writer__zero_piece(void* p, size_t bytes) { memset(p, 0, bytes); }
