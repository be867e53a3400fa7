/* LTTng-UST tracepoint provider "fxbench": the peer of fxtrace's benchmark
 * scenarios (bench/engine_bench_lttng.c), with the same payloads:
 *   off          2 x int64, never enabled (the disabled call site)
 *   instant0     no payload             (TRACE_INSTANT, 0 args)
 *   instant2     2 x int64              (TRACE_INSTANT, "a", TA_INT64, "b", TA_INT64)
 *   instant_str  one string, 16 chars   (TRACE_INSTANT, "s", TA_STRING)
 *   dur_begin / dur_end, no payload     (TRACE_DURATION in a block)
 * fxtrace's events also carry a category, a name and a thread reference; an
 * LTTng event's id stands for the first two, and its stream (per-CPU) plus an
 * optional context stand for the thread. Uses LTTng-UST 2.13's API version 1
 * (man lttng-ust). Only the benchmark includes this header. */
#undef LTTNG_UST_TRACEPOINT_PROVIDER
#define LTTNG_UST_TRACEPOINT_PROVIDER fxbench

#undef LTTNG_UST_TRACEPOINT_INCLUDE
#define LTTNG_UST_TRACEPOINT_INCLUDE "./fxbench_tp.h"

#if !defined(FXBENCH_TP_H_) || defined(LTTNG_UST_TRACEPOINT_HEADER_MULTI_READ)
#define FXBENCH_TP_H_

#include <lttng/tracepoint.h>
#include <stdint.h>

LTTNG_UST_TRACEPOINT_EVENT(fxbench, off,
  LTTNG_UST_TP_ARGS(int64_t, a, int64_t, b),
  LTTNG_UST_TP_FIELDS(
    lttng_ust_field_integer(int64_t, a, a)
    lttng_ust_field_integer(int64_t, b, b)))

LTTNG_UST_TRACEPOINT_EVENT(fxbench, instant0,
  LTTNG_UST_TP_ARGS(),
  LTTNG_UST_TP_FIELDS())

LTTNG_UST_TRACEPOINT_EVENT(fxbench, instant2,
  LTTNG_UST_TP_ARGS(int64_t, a, int64_t, b),
  LTTNG_UST_TP_FIELDS(
    lttng_ust_field_integer(int64_t, a, a)
    lttng_ust_field_integer(int64_t, b, b)))

LTTNG_UST_TRACEPOINT_EVENT(fxbench, instant_str,
  LTTNG_UST_TP_ARGS(const char*, s),
  LTTNG_UST_TP_FIELDS(
    lttng_ust_field_string(s, s)))

LTTNG_UST_TRACEPOINT_EVENT(fxbench, dur_begin,
  LTTNG_UST_TP_ARGS(),
  LTTNG_UST_TP_FIELDS())

LTTNG_UST_TRACEPOINT_EVENT(fxbench, dur_end,
  LTTNG_UST_TP_ARGS(),
  LTTNG_UST_TP_FIELDS())

#endif /* FXBENCH_TP_H_ */

#include <lttng/tracepoint-event.h>
