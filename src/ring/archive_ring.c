/* The archive ring (archive_ring.h).
 *
 * The control block holds head (the bytes written) and tail (the bytes
 * read); each is stored by one side only, with release, and loaded by the
 * other with acquire, so the bytes a count covers are visible to whoever
 * reads that count. Each side keeps its own count in its own memory and
 * never reads it back from the control block (shared, the peer could have
 * changed it there). Sleeping sides raise a flag and then re-check (a
 * seq_cst fence between); the other side publishes its count and then
 * reads the flag (a fence between): at least one of the two sees the
 * other, so no wake-up is lost. */
#include "ring/archive_ring.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

/* Shared: the first bytes of the control memfd. Flags are words, not
 * bools: a peer may store any value there. */
typedef struct ring_control {
  _Atomic uint64_t head;
  uint8_t head_line[56];
  _Atomic uint64_t tail;
  uint8_t tail_line[56];
  _Atomic uint32_t closed;
  _Atomic uint32_t reader_waiting;
  _Atomic uint32_t writer_waiting;
} ring_control_t;

/* The layout is the protocol's (docs/manager.md, "The archive ring of a
 * daemon"): a client in another language reads it at these offsets. */
_Static_assert(offsetof(ring_control_t, tail) == 64 && offsetof(ring_control_t, closed) == 128 &&
                   offsetof(ring_control_t, reader_waiting) == 132 &&
                   offsetof(ring_control_t, writer_waiting) == 136,
               "the shared control block's layout");

enum { CONTROL_SIZE = 4096 };

struct archive_ring {
  ring_control_t* ctl;
  uint8_t* data;
  size_t size;   /* a power of two */
  uint64_t head; /* the writer's count: the writer's alone */
  uint64_t tail; /* the reader's count: the reader's alone */
  bool shared;
  /* in-process: eventfds (the reader sleeps on data_fd, the writer's loop
   * polls room_fd); shared: both are this side's end of the socket pair */
  int data_fd;
  int room_fd;
  atomic_bool peer_gone; /* shared: the other side's end was closed */
  ring_control_t own;    /* in-process: the control block */
};

static archive_ring_t* new_ring(size_t size) {
  archive_ring_t* r = calloc(1, sizeof(*r));
  if (!r) return NULL;
  r->size = size;
  r->data_fd = r->room_fd = -1;
  r->ctl = &r->own;
  return r;
}

/* Each page written once now: otherwise the first pass of the archive
 * through the ring takes a page fault every 4 KiB in the manager's copy,
 * which then acknowledges its first saves late enough for a fast streaming
 * provider to drop records (docs/manager.md, "What a save waits for"). Not
 * zeros: the kernel may map a page of zeros back to the shared zero page
 * under memory pressure. */
static void touch(uint8_t* data, size_t size) {
  long page = sysconf(_SC_PAGESIZE);
  size_t step = page > 0 ? (size_t)page : 4096;
  for (size_t at = 0; at < size; at += step) data[at] = 1;
}

archive_ring_t* archive_ring__create(size_t size) {
  if (size < 4096 || (size & (size - 1)) != 0) {
    errno = EINVAL;
    return NULL;
  }
  archive_ring_t* r = new_ring(size);
  if (!r) return NULL;
  void* data = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  r->data = data == MAP_FAILED ? NULL : data;
  /* Not inherited: `trace record -- CMD` forks after this, and a fork
   * write-protects every private page the parent has, so that each page
   * would fault again on the manager's first write after it (34 us a
   * fault on a VM: a save's copy 30 to 60 times slower). */
  if (r->data) {
    (void)madvise(r->data, size, MADV_DONTFORK); /* advice: without it, slower only */
    touch(r->data, size);
  }
  r->data_fd = eventfd(0, EFD_CLOEXEC);
  r->room_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
  if (!r->data || r->data_fd < 0 || r->room_fd < 0) {
    int error = errno ? errno : ENOMEM;
    archive_ring__free(r);
    errno = error;
    return NULL;
  }
  return r;
}

static bool shared_size_ok(size_t size) {
  return size >= ARCHIVE_RING_MIN_SHARED && size <= ARCHIVE_RING_MAX_SHARED &&
         (size & (size - 1)) == 0;
}

