/* TRACE_EVENT() peers of LTTng-UST's fxbench:instant2 and fxbench:instant_str
 * (lttng/fxbench_tp.h): the same payloads as typed events of the enabled
 * category "bench" (bench/engine_bench_fxtrace.c, scenarios tp_int2, tp_str). */
#undef TRACE_SYSTEM
#define TRACE_SYSTEM bench

#if !defined(FXBENCH_EVENTS_H_) || defined(TRACE_HEADER_MULTI_READ)
#define FXBENCH_EVENTS_H_
#include <stdint.h>
#include <trace/tracepoint.h>

TRACE_EVENT(bench_int2, TP_PROTO(int64_t a, int64_t b), TP_ARGS(a, b),
            TP_STRUCT__entry(__field(int64_t, a) __field(int64_t, b)),
            TP_fast_assign(__entry->a = a; __entry->b = b;),
            TP_printk("a=%lld b=%lld", (long long)__entry->a, (long long)__entry->b))

TRACE_EVENT(bench_str, TP_PROTO(const char* s), TP_ARGS(s), TP_STRUCT__entry(__string(s, s)),
            TP_fast_assign(__assign_str(s, s);), TP_printk("s=%s", __get_str(s)))

#endif

#undef TRACE_INCLUDE_PATH
#undef TRACE_INCLUDE_FILE
#define TRACE_INCLUDE_FILE fxbench_events
#include <trace/define_trace.h>
