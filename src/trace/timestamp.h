/* Not part of the public API: tick → time conversions for the trace tools.
 * Exact integer arithmetic, so that nanoseconds survive every conversion. */
#ifndef FXTRACE_TRACE_TIMESTAMP_H_
#define FXTRACE_TRACE_TIMESTAMP_H_

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* floor(ticks × 10^9 / ticks_per_second), saturating at UINT64_MAX (only
 * reachable with tick rates below 1 GHz); ticks_per_second 0 is treated as
 * 10^9 (1 tick = 1 ns). */
uint64_t timestamp__ticks_to_ns(uint64_t ticks, uint64_t ticks_per_second);

/* `ns` nanoseconds as microseconds with exactly three decimals, with a minus
 * sign when `negative` ("-12.345"); returns the length. buf >= 32 bytes. */
size_t timestamp__format_us(char* buf, bool negative, uint64_t ns);

/* ns as seconds with nine decimals ("1.000002000"). buf >= 32 bytes. */
size_t timestamp__format_seconds(char* buf, uint64_t ns);

#endif /* FXTRACE_TRACE_TIMESTAMP_H_ */
