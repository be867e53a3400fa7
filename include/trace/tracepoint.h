/* Public API: typed static tracepoints, the Linux kernel's TRACE_EVENT() for
 * user-space C11 and C++17. docs/trace-event.md is the reference.
 *
 * An event header (see examples/tracepoints/):
 *
 *   #undef TRACE_SYSTEM
 *   #define TRACE_SYSTEM net                  // the trace category of its events
 *   #if !defined(NET_TRACE_H) || defined(TRACE_HEADER_MULTI_READ)
 *   #define NET_TRACE_H
 *   #include <trace/tracepoint.h>
 *   TRACE_EVENT(net_send, TP_PROTO(...), TP_ARGS(...), TP_STRUCT__entry(...),
 *               TP_fast_assign(...), TP_printk(...))
 *   #endif
 *   #undef TRACE_INCLUDE_PATH
 *   #undef TRACE_INCLUDE_FILE
 *   #define TRACE_INCLUDE_PATH .              // searched on the include path
 *   #define TRACE_INCLUDE_FILE net_trace
 *   #include <trace/define_trace.h>           // outside the guard
 *
 * Every file that includes it gets `static inline void trace_net_send(...)`,
 * `trace_net_send_enabled()` and the static record functions they inline;
 * exactly one .c or .cc file defines CREATE_TRACE_POINTS, which defines the
 * descriptors and formats (a second one is a link error: multiple
 * definition). With
 * NTRACE every trace_<name>() compiles to nothing, its arguments still
 * type-checked against TP_PROTO.
 *
 * This header is read once for its fixed part, and again (its second part)
 * every time an event header is read in the declaring stage: the TRACE_EVENT
 * family below is defined only while undefined, as in the kernel, because
 * define_trace.h redefines it for each of its stages. */
#ifndef TRACE_TRACEPOINT_H_
#define TRACE_TRACEPOINT_H_

#include "trace/internal/event_args.h" /* TRACE_INTERNAL_NUM_ITEMS */
#include "trace/internal/tracepoint_types.h"

/* The six parts of a definition; PROTO and ARGS are lists. */
#define TP_PROTO(...) __VA_ARGS__
#define TP_ARGS(...) __VA_ARGS__
#define TP_STRUCT__entry(...) __VA_ARGS__
#define TP_fast_assign(...) __VA_ARGS__
#define TP_printk(fmt, ...) fmt, ##__VA_ARGS__
#define TP_CONDITION(...) __VA_ARGS__
#define TRACE_INTERNAL_TP_PARAMS(...) __VA_ARGS__

#define TRACE_INTERNAL_TP_STR_(...) #__VA_ARGS__
#define TRACE_INTERNAL_TP_STR(...) TRACE_INTERNAL_TP_STR_(__VA_ARGS__)

/* Compile-time checks every definition passes in the declaring stage (the
 * first error a mistake gives). `elements` is TP_STRUCT__entry with every
 * known element macro expanded to nothing: anything left is unknown. */
