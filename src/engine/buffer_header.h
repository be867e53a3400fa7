/* Not part of the public API: the trace buffer header (docs/buffer-layout.md)
 * shared by the engine that writes it and the manager / file finalizer that
 * read it. The buffer is fxtrace's own format; only archives are FXT.
 *
 * Byte layout, little-endian, at offset 0 of the buffer (128 bytes):
 *   0  magic 0x627566ee68656164      8  version (3 = fxtrace chunked, segments,
 *                                       drop counters)
 *  10  buffering mode (0/1/2)       11  segment_count (rolling segments)
 *  12  wrapped_count                16  total_size (whole buffer)
 *  24  durable_buffer_size          32  rolling_buffer_size (each)
 *  40  durable_data_end             48  rolling_data_end[0]
 *  56  rolling_data_end[1]          64  num_records_dropped
 *  72  chunk_size                   76  flags (bit 0: stopped cleanly)
 *  80  records_written              88  rolling_alloc (the allocation word)
 *  96  durable_alloc               104  streamed_bytes (file mode)
 * 112  saved_durable_end           120  saves_done (streaming)
 * Validity conditions are numbered in buffer_header__validate(). */
#ifndef FXTRACE_ENGINE_BUFFER_HEADER_H_
#define FXTRACE_ENGINE_BUFFER_HEADER_H_

#include <assert.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define TRACE_BUFFER_HEADER_MAGIC UINT64_C(0x627566ee68656164)
/* 3: streaming writers' drop counters in the durable buffer (buffer_scan.h,
 * buffer_scan__dropped); 2: N rolling segments (segment_count,
 * saves_done); 1 had two halves */
#define TRACE_BUFFER_HEADER_VERSION 3u
#define TRACE_BUFFER_FLAG_STOPPED 1u

enum {
  TRACE_BUFFER_MIN_SIZE = 4096,                /* and a multiple of it */
  TRACE_BUFFER_MAX_DURABLE_SIZE = 1024 * 1024, /* PROTOCOL.md §7.2 */
  TRACE_BUFFER_MAX_CHUNK_SIZE = 16 * 1024,
  TRACE_BUFFER_MIN_CHUNK_SIZE = 512,
  TRACE_BUFFER_MIN_CHUNKS = 16, /* per rolling segment, when it is big enough */
  /* Streaming: rolling segments, fewer while each would be smaller than
   * TRACE_BUFFER_MIN_SEGMENT_SIZE (never fewer than 2). */
  TRACE_BUFFER_MAX_SEGMENTS = 8,
  TRACE_BUFFER_MIN_SEGMENT_SIZE = 16 * 1024,
};
#define TRACE_BUFFER_MAX_SIZE (UINT64_C(1) << 32)
/* num_records_dropped as readers take it (buffer_scan__header clamps it). */
#define TRACE_BUFFER_MAX_DROPPED ((uint64_t)INT64_MAX)

typedef struct trace_buffer_header {
  uint64_t magic;
  uint16_t version;
  uint8_t buffering_mode;
  /* Rolling segments, all rolling_buffer_size bytes: 1 oneshot, 2 circular,
   * 2..TRACE_BUFFER_MAX_SEGMENTS streaming (buffer__compute_geometry). The
   * segment of switch count s is s % segment_count. */
  uint8_t segment_count;
  uint32_t wrapped_count;
  uint64_t total_size;
  uint64_t durable_buffer_size;
  uint64_t rolling_buffer_size; /* each segment */
  uint64_t durable_data_end;
  /* Indexed by switch count & 1: the data ends of the previous and the
   * current segment (PROTOCOL.md's two rolling buffers when there are two). */
  uint64_t rolling_data_end[2];
  /* Records dropped since the last start: a live counter, added to with an
   * atomic read-modify-write on a drop (the slow path only), so that it is
   * right in the buffer of a process that died mid-trace. Streaming's
   * waiting-for-a-save drops go to the writers' own drop counters in the
   * durable buffer instead: the whole count is buffer_scan__dropped(). */
  uint64_t num_records_dropped;
  uint32_t chunk_size;
  uint32_t flags;
  uint64_t records_written;
  /* Written by writers with atomic read-modify-writes (docs/buffer-layout.md):
   * bits 0..39 the next free offset in the current rolling segment, bits
   * 40..63 the number of switches (current segment = switches %
   * segment_count). */
  uint64_t rolling_alloc;
  uint64_t durable_alloc; /* next free offset in the durable buffer */
  /* File mode, streaming: bytes of saved buffers written to the output file
   * after its placeholder (engine/live_placeholder.h), and how much of the
   * durable buffer they already hold. */
  uint64_t streamed_bytes;
  uint64_t saved_durable_end;
  /* Streaming: saves done this trace; the segments of switch counts below
   * it are saved (written before the engine lets writers reuse them). */
  uint64_t saves_done;
} trace_buffer_header_t;

#define TRACE_BUFFER_ALLOC_OFFSET_BITS 40
#define TRACE_BUFFER_ALLOC_OFFSET_MASK ((UINT64_C(1) << TRACE_BUFFER_ALLOC_OFFSET_BITS) - 1)

static_assert(sizeof(trace_buffer_header_t) == 128, "the header is 128 bytes");
static_assert(offsetof(trace_buffer_header_t, num_records_dropped) == 64, "PROTOCOL.md §7.1");
static_assert(offsetof(trace_buffer_header_t, chunk_size) == 72, "docs/buffer-layout.md");
static_assert(offsetof(trace_buffer_header_t, rolling_alloc) == 88, "docs/buffer-layout.md");
static_assert(offsetof(trace_buffer_header_t, segment_count) == 11, "docs/buffer-layout.md");
static_assert(offsetof(trace_buffer_header_t, saves_done) == 120, "docs/buffer-layout.md");

typedef struct trace_buffer_geometry {
  uint64_t durable_size; /* 0 in oneshot */
  uint64_t rolling_size; /* each segment; a multiple of chunk_size */
  uint32_t chunk_size;
  uint32_t segments; /* rolling segments */
} trace_buffer_geometry_t;

/* Splits a buffer of `total` bytes for `mode` (0 oneshot, 1 circular, 2
 * streaming): PROTOCOL.md §7.3's durable size, the rest split into the
 * mode's rolling segments (1, 2, or streaming up to
 * TRACE_BUFFER_MAX_SEGMENTS), each rounded down to whole chunks. Returns 0,
 * or -1 if mode or total is invalid (§7.2). */
int buffer__compute_geometry(unsigned mode, uint64_t total, trace_buffer_geometry_t* out);

/* Fills a fresh header for the geometry (data ends and counters zero). */
void buffer_header__init(trace_buffer_header_t* h, unsigned mode, uint64_t total,
                         const trace_buffer_geometry_t* g);

/* Checks a header read from a buffer of `buffer_size` bytes, expecting
 * `mode`. Returns NULL if valid, else which numbered condition failed. */
const char* buffer_header__validate(const trace_buffer_header_t* h, uint64_t buffer_size,
                                    unsigned mode);

#endif /* FXTRACE_ENGINE_BUFFER_HEADER_H_ */
