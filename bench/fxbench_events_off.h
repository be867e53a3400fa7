/* The disabled typed call site: TRACE_SYSTEM bench_off is never enabled
 * (scenario tp_off, the peer of fxbench:off). */
#undef TRACE_SYSTEM
#define TRACE_SYSTEM bench_off

#if !defined(FXBENCH_EVENTS_OFF_H_) || defined(TRACE_HEADER_MULTI_READ)
#define FXBENCH_EVENTS_OFF_H_
#include <stdint.h>
#include <trace/tracepoint.h>

TRACE_EVENT(bench_off_int2, TP_PROTO(int64_t a, int64_t b), TP_ARGS(a, b),
            TP_STRUCT__entry(__field(int64_t, a) __field(int64_t, b)),
            TP_fast_assign(__entry->a = a; __entry->b = b;),
            TP_printk("a=%lld b=%lld", (long long)__entry->a, (long long)__entry->b))

#endif

#undef TRACE_INCLUDE_PATH
#undef TRACE_INCLUDE_FILE
#define TRACE_INCLUDE_FILE fxbench_events_off
#include <trace/define_trace.h>
