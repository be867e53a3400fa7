/* Text from an archive, made safe for a terminal (docs/security.md): an
 * archive is untrusted, and a raw escape sequence in an event name, a
 * thread name or a rendered format could move the cursor, retitle the
 * window or hide lines of the output. */
#ifndef FXTRACE_TRACE_TEXT_ESCAPE_H_
#define FXTRACE_TRACE_TEXT_ESCAPE_H_

#include <stdbool.h>
#include <stdio.h>

/* Writes data[0, length): control bytes and DEL as \xNN (NUL included: the
 * text goes on after it), and C1 controls in UTF-8 (U+0080..U+009F) as their
 * two \xNN, except those in `keep` (e.g. "\n\t" for a format
 * file's own layout; NULL: none); with `quoted` (text printed between
 * quotes), '"' and '\\' get a backslash too. */
void text__put_escaped(FILE* out, const char* data, size_t length, const char* keep, bool quoted);

/* The same escaping (not quoted, nothing kept) of a NUL-terminated string
 * into out[size], cut short if it does not fit; returns out. For names the
 * manager relays from providers, printed in columns. */
const char* text__escaped(const char* in, char* out, size_t size);

/* Room for text__escaped() of a string of n bytes, whatever they are. */
#define TEXT_ESCAPED_SIZE(n) (4 * (n) + 1)

#endif /* FXTRACE_TRACE_TEXT_ESCAPE_H_ */
