/* Public API: include at the end of every TRACE_EVENT() header, outside its
 * include guard (see <trace/tracepoint.h>). After the header's first read in
 * a file it re-reads the header once per stage
 * (trace/internal/tracepoint_stages.h) to define the record functions there
 * (static, so every trace_<name>() call writes its record inline); in the
 * one file that defines CREATE_TRACE_POINTS also the formats and the
 * descriptors. Read after a second include of the header, it does nothing.
 *
 * The header is found as TRACE_INCLUDE_PATH/TRACE_INCLUDE_FILE.h (the file
 * defaults to TRACE_SYSTEM; without a path, TRACE_INCLUDE_FILE.h) with the
 * quoted #include search: the directory of this file, then the include path
 * (-iquote, -I), as in the kernel, whose event headers set the path relative
 * to a directory given with -I. */
#ifdef TRACE_INTERNAL_TP_REREAD
/* A stage's re-read of an event header reaches this file once at its end;
 * a second time means that header includes another event header. */
#ifdef TRACE_INTERNAL_TP_REREAD_END
#error \
    "an event header includes another event header: include each event header from the .c file instead"
#endif
#define TRACE_INTERNAL_TP_REREAD_END
#else /* not in a re-read */

#ifdef NTRACE
#undef TRACE_INTERNAL_TP_FRESH /* nothing to expand: the next header reads fresh */
#else
#if defined(TRACE_INTERNAL_TP_FRESH) || defined(CREATE_TRACE_POINTS)

#ifndef TRACE_SYSTEM
#error \
    "define TRACE_SYSTEM (the events' group and trace category) before including <trace/define_trace.h>"
#endif

/* Which stages run (tracepoint_stages.h): the record functions after each
 * fresh read of the header, in every file; the formats and descriptors in
 * the file that defines CREATE_TRACE_POINTS. */
#ifdef TRACE_INTERNAL_TP_FRESH
#undef TRACE_INTERNAL_TP_FRESH
#define TRACE_INTERNAL_TP_STAGES_RECORD
#endif
#ifdef CREATE_TRACE_POINTS
/* The re-reads include this file again: it must do nothing then. */
#undef CREATE_TRACE_POINTS
#define TRACE_INTERNAL_TP_STAGES_CREATE
#endif

#ifndef TRACE_INCLUDE_FILE
#define TRACE_INCLUDE_FILE TRACE_SYSTEM
#define TRACE_INTERNAL_TP_UNDEF_INCLUDE_FILE
#endif
#ifdef TRACE_INCLUDE_PATH
/* The tokens must stay adjacent: no spaces in the path. */
// clang-format off
#define TRACE_INTERNAL_TP_INCLUDE_(path, file) TRACE_INTERNAL_TP_STR(path/file.h)
// clang-format on
#define TRACE_INTERNAL_TP_INCLUDE TRACE_INTERNAL_TP_INCLUDE_(TRACE_INCLUDE_PATH, TRACE_INCLUDE_FILE)
#else
#define TRACE_INTERNAL_TP_INCLUDE_(file) TRACE_INTERNAL_TP_STR(file.h)
#define TRACE_INTERNAL_TP_INCLUDE TRACE_INTERNAL_TP_INCLUDE_(TRACE_INCLUDE_FILE)
#endif

#define TRACE_HEADER_MULTI_READ
#define TRACE_INTERNAL_TP_REREAD
#include "trace/internal/tracepoint_stages.h"
#undef TRACE_INTERNAL_TP_REREAD
#undef TRACE_INTERNAL_TP_REREAD_END
#undef TRACE_HEADER_MULTI_READ

#undef TRACE_INTERNAL_TP_INCLUDE_
#undef TRACE_INTERNAL_TP_INCLUDE
#ifdef TRACE_INTERNAL_TP_UNDEF_INCLUDE_FILE
#undef TRACE_INCLUDE_FILE
#undef TRACE_INTERNAL_TP_UNDEF_INCLUDE_FILE
#endif

#undef TRACE_INTERNAL_TP_STAGES_RECORD
#ifdef TRACE_INTERNAL_TP_STAGES_CREATE
#undef TRACE_INTERNAL_TP_STAGES_CREATE
/* Another event header may follow in this file. */
#define CREATE_TRACE_POINTS
#endif

#endif /* TRACE_INTERNAL_TP_FRESH || CREATE_TRACE_POINTS */
#endif /* NTRACE */
#endif /* TRACE_INTERNAL_TP_REREAD */
