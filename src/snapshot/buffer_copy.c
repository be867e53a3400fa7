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

/* Step 4: what the scan of the copy yields, checked against the live bytes. */
typedef struct check_ctx {
  const uint8_t* live;
  const uint8_t* copy;
  uint64_t rolling_begin; /* offset of rolling buffer 0; chunks count from it */
  uint64_t chunk;
  uint64_t discard_begin, discard_end; /* the rest of a chunk that failed the check */
  buffer_emit_fn emit;
  void* arg;
  buffer_copy_stats_t* stats;
} check_ctx_t;

static int check_record(void* arg, const void* data, size_t bytes) {
  check_ctx_t* c = arg;
  uint64_t offset = (uint64_t)((const uint8_t*)data - c->copy);
  if (offset >= c->discard_begin && offset < c->discard_end) {
    c->stats->discarded++;
    return 0;
  }
  if (memcmp(data, c->live + offset, bytes) != 0) {
    c->stats->discarded++;
    if (offset >= c->rolling_begin) {
      /* the chunk was reused or is being cleared: its framing in the copy
       * cannot be trusted past this record either */
      uint64_t last = offset + bytes - 1 - c->rolling_begin;
      c->discard_begin = offset;
      c->discard_end = c->rolling_begin + (last / c->chunk + 1) * c->chunk;
    }
    return 0;
  }
  c->stats->records++;
  c->stats->bytes += bytes;
  return c->emit(c->arg, data, bytes);
}

int buffer_copy__snapshot(const void* live, size_t size, void* scratch, buffer_emit_fn emit,
                          void* arg, buffer_copy_stats_t* stats, const char** why) {
  memset(stats, 0, sizeof(*stats));
  trace_buffer_header_t h;
  const char* reason = buffer_scan__header(live, size, &h); /* step 1 */
  if (!reason && h.buffering_mode == TRACE_BUFFERING_MODE_STREAMING)
    reason = "a streaming buffer has no snapshots";
  if (why) *why = reason;
  if (reason) return -1;
  stats->records_dropped = h.num_records_dropped;
  stats->copied_bytes = h.total_size;
  uint64_t t0 = now_ns();
  const uint8_t* in = live;
  uint8_t* copy = scratch;
  memcpy(copy + sizeof(h), in + sizeof(h), (size_t)h.total_size - sizeof(h)); /* step 2 */
  memcpy(copy, &h, sizeof(h));     /* the header of step 1 bounds the scan */
  if (h.durable_buffer_size > 0) { /* step 3 */
    uint64_t end = h.durable_alloc;
    if ((h.flags & TRACE_BUFFER_FLAG_STOPPED) || end == 0) end = h.durable_data_end;
    if (end > h.durable_buffer_size) end = h.durable_buffer_size;
    uint64_t done = copy_durable(in + sizeof(h), copy + sizeof(h), end);
    stats->durable_missing = end - done;
  }
  uint64_t t1 = now_ns();
  check_ctx_t c = {
      .live = in,
      .copy = copy,
      .rolling_begin = sizeof(h) + h.durable_buffer_size,
      .chunk = h.chunk_size,
      .emit = emit,
      .arg = arg,
      .stats = stats,
  };
  buffer_scan_stats_t scan;
  int status = buffer_scan__records(copy, size, 0, check_record, &c, &scan);
  stats->bad_records = scan.bad_records;
  stats->copy_ns = t1 - t0;
  stats->scan_ns = now_ns() - t1;
  if (status == -1 && why) *why = "the copy's header is unusable";
  return status;
}
