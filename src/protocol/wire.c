/* The control protocol's encoding and socket helpers (see wire.h). */
#include "protocol/wire.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

/* ---- writing ---- */

static void put(wire_writer_t* w, const void* p, size_t n) {
  if (w->overflow || n > WIRE_MAX_MESSAGE - w->length) {
    w->overflow = true;
    return;
  }
  memcpy(w->data + w->length, p, n);
  w->length += n;
}

void wire__begin(wire_writer_t* w, uint16_t type, uint32_t request_id) {
  w->length = 0;
  w->overflow = false;
  wire__put_u32(w, WIRE_MAGIC);
  wire__put_u16(w, WIRE_VERSION);
  wire__put_u16(w, type);
  wire__put_u32(w, 0); /* length, set by wire__end */
  wire__put_u32(w, request_id);
}

void wire__put_u8(wire_writer_t* w, uint8_t v) { put(w, &v, 1); }
void wire__put_u16(wire_writer_t* w, uint16_t v) { put(w, &v, 2); }
void wire__put_u32(wire_writer_t* w, uint32_t v) { put(w, &v, 4); }
void wire__put_u64(wire_writer_t* w, uint64_t v) { put(w, &v, 8); }

void wire__put_str(wire_writer_t* w, const char* s, size_t length) {
  if (length > UINT16_MAX) {
    w->overflow = true;
    return;
  }
  wire__put_u16(w, (uint16_t)length);
  put(w, s, length);
}

void wire__put_cstr(wire_writer_t* w, const char* s) { wire__put_str(w, s, s ? strlen(s) : 0); }

bool wire__end(wire_writer_t* w) {
  if (w->overflow) return false;
  uint32_t length = (uint32_t)w->length;
  memcpy(w->data + 8, &length, 4);
  return true;
}

/* ---- reading ---- */

static bool get(wire_reader_t* r, void* out, size_t n) {
  if (r->error || n > r->length - r->pos) {
    r->error = true;
    memset(out, 0, n);
    return false;
  }
  memcpy(out, r->data + r->pos, n);
  r->pos += n;
  return true;
}

const char* wire__open(wire_reader_t* r, const void* data, size_t length) {
  memset(r, 0, sizeof(*r));
  r->data = data;
  r->length = length;
  if (length < WIRE_HEADER_SIZE) return "message shorter than its header";
  uint32_t magic = wire__get_u32(r);
  uint16_t version = wire__get_u16(r);
  r->type = wire__get_u16(r);
  uint32_t declared = wire__get_u32(r);
  r->request_id = wire__get_u32(r);
  if (magic != WIRE_MAGIC) return "bad magic";
  if (version != WIRE_VERSION) return "unsupported protocol version";
  if (declared != length) return "length field does not match the message";
  return NULL;
}

uint8_t wire__get_u8(wire_reader_t* r) {
  uint8_t v;
  get(r, &v, 1);
  return v;
}
uint16_t wire__get_u16(wire_reader_t* r) {
  uint16_t v;
  get(r, &v, 2);
  return v;
}
uint32_t wire__get_u32(wire_reader_t* r) {
  uint32_t v;
  get(r, &v, 4);
  return v;
}
uint64_t wire__get_u64(wire_reader_t* r) {
  uint64_t v;
  get(r, &v, 8);
  return v;
}

void wire__get_str(wire_reader_t* r, char* out, size_t out_size, size_t max_length) {
  uint16_t length = wire__get_u16(r);
  if (out_size == 0) {
    r->error = true;
    return;
  }
  out[0] = '\0';
  if (r->error || length > max_length || length >= out_size || length > r->length - r->pos) {
    r->error = true;
    return;
  }
  memcpy(out, r->data + r->pos, length);
  out[length] = '\0';
  r->pos += length;
}

bool wire__done(const wire_reader_t* r) { return !r->error && r->pos == r->length; }

/* ---- sockets ---- */

