/* A consistent copy of a live trace buffer (see buffer_copy.h). */
#include "snapshot/buffer_copy.h"

#include <stdbool.h>
#include <string.h>
#include <time.h>

#include "fxt/fxt_encode.h"

static uint64_t now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* Step 3: the durable records in [0, end) of the copy, copied again one by
 * one from the live buffer: a header loaded with acquire that is not 0 is
 * committed, and its body was written before it and never changes (durable
 * records are only ever appended), so the body copied after it is exact
 * (memcpy's own order is unspecified: it may have copied a body before its
 * header was stored). A header still 0 is a record being written: waited
 * for, within BUFFER_COPY_DURABLE_WAIT_MS. The copy's data ends at the
 * returned offset (a zero word is stored there). */
static uint64_t copy_durable(const uint8_t* live, uint8_t* copy, uint64_t end) {
  uint64_t pos = 0;
  uint64_t deadline = 0;
  while (pos + 8 <= end) {
    uint64_t header = __atomic_load_n((const uint64_t*)(live + pos), __ATOMIC_ACQUIRE);
    if (header == 0) {
      uint64_t now = now_ns();
      if (deadline == 0) deadline = now + (uint64_t)BUFFER_COPY_DURABLE_WAIT_MS * 1000000u;
      if (now >= deadline) break;
      nanosleep(&(struct timespec){0, 20000}, NULL);
      continue;
    }
    uint64_t bytes = fxt_record_words(header) * 8;
    if (bytes == 0 || bytes > end - pos) break; /* damage: the scan stops here too */
    memcpy(copy + pos, &header, 8);
    memcpy(copy + pos + 8, live + pos + 8, bytes - 8);
    pos += bytes;
  }
  if (pos + 8 <= end) memset(copy + pos, 0, 8);
  return pos;
}

/* Step 4, over the scan of the copy, twice (the scan of one copy yields the
 * same records in the same order each time):
 *   pass 1 compares every record with the live bytes at its place. A rolling
 *   record that differs was rewritten after it was copied: it, and the rest
 *   of its chunk (whose framing in the copy cannot be trusted past it), fail,
 *   and `cut` becomes the last failing record's ordinal among the rolling
 *   records. Chunks are reused in scan order (the older buffer from its
 *   first chunk on, then the current one), so everything up to the last
 *   failure is being overwritten: the records after it are the buffer's
 *   newest, with no hole, as the final archive of a circular trace is.
 *   pass 2 emits the rolling records after `cut` (checked in pass 1; the copy
 *   does not change) and the durable records that still compare equal
 *   (they never change once committed: a difference is a misbehaving
 *   provider, and only that record is left out). */
typedef struct check_ctx {
  const uint8_t* live;
  const uint8_t* copy;
  uint64_t rolling_begin; /* offset of rolling buffer 0; chunks count from it */
  uint64_t chunk;
  bool emitting;    /* pass 2 */
  uint64_t ordinal; /* rolling records seen so far in this pass */
  uint64_t cut;     /* pass 1's last failing rolling record's ordinal (1-based; 0: none) */
  uint64_t fail_begin, fail_until;   /* pass 1: the last failure to the end of its chunk */
  uint64_t reused_begin, reused_end; /* chunks reused since step 1: every record fails */
  buffer_emit_fn emit;
  void* arg;
  buffer_copy_stats_t* stats;
} check_ctx_t;

static int check_record(void* arg, const void* data, size_t bytes) {
  check_ctx_t* c = arg;
  uint64_t offset = (uint64_t)((const uint8_t*)data - c->copy);
  if (offset < c->rolling_begin) { /* durable */
    if (!c->emitting) return 0;
    if (memcmp(data, c->live + offset, bytes) != 0) {
      c->stats->discarded++;
      return 0;
    }
  } else {
    c->ordinal++;
    if (!c->emitting) {
      bool in_stretch = offset >= c->fail_begin && offset < c->fail_until;
      if (in_stretch || (offset >= c->reused_begin && offset < c->reused_end) ||
          memcmp(data, c->live + offset, bytes) != 0) {
        uint64_t last = offset + bytes - 1 - c->rolling_begin;
        uint64_t chunk_end = c->rolling_begin + (last / c->chunk + 1) * c->chunk;
        if (!in_stretch) c->fail_begin = offset;
        if (!in_stretch || chunk_end > c->fail_until) c->fail_until = chunk_end;
        c->cut = c->ordinal;
      }
      return 0;
    }
    if (c->ordinal <= c->cut) {
      c->stats->discarded++;
      return 0;
    }
  }
  c->stats->records++;
  c->stats->bytes += bytes;
  return c->emit(c->arg, data, bytes);
}

