/* Not part of the public API: the engine's timestamp source (docs/clock.md).
 *
 * Every timestamp the engine writes is in nanoseconds (1 tick = 1 ns, so
 * trace_clock__ticks_per_second() is 1e9): some FXT readers ignore the
 * initialization record's rate (shared/spec/READERS.md).
 *
 * Mapping to CLOCK_MONOTONIC: a timestamp IS a CLOCK_MONOTONIC reading in
 * nanoseconds, up to the calibration error.
 *   - Source "monotonic": exactly clock_gettime(CLOCK_MONOTONIC) as ns.
 *   - Source "tsc": ns = base_ns + ((tsc - base_tsc) * mult) >> shift, a line
 *     fitted at trace_clock__init() to ~20 samples of (CLOCK_MONOTONIC, TSC)
 *     taken over ~20 ms. Measured on the 2-core EPYC (KVM, clocksource tsc,
 *     also with both cores busy): offset at init within 10 ns, rate error
 *     < 0.1 ppm (calibrated rates spread over 0.07 ppm; at most 0.2 us of
 *     divergence after 5 s, i.e. < 0.4 ms per hour). CLOCK_MONOTONIC is
 *     NTP-slewed and this line is fixed, so over long traces the two can also
 *     drift apart by the change of the slew rate since init (bounded by the
 *     kernel's 500 ppm limit, in practice far less); call init again at each
 *     trace start to re-anchor.
 *
 * Aligning ftrace (kernel provider):
 *   - trace_clock "mono": ftrace's ktime_get_mono_fast_ns, the same timeline
 *     in ns; use it unconverted. Alignment with engine timestamps is exact for
 *     source "monotonic" and within the calibration error above for "tsc".
 *   - trace_clock "x86-tsc": raw TSC counts; convert each with
 *     trace_clock__tsc_to_ns(), the very function the hot path applies, so
 *     for source "tsc" kernel and user events align exactly (same counter,
 *     same line), whatever the calibration error. Prefer it when the source
 *     is "tsc"; prefer "mono" otherwise.
 *
 * Invariants: before trace_clock__init() (or when it picked "monotonic") the
 * hot path reads CLOCK_MONOTONIC, so the clock is usable at any time. Init
 * writes the parameters with plain stores: call it before other threads read
 * the clock (re-calling it is meant for tests). Within a thread readings never
 * decrease; across threads the TSC path relies on the TSC being synchronized
 * between CPUs, which the kernel checks before it keeps "tsc" as its
 * clocksource (one of the conditions init requires unless forced). */
#ifndef FXTRACE_ENGINE_CLOCK_H_
#define FXTRACE_ENGINE_CLOCK_H_

#include <stdbool.h>
#include <stdint.h>

/* trace_clock_params_t, trace_clock__params and the inline readers
 * (trace_clock__now_ns, trace_clock__monotonic_ns, trace_clock__tsc_line)
 * are in the record path the macros inline. */
#include "trace-engine/record_path.h"

/* Picks and calibrates the source. FXTRACE_CLOCK=tsc|monotonic forces one
 * (tests): "tsc" skips the invariant-TSC and clocksource checks but still
 * needs x86_64 and a plausible calibration. Returns 0, or -1 when
 * FXTRACE_CLOCK held something else or "tsc" could not be honoured; the clock
 * then uses CLOCK_MONOTONIC (or the automatic choice) and works anyway.
 * Takes ~20 ms when the TSC is used (calibration sleeps), ~0 otherwise. */
int trace_clock__init(void);

/* Always 1000000000: timestamps are nanoseconds. */
uint64_t trace_clock__ticks_per_second(void);

/* "tsc" or "monotonic". */
const char* trace_clock__source_name(void);

/* The calibrated TSC rate in Hz (rounded); 0 unless the source is "tsc". */
uint64_t trace_clock__tsc_hz(void);

/* Converts a raw TSC value (e.g. ftrace's x86-tsc clock) with the hot path's
 * line. Meaningful only when the source is "tsc"; returns 0 otherwise. */
uint64_t trace_clock__tsc_to_ns(uint64_t tsc);

#endif /* FXTRACE_ENGINE_CLOCK_H_ */
