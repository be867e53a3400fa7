/* The shared archive ring (src/ring/archive_ring.h, archive_ring__create_shared
 * and archive_ring__attach): a writer process and a reader process, every
 * byte once and in order; the reader's view of the data is read-only and
 * cannot be resized or punched; a reader that scribbles on the control page
 * spoils nothing of the writer's; either side going away ends the other's
 * wait. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "ring/archive_ring.h"
#include "test.h"

enum { SIZE = 64 * 1024, TOTAL = 16 << 20 };

static uint8_t byte_at(uint64_t i) { return (uint8_t)(i * 131 + (i >> 11)); }

/* The reader's process: reads everything in place, checks it; exit 0 if
 * all of it came, in order, and the writer closed the ring. */
static int reader_main(const int fds[3]) {
  archive_ring_t* ring = archive_ring__attach(SIZE, fds);
  if (!ring) return 10;
  uint64_t got = 0;
  const void* data;
  size_t n;
  unsigned seed = 3;
  while ((n = archive_ring__peek(ring, &data, 1 + (size_t)rand_r(&seed) % 9000)) > 0) {
    for (size_t i = 0; i < n; i++)
      if (((const uint8_t*)data)[i] != byte_at(got + i)) return 11;
    archive_ring__consume(ring, n);
    got += n;
  }
  int status = got == TOTAL && archive_ring__closed(ring) ? 0 : 12;
  archive_ring__free(ring);
  return status;
}

static pid_t start_reader(int fds[3]) {
  pid_t child = fork();
  ASSERT_TRUE(child >= 0);
  if (child == 0) _exit(reader_main(fds));
  for (int i = 0; i < 3; i++) close(fds[i]);
  return child;
}

static int wait_child(pid_t child) {
  int status;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFEXITED(status));
  return WEXITSTATUS(status);
}

/* As the manager's loop writes: what fits, in place where it can, then
 * waits for room_fd. */
static void test_stream(void) {
  int fds[3];
  archive_ring_t* ring = archive_ring__create_shared(SIZE, fds);
  ASSERT_TRUE(ring != NULL);
  pid_t child = start_reader(fds);
  uint8_t chunk[7000];
  unsigned seed = 5, waits = 0, in_place = 0;
  uint64_t sent = 0;
  while (sent < TOTAL) {
    size_t n = 1 + (size_t)rand_r(&seed) % sizeof(chunk);
    if (n > TOTAL - sent) n = (size_t)(TOTAL - sent);
    for (size_t i = 0; i < n; i++) chunk[i] = byte_at(sent + i);
    size_t done = 0;
    uint8_t* room = archive_ring__reserve(ring, n);
    if (room) {
      memcpy(room, chunk, n);
      archive_ring__commit(ring, n);
      done = n;
      in_place++;
    }
    while (done < n) {
      done += archive_ring__write(ring, chunk + done, n - done);
      if (done < n) {
        struct pollfd p = {archive_ring__room_fd(ring), POLLIN, 0};
        ASSERT_EQ(poll(&p, 1, 10000), 1); /* the reader made room: never lost */
        archive_ring__clear_room(ring);
        ASSERT_TRUE(!archive_ring__reader_gone(ring));
        waits++;
      }
    }
    sent += n;
  }
  archive_ring__close(ring);
  ASSERT_EQ(wait_child(child), 0);
  ASSERT_TRUE(waits > 0 && in_place > 0);
  archive_ring__free(ring);
}

/* What the reader's process gets cannot write the data, nor resize or
 * punch it (the writer checks records in place there), and a size that is
 * not the ring's is refused. */
