/* Not part of the public API: tick → time conversions for the trace tools.
 * Exact integer arithmetic, so that nanoseconds survive every conversion. */
#ifndef FXTRACE_TRACE_TIMESTAMP_H_
#define FXTRACE_TRACE_TIMESTAMP_H_

#include <stddef.h>
#include <stdint.h>

/* floor(ticks × 10^9 / ticks_per_second), saturating at INT64_MAX;
 * ticks_per_second 0 is treated as 10^9 (1 tick = 1 ns). */
int64_t __ticks_to_ns(uint64_t ticks, uint64_t ticks_per_second);

/* ns as microseconds with exactly three decimals ("-12.345"); returns the
 * length written. `buf` holds at least 32 bytes. */
size_t __format_us(char* buf, int64_t ns);

/* ns as seconds with nine decimals ("1.000002000"). buf >= 32 bytes. */
size_t __format_seconds(char* buf, int64_t ns);

#endif /* FXTRACE_TRACE_TIMESTAMP_H_ */
