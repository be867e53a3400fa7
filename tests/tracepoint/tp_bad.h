/* TRACE_EVENT() definitions keep the kernel's layout, one part a line: */
/* clang-format off */
/* Event definitions for test_tp_compile.sh: each CASE_* is one mistake (or
 * none: CASE_OK). Read by tp_bad.c, with and without CREATE_TRACE_POINTS. */
#ifndef CASE_NO_SYSTEM
#undef TRACE_SYSTEM
#define TRACE_SYSTEM tp_bad
#endif

#if !defined(TP_BAD_H) || defined(TRACE_HEADER_MULTI_READ)
#define TP_BAD_H
#include <trace/tracepoint.h>

#if defined(CASE_OK) || defined(CASE_NO_SYSTEM) || defined(CASE_TYPE)
TRACE_EVENT(tp_bad_event,
  TP_PROTO(int fd, const char* peer, size_t len),
  TP_ARGS(fd, peer, len),
  TP_STRUCT__entry(__field(int, fd) __string(peer, peer) __field(size_t, len)),
  TP_fast_assign(__entry->fd = fd; __assign_str(peer, peer); __entry->len = len;),
  TP_printk("fd=%d peer=%s len=%zu", __entry->fd, __get_str(peer), __entry->len))
#endif

#ifdef CASE_OK /* the limit: 15 fields */
TRACE_EVENT(tp_bad_fifteen,
  TP_PROTO(int a),
  TP_ARGS(a),
  TP_STRUCT__entry(__field(int, f1) __field(int, f2) __field(int, f3) __field(int, f4)
                   __field(int, f5) __field(int, f6) __field(int, f7) __field(int, f8)
                   __field(int, f9) __field(int, f10) __field(int, f11) __field(int, f12)
                   __field(int, f13) __field(int, f14) __string(f15, "x")),
  TP_fast_assign(__entry->f1 = a; __assign_str(f15, "x");),
  TP_printk("f1=%d", __entry->f1))
#endif

#ifdef CASE_ARGS_COUNT
TRACE_EVENT(tp_bad_event,
  TP_PROTO(int fd, size_t len),
  TP_ARGS(fd),
  TP_STRUCT__entry(__field(int, fd)),
  TP_fast_assign(__entry->fd = fd;),
  TP_printk("fd=%d", __entry->fd))
#endif

#ifdef CASE_ARGS_NAME
TRACE_EVENT(tp_bad_event,
  TP_PROTO(int fd, size_t len),
  TP_ARGS(fd, lenn),
  TP_STRUCT__entry(__field(int, fd)),
  TP_fast_assign(__entry->fd = fd;),
  TP_printk("fd=%d", __entry->fd))
#endif

#ifdef CASE_UNKNOWN_ELEMENT
TRACE_EVENT(tp_bad_event,
  TP_PROTO(int fd),
  TP_ARGS(fd),
  TP_STRUCT__entry(__field(int, fd) __feild(int, other)),
  TP_fast_assign(__entry->fd = fd;),
  TP_printk("fd=%d", __entry->fd))
#endif

#ifdef CASE_TOO_MANY
TRACE_EVENT(tp_bad_event,
  TP_PROTO(int a),
  TP_ARGS(a),
  TP_STRUCT__entry(__field(int, f1) __field(int, f2) __field(int, f3) __field(int, f4)
                   __field(int, f5) __field(int, f6) __field(int, f7) __field(int, f8)
                   __field(int, f9) __field(int, f10) __field(int, f11) __field(int, f12)
                   __field(int, f13) __field(int, f14) __field(int, f15) __field(int, f16)),
  TP_fast_assign(__entry->f1 = a;),
  TP_printk("f1=%d", __entry->f1))
#endif

#endif /* TP_BAD_H */

#undef TRACE_INCLUDE_PATH
#undef TRACE_INCLUDE_FILE
#define TRACE_INCLUDE_FILE tp_bad
#include <trace/define_trace.h>