static void test_seals(void) {
  int fds[3];
  ASSERT_TRUE(archive_ring__create_shared(1000, fds) == NULL);
  ASSERT_EQ(errno, EINVAL);
  ASSERT_TRUE(archive_ring__create_shared(ARCHIVE_RING_MAX_SHARED * 2, fds) == NULL);
  archive_ring_t* ring = archive_ring__create_shared(SIZE, fds);
  ASSERT_TRUE(ring != NULL);
  void* w = mmap(NULL, SIZE, PROT_READ | PROT_WRITE, MAP_SHARED, fds[1], 0);
  ASSERT_TRUE(w == MAP_FAILED);
  void* ro = mmap(NULL, SIZE, PROT_READ, MAP_SHARED, fds[1], 0);
  ASSERT_TRUE(ro != MAP_FAILED);
  ASSERT_TRUE(mprotect(ro, SIZE, PROT_READ | PROT_WRITE) != 0);
  munmap(ro, SIZE);
  ASSERT_TRUE(pwrite(fds[1], "x", 1, 0) < 0);
  ASSERT_TRUE(ftruncate(fds[1], SIZE / 2) != 0);
  ASSERT_TRUE(ftruncate(fds[0], 0) != 0);
  ASSERT_TRUE(fallocate(fds[1], FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, 0, 4096) != 0);
  ro = mmap(NULL, SIZE, PROT_READ, MAP_SHARED, fds[1], 0);
  ASSERT_TRUE(ro != MAP_FAILED);
  ASSERT_TRUE(madvise(ro, SIZE, MADV_REMOVE) != 0); /* no hole through a read-only view */
  munmap(ro, SIZE);
  ASSERT_EQ(fcntl(fds[1], F_GET_SEALS) & F_SEAL_SEAL, F_SEAL_SEAL);
  int wrong[3] = {dup(fds[0]), dup(fds[1]), dup(fds[2])};
  ASSERT_TRUE(archive_ring__attach(SIZE * 2, wrong) == NULL); /* closes them */
  ASSERT_EQ(errno, EPROTO);
  int swapped[3] = {dup(fds[1]), dup(fds[0]), dup(fds[2])};
  ASSERT_TRUE(archive_ring__attach(SIZE, swapped) == NULL);
  for (int i = 0; i < 3; i++) close(fds[i]);
  archive_ring__free(ring);
}

/* A reader that writes garbage counts and flags into the control page: the
 * writer takes no room from a count that cannot be (its writes stay in its
 * ring whatever the count: positions are taken modulo its size). */
static void test_hostile_reader(void) {
  int fds[3];
  archive_ring_t* ring = archive_ring__create_shared(SIZE, fds);
  ASSERT_TRUE(ring != NULL);
  uint8_t* ctl = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, fds[0], 0);
  ASSERT_TRUE(ctl != MAP_FAILED);
  uint8_t data[1000];
  memset(data, 0x33, sizeof(data));
  ASSERT_EQ(archive_ring__write(ring, data, sizeof(data)), sizeof(data));
  _Atomic uint64_t* tail = (_Atomic uint64_t*)(ctl + 64); /* the control block's layout */
  /* ahead of what was written, or behind it by more than the ring */
  uint64_t bad[] = {(uint64_t)1000 - SIZE - 1, 1000 + 10 * (uint64_t)SIZE, 2000, UINT64_C(1) << 63};
  for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
    atomic_store(tail, bad[i]);
    memset(ctl + 128, 0xa5, 12); /* the flags, any value */
    /* no room that is not consistent with what was written */
    ASSERT_EQ(archive_ring__write(ring, data, sizeof(data)), 0u);
    ASSERT_TRUE(archive_ring__reserve(ring, 1) == NULL);
  }
  /* a consistent count again: the room it makes */
  atomic_store(tail, 1000);
  ASSERT_EQ(archive_ring__write(ring, data, sizeof(data)), sizeof(data));
  munmap(ctl, 4096);
  for (int i = 0; i < 3; i++) close(fds[i]);
  archive_ring__free(ring);
}

/* Either side's process going away: the writer learns it from room_fd, the
 * reader gets the end, without the writer's close. */
