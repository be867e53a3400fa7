/* trace summary's log-linear histogram (src/trace/summary_hist.c) and the
 * --time-range parser (src/trace/time_range.c). */
#include <stdlib.h>

#include "test.h"
#include "trace/summary_hist.h"
#include "trace/time_range.h"

static int compare_u64(const void* a, const void* b) {
  uint64_t x = *(const uint64_t*)a, y = *(const uint64_t*)b;
  return (x > y) - (x < y);
}

/* Every value lies in its bucket; buckets are contiguous and ordered; a
 * bucket is at most 1/128 of its lower bound wide (exact below 256). */
static void test_buckets(void) {
  uint64_t probes[] = {0,
                       1,
                       127,
                       128,
                       255,
                       256,
                       257,
                       511,
                       512,
                       1000,
                       65535,
                       65536,
                       1000000007,
                       UINT64_C(1) << 40,
                       UINT64_MAX - 1,
                       UINT64_MAX};
  for (size_t i = 0; i < sizeof(probes) / sizeof(probes[0]); i++) {
    uint64_t v = probes[i];
    uint32_t b = summary_hist__index(v);
    uint64_t low = summary_hist__bucket_low(b), width = summary_hist__bucket_width(b);
    ASSERT_MSG(low <= v && v - low < width, "%" PRIu64 " not in bucket %u", v, b);
    if (v < 256) ASSERT_EQ(width, 1);
    if (v >= 256) ASSERT_MSG(width * 128 <= low, "bucket %u too wide", b);
  }
  ASSERT_EQ(summary_hist__index(UINT64_MAX), 7423);
  for (uint32_t b = 1; b < 7424; b++)
    ASSERT_EQ(summary_hist__bucket_low(b),
              summary_hist__bucket_low(b - 1) + summary_hist__bucket_width(b - 1));
}

/* Percentiles of random samples against the exact nearest-rank values. */
static void test_percentiles(void) {
  enum { N = 20000 };
  static uint64_t values[N];
  uint64_t seed = 12345;
  for (int round = 0; round < 5; round++) {
    summary_hist_t h = {0};
    size_t n = round == 0 ? 1 : (size_t)(N / (round + 1));
    for (size_t i = 0; i < n; i++) {
      seed = seed * 6364136223846793005u + 1442695040888963407u;
      values[i] = (seed >> 11) >> (seed % 50); /* spans 2^0 .. 2^53 */
      ASSERT_TRUE(summary_hist__add(&h, values[i]));
    }
    qsort(values, n, sizeof(values[0]), compare_u64);
    ASSERT_EQ(h.count, n);
    ASSERT_EQ(h.min, values[0]);
    ASSERT_EQ(h.max, values[n - 1]);
    unsigned percents[] = {1, 50, 90, 99, 100};
    for (size_t k = 0; k < 5; k++) {
      size_t rank = (percents[k] * n + 99) / 100;
      uint64_t exact = values[rank ? rank - 1 : 0], got = summary_hist__percentile(&h, percents[k]);
      uint64_t diff = got > exact ? got - exact : exact - got;
      ASSERT_MSG(diff <= exact / 256, "p%u of %zu: %" PRIu64 " vs exact %" PRIu64, percents[k], n,
                 got, exact);
    }
    summary_hist__free(&h);
  }
  summary_hist_t empty = {0};
  ASSERT_EQ(summary_hist__percentile(&empty, 50), 0);
}

static void test_time_range(void) {
  time_range_t r;
  ASSERT_EQ(time_range__parse("1.5,3", &r), 0);
  ASSERT_EQ(r.start_ns, 1500000000u);
  ASSERT_EQ(r.end_ns, 3000000000u);
  ASSERT_EQ(time_range__parse("2,", &r), 0);
  ASSERT_EQ(r.start_ns, 2000000000u);
  ASSERT_EQ(r.end_ns, UINT64_MAX);
  ASSERT_EQ(time_range__parse(",.000000001", &r), 0);
  ASSERT_EQ(r.start_ns, 0);
  ASSERT_EQ(r.end_ns, 1);
  const char* bad[] = {"",     "1",
                       "3,1",  "a,2",
                       "1,,2", "1.0000000001,2",
                       "-1,2", "1e3,",
                       ".,1",  "99999999999999999999,"};
  for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
    ASSERT_MSG(time_range__parse(bad[i], &r) == -1, "accepted '%s'", bad[i]);
  r.origin_ns = 1000;
  ASSERT_EQ(time_range__parse("0.000001,0.000002", &r), 0);
  r.origin_ns = 1000;
  r.have_origin = true;
  ASSERT_TRUE(!time_range__contains(&r, 1999));
  ASSERT_TRUE(time_range__contains(&r, 2000));
  ASSERT_TRUE(time_range__contains(&r, 3000));
  ASSERT_TRUE(!time_range__contains(&r, 3001));
}

int main(void) {
  test_buckets();
  test_percentiles();
  test_time_range();
  puts("summary histogram and time range: ok");
  return 0;
}
