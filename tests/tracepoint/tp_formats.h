/* TRACE_EVENT() definitions keep the kernel's layout, one part a line: */
/* clang-format off */
/* An event whose format text is over the engine's 32000-byte bound
 * (src/engine/tracepoints.c, FORMAT_MAX): its format is never written, its
 * events are (test_tp_formats.c). */
#undef TRACE_SYSTEM
#define TRACE_SYSTEM tp_formats

#if !defined(TP_FORMATS_H) || defined(TRACE_HEADER_MULTI_READ)
#define TP_FORMATS_H
#include <trace/tracepoint.h>

/* 10, 100, 1000, 10000 and 40000 bytes of print format */
#define TP_FORMATS_10 "long text "
#define TP_FORMATS_100 TP_FORMATS_10 TP_FORMATS_10 TP_FORMATS_10 TP_FORMATS_10 TP_FORMATS_10 \
  TP_FORMATS_10 TP_FORMATS_10 TP_FORMATS_10 TP_FORMATS_10 TP_FORMATS_10
#define TP_FORMATS_1000 TP_FORMATS_100 TP_FORMATS_100 TP_FORMATS_100 TP_FORMATS_100 \
  TP_FORMATS_100 TP_FORMATS_100 TP_FORMATS_100 TP_FORMATS_100 TP_FORMATS_100 TP_FORMATS_100
#define TP_FORMATS_10000 TP_FORMATS_1000 TP_FORMATS_1000 TP_FORMATS_1000 TP_FORMATS_1000 \
  TP_FORMATS_1000 TP_FORMATS_1000 TP_FORMATS_1000 TP_FORMATS_1000 TP_FORMATS_1000 TP_FORMATS_1000
#define TP_FORMATS_40000 TP_FORMATS_10000 TP_FORMATS_10000 TP_FORMATS_10000 TP_FORMATS_10000

TRACE_EVENT(tp_formats_long,
  TP_PROTO(int v),
  TP_ARGS(v),
  TP_STRUCT__entry(__field(int, v)),
  TP_fast_assign(__entry->v = v;),
  TP_printk("v=%d " TP_FORMATS_40000, __entry->v))

#endif /* TP_FORMATS_H */

#undef TRACE_INCLUDE_PATH
#undef TRACE_INCLUDE_FILE
#define TRACE_INCLUDE_PATH tracepoint
#define TRACE_INCLUDE_FILE tp_formats
#include <trace/define_trace.h>
