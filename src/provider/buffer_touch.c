/* Writing a trace buffer's pages once (see buffer_touch.h). */
#include "provider/buffer_touch.h"

#include <stdint.h>
#include <sys/mman.h>

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
