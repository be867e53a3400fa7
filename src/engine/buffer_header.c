/* Buffer geometry and header validation (see buffer_header.h). */
#include "engine/buffer_header.h"

#include <string.h>

/* The largest power of two <= v (v > 0). */
static uint64_t floor_pow2(uint64_t v) {
  uint64_t p = 1;
  while (p <= v / 2) p *= 2;
  return p;
}

static uint32_t chunk_size_for(uint64_t rolling) {
  uint64_t c =
      floor_pow2(rolling / TRACE_BUFFER_MIN_CHUNKS ? rolling / TRACE_BUFFER_MIN_CHUNKS : 1);
  if (c > TRACE_BUFFER_MAX_CHUNK_SIZE) c = TRACE_BUFFER_MAX_CHUNK_SIZE;
  if (c < TRACE_BUFFER_MIN_CHUNK_SIZE) c = TRACE_BUFFER_MIN_CHUNK_SIZE;
  return (uint32_t)c;
}

int buffer__compute_geometry(unsigned mode, uint64_t total, trace_buffer_geometry_t* g) {
  if (mode > 2 || total < TRACE_BUFFER_MIN_SIZE || total > TRACE_BUFFER_MAX_SIZE ||
      total % TRACE_BUFFER_MIN_SIZE != 0)
    return -1;
  uint64_t avail = total - sizeof(trace_buffer_header_t);
  uint64_t durable = 0, rolling = avail;
  if (mode != 0) { /* §7.3 steps 1-4 */
    durable = avail / 16;
    if (durable > TRACE_BUFFER_MAX_DURABLE_SIZE) durable = TRACE_BUFFER_MAX_DURABLE_SIZE;
    durable += (avail - durable) & 15;
    rolling = avail - durable;
  }
  /* Streaming takes more than PROTOCOL.md's two halves, so that saves may
   * lag (docs/buffer-layout.md, "Rolling segments"); circular keeps two. */
  uint32_t segments = mode == 0 ? 1 : 2;
  if (mode == 2) {
    segments = TRACE_BUFFER_MAX_SEGMENTS;
    while (segments > 2 && rolling / segments < TRACE_BUFFER_MIN_SEGMENT_SIZE) segments /= 2;
  }
  rolling /= segments;
  g->segments = segments;
  g->durable_size = durable;
  g->chunk_size = chunk_size_for(rolling);
  g->rolling_size = rolling - rolling % g->chunk_size;
  return 0;
}

void buffer_header__init(trace_buffer_header_t* h, unsigned mode, uint64_t total,
                         const trace_buffer_geometry_t* g) {
  memset(h, 0, sizeof(*h));
  h->magic = TRACE_BUFFER_HEADER_MAGIC;
  h->version = TRACE_BUFFER_HEADER_VERSION;
  h->buffering_mode = (uint8_t)mode;
  h->segment_count = (uint8_t)g->segments;
  h->total_size = total;
  h->durable_buffer_size = g->durable_size;
  h->rolling_buffer_size = g->rolling_size;
  h->chunk_size = g->chunk_size;
}

const char* buffer_header__validate(const trace_buffer_header_t* h, uint64_t buffer_size,
                                    unsigned mode) {
  if (h->magic != TRACE_BUFFER_HEADER_MAGIC) return "(1) bad magic";
  if (h->version != TRACE_BUFFER_HEADER_VERSION) return "(2) unknown version";
  if (buffer_size % 8 || buffer_size < sizeof(*h))
    return "(3) buffer size not a multiple of 8 or too small";
  if (h->buffering_mode != mode) return "(4) buffering mode differs from the one asked for";
  if (h->total_size != buffer_size) return "(5) total size differs from the buffer size";
  uint64_t c = h->chunk_size;
  if (c < TRACE_BUFFER_MIN_CHUNK_SIZE || c > TRACE_BUFFER_MAX_CHUNK_SIZE || (c & (c - 1)))
    return "(6) chunk size not a power of two in range";
  if (h->durable_buffer_size % 8 || h->rolling_buffer_size % c)
    return "(7) durable size not a multiple of 8 or rolling size not whole chunks";
  uint64_t avail = buffer_size - sizeof(*h);
  trace_buffer_geometry_t g;
  if (buffer__compute_geometry(mode, buffer_size, &g) != 0 || h->segment_count != g.segments)
    return "(12) segment count differs from the one for this size and mode";
  uint64_t rolling_count = h->segment_count;
  if (h->durable_buffer_size > avail ||
      h->rolling_buffer_size > (avail - h->durable_buffer_size) / rolling_count)
    return "(8) buffers do not fit in the total size";
  if (mode == 0 && h->durable_buffer_size != 0) return "(9) oneshot has no durable buffer";
  if (h->durable_data_end > h->durable_buffer_size || h->durable_data_end % 8)
    return "(10) durable_data_end out of range or unaligned";
  for (uint64_t i = 0; i < 2; i++)
    if (h->rolling_data_end[i] > h->rolling_buffer_size || h->rolling_data_end[i] % 8)
      return "(11) rolling_data_end out of range or unaligned";
  return NULL;
}