#define TRACE_INTERNAL_TP_CHECKS(name, proto, args, elements)                  \
  TRACE_INTERNAL_TP_STATIC_ASSERT(                                             \
      sizeof(TRACE_INTERNAL_TP_STR(elements)) == 1,                            \
      "TRACE_EVENT " #name                                                     \
      ": TP_STRUCT__entry holds something that is not an element macro "       \
      "(__field, __field_struct, __array, __dynamic_array, __string)");        \
  TRACE_INTERNAL_TP_STATIC_ASSERT(                                             \
      TRACE_INTERNAL_NUM_ITEMS(_, proto) == TRACE_INTERNAL_NUM_ITEMS(_, args), \
      "TRACE_EVENT " #name ": TP_ARGS must name every parameter of TP_PROTO, in order")

#ifdef __cplusplus
#define TRACE_INTERNAL_TP_EXTERN_C extern "C"
#else
#define TRACE_INTERNAL_TP_EXTERN_C extern
#endif

#endif /* TRACE_TRACEPOINT_H_ */

/* ---- the declaring stage (re-read until define_trace.h redefines it) ---- */
#ifndef TRACE_EVENT

#ifndef TRACE_SYSTEM
#error \
    "define TRACE_SYSTEM (the events' group and trace category) before including <trace/tracepoint.h>"
#endif

/* Element macros expand to nothing here (the check above sees the rest). */
#undef __field
#undef __field_struct
#undef __array
#undef __dynamic_array
#undef __string
#define __field(type, item)
#define __field_struct(type, item)
#define __array(type, item, len)
#define __dynamic_array(type, item, len)
#define __string(item, src)

#define DECLARE_EVENT_CLASS(class_name, proto, args, tstruct, assign, print) \
  TRACE_INTERNAL_TP_CHECKS(class_name, TRACE_INTERNAL_TP_PARAMS(proto),      \
                           TRACE_INTERNAL_TP_PARAMS(args), tstruct);

#ifndef NTRACE
/* trace_<name>() calls its class's record function, which define_trace.h
 * defines further down in this same translation unit (static inline, so
 * the call site writes the record itself: no call into another file). */
#define TRACE_INTERNAL_TP_DECLARE(class_name, name, proto, args, tstruct, cond)                   \
  TRACE_INTERNAL_TP_CHECKS(name, TRACE_INTERNAL_TP_PARAMS(proto), TRACE_INTERNAL_TP_PARAMS(args), \
                           tstruct);                                                              \
  TRACE_INTERNAL_TP_EXTERN_C trace_tracepoint_t trace_internal_tp_##name;                         \
  static inline void trace_internal_tp_do_##class_name(trace_tracepoint_t* trace_internal_tp,     \
                                                       proto);                                    \
  static inline void trace_##name(proto) {                                                        \
    if (__builtin_expect(trace_internal_tp_active(&trace_internal_tp_##name), 0) && (cond))       \
      trace_internal_tp_do_##class_name(&trace_internal_tp_##name, args);                         \
  }                                                                                               \
  static inline bool trace_##name##_enabled(void) {                                               \
    return trace_internal_tp_active(&trace_internal_tp_##name) &&                                 \
           trace_engine__tp_enabled(&trace_internal_tp_##name);                                   \
  }
#else
/* NTRACE: the call stays in `if (0)` so TP_ARGS is checked against TP_PROTO,
 * but nothing is emitted and no symbol is referenced. */
#define TRACE_INTERNAL_TP_DECLARE(class_name, name, proto, args, tstruct, cond)                   \
  TRACE_INTERNAL_TP_CHECKS(name, TRACE_INTERNAL_TP_PARAMS(proto), TRACE_INTERNAL_TP_PARAMS(args), \
                           tstruct);                                                              \
  TRACE_INTERNAL_TP_EXTERN_C void trace_internal_tp_check_##name(proto);                          \
  static inline void trace_##name(proto) {                                                        \
    if (0 && (cond)) trace_internal_tp_check_##name(args);                                        \
  }                                                                                               \
  static inline bool trace_##name##_enabled(void) { return false; }
#endif

/* Only the declaring stage needs the class's element list: the kernel's
 * DEFINE_EVENT does not repeat it, so the check runs on TRACE_EVENT and
 * DECLARE_EVENT_CLASS only (a DEFINE_EVENT passes an empty list). */
#define DEFINE_EVENT(class_name, name, proto, args)                            \
  TRACE_INTERNAL_TP_DECLARE(class_name, name, TRACE_INTERNAL_TP_PARAMS(proto), \
                            TRACE_INTERNAL_TP_PARAMS(args), , 1)
#define DEFINE_EVENT_CONDITION(class_name, name, proto, args, cond)            \
  TRACE_INTERNAL_TP_DECLARE(class_name, name, TRACE_INTERNAL_TP_PARAMS(proto), \
                            TRACE_INTERNAL_TP_PARAMS(args), , TRACE_INTERNAL_TP_PARAMS(cond))
#define TRACE_EVENT(name, proto, args, tstruct, assign, print)           \
  TRACE_INTERNAL_TP_DECLARE(name, name, TRACE_INTERNAL_TP_PARAMS(proto), \
                            TRACE_INTERNAL_TP_PARAMS(args), tstruct, 1)
#define TRACE_EVENT_CONDITION(name, proto, args, cond, tstruct, assign, print) \
  TRACE_INTERNAL_TP_DECLARE(name, name, TRACE_INTERNAL_TP_PARAMS(proto),       \
                            TRACE_INTERNAL_TP_PARAMS(args), tstruct,           \
                            TRACE_INTERNAL_TP_PARAMS(cond))

#endif /* TRACE_EVENT */

/* ---- a fresh read of an event header ----
 * Set each time an event header's guarded body includes this file outside
 * define_trace.h's re-reads (TRACE_INTERNAL_TP_REREAD, private to it, so
 * that a user's TRACE_HEADER_MULTI_READ changes nothing here), so that the
 * define_trace.h ending that header
 * expands the record functions once per translation unit, and not again
 * when the header is included a second time (its body then skipped). */
#ifndef TRACE_INTERNAL_TP_REREAD
#ifdef TRACE_INTERNAL_TP_FRESH
/* The last fresh read has not reached its define_trace.h yet: this is an
 * event header inside another one's guarded part, where it would also have
 * changed TRACE_SYSTEM under the outer header's events. */
#error \
    "an event header includes another event header (or <trace/tracepoint.h> twice before its <trace/define_trace.h>): include each event header from the .c file instead"
#endif
#define TRACE_INTERNAL_TP_FRESH
#endif
