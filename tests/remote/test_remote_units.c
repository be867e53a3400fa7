/* src/remote's pieces alone: COMMAND split like a shell line, a word quoted
 * for a remote shell, the clock samples and map, frames over a pipe. */
#include <errno.h>
#include <unistd.h>

#include "remote/remote.h"
#include "test.h"

static void test_split(void) {
  const char* error = NULL;
  char** w = remote_words__split("  ssh -T 'db 1' \"a\\\"b\" c\\ d e''f ", &error);
  ASSERT_TRUE(w != NULL);
  ASSERT_STREQ(w[0], "ssh");
  ASSERT_STREQ(w[1], "-T");
  ASSERT_STREQ(w[2], "db 1");
  ASSERT_STREQ(w[3], "a\"b");
  ASSERT_STREQ(w[4], "c d");
  ASSERT_STREQ(w[5], "ef");
  ASSERT_TRUE(w[6] == NULL);
  free(w);
  ASSERT_TRUE(remote_words__split("ssh 'db1", &error) == NULL);
  ASSERT_STREQ(error, "an unterminated '");
  ASSERT_TRUE(remote_words__split("   ", &error) == NULL);
  ASSERT_STREQ(error, "no command");
}

static void test_quote(void) {
  char* q = remote_words__quote("/usr/bin/trace");
  ASSERT_STREQ(q, "/usr/bin/trace");
  free(q);
  q = remote_words__quote("it's here*");
  ASSERT_STREQ(q, "'it'\\''s here*'");
  /* quoting then splitting gives the word back */
  const char* error = NULL;
  char** w = remote_words__split(q, &error);
  ASSERT_TRUE(w != NULL);
  ASSERT_STREQ(w[0], "it's here*");
  free(w);
  free(q);
  q = remote_words__quote("");
  ASSERT_STREQ(q, "''");
  free(q);
}

