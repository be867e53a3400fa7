/* Not part of the public API: a small streaming JSON writer for the trace
 * tools. It never emits invalid JSON text from bad input: strings are escaped
 * and invalid UTF-8 is replaced by U+FFFD. Write errors are sticky: after the
 * first one every call does nothing and `failed` stays set. */
#ifndef FXTRACE_TRACE_JSON_WRITER_H_
#define FXTRACE_TRACE_JSON_WRITER_H_

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

typedef struct json_writer {
  FILE* out; /* borrowed */
  bool failed;
  int error;   /* errno of the first failed write */
  size_t used; /* bytes of `buffer` not yet handed to `out` */
  char buffer[64 * 1024];
} json_writer_t;

/* Starts writing to `out` (borrowed). */
void __json_writer_init(json_writer_t* j, FILE* out);

void __json_raw(json_writer_t* j, const char* text, size_t length);
void __json_text(json_writer_t* j, const char* text); /* NUL-terminated raw text */
void __json_string(json_writer_t* j, const char* data, size_t length);
void __json_u64(json_writer_t* j, uint64_t v);
void __json_i64(json_writer_t* j, int64_t v);
void __json_double(json_writer_t* j, double v); /* non-finite → "NaN" / "Infinity" strings */
void __json_hex_string(json_writer_t* j, uint64_t v); /* "0x1f" */
void __json_base64_string(json_writer_t* j, const void* data, size_t length);

/* Hands buffered text to the FILE*, flushes it, and reports whether every
 * write so far succeeded. */
bool __json_flush(json_writer_t* j);

#endif /* FXTRACE_TRACE_JSON_WRITER_H_ */
