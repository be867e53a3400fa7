/* TRACE_EVENT() definitions keep the kernel's layout, one part a line: */
/* clang-format off */
/* The example's event header: every element macro and print helper of
 * <trace/tracepoint.h> (docs/trace-event.md). TRACE_SYSTEM is the category. */
#undef TRACE_SYSTEM
#define TRACE_SYSTEM tp_demo

#if !defined(TP_DEMO_H) || defined(TRACE_HEADER_MULTI_READ)
#define TP_DEMO_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <trace/tracepoint.h>

/* Types the events use: read once (the header itself is read once per
 * stage in the CREATE_TRACE_POINTS file), as in the kernel's headers. */
#ifndef TP_DEMO_TYPES_H
#define TP_DEMO_TYPES_H
struct tp_demo_point { /* recorded whole by __field_struct */
  int32_t x, y;
};
#endif

TRACE_EVENT(tp_demo_send,
  TP_PROTO(int fd, const char* peer, size_t len),
  TP_ARGS(fd, peer, len),
  TP_STRUCT__entry(__field(int, fd) __string(peer, peer) __field(size_t, len)),
  TP_fast_assign(__entry->fd = fd; __assign_str(peer, peer); __entry->len = len;),
  TP_printk("fd=%d peer=%s len=%zu", __entry->fd, __get_str(peer), __entry->len))

/* Every scalar kind: small signed and unsigned, 64-bit, bool, double,
 * float, pointer; printed with the matching conversions. */
TRACE_EVENT(tp_demo_scalars,
  TP_PROTO(signed char c, short s, unsigned char uc, unsigned short us, int64_t i64,
           uint64_t u64, bool b, double d, float f, const void* p),
  TP_ARGS(c, s, uc, us, i64, u64, b, d, f, p),
  TP_STRUCT__entry(__field(signed char, c) __field(short, s) __field(unsigned char, uc)
                   __field(unsigned short, us) __field(int64_t, i64) __field(uint64_t, u64)
                   __field(bool, b) __field(double, d) __field(float, f)
                   __field(const void*, p)),
  TP_fast_assign(__entry->c = c; __entry->s = s; __entry->uc = uc; __entry->us = us;
                 __entry->i64 = i64; __entry->u64 = u64; __entry->b = b; __entry->d = d;
                 __entry->f = f; __entry->p = p;),
  TP_printk("c=%d s=%hd uc=%u us=%x i64=%lld u64=%llu b=%d d=%.3f f=%g p=%p", __entry->c,
            __entry->s, __entry->uc, __entry->us, (long long)__entry->i64,
            (unsigned long long)__entry->u64, __entry->b, __entry->d, __entry->f, __entry->p))

/* Arrays: a fixed char array, a fixed int array, a dynamic byte array,
 * a struct; __print_flags, __print_symbolic, __print_hex. */
TRACE_EVENT(tp_demo_arrays,
  TP_PROTO(const char* comm, const uint8_t* bytes, size_t n, unsigned flags, int state,
           struct tp_demo_point pt),
  TP_ARGS(comm, bytes, n, flags, state, pt),
  TP_STRUCT__entry(__array(char, comm, 16) __array(int, quad, 4) __field(unsigned, flags)
                   __field(int, state) __field_struct(struct tp_demo_point, pt)
                   __dynamic_array(uint8_t, bytes, n)),
  TP_fast_assign(snprintf(__entry->comm, sizeof(__entry->comm), "%s", comm);
                 for (int i = 0; i < 4; i++) __entry->quad[i] = i * 10;
                 __entry->flags = flags; __entry->state = state; __entry->pt = pt;
                 memcpy(__get_dynamic_array(bytes), bytes, n);),
  TP_printk("comm=%s flags=%s state=%s bytes=%s", __entry->comm,
            __print_flags(__entry->flags, "|", {1, "READ"}, {2, "WRITE"}, {4, "SYNC"}),
            __print_symbolic(__entry->state, {0, "idle"}, {1, "busy"}, {2, "done"}),
            __print_hex(__get_dynamic_array(bytes), __get_dynamic_array_len(bytes))))

/* A class shared by two events, one of them conditional. */
DECLARE_EVENT_CLASS(tp_demo_io,
  TP_PROTO(unsigned id, long bytes),
  TP_ARGS(id, bytes),
  TP_STRUCT__entry(__field(unsigned, id) __field(long, bytes)),
  TP_fast_assign(__entry->id = id; __entry->bytes = bytes;),
  TP_printk("id=%u bytes=%ld", __entry->id, __entry->bytes))
DEFINE_EVENT(tp_demo_io, tp_demo_read, TP_PROTO(unsigned id, long bytes), TP_ARGS(id, bytes))
DEFINE_EVENT_CONDITION(tp_demo_io, tp_demo_write, TP_PROTO(unsigned id, long bytes),
                       TP_ARGS(id, bytes), TP_CONDITION(bytes > 0))

#endif /* TP_DEMO_H */

#undef TRACE_INCLUDE_PATH
#undef TRACE_INCLUDE_FILE
#define TRACE_INCLUDE_PATH .
#define TRACE_INCLUDE_FILE tp_demo
#include <trace/define_trace.h>
