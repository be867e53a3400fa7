/* The archive ring (archive_ring.h).
 *
 * head counts the bytes written, tail the bytes read; each is stored by one
 * thread only, with release, and loaded by the other with acquire, so the
 * bytes a count covers are visible to whoever reads that count. Sleeping
 * sides raise a flag and then re-check (a seq_cst fence between); the other
 * side publishes its count and then reads the flag (a fence between): at
 * least one of the two sees the other, so no wake-up is lost. */
#include "ring/archive_ring.h"

#include <errno.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <unistd.h>

struct archive_ring {
  uint8_t* data;
  size_t size; /* a power of two */
  _Atomic uint64_t head;
  _Atomic uint64_t tail;
  atomic_bool closed;
  atomic_bool reader_waiting;
  atomic_bool writer_waiting;
  int data_fd; /* the reader sleeps on it */
  int room_fd; /* the writer's loop polls it */
};

archive_ring_t* archive_ring__create(size_t size) {
  if (size < 4096 || (size & (size - 1)) != 0) {
    errno = EINVAL;
    return NULL;
  }
  archive_ring_t* r = calloc(1, sizeof(*r));
  if (!r) return NULL;
  r->size = size;
  void* data = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  r->data = data == MAP_FAILED ? NULL : data;
  /* Each page written once now: otherwise the first pass of the archive
   * through the ring takes a page fault every 4 KiB in the manager's copy,
   * which then acknowledges its first saves late enough for a fast
   * streaming provider to drop records (docs/manager.md, "What a save
   * waits for"). Not zeros: the kernel may map a page of zeros back to the
   * shared zero page under memory pressure. And not inherited: `trace
   * record -- CMD` forks after this, and a fork write-protects every
   * private page the parent has, so that each page would fault again on
   * the manager's first write after it (34 us a fault on a VM: a save's
   * copy 30 to 60 times slower). */
  long page = sysconf(_SC_PAGESIZE);
  size_t step = page > 0 ? (size_t)page : 4096;
  if (r->data) {
    (void)madvise(r->data, size, MADV_DONTFORK); /* advice: without it, slower only */
    for (size_t at = 0; at < size; at += step) r->data[at] = 1;
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

void archive_ring__free(archive_ring_t* r) {
  if (!r) return;
  if (r->data_fd >= 0) close(r->data_fd);
  if (r->room_fd >= 0) close(r->room_fd);
  if (r->data) munmap(r->data, r->size);
  free(r);
}

static void signal_fd(int fd) {
  uint64_t one = 1;
  ssize_t n;
  do n = write(fd, &one, sizeof(one));
  while (n < 0 && errno == EINTR);
  /* EAGAIN: the counter is at its maximum, the fd readable already */
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

/* Writer: the bytes from `head` on are the reader's. */
static void publish(archive_ring_t* r, uint64_t head) {
  atomic_store_explicit(&r->head, head, memory_order_release);
  atomic_thread_fence(memory_order_seq_cst);
  if (atomic_exchange_explicit(&r->reader_waiting, false, memory_order_relaxed))
    signal_fd(r->data_fd);
}

size_t archive_ring__write(archive_ring_t* r, const void* data, size_t size) {
  uint64_t head = atomic_load_explicit(&r->head, memory_order_relaxed);
  uint64_t room = r->size - (head - atomic_load_explicit(&r->tail, memory_order_acquire));
  if (room < size) {
    /* short: ask for room_fd, then look again (the reader may have read
     * meanwhile without seeing the flag) */
    atomic_store_explicit(&r->writer_waiting, true, memory_order_relaxed);
    atomic_thread_fence(memory_order_seq_cst);
    room = r->size - (head - atomic_load_explicit(&r->tail, memory_order_acquire));
  }
  size_t n = size < room ? size : (size_t)room;
  if (n == 0) return 0;
  copy_in(r, head, data, n);
  publish(r, head + n);
  return n;
}

void* archive_ring__reserve(archive_ring_t* r, size_t size) {
  uint64_t head = atomic_load_explicit(&r->head, memory_order_relaxed);
  uint64_t room = r->size - (head - atomic_load_explicit(&r->tail, memory_order_acquire));
  size_t at = (size_t)(head & (r->size - 1));
  if (size == 0 || room < size || r->size - at < size) return NULL;
  return r->data + at;
}

void archive_ring__commit(archive_ring_t* r, size_t n) {
  if (n == 0) return;
  publish(r, atomic_load_explicit(&r->head, memory_order_relaxed) + n);
}

int archive_ring__room_fd(const archive_ring_t* r) { return r->room_fd; }

void archive_ring__clear_room(archive_ring_t* r) {
  uint64_t count;
  ssize_t n;
  do n = read(r->room_fd, &count, sizeof(count));
  while (n < 0 && errno == EINTR);
  /* EAGAIN: nothing to clear */
}

void archive_ring__close(archive_ring_t* r) {
  atomic_store_explicit(&r->closed, true, memory_order_release);
  signal_fd(r->data_fd); /* whether or not the reader sleeps: it re-checks */
}

/* Reader: the writer's count once it is past `tail`, waiting for it; tail
 * itself once the ring is closed and empty. */
static uint64_t wait_data(archive_ring_t* r, uint64_t tail) {
  for (;;) {
    /* closed is read before head: the close comes after the last write */
    bool closed = atomic_load_explicit(&r->closed, memory_order_acquire);
    uint64_t head = atomic_load_explicit(&r->head, memory_order_acquire);
    if (head != tail || closed) return head;
    atomic_store_explicit(&r->reader_waiting, true, memory_order_relaxed);
    atomic_thread_fence(memory_order_seq_cst);
    if (atomic_load_explicit(&r->head, memory_order_acquire) != tail ||
        atomic_load_explicit(&r->closed, memory_order_acquire))
      continue;
    uint64_t count;
    ssize_t n;
    do n = read(r->data_fd, &count, sizeof(count));
    while (n < 0 && errno == EINTR);
  }
}

void archive_ring__consume(archive_ring_t* r, size_t n) {
  uint64_t tail = atomic_load_explicit(&r->tail, memory_order_relaxed);
  atomic_store_explicit(&r->tail, tail + n, memory_order_release);
  atomic_thread_fence(memory_order_seq_cst);
  if (atomic_exchange_explicit(&r->writer_waiting, false, memory_order_relaxed))
    signal_fd(r->room_fd);
}

size_t archive_ring__peek(archive_ring_t* r, const void** data, size_t max) {
  uint64_t tail = atomic_load_explicit(&r->tail, memory_order_relaxed);
  uint64_t head = wait_data(r, tail);
  size_t at = (size_t)(tail & (r->size - 1));
  size_t n = (size_t)(head - tail);
  if (n > r->size - at) n = r->size - at; /* up to the ring's end */
  if (n > max) n = max;
  *data = r->data + at;
  return n;
}

size_t archive_ring__read(archive_ring_t* r, void* out, size_t size) {
  uint64_t tail = atomic_load_explicit(&r->tail, memory_order_relaxed);
  if (size == 0) return 0;
  uint64_t head = wait_data(r, tail);
  size_t n = head - tail < size ? (size_t)(head - tail) : size;
  copy_out(r, tail, out, n);
  archive_ring__consume(r, n);
  return n;
}
