/* Text from an archive, made safe for a terminal (docs/security.md): an
 * archive is untrusted, and a raw escape sequence in an event name, a
 * thread name or a rendered format could move the cursor, retitle the
 * window or hide lines of the output. */
#ifndef FXTRACE_TRACE_TEXT_ESCAPE_H_
#define FXTRACE_TRACE_TEXT_ESCAPE_H_

#include <stdbool.h>
#include <stdio.h>

/* Writes data[0, length): control bytes and DEL as \xNN (NUL included: the
 * text goes on after it), except those in `keep` (e.g. "\n\t" for a format
 * file's own layout; NULL: none); with `quoted` (text printed between
 * quotes), '"' and '\\' get a backslash too. */
void text__put_escaped(FILE* out, const char* data, size_t length, const char* keep, bool quoted);

#endif /* FXTRACE_TRACE_TEXT_ESCAPE_H_ */