static int sealed_memfd(const char* name, size_t size) {
  int fd = memfd_create(name, MFD_CLOEXEC | MFD_ALLOW_SEALING);
  if (fd < 0) return -1;
  if (ftruncate(fd, (off_t)size) != 0) {
    int error = errno;
    close(fd);
    errno = error;
    return -1;
  }
  return fd;
}

archive_ring_t* archive_ring__create_shared(size_t size, int fds[3]) {
  fds[0] = fds[1] = fds[2] = -1;
  if (!shared_size_ok(size)) {
    errno = EINVAL;
    return NULL;
  }
  archive_ring_t* r = new_ring(size);
  if (!r) return NULL;
  r->shared = true;
  r->ctl = NULL;
  int sv[2] = {-1, -1};
  fds[0] = sealed_memfd("fxtrace-archive-control", CONTROL_SIZE);
  fds[1] = sealed_memfd("fxtrace-archive-ring", size);
  if (fds[0] < 0 || fds[1] < 0) goto fail;
  void* ctl = mmap(NULL, CONTROL_SIZE, PROT_READ | PROT_WRITE, MAP_SHARED, fds[0], 0);
  if (ctl == MAP_FAILED) goto fail;
  r->ctl = ctl;
  void* data = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, fds[1], 0);
  if (data == MAP_FAILED) goto fail;
  r->data = data;
  /* Not written now (unlike the in-process ring): a request must not hold
   * the daemon's loop for the pages, nor pin memory before a trace uses it;
   * the first pass faults them in, a few ms over a trace. From here on no mapping but this one may
   * write the data (the reader's may only read it: what the manager checked in place stays so), and
   * neither memfd may shrink under a mapping (SIGBUS) or grow. */
  if (fcntl(fds[0], F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL) != 0 ||
      fcntl(fds[1], F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_FUTURE_WRITE | F_SEAL_SEAL) !=
          0)
    goto fail;
  if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC | SOCK_NONBLOCK, 0, sv) != 0) goto fail;
  r->data_fd = r->room_fd = sv[0];
  fds[2] = sv[1];
  return r;
fail : {
  int error = errno ? errno : ENOMEM;
  for (int i = 0; i < 3; i++) {
    if (fds[i] >= 0) close(fds[i]);
    fds[i] = -1;
  }
  if (sv[0] >= 0) close(sv[0]);
  archive_ring__free(r);
  errno = error;
  return NULL;
}
}

static bool size_is(int fd, size_t size) {
  struct stat st;
  return fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && (uint64_t)st.st_size == size;
}

archive_ring_t* archive_ring__attach(size_t size, const int fds[3]) {
  archive_ring_t* r = NULL;
  struct stat st;
  int error = EPROTO;
  if (!shared_size_ok(size) || !size_is(fds[0], CONTROL_SIZE) || !size_is(fds[1], size) ||
      fstat(fds[2], &st) != 0 || !S_ISSOCK(st.st_mode))
    goto fail;
  error = ENOMEM;
  r = new_ring(size);
  if (!r) goto fail;
  r->shared = true;
  r->ctl = NULL;
  void* ctl = mmap(NULL, CONTROL_SIZE, PROT_READ | PROT_WRITE, MAP_SHARED, fds[0], 0);
  if (ctl == MAP_FAILED) goto fail_errno;
  r->ctl = ctl;
  void* data = mmap(NULL, size, PROT_READ, MAP_SHARED, fds[1], 0); /* no pages before data */
  if (data == MAP_FAILED) goto fail_errno;
  r->data = data;
  close(fds[0]);
  close(fds[1]);
  r->data_fd = r->room_fd = fds[2];
  return r;
fail_errno:
  error = errno ? errno : ENOMEM;
fail:
  for (int i = 0; i < 3; i++)
    if (fds[i] >= 0) close(fds[i]);
  if (r) {
    r->data_fd = r->room_fd = -1; /* closed above */
    archive_ring__free(r);
  }
  errno = error;
  return NULL;
}

