/* Buffer geometry (PROTOCOL.md §7.3 worked sizes, then whole chunks) and the
 * numbered header validity conditions. */
#include "engine/buffer_header.h"
#include "test.h"

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
  bad.durable_data_end = 12;
  ASSERT_STREQ(buffer_header__validate(&bad, 1u << 20, 2),
               "(10) durable_data_end out of range or unaligned");
  bad = h;
  bad.rolling_data_end[1] = bad.rolling_buffer_size + 8;
  ASSERT_STREQ(buffer_header__validate(&bad, 1u << 20, 2),
               "(11) rolling_data_end out of range or unaligned");
  return 0;
}
