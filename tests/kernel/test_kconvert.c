/* The page converter (src/kernel/kconvert.c) on pages libtraceevent's kbuffer
 * would walk forever: a padding whose length steps back or stays in place
 * (found by fuzz_kernel_page) is a damaged page, counted at once; well-formed
 * pages with padding and time events still convert. No events are
 * registered: every event is counted as unknown. */
#include <event-parse.h>
#include <signal.h>
#include <string.h>
#include <unistd.h>

#include "kernel/kconvert.h"
#include "test.h"

enum { PAGE = 4096 };

static unsigned char page[PAGE];
static size_t used; /* data bytes after the 16-byte header */

static void begin_page(void) {
  memset(page, 0, sizeof(page));
  used = 0;
}

static void put32(uint32_t v) {
  memcpy(page + 16 + used, &v, 4);
  used += 4;
}

/* type_len 1..28: 4 × type_len data bytes after the header word */
static void data_event(unsigned type_len, uint32_t delta) {
  put32(type_len | delta << 5);
  for (unsigned i = 0; i < type_len; i++) put32(0xffff0000u + i); /* an id no table knows */
}

static void padding(int32_t length) {
  put32(29u | 1u << 5); /* a nonzero delta: array[0] holds the length */
  put32((uint32_t)length);
  for (int32_t i = 0; i < length / 4 - 1 && length > 0; i++) put32(0);
}

static void time_extend(void) {
  put32(30u | 5u << 5);
  put32(1);
}

static int end_page(kconv_t* c, const kev_table_t* t) {
  uint64_t ts = 1000, commit = used;
  memcpy(page, &ts, 8);
  memcpy(page + 8, &commit, 8);
  return kconv__page(c, t, 0, page, 16 + used + 8, NULL, NULL);
}

int main(void) {
  alarm(20); /* a page that loops fails the test instead of hanging it */
  struct tep_handle* tep = tep_alloc();
  ASSERT_TRUE(tep != NULL);
  kev_table_t table;
  kev_table__init(&table, tep);
  ASSERT_EQ(kev_table__finish(&table), 0);
  kconv_t c;
  ASSERT_EQ(kconv__init(&c, PAGE), 0);

  /* well-formed: data, a padding of 8, a time extend, data */
  begin_page();
  data_event(2, 1);
  padding(8);
  time_extend();
  data_event(3, 2);
  ASSERT_EQ(end_page(&c, &table), 0);
  ASSERT_EQ(c.unknown, 2u);
  ASSERT_EQ(c.damaged_pages, 0u);

  /* a padding of -4 leaves kbuffer where it is; -8 and more step back */
  int32_t bad[] = {-4, -8, -12, -400};
  for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
    begin_page();
    data_event(1, 1);
    padding(bad[i]);
    data_event(1, 1);
    uint64_t damaged = c.damaged_pages;
    ASSERT_EQ(end_page(&c, &table), -1);
    ASSERT_EQ(c.damaged_pages, damaged + 1);
  }
  /* the same as the page's first record: kbuffer_load_subbuffer walks it */
  begin_page();
  padding(-4);
  ASSERT_EQ(end_page(&c, &table), -1);

  /* a data event whose length word steps back (type_len 0: array[0] - 4) */
  begin_page();
  data_event(1, 1);
  put32(0);
  put32((uint32_t)-16);
  ASSERT_EQ(end_page(&c, &table), -1);

  kconv__free(&c);
  kev_table__free(&table); /* and the tep */
  printf("kconvert: ok\n");
  return 0;
}
