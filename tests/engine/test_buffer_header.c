/* Buffer geometry (PROTOCOL.md §7.3 worked sizes, then whole chunks) and the
 * numbered header validity conditions. */
#include "engine/buffer_header.h"
#include "engine/buffer_scan.h"
#include "test.h"

/* Streaming's rolling segments: 8 while each holds at least 16 KiB, fewer
 * (powers of two, at least 2) for small buffers; oneshot 1, circular 2. */
static void check_segments(void) {
  trace_buffer_geometry_t g;
  ASSERT_EQ(buffer__compute_geometry(0, 4u << 20, &g), 0);
  ASSERT_EQ(g.segments, 1u);
  ASSERT_EQ(buffer__compute_geometry(1, 4u << 20, &g), 0);
  ASSERT_EQ(g.segments, 2u);
  ASSERT_EQ(buffer__compute_geometry(2, 4u << 20, &g), 0);
  ASSERT_EQ(g.segments, 8u);
  ASSERT_EQ(g.durable_size, 262144u); /* PROTOCOL.md §7.3's durable size is kept */
  ASSERT_EQ(g.rolling_size, (((4u << 20) - 128 - 262144) / 8) / g.chunk_size * g.chunk_size);
  ASSERT_TRUE(g.rolling_size / g.chunk_size >= TRACE_BUFFER_MIN_CHUNKS);
  ASSERT_EQ(buffer__compute_geometry(2, 128u << 10, &g), 0);
  ASSERT_EQ(g.segments, 4u); /* 120 KiB / 8 is below 16 KiB */
  ASSERT_EQ(buffer__compute_geometry(2, 64u << 10, &g), 0);
  ASSERT_EQ(g.segments, 2u);
  ASSERT_EQ(buffer__compute_geometry(2, 4096, &g), 0);
  ASSERT_EQ(g.segments, 2u);
  uint64_t totals[] = {4096, 64u << 10, 1u << 20, 4u << 20, 64u << 20, UINT64_C(1) << 32};
  for (size_t i = 0; i < sizeof(totals) / sizeof(totals[0]); i++)
    for (unsigned mode = 0; mode < 3; mode++) {
      ASSERT_EQ(buffer__compute_geometry(mode, totals[i], &g), 0);
      ASSERT_TRUE(128 + g.durable_size + g.segments * g.rolling_size <= totals[i]);
      ASSERT_EQ(g.segments & (g.segments - 1), 0u); /* divides the 2^24 switch counts */
    }
}

/* A damaged segment table: the segment count against the geometry, and the
 * streaming counters (switches, saves_done) against each other. */
static void check_segment_table_damage(void) {
  enum { SIZE = 1u << 20 };
  static uint64_t words[SIZE / 8];
  uint8_t* buffer = (uint8_t*)words;
  trace_buffer_geometry_t g;
  ASSERT_EQ(buffer__compute_geometry(2, SIZE, &g), 0);
  trace_buffer_header_t* h = (trace_buffer_header_t*)buffer;
  buffer_header__init(h, 2, SIZE, &g);
  trace_buffer_header_t copy;
  ASSERT_TRUE(buffer_scan__header(buffer, SIZE, &copy) == NULL);
  ASSERT_TRUE(buffer_scan__inconsistency(&copy) == NULL);
  /* 5 switches, 2 saves: three full segments wait, within 8 - 1 */
  h->rolling_alloc = (UINT64_C(5) << TRACE_BUFFER_ALLOC_OFFSET_BITS) | g.chunk_size;
  h->wrapped_count = 5;
  h->rolling_data_end[0] = g.rolling_size; /* switch count 4's, the previous */
  h->saves_done = 2;
  ASSERT_TRUE(buffer_scan__header(buffer, SIZE, &copy) == NULL);
  ASSERT_TRUE(buffer_scan__inconsistency(&copy) == NULL);
  h->segment_count = 4;
  ASSERT_STREQ(buffer_scan__header(buffer, SIZE, &copy),
               "buffer segment count does not match its size and mode");
  ASSERT_STREQ(buffer_header__validate(h, SIZE, 2),
               "(12) segment count differs from the one for this size and mode");
  h->segment_count = 0;
  ASSERT_TRUE(buffer_scan__header(buffer, SIZE, &copy) != NULL);
  ASSERT_EQ(buffer_scan__records(buffer, SIZE, 0, NULL, NULL, NULL), -1);
  h->segment_count = (uint8_t)g.segments;
  h->saves_done = 6;
  ASSERT_TRUE(buffer_scan__header(buffer, SIZE, &copy) == NULL);
  ASSERT_STREQ(buffer_scan__inconsistency(&copy), "saves_done is past the switch count");
  h->rolling_alloc = (UINT64_C(12) << TRACE_BUFFER_ALLOC_OFFSET_BITS) | g.chunk_size;
  h->wrapped_count = 12;
  h->rolling_data_end[0] = 0;
  h->rolling_data_end[1] = g.rolling_size; /* switch count 11's */
  h->saves_done = 4;                       /* 8 unsaved: one more than the others can hold */
  ASSERT_TRUE(buffer_scan__header(buffer, SIZE, &copy) == NULL);
  ASSERT_STREQ(buffer_scan__inconsistency(&copy),
               "more unsaved segments than the buffer has (saves_done too small)");
  h->saves_done = 5;
  ASSERT_TRUE(buffer_scan__header(buffer, SIZE, &copy) == NULL);
  ASSERT_TRUE(buffer_scan__inconsistency(&copy) == NULL);
}