int wire__send(int socket, const wire_writer_t* w, const int* fds, size_t fd_count) {
  if (w->overflow || fd_count > WIRE_MAX_FDS) return -EINVAL;
  struct iovec iov = {(void*)w->data, w->length};
  union {
    char buf[CMSG_SPACE(sizeof(int) * WIRE_MAX_FDS)];
    struct cmsghdr align;
  } control;
  struct msghdr msg = {0};
  msg.msg_iov = &iov;
  msg.msg_iovlen = 1;
  if (fd_count > 0) {
    memset(&control, 0, sizeof(control));
    msg.msg_control = control.buf;
    msg.msg_controllen = CMSG_SPACE(sizeof(int) * fd_count);
    struct cmsghdr* c = CMSG_FIRSTHDR(&msg);
    c->cmsg_level = SOL_SOCKET;
    c->cmsg_type = SCM_RIGHTS;
    c->cmsg_len = CMSG_LEN(sizeof(int) * fd_count);
    memcpy(CMSG_DATA(c), fds, sizeof(int) * fd_count);
  }
  for (;;) {
    ssize_t n = sendmsg(socket, &msg, MSG_NOSIGNAL);
    if (n >= 0) return (size_t)n == w->length ? 0 : -EIO;
    if (errno != EINTR) return -errno;
  }
}

ssize_t wire__recv(int socket, void* buffer, int* fds, size_t* fd_count) {
  struct iovec iov = {buffer, WIRE_MAX_MESSAGE};
  union {
    char buf[CMSG_SPACE(sizeof(int) * 8)];
    struct cmsghdr align;
  } control;
  struct msghdr msg = {0};
  msg.msg_iov = &iov;
  msg.msg_iovlen = 1;
  msg.msg_control = control.buf;
  msg.msg_controllen = sizeof(control.buf);
  *fd_count = 0;
  ssize_t n;
  do n = recvmsg(socket, &msg, MSG_CMSG_CLOEXEC);
  while (n < 0 && errno == EINTR);
  if (n < 0) return -errno;
  for (struct cmsghdr* c = CMSG_FIRSTHDR(&msg); c; c = CMSG_NXTHDR(&msg, c)) {
    if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS) continue;
    size_t count = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
    int received[8];
    memcpy(received, CMSG_DATA(c), sizeof(int) * (count < 8 ? count : 8));
    for (size_t i = 0; i < count && i < 8; i++) {
      if (*fd_count < WIRE_MAX_FDS && fds)
        fds[(*fd_count)++] = received[i];
      else
        close(received[i]); /* more than a message may carry */
    }
  }
  if (msg.msg_flags & (MSG_TRUNC | MSG_CTRUNC)) {
    for (size_t i = 0; i < *fd_count; i++) close(fds[i]);
    *fd_count = 0;
    return -EMSGSIZE;
  }
  return n;
}

/* A manager is trusted when it runs as this process's user or as root;
 * anything else may be another user listening in its place. */
static int check_peer(int fd, uid_t* peer_uid) {
  struct ucred cred;
  socklen_t length = sizeof(cred);
  if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &length) != 0) return -errno;
  if (peer_uid) *peer_uid = cred.uid;
  return cred.uid == geteuid() || cred.uid == 0 ? 0 : -EPERM;
}

int wire__connect(const char* path, enum wire_role role, uid_t* peer_uid) {
  struct sockaddr_un addr = {0};
  addr.sun_family = AF_UNIX;
  if (strlen(path) >= sizeof(addr.sun_path)) return -ENAMETOOLONG;
  strcpy(addr.sun_path, path);
  int fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
  if (fd < 0) return -errno;
  if (connect(fd, (struct sockaddr*)&addr, sizeof(addr)) != 0) {
    int err = errno;
    close(fd);
    return -err;
  }
  int trust = check_peer(fd, peer_uid); /* before it is told anything */
  if (trust != 0) {
    close(fd);
    return trust;
  }
  wire_writer_t* w = malloc(sizeof(*w)); /* 256 KiB: not on the stack */
  if (!w) {
    close(fd);
    return -ENOMEM;
  }
  wire__begin(w, MSG_HELLO, 0);
  wire__put_u8(w, (uint8_t)role);
  wire__end(w);
  int status = wire__send(fd, w, NULL, 0);
  free(w);
  if (status != 0) {
    close(fd);
    return status;
  }
  return fd;
}
