/* TRACE_EVENT() definitions keep the kernel's layout, one part a line: */
/* clang-format off */
/* The tests' event header: every element macro, every scalar kind and every
 * print helper (tests/tracepoint/tp_check.inc checks them). */
#undef TRACE_SYSTEM
#define TRACE_SYSTEM tp_test

#ifndef TP_TEST_TYPES_H
#define TP_TEST_TYPES_H
#include <stdint.h>
struct tp_test_pair {
  int16_t a;
  uint8_t b;
};
#endif

#if !defined(TP_TEST_H) || defined(TRACE_HEADER_MULTI_READ)
#define TP_TEST_H

#include <trace/tracepoint.h>

TRACE_EVENT(tp_test_ints,
  TP_PROTO(signed char c, short s, int i, long l, unsigned char uc, unsigned short us,
           unsigned u, unsigned long long ull, bool b),
  TP_ARGS(c, s, i, l, uc, us, u, ull, b),
  TP_STRUCT__entry(__field(signed char, c) __field(short, s) __field(int, i) __field(long, l)
                   __field(unsigned char, uc) __field(unsigned short, us) __field(unsigned, u)
                   __field(unsigned long long, ull) __field(bool, b)),
  TP_fast_assign(__entry->c = c; __entry->s = s; __entry->i = i; __entry->l = l;
                 __entry->uc = uc; __entry->us = us; __entry->u = u; __entry->ull = ull;
                 __entry->b = b;),
  TP_printk("c=%hhd s=%hd i=%d l=%ld uc=%hhu us=%hu u=%u ull=%llu b=%d x=%#x o=%o X=%08X w=[%-6d]",
            __entry->c, __entry->s, __entry->i, __entry->l, __entry->uc, __entry->us, __entry->u,
            __entry->ull, __entry->b, __entry->u, __entry->u, __entry->u, __entry->i))

TRACE_EVENT(tp_test_fp,
  TP_PROTO(double d, float f, const void* p),
  TP_ARGS(d, f, p),
  TP_STRUCT__entry(__field(double, d) __field(float, f) __field(const void*, p)),
  TP_fast_assign(__entry->d = d; __entry->f = f; __entry->p = p;),
  TP_printk("d=%f e=%e g=%g f=%.2f p=%p", __entry->d, __entry->d, __entry->d, __entry->f,
            __entry->p))

TRACE_EVENT(tp_test_strs,
  TP_PROTO(const char* name, const char* comm, char ch),
  TP_ARGS(name, comm, ch),
  TP_STRUCT__entry(__string(name, name) __array(char, comm, 16) __field(char, ch)),
  TP_fast_assign(__assign_str(name, name);
                 memset(__entry->comm, 0, sizeof(__entry->comm));
                 memcpy(__entry->comm, comm, strnlen(comm, sizeof(__entry->comm)));
                 __entry->ch = ch;),
  TP_printk("name=%s comm=%s ch=%c w=[%10s] p=[%.3s]", __get_str(name), __entry->comm,
            __entry->ch, __get_str(name), __get_str(name)))

TRACE_EVENT(tp_test_helpers,
  TP_PROTO(unsigned flags, int state, const unsigned char* buf, unsigned n,
           struct tp_test_pair pair),
  TP_ARGS(flags, state, buf, n, pair),
  TP_STRUCT__entry(__field(unsigned, flags) __field(int, state) __dynamic_array(unsigned char, buf, n)
                   __array(int, quad, 4) __field_struct(struct tp_test_pair, pair)),
  TP_fast_assign(__entry->flags = flags; __entry->state = state;
                 memcpy(__get_dynamic_array(buf), buf, n);
                 for (int k = 0; k < 4; k++) __entry->quad[k] = -k;
                 __entry->pair = pair;),
  TP_printk("flags=%s state=%s hex=%s hexstr=%s len=%u",
            __print_flags(__entry->flags, "|", {0x1, "A"}, {0x2, "B"}, {0x4, "C"}),
            __print_symbolic(__entry->state, {0, "zero"}, {1, "one"}),
            __print_hex(__get_dynamic_array(buf), __get_dynamic_array_len(buf)),
            __print_hex_str(__get_dynamic_array(buf), 2), __get_dynamic_array_len(buf)))

/* No field at all. */
TRACE_EVENT(tp_test_none,
  TP_PROTO(int unused),
  TP_ARGS(unused),
  TP_STRUCT__entry(),
  TP_fast_assign((void)unused;),
  TP_printk("no fields"))

/* A print format this reader cannot evaluate: the fallback. */
TRACE_EVENT(tp_test_fallback,
  TP_PROTO(int v),
  TP_ARGS(v),
  TP_STRUCT__entry(__field(int, v) __array(short, pair, 2)),
  TP_fast_assign(__entry->v = v; __entry->pair[0] = -1; __entry->pair[1] = 2;),
  TP_printk("twice=%d", __entry->v * 2))

DECLARE_EVENT_CLASS(tp_test_class,
  TP_PROTO(unsigned id, const char* what),
  TP_ARGS(id, what),
  TP_STRUCT__entry(__field(unsigned, id) __string(what, what)),
  TP_fast_assign(__entry->id = id; __assign_str(what, what);),
  TP_printk("id=%u what=%s", __entry->id, __get_str(what)))
DEFINE_EVENT(tp_test_class, tp_test_open, TP_PROTO(unsigned id, const char* what),
             TP_ARGS(id, what))
DEFINE_EVENT(tp_test_class, tp_test_close, TP_PROTO(unsigned id, const char* what),
             TP_ARGS(id, what))
DEFINE_EVENT_CONDITION(tp_test_class, tp_test_odd, TP_PROTO(unsigned id, const char* what),
                       TP_ARGS(id, what), TP_CONDITION(id % 2 == 1))

TRACE_EVENT_CONDITION(tp_test_positive,
  TP_PROTO(int v),
  TP_ARGS(v),
  TP_CONDITION(v > 0),
  TP_STRUCT__entry(__field(int, v)),
  TP_fast_assign(__entry->v = v;),
  TP_printk("v=%d", __entry->v))

#endif /* TP_TEST_H */

#undef TRACE_INCLUDE_PATH
#undef TRACE_INCLUDE_FILE
#define TRACE_INCLUDE_PATH tracepoint
#define TRACE_INCLUDE_FILE tp_test
#include <trace/define_trace.h>