void archive_ring__free(archive_ring_t* r) {
  if (!r) return;
  if (r->data_fd >= 0) close(r->data_fd);
  if (r->room_fd >= 0 && r->room_fd != r->data_fd) close(r->room_fd);
  if (r->data) munmap(r->data, r->size);
  if (r->shared && r->ctl) munmap(r->ctl, CONTROL_SIZE);
  free(r);
}

/* Wakes the other side. In-process, an eventfd (EAGAIN: its counter is at
 * its maximum, readable already); shared, a one-byte message on this
 * side's end, never waiting (a full socket: wake-ups are pending). */
static void signal_other(const archive_ring_t* r, int fd) {
  ssize_t n;
  if (r->shared) {
    do n = send(fd, "w", 1, MSG_DONTWAIT | MSG_NOSIGNAL);
    while (n < 0 && errno == EINTR);
    return;
  }
  uint64_t one = 1;
  do n = write(fd, &one, sizeof(one));
  while (n < 0 && errno == EINTR);
}

/* Shared: takes the wake-ups waiting on this side's end, without waiting;
 * notes when the other side's end was closed. */
static void drain_socket(archive_ring_t* r) {
  char buf[64];
  /* bounded: a peer that floods its end cannot keep the caller here (the
   * socket stays readable, so a level-triggered poll comes back) */
  for (int i = 0; i < 64; i++) {
    ssize_t n = recv(r->data_fd, buf, sizeof(buf), MSG_DONTWAIT);
    if (n > 0) continue;
    if (n < 0 && errno == EINTR) continue;
    if (n == 0 || (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK))
      atomic_store(&r->peer_gone, true);
    return;
  }
}

/* Copies between the ring at `position` and a flat buffer, in one or two
 * pieces around the ring's end. */
static void copy_in(archive_ring_t* r, uint64_t position, const uint8_t* from, size_t n) {
  size_t at = (size_t)(position & (r->size - 1));
  size_t first = n < r->size - at ? n : r->size - at;
  memcpy(r->data + at, from, first);
  memcpy(r->data, from + first, n - first);
}

static void copy_out(const archive_ring_t* r, uint64_t position, uint8_t* to, size_t n) {
  size_t at = (size_t)(position & (r->size - 1));
  size_t first = n < r->size - at ? n : r->size - at;
  memcpy(to, r->data + at, first);
  memcpy(to + first, r->data, n - first);
}

/* Writer: the free bytes, from the reader's count as far as it is
 * consistent with ours (a count behind ours by more than the ring's size,
 * or ahead of it, frees nothing). */
static uint64_t room(const archive_ring_t* r) {
  uint64_t used = r->head - atomic_load_explicit(&r->ctl->tail, memory_order_acquire);
  return used > r->size ? 0 : r->size - used;
}

/* Writer: the bytes up to `head` are the reader's. */
static void publish(archive_ring_t* r, uint64_t head) {
  r->head = head;
  atomic_store_explicit(&r->ctl->head, head, memory_order_release);
  atomic_thread_fence(memory_order_seq_cst);
  if (atomic_exchange_explicit(&r->ctl->reader_waiting, 0, memory_order_relaxed))
    signal_other(r, r->data_fd);
}

size_t archive_ring__write(archive_ring_t* r, const void* data, size_t size) {
  uint64_t free_bytes = room(r);
  if (free_bytes < size) {
    /* short: ask for room_fd, then look again (the reader may have read
     * meanwhile without seeing the flag) */
    atomic_store_explicit(&r->ctl->writer_waiting, 1, memory_order_relaxed);
    atomic_thread_fence(memory_order_seq_cst);
    free_bytes = room(r);
  }
  size_t n = size < free_bytes ? size : (size_t)free_bytes;
  if (n == 0) return 0;
  copy_in(r, r->head, data, n);
  publish(r, r->head + n);
  return n;
}

void* archive_ring__reserve(archive_ring_t* r, size_t size) {
  size_t at = (size_t)(r->head & (r->size - 1));
  if (size == 0 || room(r) < size || r->size - at < size) return NULL;
  return r->data + at;
}

void archive_ring__commit(archive_ring_t* r, size_t n) {
  if (n == 0) return;
  publish(r, r->head + n);
}

int archive_ring__room_fd(const archive_ring_t* r) { return r->room_fd; }

