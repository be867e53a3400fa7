/* The frames of a remote channel (remote.h, docs/multi-host.md#protocol). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "remote/remote.h"

enum { HEADER = 8, BUFFER = REMOTE_MAX_PAYLOAD + HEADER };

bool remote_reader__init(remote_reader_t* r, int fd) {
  memset(r, 0, sizeof(*r));
  r->fd = fd;
  r->buf = malloc(BUFFER);
  return r->buf != NULL;
}

void remote_reader__free(remote_reader_t* r) {
  free(r->buf);
  r->buf = NULL;
}

int remote_reader__next(remote_reader_t* r, remote_frame_t* f) {
  if (r->error) return -1;
  size_t avail = r->have - r->at;
  if (avail >= HEADER) {
    uint32_t length = remote__get32(r->buf + r->at + 4);
    if (length > REMOTE_MAX_PAYLOAD) {
      r->error = EPROTO;
      return -1;
    }
    if (avail >= HEADER + (size_t)length) {
      f->type = remote__get32(r->buf + r->at);
      f->length = length;
      f->payload = r->buf + r->at + HEADER;
      r->at += HEADER + length;
      return 1;
    }
  }
  if (r->eof) {
    if (avail > 0) r->error = EPROTO; /* cut inside a frame */
    return -1;
  }
  return 0;
}

bool remote_reader__fill(remote_reader_t* r) {
  if (r->eof || r->error) return false;
  if (r->at > 0) { /* the frames before `at` are consumed: keep the rest at the front */
    memmove(r->buf, r->buf + r->at, r->have - r->at);
    r->have -= r->at;
    r->at = 0;
  }
  for (;;) {
    ssize_t n = read(r->fd, r->buf + r->have, BUFFER - r->have);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && errno == EAGAIN) return true;
    if (n < 0) {
      r->error = errno;
      return false;
    }
    if (n == 0) {
      r->eof = true;
      return false;
    }
    r->have += (size_t)n;
    return true;
  }
}

static bool write_all(int fd, const unsigned char* p, size_t n) {
  while (n > 0) {
    ssize_t w = write(fd, p, n);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) return false;
    p += w;
    n -= (size_t)w;
  }
  return true;
}

bool remote_channel__write(int fd, uint32_t type, const void* payload, size_t length) {
  if (length > REMOTE_MAX_PAYLOAD) {
    errno = EMSGSIZE;
    return false;
  }
  unsigned char header[HEADER];
  remote__put32(header, type);
  remote__put32(header + 4, (uint32_t)length);
  if (length <= 4096) { /* one write: a clock frame goes out whole */
    unsigned char frame[HEADER + 4096];
    memcpy(frame, header, HEADER);
    if (length) memcpy(frame + HEADER, payload, length);
    return write_all(fd, frame, HEADER + length);
  }
  return write_all(fd, header, HEADER) && write_all(fd, payload, length);
}
