/* TRACE_EVENT() definitions keep the kernel's layout, one part a line: */
/* clang-format off */
/* An event defined in a shared object loaded with dlopen (test_tp_dlopen.c). */
#undef TRACE_SYSTEM
#define TRACE_SYSTEM tp_dso

#if !defined(TP_DSO_H) || defined(TRACE_HEADER_MULTI_READ)
#define TP_DSO_H
#include <trace/tracepoint.h>

TRACE_EVENT(tp_dso_hello,
  TP_PROTO(int n, const char* who),
  TP_ARGS(n, who),
  TP_STRUCT__entry(__field(int, n) __string(who, who)),
  TP_fast_assign(__entry->n = n; __assign_str(who, who);),
  TP_printk("n=%d who=%s", __entry->n, __get_str(who)))

#endif

#undef TRACE_INCLUDE_PATH
#undef TRACE_INCLUDE_FILE
#define TRACE_INCLUDE_PATH tracepoint
#define TRACE_INCLUDE_FILE tp_dso
#include <trace/define_trace.h>
