/* The reader's byte source: buffered reads from an fd or FILE*, or a window
 * onto caller memory, in memory bounded by the largest window asked for. */
#include "reader/input.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

enum { READ_CHUNK = 256 * 1024 };

void input__init_fd(input_t* in, int fd) {
  memset(in, 0, sizeof(*in));
  in->kind = INPUT_FD;
  in->fd = fd;
}

void input__init_file(input_t* in, FILE* file) {
  memset(in, 0, sizeof(*in));
  in->kind = INPUT_FILE;
  in->file = file;
}

void input__init_memory(input_t* in, const void* data, size_t size) {
  memset(in, 0, sizeof(*in));
  in->kind = INPUT_MEMORY;
  in->buf = (const unsigned char*)data;
  in->end = size;
  in->eof = true;
}

void input__free(input_t* in) {
  free(in->owned);
  in->owned = NULL;
}

/* One read into owned[end..capacity); returns bytes read, 0 at EOF, -1 on error. */
static ptrdiff_t read_some(input_t* in) {
  size_t room = in->capacity - in->end;
  if (in->kind == INPUT_FILE) {
    size_t n = fread(in->owned + in->end, 1, room, in->file);
    if (n == 0 && ferror(in->file)) {
      in->read_errno = errno ? errno : EIO;
      return -1;
    }
    return (ptrdiff_t)n;
  }
  for (;;) {
    ssize_t n = read(in->fd, in->owned + in->end, room);
    if (n >= 0) return n;
    if (errno == EINTR) continue;
    in->read_errno = errno;
    return -1;
  }
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

ptrdiff_t input__read_all(input_t* in) {
  if (in->kind == INPUT_MEMORY) return (ptrdiff_t)(in->end - in->start);
  while (!in->eof) {
    size_t have = in->end - in->start;
    if (have > (size_t)PTRDIFF_MAX / 2 - READ_CHUNK) return -1;
    if (!make_room(in, have < READ_CHUNK ? READ_CHUNK : have * 2)) return -1;
    while (in->end < in->capacity) {
      ptrdiff_t n = read_some(in);
      if (n <= 0) {
        in->eof = true; /* EOF, or an error recorded in read_errno */
        break;
      }
      in->end += (size_t)n;
    }
  }
  return (ptrdiff_t)(in->end - in->start);
}

void input__replace_owned(input_t* in, unsigned char* data, size_t size) {
  free(in->owned);
  memset(in, 0, sizeof(*in));
  in->kind = INPUT_MEMORY;
  in->buf = in->owned = data;
  in->capacity = in->end = size;
  in->eof = true;
}
