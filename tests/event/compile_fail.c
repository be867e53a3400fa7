/* Compile-fail cases for test_compile_fail.sh: compiled once per CASE, as C
 * and as C++; every case but CASE_OK must fail with its static_assert
 * message. CASE_OK is the control: the same shapes at their limits compile
 * cleanly with -Werror. */
#include "trace/event.h"

struct not_traceable {
  int x;
};

void compile_fail_case(int v, struct not_traceable s, const char* runtime_name) {
  (void)v;
  (void)s;
  (void)runtime_name;
#if defined(CASE_OK)
  TRACE_INSTANT("c", "n", TRACE_SCOPE_THREAD, "a1", v, "a2", v, "a3", v, "a4", v, "a5", v, "a6", v,
                "a7", v, "a8", v, "a9", v, "a10", v, "a11", v, "a12", v, "a13", v, "a14", v, "a15",
                v);
  TRACE_DURATION("c", "n", "a1", v, "a2", v, "a3", v, "a4", v, "a5", v, "a6", v, "a7", v, "a8", v,
                 "a9", v, "a10", v, "a11", v, "a12", v, "a13", v, "a14", v, "a15", v);
  TRACE_COUNTER("c", "n", 1, "a", v);
  TRACE_INSTANT("c", "n", TRACE_SCOPE_THREAD, "s", TA_INT32(s.x));
  /* alert names: a literal of 14 characters, and names known only at run
   * time (any length: cut when sent) */
  TRACE_ALERT("c", "fourteen_chars");
  TRACE_ALERT("c", runtime_name);
  {
    char buffer[64] = "a name far longer than fourteen characters";
    static const char kStatic[40] = "also longer than fourteen";
    TRACE_ALERT("c", buffer);
    TRACE_ALERT("c", kStatic);
    TRACE_ALERT("c", v ? "a" : "b");
  }
#elif defined(CASE_ALERT_NAME_TOO_LONG)
  TRACE_ALERT("c", "fifteen_chars__");
#elif defined(CASE_TOO_MANY)
  /* 16 pairs */
  TRACE_INSTANT("c", "n", TRACE_SCOPE_THREAD, "a1", v, "a2", v, "a3", v, "a4", v, "a5", v, "a6", v,
                "a7", v, "a8", v, "a9", v, "a10", v, "a11", v, "a12", v, "a13", v, "a14", v, "a15",
                v, "a16", v);
#elif defined(CASE_TOO_MANY_DURATION)
  TRACE_DURATION("c", "n", "a1", v, "a2", v, "a3", v, "a4", v, "a5", v, "a6", v, "a7", v, "a8", v,
                 "a9", v, "a10", v, "a11", v, "a12", v, "a13", v, "a14", v, "a15", v, "a16", v);
#elif defined(CASE_ODD)
  TRACE_INSTANT("c", "n", TRACE_SCOPE_THREAD, "a1", v, "a2");
#elif defined(CASE_ODD_COUNTER)
  TRACE_COUNTER("c", "n", 1, "a1");
#elif defined(CASE_ODD_DURATION)
  TRACE_DURATION("c", "n", "a1", v, "a2");
#elif defined(CASE_STRUCT_VALUE)
  TRACE_INSTANT("c", "n", TRACE_SCOPE_THREAD, "s", s);
#else
#error "no CASE_* defined"
#endif
}