static void check_split(uint64_t total, uint64_t durable, uint64_t rolling_before_chunks) {
  trace_buffer_geometry_t g;
  ASSERT_EQ(buffer__compute_geometry(1, total, &g), 0);
  ASSERT_EQ(g.durable_size, durable);
  ASSERT_TRUE(g.rolling_size <= rolling_before_chunks);
  ASSERT_TRUE(rolling_before_chunks - g.rolling_size < g.chunk_size);
  ASSERT_EQ(g.rolling_size % g.chunk_size, 0);
  ASSERT_EQ(g.chunk_size & (g.chunk_size - 1), 0);
}

int main(void) {
  check_segments();
  check_segment_table_damage();
  /* The table of PROTOCOL.md §7.3. */
  check_split(4096, 256, 1856);
  check_split(1u << 20, 65536, 491456);
  check_split(4u << 20, 262144, 1966016);
  check_split(16u << 20, 1048576, 7864256);
  check_split(64u << 20, 1048576, 33030080);
  trace_buffer_geometry_t g;
  ASSERT_EQ(buffer__compute_geometry(0, 4u << 20, &g), 0);
  ASSERT_EQ(g.durable_size, 0);
  ASSERT_EQ(g.chunk_size, TRACE_BUFFER_MAX_CHUNK_SIZE);
  ASSERT_EQ(g.rolling_size, ((4u << 20) - 128) / 16384 * 16384);
  ASSERT_EQ(buffer__compute_geometry(1, 4096, &g), 0);
  ASSERT_EQ(g.chunk_size, TRACE_BUFFER_MIN_CHUNK_SIZE); /* 1856 / 16 is below the minimum */
  /* §7.2 limits. */
  ASSERT_EQ(buffer__compute_geometry(3, 4096, &g), -1);
  ASSERT_EQ(buffer__compute_geometry(1, 4095, &g), -1);
  ASSERT_EQ(buffer__compute_geometry(1, 8192 + 8, &g), -1);
  ASSERT_EQ(buffer__compute_geometry(1, (UINT64_C(1) << 32) + 4096, &g), -1);

  /* A fresh header validates; each broken field names its condition. */
  trace_buffer_header_t h;
  ASSERT_EQ(buffer__compute_geometry(2, 1u << 20, &g), 0);
  buffer_header__init(&h, 2, 1u << 20, &g);
  ASSERT_TRUE(buffer_header__validate(&h, 1u << 20, 2) == NULL);
  ASSERT_STREQ(buffer_header__validate(&h, 1u << 20, 1),
               "(4) buffering mode differs from the one asked for");
  ASSERT_STREQ(buffer_header__validate(&h, 2u << 20, 2),
               "(5) total size differs from the buffer size");
  trace_buffer_header_t bad = h;
  bad.magic ^= 1;
  ASSERT_TRUE(buffer_header__validate(&bad, 1u << 20, 2)[1] == '1');
  bad = h;
  bad.chunk_size = 1000;
  ASSERT_TRUE(buffer_header__validate(&bad, 1u << 20, 2)[1] == '6');
  bad = h;
  bad.rolling_buffer_size += bad.chunk_size * 64;
  ASSERT_TRUE(buffer_header__validate(&bad, 1u << 20, 2)[1] == '8');
  bad = h;
  bad.segment_count = 2;
  ASSERT_STREQ(buffer_header__validate(&bad, 1u << 20, 2),
               "(12) segment count differs from the one for this size and mode");
  bad = h;
  bad.durable_data_end = 12;
  ASSERT_STREQ(buffer_header__validate(&bad, 1u << 20, 2),
               "(10) durable_data_end out of range or unaligned");
  bad = h;
  bad.rolling_data_end[1] = bad.rolling_buffer_size + 8;
  ASSERT_STREQ(buffer_header__validate(&bad, 1u << 20, 2),
               "(11) rolling_data_end out of range or unaligned");
  return 0;
}