void archive_ring__clear_room(archive_ring_t* r) {
  if (r->shared) {
    drain_socket(r);
    return;
  }
  uint64_t count;
  ssize_t n;
  do n = read(r->room_fd, &count, sizeof(count));
  while (n < 0 && errno == EINTR);
  /* EAGAIN: nothing to clear */
}

bool archive_ring__reader_gone(const archive_ring_t* r) { return atomic_load(&r->peer_gone); }

void archive_ring__close(archive_ring_t* r) {
  atomic_store_explicit(&r->ctl->closed, 1, memory_order_release);
  signal_other(r, r->data_fd); /* whether or not the reader sleeps: it re-checks */
}

void archive_ring__cut(archive_ring_t* r) {
  atomic_store_explicit(&r->ctl->closed, 2, memory_order_release);
  signal_other(r, r->data_fd);
}

bool archive_ring__unread(archive_ring_t* r) {
  if (atomic_load(&r->peer_gone)) return false;
  if (room(r) == r->size) return false;
  /* asks for room_fd when the reader consumes */
  atomic_store_explicit(&r->ctl->writer_waiting, 1, memory_order_relaxed);
  atomic_thread_fence(memory_order_seq_cst);
  return room(r) != r->size;
}

/* Reader: the writer's count as far as it is consistent with ours (at
 * most a ring's size ahead). */
static uint64_t written(const archive_ring_t* r) {
  uint64_t head = atomic_load_explicit(&r->ctl->head, memory_order_acquire);
  return head - r->tail > r->size ? r->tail : head;
}

static void sleep_for_data(archive_ring_t* r) {
  if (r->shared) {
    struct pollfd p = {r->data_fd, POLLIN, 0};
    while (poll(&p, 1, -1) < 0 && errno == EINTR) {
    }
    drain_socket(r);
    return;
  }
  uint64_t count;
  ssize_t n;
  do n = read(r->data_fd, &count, sizeof(count));
  while (n < 0 && errno == EINTR);
}

/* Reader: the writer's count once it is past ours, waiting for it; ours
 * itself once the ring is closed (or its writer gone) and empty. */
static uint64_t wait_data(archive_ring_t* r) {
  for (;;) {
    /* closed is read before head: the close comes after the last write */
    bool closed = atomic_load_explicit(&r->ctl->closed, memory_order_acquire) != 0 ||
                  atomic_load(&r->peer_gone);
    uint64_t head = written(r);
    if (head != r->tail || closed) return head;
    atomic_store_explicit(&r->ctl->reader_waiting, 1, memory_order_relaxed);
    atomic_thread_fence(memory_order_seq_cst);
    if (written(r) != r->tail || atomic_load_explicit(&r->ctl->closed, memory_order_acquire))
      continue;
    sleep_for_data(r);
  }
}

bool archive_ring__closed(const archive_ring_t* r) {
  return atomic_load_explicit(&r->ctl->closed, memory_order_acquire) == 1;
}

bool archive_ring__was_cut(const archive_ring_t* r) {
  return atomic_load_explicit(&r->ctl->closed, memory_order_acquire) == 2;
}

void archive_ring__consume(archive_ring_t* r, size_t n) {
  r->tail += n;
  atomic_store_explicit(&r->ctl->tail, r->tail, memory_order_release);
  atomic_thread_fence(memory_order_seq_cst);
  if (atomic_exchange_explicit(&r->ctl->writer_waiting, 0, memory_order_relaxed))
    signal_other(r, r->room_fd);
}

size_t archive_ring__peek(archive_ring_t* r, const void** data, size_t max) {
  uint64_t head = wait_data(r);
  size_t at = (size_t)(r->tail & (r->size - 1));
  size_t n = (size_t)(head - r->tail);
  if (n > r->size - at) n = r->size - at; /* up to the ring's end */
  if (n > max) n = max;
  *data = r->data + at;
  return n;
}

size_t archive_ring__read(archive_ring_t* r, void* out, size_t size) {
  if (size == 0) return 0;
  uint64_t head = wait_data(r);
  size_t n = head - r->tail < size ? (size_t)(head - r->tail) : size;
  copy_out(r, r->tail, out, n);
  archive_ring__consume(r, n);
  return n;
}
