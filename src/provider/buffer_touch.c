/* Writing a trace buffer's pages once (see buffer_touch.h). */
#include "provider/buffer_touch.h"

#include <stdint.h>
#include <sys/mman.h>

#include "engine/buffer_header.h"

#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23 /* Linux 5.14 */
#endif

enum { PAGE_BYTES = 4096, BATCH_BYTES = 1 << 20 };

void provider__touch_pages(void* base, size_t from, size_t to, const int* stop) {
  uint8_t* p = base;
  from &= ~(size_t)(PAGE_BYTES - 1);
  while (from < to && !(stop && __atomic_load_n(stop, __ATOMIC_RELAXED))) {
    size_t end = to - from < BATCH_BYTES ? to : from + BATCH_BYTES;
    /* maps the batch writable in one call (kernels from 5.14; else the
     * write below faults each page in) */
    (void)madvise(p + from, end - from, MADV_POPULATE_WRITE);
    for (size_t at = from; at < end; at += PAGE_BYTES)
      __atomic_fetch_or((uint64_t*)(void*)(p + at), 0, __ATOMIC_RELAXED);
    from = end;
  }
}

/* The rolling segments writers fill in turn: the header's segment count
 * (byte 11) where the layout has one, else PROTOCOL.md's split (one rolling
 * buffer in oneshot, two otherwise), whose byte 11 is reserved and 0. */
static uint64_t rolling_segments(const uint8_t* base) {
  const trace_buffer_header_t* h = (const trace_buffer_header_t*)(const void*)base;
  uint64_t n = base[11];
  return n ? n : h->buffering_mode == 0 ? 1 : 2;
}

void provider__touch_ahead(void* base, size_t size, size_t from, const int* stop) {
  const uint8_t* b = base;
  trace_buffer_header_t* h = base;
  uint64_t segments = rolling_segments(b);
  uint64_t segment = h->rolling_buffer_size;
  uint64_t rolling = sizeof(*h) + h->durable_buffer_size;
  uint64_t rolling_end = rolling + segments * segment;
  if (rolling_end > size || segment == 0) rolling_end = 0; /* not a header: no hint */
  size_t at = from & ~(size_t)(PAGE_BYTES - 1);
  while (at < rolling_end && !(stop && __atomic_load_n(stop, __ATOMIC_RELAXED))) {
    /* Where the writers allocate now (a hint only: a stale or odd value
     * just touches pages that needed none). Once they have been through
     * every segment, they have written every rolling page themselves. */
    uint64_t word = __atomic_load_n(&h->rolling_alloc, __ATOMIC_RELAXED);
    uint64_t switches = word >> TRACE_BUFFER_ALLOC_OFFSET_BITS;
    uint64_t offset = word & TRACE_BUFFER_ALLOC_OFFSET_MASK;
    if (switches >= segments) break;
    if (offset > segment) offset = segment;
    uint64_t writers = rolling + switches * segment + offset;
    if (writers >= at) /* caught up: touching behind them is wasted */
      at = (size_t)((writers + PROVIDER_TOUCH_LEAD_BYTES) & ~(uint64_t)(PAGE_BYTES - 1));
    if (at >= rolling_end) break;
    size_t end = rolling_end - at < BATCH_BYTES ? (size_t)rolling_end : at + BATCH_BYTES;
    provider__touch_pages(base, at, end, stop);
    at = end;
  }
  if (at < rolling_end) at = (size_t)rolling_end;
  provider__touch_pages(base, at, size, stop);
}