/* Steps 1 to 3 and the switch check; pass 1 of step 4 runs after. */
static const char* copy_once(const uint8_t* live, size_t size, uint8_t* copy,
                             trace_buffer_header_t* h, buffer_copy_stats_t* stats) {
  const char* reason = buffer_scan__header(live, size, h); /* step 1 */
  if (!reason && h->buffering_mode == TRACE_BUFFERING_MODE_STREAMING)
    reason = "a streaming buffer has no snapshots";
  if (reason) return reason;
  stats->records_dropped = h->num_records_dropped;
  stats->copied_bytes = h->total_size;
  memcpy(copy + sizeof(*h), live + sizeof(*h), (size_t)h->total_size - sizeof(*h)); /* step 2 */
  memcpy(copy, h, sizeof(*h));      /* the header of step 1 bounds the scan */
  if (h->durable_buffer_size > 0) { /* step 3 */
    uint64_t end = h->durable_alloc;
    if ((h->flags & TRACE_BUFFER_FLAG_STOPPED) || end == 0) end = h->durable_data_end;
    if (end > h->durable_buffer_size) end = h->durable_buffer_size;
    uint64_t done = copy_durable(live + sizeof(*h), copy + sizeof(*h), end);
    stats->durable_missing = end - done;
  }
  return NULL;
}

int buffer_copy__snapshot(const void* live, size_t size, void* scratch, buffer_emit_fn emit,
                          void* arg, buffer_copy_stats_t* stats, const char** why) {
  memset(stats, 0, sizeof(*stats));
  const uint8_t* in = live;
  uint8_t* copy = scratch;
  trace_buffer_header_t h;
  check_ctx_t c;
  buffer_scan_stats_t scan = {0};
  int status = 0;
  uint64_t t0 = now_ns(), t1 = t0;
  for (int attempt = 1;; attempt++) {
    const char* reason = copy_once(in, size, copy, &h, stats);
    if (why) *why = reason;
    if (reason) return -1;
    t1 = now_ns();
    c = (check_ctx_t){
        .live = in,
        .copy = copy,
        .rolling_begin = sizeof(h) + h.durable_buffer_size,
        .chunk = h.chunk_size,
        .emit = emit,
        .arg = arg,
        .stats = stats,
    };
    /* The allocation word now, after the copy: a rolling buffer switch
     * since step 1 makes the older buffer current again, and its chunks
     * below the new allocation offset (the reuse front) may have been
     * rewritten before they were copied, which the comparison cannot see:
     * they fail. Two switches (the current buffer of step 1 reused too, a
     * writer faster than the copy) leave nothing to trust: taken again. */
    uint64_t alloc =
        __atomic_load_n(&((const trace_buffer_header_t*)live)->rolling_alloc, __ATOMIC_ACQUIRE);
    uint64_t switches = h.rolling_alloc >> TRACE_BUFFER_ALLOC_OFFSET_BITS;
    uint64_t now = alloc >> TRACE_BUFFER_ALLOC_OFFSET_BITS;
    if (now == switches + 1) {
      uint64_t front = alloc & TRACE_BUFFER_ALLOC_OFFSET_MASK;
      if (front > h.rolling_buffer_size) front = h.rolling_buffer_size;
      c.reused_begin = c.rolling_begin + (now & 1) * h.rolling_buffer_size;
      c.reused_end = c.reused_begin + front;
    } else if (now != switches) {
      if (attempt < BUFFER_COPY_ATTEMPTS) continue;
      c.reused_begin = 0; /* every rolling record */
      c.reused_end = UINT64_MAX;
    }
    status = buffer_scan__records(copy, size, 0, check_record, &c, &scan); /* pass 1 */
    break;
  }
  if (status == 0) {
    c.emitting = true;
    c.ordinal = 0;
    status = buffer_scan__records(copy, size, 0, check_record, &c, &scan); /* pass 2 */
  }
  stats->bad_records = scan.bad_records;
  stats->copy_ns = t1 - t0;
  stats->scan_ns = now_ns() - t1;
  if (status == -1 && why) *why = "the copy's header is unusable";
  return status;
}
