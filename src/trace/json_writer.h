/* Not part of the public API: a small streaming JSON writer for the trace
 * tools. It never emits invalid JSON text from bad input: strings are escaped
 * and invalid UTF-8 is replaced by U+FFFD. Write errors are sticky: after the
 * first one every call does nothing and `failed` stays set.
 *
 * It writes to a FILE* or to an archive writer (archive_writer.h); to the
 * latter, json__boundary() marks where the text may be cut (after a whole
 * event), so that a file cut after a failed write ends after an event. */
#ifndef FXTRACE_TRACE_JSON_WRITER_H_
#define FXTRACE_TRACE_JSON_WRITER_H_

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "trace/archive_writer.h"

enum { JSON_MARKS = 1024 };

typedef struct json_writer {
  FILE* out;                 /* borrowed; or NULL and ... */
  archive_writer_t* archive; /* ... this, borrowed */
  bool failed;
  int error;       /* errno of the first failed write */
  uint64_t handed; /* bytes handed to the archive writer */
  size_t used;     /* bytes of `buffer` not yet handed on */
  /* offsets in `buffer` where a cut may come (plain archive writer): the
   * first JSON_MARKS - 1 and the last one of the buffer */
  size_t marks[JSON_MARKS];
  size_t mark_count;
  char buffer[64 * 1024];
} json_writer_t;

/* Starts writing to `out` (borrowed). */
void json_writer__init(json_writer_t* j, FILE* out);

/* Starts writing to `archive` (borrowed). */
void json_writer__init_archive(json_writer_t* j, archive_writer_t* archive);

/* The text written so far may be cut here (archive writer only). */
void json__boundary(json_writer_t* j);

void json__raw(json_writer_t* j, const char* text, size_t length);
void json__text(json_writer_t* j, const char* text); /* NUL-terminated raw text */
void json__string(json_writer_t* j, const char* data, size_t length);
void json__u64(json_writer_t* j, uint64_t v);
void json__i64(json_writer_t* j, int64_t v);
/* The shortest of %.15g / %.16g / %.17g that reads back exactly, in exponent
 * form (1.5e-7) when that is shorter or the value is below 1e-3; non-finite
 * → "NaN" / "Infinity" strings. */
void json__double(json_writer_t* j, double v);
void json__hex_string(json_writer_t* j, uint64_t v); /* "0x1f" */
void json__base64_string(json_writer_t* j, const void* data, size_t length);

/* Hands buffered text on (and flushes a FILE*), and reports whether every
 * write so far succeeded. */
bool json__flush(json_writer_t* j);

#endif /* FXTRACE_TRACE_JSON_WRITER_H_ */
