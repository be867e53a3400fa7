/* Not part of the public API: the reader's byte source. It hides whether the
 * archive comes from a file descriptor, a FILE* or memory, and whether it is
 * compressed (decompress.h: recognized by its first bytes, decompressed as
 * it is read; offsets are then offsets in the decompressed archive), and
 * hands out a window of at least N contiguous bytes at the current offset.
 *
 * Invariant: [buf + start, buf + end) holds the input bytes from archive
 * offset `offset` on; nothing before `offset` is kept (constant memory).
 * No byte at or past archive offset `limit` is handed out (a raw trace
 * buffer's streamed saves end there, recover.h). */
#ifndef FXTRACE_READER_INPUT_H_
#define FXTRACE_READER_INPUT_H_

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* INPUT_MEMORY_SOURCE: compressed caller memory, read like a file. */
enum input_kind { INPUT_FD, INPUT_FILE, INPUT_MEMORY, INPUT_MEMORY_SOURCE };

struct decompress;

typedef struct input {
  enum input_kind kind;
  int fd;
  FILE* file;
  const unsigned char* buf; /* memory input: the caller's bytes; else `owned` */
  unsigned char* owned;
  size_t capacity;
  size_t start, end;
  uint64_t offset; /* archive offset of buf[start] */
  uint64_t limit;  /* UINT64_MAX unless set: see the invariant */
  bool eof;
  int read_errno; /* non-zero after a read error */
  /* Compressed input: the decompressor, and the compressed bytes read but
   * not yet decompressed, zbuf[zstart, zend). */
  bool detected; /* the first bytes were looked at */
  int codec;     /* decompress_codec_t */
  struct decompress* z;
  unsigned char* zbuf;
  size_t zcapacity, zstart, zend;
  bool zeof;
  const unsigned char* source; /* INPUT_MEMORY_SOURCE: the caller's bytes */
  size_t source_size, source_pos;
  /* The compressed data is damaged or truncated: the input ends (eof) with
   * the bytes decompressed before, and this says why; NULL otherwise. */
  const char* damage;
  bool damage_truncated; /* ... the compressed data just stops */
  char damage_text[200];
} input_t;

void input__init_fd(input_t* in, int fd);
void input__init_file(input_t* in, FILE* file);
void input__init_memory(input_t* in, const void* data, size_t size);
/* Memory that is never decompressed (decoded bytes), from archive offset
 * `offset` on. */
void input__init_plain_memory(input_t* in, const void* data, size_t size, uint64_t offset);
void input__free(input_t* in);

/* Makes up to `want` bytes available at buf + start; returns how many are
 * (fewer only at end of input, at `limit` or on a read error; -1 when out of
 * memory). */
ptrdiff_t input__ensure(input_t* in, size_t want);

/* Drops `n` bytes, which must have been made available by input__ensure. */
void input__consume(input_t* in, size_t n);

/* Drops `n` bytes that need not be available (skipping a record too big to
 * buffer); returns false if the input ended first. */
bool input__skip(input_t* in, uint64_t n);

#endif /* FXTRACE_READER_INPUT_H_ */
