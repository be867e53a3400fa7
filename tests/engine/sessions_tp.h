/* clang-format off */
/* test_sessions' TRACE_EVENT(): one event of system "tpsys" with a fixed
 * field and a string. */
#undef TRACE_SYSTEM
#define TRACE_SYSTEM tpsys

#if !defined(SESSIONS_TP_H) || defined(TRACE_HEADER_MULTI_READ)
#define SESSIONS_TP_H

#include <trace/tracepoint.h>

TRACE_EVENT(sessions_tp_tick,
  TP_PROTO(unsigned n, const char* label),
  TP_ARGS(n, label),
  TP_STRUCT__entry(__field(unsigned, n) __string(label, label)),
  TP_fast_assign(__entry->n = n; __assign_str(label, label);),
  TP_printk("n=%u label=%s", __entry->n, __get_str(label)))

#endif /* SESSIONS_TP_H */

#undef TRACE_INCLUDE_PATH
#define TRACE_INCLUDE_PATH engine
#undef TRACE_INCLUDE_FILE
#define TRACE_INCLUDE_FILE sessions_tp
#include <trace/define_trace.h>
