/* test_tp_compile.sh: an event header that includes another event header
 * (tp_bad.h) inside its guarded part, a compile error with a readable first
 * line. */
#undef TRACE_SYSTEM
#define TRACE_SYSTEM tp_nest

#if !defined(TP_NEST_H_) || defined(TRACE_HEADER_MULTI_READ)
#define TP_NEST_H_
#include <trace/tracepoint.h>

#include "tp_bad.h"

TRACE_EVENT(tp_nest_event, TP_PROTO(int x), TP_ARGS(x), TP_STRUCT__entry(__field(int, x)),
            TP_fast_assign(__entry->x = x;), TP_printk("x=%d", __entry->x))

#endif

#undef TRACE_INCLUDE_PATH
#undef TRACE_INCLUDE_FILE
#define TRACE_INCLUDE_FILE tp_nest
#include <trace/define_trace.h>
