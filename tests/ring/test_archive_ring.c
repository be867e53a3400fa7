/* The archive ring (src/ring/archive_ring.h): one writer that never blocks
 * (it polls room_fd after a short write, as the manager's loop does), one
 * reader that blocks; every byte arrives once, in order, then the end. */
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include "ring/archive_ring.h"
#include "test.h"

enum { RING = 4096, TOTAL = 8 << 20 };

static uint8_t byte_at(uint64_t i) { return (uint8_t)(i * 131 + (i >> 11)); }

typedef struct reader {
  archive_ring_t* ring;
  uint64_t got;
  bool in_order;
  size_t max_read;
  bool in_place; /* archive_ring__peek and __consume instead of __read */
} reader_t;

static void* read_all(void* arg) {
  reader_t* r = arg;
  uint8_t buf[3000];
  unsigned seed = 7;
  for (;;) {
    size_t want =
        1 + (size_t)rand_r(&seed) % (r->max_read < sizeof(buf) ? r->max_read : sizeof(buf));
    const uint8_t* at = buf;
    size_t n;
    if (r->in_place) {
      const void* data;
      n = archive_ring__peek(r->ring, &data, want);
      at = data;
    } else {
      n = archive_ring__read(r->ring, buf, want);
    }
    if (n == 0) return NULL;
    if (n > want) r->in_order = false;
    for (size_t i = 0; i < n; i++)
      if (at[i] != byte_at(r->got + i)) r->in_order = false;
    if (r->in_place) archive_ring__consume(r->ring, n);
    r->got += n;
  }
}

/* The writer's side, as the manager's loop: write what fits, and when a
 * write was short, wait for room_fd, clear it, go on. With `in_place`,
 * first as the manager copies a provider's records: reserve, fill, commit
 * a part of what was reserved (the rest is written the usual way). */
static void write_all(archive_ring_t* ring, uint64_t total, size_t max_write, unsigned* waits,
                      bool in_place, unsigned* reserved) {
  uint8_t chunk[5000];
  unsigned seed = 11;
  uint64_t sent = 0;
  while (sent < total) {
    size_t n = 1 + (size_t)rand_r(&seed) % (max_write < sizeof(chunk) ? max_write : sizeof(chunk));
    if (n > total - sent) n = (size_t)(total - sent);
    for (size_t i = 0; i < n; i++) chunk[i] = byte_at(sent + i);
    size_t done = 0;
    uint8_t* room = in_place ? archive_ring__reserve(ring, n) : NULL;
    if (room) {
      /* bytes past the committed part are scribbled: the reader must
       * never see them */
      size_t keep = n > 1 && rand_r(&seed) % 4 == 0 ? n / 2 : n;
      memcpy(room, chunk, keep);
      memset(room + keep, 0xee, n - keep);
      archive_ring__commit(ring, keep);
      done = keep;
      (*reserved)++;
    }
    while (done < n) {
      size_t taken = archive_ring__write(ring, chunk + done, n - done);
      ASSERT_TRUE(taken <= n - done);
      done += taken;
      if (done < n) {
        struct pollfd pfd = {archive_ring__room_fd(ring), POLLIN, 0};
        ASSERT_EQ(poll(&pfd, 1, 10000), 1); /* the reader made room: never lost */
        archive_ring__clear_room(ring);
        (*waits)++;
      }
    }
    sent += n;
  }
}

static void test_stream(size_t max_write, size_t max_read, bool in_place, bool write_in_place) {
  archive_ring_t* ring = archive_ring__create(RING);
  ASSERT_TRUE(ring != NULL);
  reader_t r = {ring, 0, true, max_read, in_place};
  pthread_t thread;
  ASSERT_EQ(pthread_create(&thread, NULL, read_all, &r), 0);
  unsigned waits = 0, reserved = 0;
  write_all(ring, TOTAL, max_write, &waits, write_in_place, &reserved);
  archive_ring__close(ring);
  pthread_join(thread, NULL);
  ASSERT_EQ(r.got, (uint64_t)TOTAL);
  ASSERT_TRUE(r.in_order);
  ASSERT_TRUE(waits > 0); /* 8 MiB through 4 KiB: the writer had to wait */
  if (write_in_place) ASSERT_TRUE(reserved > 0);
  archive_ring__free(ring);
}

/* Single-threaded: a reservation is contiguous room or nothing (not across
 * the ring's end, not more than is free); nothing of it is readable before
 * its commit, and only the committed part after. */
