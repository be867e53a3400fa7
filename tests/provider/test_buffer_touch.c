/* provider__touch_pages (buffer_touch.h): it writes every page, never
 * changes a byte, not even one a concurrent writer stores while it runs
 * (its cost is bench/'s to measure: file mode against the in-process engine). */
#include <pthread.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "provider/buffer_touch.h"
#include "test.h"

enum { PAGES = 2048, PAGE = 4096, WORDS = PAGES * PAGE / 8 };

static uint64_t* g_map;

/* Stores i + 1 into word i of every page's first and last word, over and
 * over, as the engine's writers would while the rest is being touched. */
static void* writer(void* arg) {
  (void)arg;
  for (int round = 1; round <= 20; round++)
    for (size_t page = 0; page < PAGES; page++) {
      size_t first = page * (PAGE / 8), last = first + PAGE / 8 - 1;
      __atomic_store_n(&g_map[first], (uint64_t)round << 32 | first, __ATOMIC_RELAXED);
      __atomic_store_n(&g_map[last], (uint64_t)round << 32 | last, __ATOMIC_RELAXED);
    }
  return NULL;
}

int main(void) {
  int fd = memfd_create("touch-test", MFD_CLOEXEC);
  ASSERT_TRUE(fd >= 0);
  ASSERT_EQ(ftruncate(fd, (off_t)PAGES * PAGE), 0);
  g_map = mmap(NULL, (size_t)PAGES * PAGE, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  ASSERT_TRUE(g_map != MAP_FAILED);
  for (size_t i = 0; i < WORDS; i++) g_map[i] = i * 0x9e3779b97f4a7c15ull;

  /* concurrent with a writer: every store survives, nothing else changes */
  pthread_t t;
  ASSERT_EQ(pthread_create(&t, NULL, writer, NULL), 0);
  for (int i = 0; i < 20; i++) provider__touch_pages(g_map, 0, (size_t)PAGES * PAGE, NULL);
  ASSERT_EQ(pthread_join(t, NULL), 0);
  for (size_t i = 0; i < WORDS; i++) {
    size_t in_page = i % (PAGE / 8);
    uint64_t want = in_page == 0 || in_page == PAGE / 8 - 1 ? (uint64_t)20 << 32 | i
                                                            : i * 0x9e3779b97f4a7c15ull;
    if (g_map[i] != want) {
      fprintf(stderr, "word %zu is %llx, expected %llx\n", i, (unsigned long long)g_map[i],
              (unsigned long long)want);
      return 1;
    }
  }

  /* a range that starts inside a page, and a stop flag: contents unchanged */
  uint8_t* again = mmap(NULL, (size_t)PAGES * PAGE, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  ASSERT_TRUE(again != MAP_FAILED);
  provider__touch_pages(again, PAGE + 100, 3 * PAGE, NULL);
  int stop = 1;
  provider__touch_pages(again, 0, (size_t)PAGES * PAGE, &stop);
  ASSERT_EQ(memcmp(again, g_map, (size_t)PAGES * PAGE), 0);
  printf("buffer_touch: ok\n");
  return 0;
}
