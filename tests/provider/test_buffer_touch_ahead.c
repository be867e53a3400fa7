/* provider__touch_ahead (buffer_touch.h), the background touch of a large
 * file-mode buffer: it maps the rolling pages ahead of the writers and
 * skips those they passed, skips the rolling segments once the writers have
 * been through all of them, touches what lies beyond, touches everything
 * when the header gives no hint, and never changes a byte. Which pages are
 * mapped is read from /proc/self/pagemap (bit 63: present), so nothing else
 * may read or write the buffer's pages before that check. */
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "engine/buffer_header.h"
#include "provider/buffer_touch.h"
#include "test.h"

enum { PAGE = 4096 };
#define SIZE ((size_t)32 << 20)

static int g_pagemap = -1;

/* 1 if the page at p is in this process's page tables, 0 if not. */
static int mapped(const void* p) {
  uint64_t entry = 0;
  off_t at = (off_t)((uintptr_t)p / PAGE * sizeof(entry));
  ASSERT_EQ(pread(g_pagemap, &entry, sizeof(entry), at), sizeof(entry));
  return (int)(entry >> 63);
}

/* A fresh shared mapping of a zeroed, allocated memfd of SIZE bytes whose
 * first page holds a circular header with the writers at `alloc`. Only the
 * header page is mapped. Returns the geometry through *g. */
static uint8_t* buffer(int fd, uint64_t alloc, trace_buffer_geometry_t* g) {
  ASSERT_EQ(buffer__compute_geometry(1, SIZE, g), 0);
  uint8_t* map = mmap(NULL, SIZE, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  ASSERT_TRUE(map != MAP_FAILED);
  trace_buffer_header_t h;
  buffer_header__init(&h, 1, SIZE, g);
  h.rolling_alloc = alloc;
  memcpy(map, &h, sizeof(h));
  return map;
}

/* Every page of [from, to) is mapped (want 1) or none is (want 0). */
static void expect(const uint8_t* map, size_t from, size_t to, int want, const char* what) {
  for (size_t at = from; at < to; at += PAGE)
    ASSERT_MSG(mapped(map + at) == want, "%s: page at %zu is %smapped", what, at,
               want ? "not " : "");
}

int main(void) {
  g_pagemap = open("/proc/self/pagemap", O_RDONLY | O_CLOEXEC);
  if (g_pagemap < 0) {
    printf("buffer_touch_ahead: skipped: /proc/self/pagemap cannot be read\n");
    return 0;
  }
  int fd = memfd_create("touch-ahead-test", MFD_CLOEXEC);
  ASSERT_TRUE(fd >= 0);
  ASSERT_EQ(posix_fallocate(fd, 0, (off_t)SIZE), 0);
  trace_buffer_geometry_t g;

  /* writers 4 MiB into segment 0; the touch starts at 2 MiB */
  uint64_t offset = (uint64_t)4 << 20;
  uint8_t* map = buffer(fd, offset, &g);
  size_t rolling = sizeof(trace_buffer_header_t) + g.durable_size;
  size_t rolling_end = rolling + 2 * g.rolling_size;
  size_t writers = rolling + offset;
  size_t from = (size_t)2 << 20;
  ASSERT_TRUE(from > rolling && writers + PROVIDER_TOUCH_LEAD_BYTES + PAGE < rolling_end);
  ASSERT_TRUE(rolling_end + PAGE < SIZE); /* a tail beyond the segments */
  expect(map, PAGE, SIZE, 0, "before");
  provider__touch_ahead(map, SIZE, from, NULL);
  expect(map, from, writers, 0, "behind the writers");
  size_t ahead = (writers + PROVIDER_TOUCH_LEAD_BYTES + PAGE - 1) / PAGE * PAGE;
  expect(map, ahead, rolling_end / PAGE * PAGE, 1, "ahead of the writers");
  expect(map, (rolling_end + PAGE - 1) / PAGE * PAGE, SIZE, 1, "beyond the segments");
  expect(map, PAGE, from, 0, "before from");
  munmap(map, SIZE);

  /* writers through both segments (two switches): only the tail is left */
  map = buffer(fd, (uint64_t)2 << TRACE_BUFFER_ALLOC_OFFSET_BITS | 4096, &g);
  provider__touch_ahead(map, SIZE, from, NULL);
  expect(map, from, rolling_end / PAGE * PAGE, 0, "segments the writers went through");
  expect(map, (rolling_end + PAGE - 1) / PAGE * PAGE, SIZE, 1, "beyond the segments, lapped");
  munmap(map, SIZE);

  /* no usable header (segments larger than the buffer): all of [from, SIZE) */
  map = buffer(fd, 0, &g);
  ((trace_buffer_header_t*)(void*)map)->rolling_buffer_size = SIZE;
  provider__touch_ahead(map, SIZE, from, NULL);
  expect(map, from, SIZE, 1, "no hint");
  munmap(map, SIZE);

  /* a stop flag set: nothing touched */
  map = buffer(fd, 0, &g);
  int stop = 1;
  provider__touch_ahead(map, SIZE, from, &stop);
  expect(map, from, SIZE, 0, "stopped");

  /* no byte changed: all zero but the header page */
  static const uint8_t zero[PAGE];
  for (size_t at = PAGE; at < SIZE; at += PAGE)
    ASSERT_MSG(memcmp(map + at, zero, PAGE) == 0, "page at %zu changed", at);
  munmap(map, SIZE);
  printf("buffer_touch_ahead: ok\n");
  return 0;
}
