/* clang-format off */
/* test_buffering_modes' TRACE_EVENT(): a record whose assignment runs code
 * that traces (review_nested_fill, defined by the test). */
#undef TRACE_SYSTEM
#define TRACE_SYSTEM reviewsys

#if !defined(REVIEW_TP_H) || defined(TRACE_HEADER_MULTI_READ)
#define REVIEW_TP_H

#include <trace/tracepoint.h>

unsigned review_nested_fill(unsigned n);

TRACE_EVENT(review_tp_outer,
  TP_PROTO(unsigned n),
  TP_ARGS(n),
  TP_STRUCT__entry(__field(unsigned, n)),
  TP_fast_assign(__entry->n = review_nested_fill(n);),
  TP_printk("n=%u", __entry->n))

#endif /* REVIEW_TP_H */

#undef TRACE_INCLUDE_PATH
#define TRACE_INCLUDE_PATH engine
#undef TRACE_INCLUDE_FILE
#define TRACE_INCLUDE_FILE review_tp
#include <trace/define_trace.h>
