/* The reader's byte source: buffered reads from an fd or FILE*, or a window
 * onto caller memory, in memory bounded by the largest window asked for. */
#include "reader/input.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "reader/decompress.h"

enum { READ_CHUNK = 256 * 1024, COMPRESSED_CHUNK = 128 * 1024 };

void input__init_fd(input_t* in, int fd) {
  memset(in, 0, sizeof(*in));
  in->limit = UINT64_MAX;
  in->kind = INPUT_FD;
  in->fd = fd;
}

void input__init_file(input_t* in, FILE* file) {
  memset(in, 0, sizeof(*in));
  in->limit = UINT64_MAX;
  in->kind = INPUT_FILE;
  in->file = file;
}

void input__init_memory(input_t* in, const void* data, size_t size) {
  if (decompress__detect(data, size) != DECOMPRESS_PLAIN) {
    memset(in, 0, sizeof(*in));
    in->limit = UINT64_MAX;
    in->kind = INPUT_MEMORY_SOURCE; /* decompressed as it is read */
    in->source = data;
    in->source_size = size;
    return;
  }
  input__init_plain_memory(in, data, size, 0);
}

void input__init_plain_memory(input_t* in, const void* data, size_t size, uint64_t offset) {
  memset(in, 0, sizeof(*in));
  in->limit = UINT64_MAX;
  in->kind = INPUT_MEMORY;
  in->buf = (const unsigned char*)data;
  in->end = size;
  in->eof = true;
  in->offset = offset;
  in->detected = true;
}

void input__free(input_t* in) {
  free(in->owned);
  in->owned = NULL;
  free(in->zbuf);
  in->zbuf = NULL;
  decompress__free(in->z);
  in->z = NULL;
}

/* One read of the source into dst[0..room); returns bytes read, 0 at EOF,
 * -1 on error. */
static ptrdiff_t read_source(input_t* in, unsigned char* dst, size_t room) {
  if (in->kind == INPUT_MEMORY_SOURCE) {
    size_t n = in->source_size - in->source_pos < room ? in->source_size - in->source_pos : room;
    if (n) memcpy(dst, in->source + in->source_pos, n);
    in->source_pos += n;
    return (ptrdiff_t)n;
  }
  if (in->kind == INPUT_FILE) {
    size_t n = fread(dst, 1, room, in->file);
    if (n == 0 && ferror(in->file)) {
      in->read_errno = errno ? errno : EIO;
      return -1;
    }
    return (ptrdiff_t)n;
  }
  for (;;) {
    ssize_t n = read(in->fd, dst, room);
    if (n >= 0) return n;
    if (errno == EINTR) continue;
    in->read_errno = errno;
    return -1;
  }
}

static void set_damage(input_t* in, bool truncated, const char* what) {
  snprintf(in->damage_text, sizeof(in->damage_text), "%s", what);
  in->damage = in->damage_text;
  in->damage_truncated = truncated;
}

/* Decompressed bytes into dst[0..room); returns how many, 0 at the end of
 * the input (`damage` set if it is damaged or truncated), -1 on a read
 * error. */
static ptrdiff_t decompress_some(input_t* in, unsigned char* dst, size_t room) {
  for (;;) {
    if (in->zstart == in->zend && !in->zeof) {
      ptrdiff_t n = read_source(in, in->zbuf, in->zcapacity);
      if (n < 0) return -1;
      in->zstart = 0;
      in->zend = (size_t)n;
      in->zeof = n == 0;
    }
    size_t used;
    ptrdiff_t made =
        decompress__step(in->z, in->zbuf + in->zstart, in->zend - in->zstart, &used, dst, room);
    in->zstart += used;
    if (made < 0) {
      set_damage(in, false, decompress__message(in->z));
      return 0;
    }
    if (made > 0) return made;
    if (in->zeof && in->zstart == in->zend) {
      if (!decompress__at_boundary(in->z)) {
        char what[120];
        snprintf(what, sizeof(what),
                 "the %s-compressed data ends early (the compressed file is truncated)",
                 decompress__codec_name((decompress_codec_t)in->codec));
        set_damage(in, true, what);
      }
      return 0;
    }
    if (used == 0 && in->zstart < in->zend) { /* needs more than it has: read on */
      memmove(in->zbuf, in->zbuf + in->zstart, in->zend - in->zstart);
      in->zend -= in->zstart;
      in->zstart = 0;
      if (in->zend == in->zcapacity || in->zeof) {
        set_damage(in, in->zeof, "the compressed data is damaged: the decoder makes no progress");
        return 0;
      }
      ptrdiff_t n = read_source(in, in->zbuf + in->zend, in->zcapacity - in->zend);
      if (n < 0) return -1;
      in->zend += (size_t)n;
      in->zeof = n == 0;
    }
  }
}