static void test_gone(void) {
  int fds[3];
  archive_ring_t* ring = archive_ring__create_shared(SIZE, fds);
  ASSERT_TRUE(ring != NULL);
  archive_ring_t* reader = archive_ring__attach(SIZE, fds);
  ASSERT_TRUE(reader != NULL);
  uint8_t data[100] = {1, 2, 3};
  ASSERT_EQ(archive_ring__write(ring, data, sizeof(data)), sizeof(data));
  archive_ring__free(ring); /* the writer's process ends without closing */
  uint8_t out[200];
  ASSERT_EQ(archive_ring__read(reader, out, sizeof(out)), sizeof(data));
  ASSERT_EQ(memcmp(out, data, sizeof(data)), 0);
  ASSERT_EQ(archive_ring__read(reader, out, sizeof(out)), 0u);
  ASSERT_TRUE(!archive_ring__closed(reader));
  ASSERT_TRUE(!archive_ring__was_cut(reader)); /* gone, not cut */
  archive_ring__free(reader);

  ring = archive_ring__create_shared(SIZE, fds);
  ASSERT_TRUE(ring != NULL);
  reader = archive_ring__attach(SIZE, fds);
  ASSERT_TRUE(reader != NULL);
  archive_ring__free(reader); /* the reader's process ends */
  struct pollfd p = {archive_ring__room_fd(ring), POLLIN, 0};
  ASSERT_EQ(poll(&p, 1, 10000), 1);
  archive_ring__clear_room(ring);
  ASSERT_TRUE(archive_ring__reader_gone(ring));
  archive_ring__close(ring); /* a wake-up to nobody: no SIGPIPE */
  archive_ring__free(ring);
}

/* The writer's end of an archive: whole (closed) or cut; whether the
 * reader has bytes left; pages taken only as data fills them. */
static void test_end_and_release(void) {
  int fds[3];
  archive_ring_t* ring = archive_ring__create_shared(SIZE, fds);
  ASSERT_TRUE(ring != NULL);
  int data_fd = dup(fds[1]);
  archive_ring_t* reader = archive_ring__attach(SIZE, fds);
  ASSERT_TRUE(reader != NULL);
  uint8_t data[SIZE / 2], out[SIZE];
  memset(data, 0x44, sizeof(data));
  struct stat st;
  ASSERT_EQ(fstat(data_fd, &st), 0);
  ASSERT_EQ(st.st_blocks, 0); /* nothing taken before the archive */
  ASSERT_TRUE(!archive_ring__unread(ring));
  ASSERT_EQ(archive_ring__write(ring, data, sizeof(data)), sizeof(data));
  ASSERT_TRUE(archive_ring__unread(ring));
  ASSERT_EQ(fstat(data_fd, &st), 0);
  ASSERT_TRUE(st.st_blocks > 0 && st.st_blocks <= SIZE / 2 / 512); /* the pages written */
  ASSERT_EQ(archive_ring__read(reader, out, sizeof(out)), sizeof(data));
  struct pollfd p = {archive_ring__room_fd(ring), POLLIN, 0};
  ASSERT_EQ(poll(&p, 1, 10000), 1); /* unread asked to hear of the read */
  archive_ring__clear_room(ring);
  ASSERT_TRUE(!archive_ring__unread(ring));
  archive_ring__close(ring);
  ASSERT_EQ(archive_ring__read(reader, out, sizeof(out)), 0u);
  ASSERT_TRUE(archive_ring__closed(reader));
  ASSERT_TRUE(!archive_ring__was_cut(reader));
  archive_ring__free(ring);
  archive_ring__free(reader);
  close(data_fd);

  ring = archive_ring__create_shared(SIZE, fds);
  ASSERT_TRUE(ring != NULL);
  reader = archive_ring__attach(SIZE, fds);
  ASSERT_TRUE(reader != NULL);
  ASSERT_EQ(archive_ring__write(ring, data, 100), 100u);
  archive_ring__cut(ring);
  ASSERT_EQ(archive_ring__read(reader, out, sizeof(out)), 100u);
  ASSERT_EQ(archive_ring__read(reader, out, sizeof(out)), 0u);
  ASSERT_TRUE(!archive_ring__closed(reader)); /* cut: not the whole archive */
  ASSERT_TRUE(archive_ring__was_cut(reader));
  archive_ring__free(ring);
  archive_ring__free(reader);
}

int main(void) {
  signal(SIGPIPE, SIG_DFL); /* a send to a closed end must not raise it */
  test_seals();
  test_hostile_reader();
  test_gone();
  test_end_and_release();
  test_stream();
  printf("shared archive ring: ok\n");
  return 0;
}