static void test_clock(void) {
  remote_clock_sample_t s = {0};
  /* far = near + 5000 s; round trips of 100, 40 and 60 us */
  const uint64_t off = 5000000000000ull;
  remote_clock__note(&s, 1000000, 1050000 + off, 1100000);
  remote_clock__note(&s, 2000000, 2030000 + off, 2040000); /* far read 10 us late */
  remote_clock__note(&s, 3000000, 3030000 + off, 3060000);
  ASSERT_EQ(s.rounds, 3);
  ASSERT_EQ(s.uncertainty_ns, 20000);
  ASSERT_EQ(s.near_ns, 2020000);
  ASSERT_EQ(remote_clock__offset(&s), (int64_t)off + 10000); /* within the uncertainty */
  /* a far clock 100 ppm fast over 100 s: corrected */
  remote_clock_sample_t a = {true, 1000000000ull, 1000000000ull + off, 500, 32};
  remote_clock_sample_t b = {true, 101000000000ull, 101000000000ull + off + 10000000, 500, 32};
  remote_clock_map_t m = remote_clock__map(&a, &b);
  ASSERT_TRUE(m.rate_used);
  ASSERT_EQ(m.shift_ns, -(int64_t)off);
  ASSERT_TRUE(m.measured_ppb > 99000 && m.measured_ppb < 101000);
  /* a far timestamp at the end maps onto the near end time */
  long double far = (long double)b.far_ns;
  long double near = far + m.shift_ns + (far - (long double)m.origin_ns) * m.drift_ppb / 1e9L;
  ASSERT_TRUE(near > b.near_ns - 1000.0L && near < b.near_ns + 1000.0L);
  /* an implausible rate (10 %): no rate correction */
  remote_clock_sample_t c = {true, 1100000000ull, 1100000000ull + off + 10000000, 500, 32};
  m = remote_clock__map(&a, &c);
  ASSERT_TRUE(!m.rate_used);
  ASSERT_EQ(m.drift_ppb, 0);
  /* the offset moved less than the samples' combined uncertainty (539 ns
   * over 1 s, +-25 us each): noise, not applied though the span is long */
  remote_clock_sample_t n0 = {true, 1000000000ull, 1000000000ull + off, 25000, 32};
  remote_clock_sample_t n1 = {true, 2000000000ull, 2000000000ull + off + 539, 25000, 32};
  m = remote_clock__map(&n0, &n1);
  ASSERT_TRUE(!m.rate_used);
  ASSERT_EQ(m.drift_ppb, 0);
  ASSERT_TRUE(m.measured_ppb > 538 && m.measured_ppb < 540); /* still reported */
  /* a span under 1000 x the combined uncertainty (1 s, +-1 ms each): not
   * applied though the offset moved by more than that uncertainty */
  remote_clock_sample_t s0 = {true, 1000000000ull, 1000000000ull + off, 1000000, 32};
  remote_clock_sample_t s1 = {true, 2000000000ull, 2000000000ull + off + 3000000, 1000000, 32};
  m = remote_clock__map(&s0, &s1);
  ASSERT_TRUE(!m.rate_used);
  ASSERT_EQ(m.drift_ppb, 0);
  /* significant and fractional: 1001 ns over 400 s (+-100 ns each) is
   * 2.5025 ppb, kept as such in the map (not rounded to whole ppb) */
  remote_clock_sample_t f0 = {true, 1000000000ull, 1000000000ull + off, 100, 32};
  remote_clock_sample_t f1 = {true, 401000000000ull, 401000000000ull + off + 1001, 100, 32};
  m = remote_clock__map(&f0, &f1);
  ASSERT_TRUE(m.rate_used);
  ASSERT_TRUE(m.drift_ppb < -2.5 && m.drift_ppb > -2.505);
  /* a far end that lies: offsets of -2^63 and then about +2^63 (no signed
   * overflow: UBSan; an implausible rate, not used) */
  remote_clock_sample_t d = {true, 1ull << 62, (1ull << 62) + (1ull << 63), 0, 32};
  remote_clock_sample_t e = {true, 3ull << 62, (3ull << 62) - 1, 0, 32};
  ASSERT_EQ(remote_clock__offset(&d), INT64_MIN);
  m = remote_clock__map(&d, &e);
  ASSERT_EQ(m.shift_ns, INT64_MIN);
  ASSERT_TRUE(!m.rate_used);
  ASSERT_EQ(m.drift_ppb, 0);
}

static void test_frames(void) {
  int p[2];
  ASSERT_TRUE(pipe(p) == 0);
  unsigned char q[8];
  remote__put64(q, 0x0102030405060708ull);
  ASSERT_TRUE(remote_channel__write(p[1], REMOTE_CLOCK, q, sizeof(q)));
  ASSERT_TRUE(remote_channel__write(p[1], REMOTE_STOP, NULL, 0));
  unsigned char bad[8] = {7, 0, 0, 0, 0xff, 0xff, 0xff, 0x7f}; /* too long a payload */
  ASSERT_TRUE(write(p[1], bad, sizeof(bad)) == (ssize_t)sizeof(bad));
  close(p[1]);
  remote_reader_t r;
  ASSERT_TRUE(remote_reader__init(&r, p[0]));
  remote_frame_t f;
  ASSERT_EQ(remote_reader__next(&r, &f), 0);
  ASSERT_TRUE(remote_reader__fill(&r));
  ASSERT_EQ(remote_reader__next(&r, &f), 1);
  ASSERT_EQ(f.type, REMOTE_CLOCK);
  ASSERT_EQ(f.length, 8);
  ASSERT_EQ(remote__get64(f.payload), 0x0102030405060708ull);
  ASSERT_EQ(remote_reader__next(&r, &f), 1);
  ASSERT_EQ(f.type, REMOTE_STOP);
  ASSERT_EQ(remote_reader__next(&r, &f), -1);
  ASSERT_EQ(r.error, EPROTO);
  remote_reader__free(&r);
  close(p[0]);
}

int main(void) {
  test_split();
  test_quote();
  test_clock();
  test_frames();
  puts("ok");
  return 0;
}
