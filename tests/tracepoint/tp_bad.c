/* test_tp_compile.sh: tp_bad.h instantiated (CREATE_TRACE_POINTS unless
 * PLAIN) and called. TWICE reads it twice first (with LATE_CREATE, then
 * defines CREATE_TRACE_POINTS and reads it a third time). */
#ifdef TWICE
#include "tp_bad.h"
#ifdef LATE_CREATE
#define CREATE_TRACE_POINTS
#include "tp_bad.h"
#endif
#else
#ifndef PLAIN
#define CREATE_TRACE_POINTS
#endif
#include "tp_bad.h"
#endif

#ifdef CASE_TYPE
struct not_an_int {
  int x;
};
#endif

int tp_bad_user(void);
int tp_bad_user(void) {
#if defined(CASE_OK) || defined(CASE_NO_SYSTEM)
  trace_tp_bad_event(1, "peer", 3);
  trace_tp_bad_fifteen(1);
  return trace_tp_bad_event_enabled();
#elif defined(CASE_TYPE)
  struct not_an_int v = {1};
  trace_tp_bad_event(v, "peer", 3); /* a type error, even under NTRACE */
  return 0;
#else
  return 0;
#endif
}