/* The first read: looks at the first bytes, and sets up decompression when
 * they are a compressed file's magic. */
static ptrdiff_t detect(input_t* in, unsigned char* dst, size_t room) {
  in->detected = true;
  size_t have = 0;
  while (have < DECOMPRESS_MAGIC_BYTES) { /* a pipe may hand out fewer */
    ptrdiff_t n = read_source(in, dst + have, room - have);
    if (n < 0) return -1;
    if (n == 0) break;
    have += (size_t)n;
  }
  decompress_codec_t codec = decompress__detect(dst, have);
  if (codec == DECOMPRESS_PLAIN) return (ptrdiff_t)have;
  in->codec = codec;
  if (!decompress__supported()) {
    char why[160];
    snprintf(why, sizeof(why),
             "a %s-compressed archive: libfxtrace reads plain FXT only (use libtrace-reader or "
             "`trace`)",
             decompress__codec_name(codec));
    set_damage(in, false, why);
    return 0;
  }
  in->z = decompress__create(codec);
  in->zcapacity = have > COMPRESSED_CHUNK ? have : COMPRESSED_CHUNK;
  in->zbuf = malloc(in->zcapacity);
  if (!in->z || !in->zbuf) {
    set_damage(in, false, "out of memory for decompression");
    return 0;
  }
  memcpy(in->zbuf, dst, have);
  in->zstart = 0;
  in->zend = have;
  return decompress_some(in, dst, room);
}

/* One read into owned[end..capacity); returns bytes read, 0 at EOF, -1 on error. */
static ptrdiff_t read_some(input_t* in) {
  unsigned char* dst = in->owned + in->end;
  size_t room = in->capacity - in->end;
  if (!in->detected) return detect(in, dst, room);
  if (in->z) return decompress_some(in, dst, room);
  return read_source(in, dst, room);
}

/* Makes room for `want` bytes from start: compacts, then grows if needed. */
static bool make_room(input_t* in, size_t want) {
  if (in->start > 0 && in->capacity - in->start < want + READ_CHUNK / 2) {
    memmove(in->owned, in->owned + in->start, in->end - in->start);
    in->end -= in->start;
    in->start = 0;
  }
  size_t need = in->start + want;
  if (need < READ_CHUNK) need = READ_CHUNK;
  if (in->capacity >= need) return true;
  unsigned char* grown = realloc(in->owned, need);
  if (!grown) return false;
  in->owned = grown;
  in->buf = grown;
  in->capacity = need;
  return true;
}

ptrdiff_t input__ensure(input_t* in, size_t want) {
  if (in->offset >= in->limit)
    want = 0;
  else if (want > in->limit - in->offset)
    want = (size_t)(in->limit - in->offset);
  size_t have = in->end - in->start;
  if (have >= want || in->eof) return (ptrdiff_t)(have < want ? have : want);
  if (!make_room(in, want)) return -1;
  while (in->end - in->start < want && !in->eof) {
    ptrdiff_t n = read_some(in);
    if (n <= 0) {
      in->eof = true; /* EOF, or an error recorded in read_errno */
      break;
    }
    in->end += (size_t)n;
  }
  have = in->end - in->start;
  return (ptrdiff_t)(have < want ? have : want);
}

void input__consume(input_t* in, size_t n) {
  in->start += n;
  in->offset += n;
  if (in->start == in->end && in->kind != INPUT_MEMORY) in->start = in->end = 0;
}

bool input__skip(input_t* in, uint64_t n) {
  while (n > 0) {
    size_t step = n > READ_CHUNK ? READ_CHUNK : (size_t)n;
    ptrdiff_t got = input__ensure(in, step);
    if (got <= 0) return false;
    input__consume(in, (size_t)got);
    n -= (uint64_t)got;
  }
  return true;
}
