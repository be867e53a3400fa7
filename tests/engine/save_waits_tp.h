/* clang-format off */
/* test_save_waits' TRACE_EVENT(): a record whose assignment runs code that
 * traces (nested_fill, defined by the test). */
#undef TRACE_SYSTEM
#define TRACE_SYSTEM save_waits

#if !defined(SAVE_WAITS_TP_H) || defined(TRACE_HEADER_MULTI_READ)
#define SAVE_WAITS_TP_H

#include <trace/tracepoint.h>

unsigned nested_fill(unsigned n);

TRACE_EVENT(save_waits_outer,
  TP_PROTO(unsigned n),
  TP_ARGS(n),
  TP_STRUCT__entry(__field(unsigned, n)),
  TP_fast_assign(__entry->n = nested_fill(n);),
  TP_printk("n=%u", __entry->n))

#endif /* SAVE_WAITS_TP_H */

#undef TRACE_INCLUDE_PATH
#define TRACE_INCLUDE_PATH engine
#undef TRACE_INCLUDE_FILE
#define TRACE_INCLUDE_FILE save_waits_tp
#include <trace/define_trace.h>
