/* Not part of the public API: a streaming log-linear histogram of
 * nanosecond values (HDR-style) for the percentiles of `trace summary`.
 *
 * Values below 256 have a bucket each (exact). Above, each power of two
 * [2^e, 2^(e+1)) is split into 128 equal buckets, so a bucket's width is at
 * most 1/128 of its lower bound. A percentile is reported as the middle of
 * the bucket holding the nearest-rank sample (clamped to the smallest and
 * largest value seen), so it differs from the exact nearest-rank percentile
 * t by at most t/256 (0.39%). Memory: 8 bytes per bucket up to the largest
 * value's bucket (at most 7424 buckets, 58 KiB, for 2^64 ns), whatever the
 * number of values.
 * Thread-safety: a histogram is used by one thread at a time; the bucket
 * functions are pure. */
#ifndef FXTRACE_TRACE_SUMMARY_HIST_H_
#define FXTRACE_TRACE_SUMMARY_HIST_H_

#include <stdbool.h>
#include <stdint.h>

typedef struct summary_hist {
  uint64_t* counts; /* [size] */
  uint32_t size;
  uint64_t count;
  uint64_t min, max; /* valid when count > 0 */
} summary_hist_t;

/* Bucket index of a value (exposed for the tests). */
uint32_t summary_hist__index(uint64_t value);
/* Smallest value of a bucket, and its width. */
uint64_t summary_hist__bucket_low(uint32_t index);
uint64_t summary_hist__bucket_width(uint32_t index);

/* Adds a value; false when out of memory (the value is not counted). */
bool summary_hist__add(summary_hist_t* h, uint64_t value);

/* The nearest-rank percentile (the value of rank ceil(percent × count / 100),
 * at least 1, in sorted order), within value/256 of the exact one; 0 when
 * empty. percent <= 100. */
uint64_t summary_hist__percentile(const summary_hist_t* h, unsigned percent);

void summary_hist__free(summary_hist_t* h);

#endif /* FXTRACE_TRACE_SUMMARY_HIST_H_ */
