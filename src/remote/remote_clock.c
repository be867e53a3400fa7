/* The clock exchange (remote.h, docs/multi-host.md#clocks): the near end
 * sends its clock request at near_sent and receives the far clock's
 * reading at near_received; the far reading was taken somewhere in
 * between, so the far clock minus the near one is
 * far - (near_sent + near_received) / 2, give or take half the round trip.
 * The shortest round trip of an exchange wins: its window is narrowest. */
#include <math.h>
#include <stdlib.h>
#include <time.h>

#include "remote/remote.h"

/* A rate estimate is applied only when significant
 * (docs/multi-host.md#clocks): over a span of at least RATE_SPAN_FACTOR
 * times the two samples' combined uncertainty (shorter, the estimate is
 * mostly the samples' noise), when the offset moved by more than that
 * combined uncertainty (else the change cannot be told from noise), and
 * when plausible: crystals of real machines differ by tens of ppm. */
enum { RATE_SPAN_FACTOR = 1000, MAX_PLAUSIBLE_PPB = 500000 };

uint64_t remote_clock__now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

void remote_clock__note(remote_clock_sample_t* s, uint64_t near_sent, uint64_t far_ns,
                        uint64_t near_received) {
  s->rounds++;
  if (near_received < near_sent) return;
  uint64_t half = (near_received - near_sent) / 2;
  if (s->valid && half >= s->uncertainty_ns) return;
  s->valid = true;
  s->near_ns = near_sent + half;
  s->far_ns = far_ns;
  s->uncertainty_ns = half;
}

int64_t remote_clock__offset(const remote_clock_sample_t* s) {
  return (int64_t)(s->far_ns - s->near_ns);
}

remote_clock_map_t remote_clock__map(const remote_clock_sample_t* start,
                                     const remote_clock_sample_t* end) {
  remote_clock_map_t m = {0};
  if (!start->valid) return m;
  int64_t o_s = remote_clock__offset(start);
  /* in uint64 (wrapping), then back: a far end's nonsense clock (o_s of
   * INT64_MIN, offsets 2^63 apart) is no signed overflow */
  m.shift_ns = (int64_t)(0 - (uint64_t)o_s);
  m.origin_ns = start->far_ns;
  if (!end || !end->valid || end->far_ns <= start->far_ns) return m;
  /* near = far - o(far), o linear through both samples */
  double span = (double)(end->far_ns - start->far_ns);
  double moved = (double)(int64_t)((uint64_t)remote_clock__offset(end) - (uint64_t)o_s);
  double ppb = moved / span * 1e9;
  double noise = (double)start->uncertainty_ns + (double)end->uncertainty_ns;
  m.measured_ppb = ppb;
  m.rate_used =
      span >= RATE_SPAN_FACTOR * noise && fabs(moved) > noise && fabs(ppb) <= MAX_PLAUSIBLE_PPB;
  if (m.rate_used) m.drift_ppb = -ppb; /* fractional: no rounding to whole ppb */
  return m;
}
