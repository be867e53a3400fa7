/* One ftrace ring-buffer page into events (see kconvert.h). */
#include "kernel/kconvert.h"

#include <kbuffer.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

enum { PAD = 64 };
/* Page header: 8-byte timestamp, then an 8-byte (64-bit kernel) commit word
 * whose low bits hold the committed data size and whose high bits flag
 * missed events. */
#define PAGE_HEADER 16u
#define COMMIT_MASK ((1ull << 27) - 1)

int kconv__init(kconv_t* c, size_t page_size) {
  memset(c, 0, sizeof(*c));
  c->page_size = page_size;
  c->copy = calloc(1, page_size + PAD);
  c->kbuf = kbuffer_alloc(KBUFFER_LSIZE_SAME_AS_HOST, KBUFFER_ENDIAN_SAME_AS_HOST);
  if (!c->copy || !c->kbuf) {
    kconv__free(c);
    return -1;
  }
  return 0;
}

void kconv__free(kconv_t* c) {
  if (c->kbuf) kbuffer_free(c->kbuf);
  free(c->copy);
  c->kbuf = NULL;
  c->copy = NULL;
}

void* kconv__page_buffer(kconv_t* c) { return c->copy; }

static uint32_t load_le32(const unsigned char* p) {
  uint32_t v;
  memcpy(&v, p, sizeof(v)); /* the kernel's pages are in the host's order */
  return v;
}

/* Whether every step over the page's event headers moves forward, as
 * libtraceevent's kbuffer takes them (type_len 29 padding: 4 + array[0]
 * bytes; 30 and 31, time extend and stamp: 8; 0: 8 + array[0] - 4 rounded
 * up to 4; 1..28: 4 + 4 × type_len). kbuffer skips padding and time events
 * in a loop of its own, with no bound: a padding whose length is negative
 * (-4 keeps it in place) made kbuffer_load_subbuffer or _next_event spin
 * forever (fuzz_kernel_page). The kernel writes no such page; one read back
 * damaged must be counted, not hang the provider. */
static bool page_steps_forward(const unsigned char* data, uint64_t size) {
  uint64_t at = 0;
  while (at < size) {
    uint32_t header = load_le32(data + at); /* PAD zero bytes follow the data */
    unsigned type_len = header & 31u;
    int64_t length = (int32_t)load_le32(data + at + 4);
    int64_t next;
    if (type_len == 29)
      next = (int64_t)at + 4 + length;
    else if (type_len >= 30)
      next = (int64_t)at + 8;
    else if (type_len == 0)
      next = (int64_t)at + 8 + ((length - 4 + 3) & ~(int64_t)3);
    else
      next = (int64_t)at + 4 + 4 * (int64_t)type_len;
    if (next <= (int64_t)at) return false;
    at = (uint64_t)next;
  }
  return true;
}

int kconv__page(kconv_t* c, const kev_table_t* table, uint32_t cpu, const void* page, size_t size,
                kconv_sink_t sink, void* arg) {
  if (size < PAGE_HEADER || size > c->page_size) {
    c->damaged_pages++;
    return -1;
  }
  if (page != c->copy) memcpy(c->copy, page, size);
  memset(c->copy + size, 0, c->page_size + PAD - size);
  uint64_t commit;
  memcpy(&commit, c->copy + 8, 8);
  uint64_t data_size = commit & COMMIT_MASK;
  if (data_size > size - PAGE_HEADER) {
    c->damaged_pages++;
    return -1;
  }
  if (!page_steps_forward(c->copy + PAGE_HEADER, data_size) ||
      kbuffer_load_subbuffer(c->kbuf, c->copy) < 0) {
    c->damaged_pages++;
    return -1;
  }
  c->pages++;
  int missed = kbuffer_missed_events(c->kbuf); /* -1: some, how many unknown */
  if (missed > 0) c->missed += (uint64_t)missed;
  bool after_loss = missed != 0;
  const unsigned char* begin = c->copy + PAGE_HEADER;
  const unsigned char* end = begin + data_size;
  int count = 0;
  unsigned long long ts;
  /* a damaged page may loop on a zero-length event: at most one event per 4 bytes */
  size_t budget = data_size / 4 + 1;
  for (void* data = kbuffer_read_event(c->kbuf, &ts); data && budget > 0;
       data = kbuffer_next_event(c->kbuf, &ts), budget--) {
    int event_size = kbuffer_event_size(c->kbuf);
    const unsigned char* p = data;
    if (event_size <= 0 || p < begin || p >= end || (size_t)event_size > (size_t)(end - p)) {
      c->damaged_pages++;
      return count;
    }
    const kev_desc_t* d = kev_table__lookup(table, p, (size_t)event_size);
    if (!d) {
      c->unknown++;
      continue;
    }
    kconv_event_t e = {cpu, ts, d, p, (size_t)event_size, after_loss};
    after_loss = false;
    sink(arg, &e);
    c->events++;
    count++;
  }
  return count;
}