static void test_reserve_edges(void) {
  archive_ring_t* ring = archive_ring__create(RING);
  ASSERT_TRUE(ring != NULL);
  ASSERT_TRUE(archive_ring__reserve(ring, 0) == NULL);
  ASSERT_TRUE(archive_ring__reserve(ring, RING + 1) == NULL);
  uint8_t* room = archive_ring__reserve(ring, RING); /* the whole empty ring */
  ASSERT_TRUE(room != NULL);
  for (size_t i = 0; i < 100; i++) room[i] = byte_at(i);
  archive_ring__commit(ring, 100);
  uint8_t out[RING];
  ASSERT_EQ(archive_ring__read(ring, out, sizeof(out)), 100u);
  ASSERT_EQ(memcmp(out, room, 100), 0);
  /* head at 100: RING - 100 contiguous bytes to the end, though RING are free */
  ASSERT_TRUE(archive_ring__reserve(ring, RING - 99) == NULL);
  room = archive_ring__reserve(ring, RING - 100);
  ASSERT_TRUE(room != NULL);
  memset(room, 0x11, RING - 100);
  archive_ring__commit(ring, RING - 150); /* 50 left unused at the end */
  /* head at RING - 50 with RING - 150 unread: 150 free, 50 before the end */
  ASSERT_TRUE(archive_ring__reserve(ring, 51) == NULL);
  ASSERT_TRUE(archive_ring__reserve(ring, 50) != NULL);
  uint8_t wrap[100];
  memset(wrap, 0x22, sizeof(wrap));
  ASSERT_EQ(archive_ring__write(ring, wrap, sizeof(wrap)), 100u); /* across the end */
  /* RING - 50 unread: 50 free, from position 50 */
  ASSERT_TRUE(archive_ring__reserve(ring, 51) == NULL);
  ASSERT_TRUE(archive_ring__reserve(ring, 50) != NULL);
  archive_ring__close(ring);
  size_t got = 0, n;
  while ((n = archive_ring__read(ring, out, sizeof(out))) > 0) {
    for (size_t i = 0; i < n; i++) ASSERT_EQ(out[i], got + i < RING - 150 ? 0x11 : 0x22);
    got += n;
  }
  ASSERT_EQ(got, (size_t)RING - 50);
  archive_ring__free(ring);
}

/* Single-threaded edges: a full ring takes nothing, room_fd is readable
 * only after room was made, the end comes after the last byte. */
static void test_edges(void) {
  ASSERT_TRUE(archive_ring__create(1000) == NULL); /* not a power of two */
  ASSERT_EQ(errno, EINVAL);
  archive_ring_t* ring = archive_ring__create(RING);
  ASSERT_TRUE(ring != NULL);
  uint8_t data[RING + 100];
  for (size_t i = 0; i < sizeof(data); i++) data[i] = byte_at(i);
  ASSERT_EQ(archive_ring__write(ring, data, sizeof(data)), (size_t)RING); /* what fits */
  ASSERT_EQ(archive_ring__write(ring, data, 1), 0u);
  struct pollfd pfd = {archive_ring__room_fd(ring), POLLIN, 0};
  ASSERT_EQ(poll(&pfd, 1, 0), 0); /* no room yet */
  uint8_t out[RING];
  ASSERT_EQ(archive_ring__read(ring, out, 10), 10u);
  ASSERT_EQ(memcmp(out, data, 10), 0);
  ASSERT_EQ(poll(&pfd, 1, 0), 1); /* room: the writer had asked */
  archive_ring__clear_room(ring);
  ASSERT_EQ(poll(&pfd, 1, 0), 0);
  ASSERT_EQ(archive_ring__write(ring, data + RING, 10), 10u); /* across the end */
  archive_ring__close(ring);
  size_t got = 0;
  size_t n;
  while ((n = archive_ring__read(ring, out, sizeof(out))) > 0) {
    ASSERT_EQ(memcmp(out, data + 10 + got, n), 0);
    got += n;
  }
  ASSERT_EQ(got, (size_t)RING);
  ASSERT_EQ(archive_ring__read(ring, out, sizeof(out)), 0u); /* the end stays */
  const void* in_place;
  ASSERT_EQ(archive_ring__peek(ring, &in_place, 100), 0u);
  archive_ring__free(ring);
}

static long minor_faults(void) {
  struct rusage u;
  ASSERT_EQ(getrusage(RUSAGE_THREAD, &u), 0);
  return u.ru_minflt;
}

/* The ring's pages are written once when it is made, and a fork does not
 * take them back: the first pass of an archive through it takes no page
 * fault per 4 KiB (which would delay the manager's first saves). 8 MiB is
 * 2048 pages. */
static void test_pages_touched(void) {
#if TEST_UNDER_TSAN
  printf("page faults not counted: ThreadSanitizer writes shadow pages on every copy\n");
  return;
#endif
  enum { BIG = 8 << 20, STEP = 1 << 20 };
  uint8_t* source = malloc(STEP);
  ASSERT_TRUE(source != NULL);
  memset(source, 0x5a, STEP);
  archive_ring_t* ring = archive_ring__create(BIG);
  ASSERT_TRUE(ring != NULL);
  /* `trace record -- CMD` forks after making the ring: a child alive
   * meanwhile must not make the parent's pages copy-on-write again */
  int hold[2];
  ASSERT_EQ(pipe(hold), 0);
  pid_t child = fork();
  ASSERT_TRUE(child >= 0);
  if (child == 0) {
    char c;
    close(hold[1]);
    _exit(read(hold[0], &c, 1) < 0);
  }
  close(hold[0]);
  long before = minor_faults();
  for (int i = 0; i < BIG / STEP; i++)
    ASSERT_EQ(archive_ring__write(ring, source, STEP), (size_t)STEP);
  long faults = minor_faults() - before;
  printf("8 MiB written into a fresh ring, a forked child alive: %ld minor faults\n", faults);
  ASSERT_TRUE(faults < 64);
  close(hold[1]);
  int status;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  archive_ring__free(ring);
  free(source);
}

int main(void) {
  test_edges();
  test_pages_touched();
  test_reserve_edges();
  test_stream(1, 3000, false, false);    /* tiny writes */
  test_stream(5000, 1, false, false);    /* tiny reads */
  test_stream(5000, 3000, false, false); /* both above and below the ring's size */
  test_stream(5000, 3000, true, false);  /* read in place (never across the ring's end) */
  test_stream(5000, 3000, true, true);   /* and written in place where it fits */
  test_stream(700, 3000, false, true);
  printf("archive ring: ok\n");
  return 0;
}
