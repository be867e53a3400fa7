/* Every macro of <trace/event.h> with NTRACE defined, and arguments with side
 * effects: test_ntrace.sh checks that the object file references no engine
 * symbol, and runs this program to show nothing was evaluated. The same file
 * compiled without NTRACE is the check's positive control. */
#ifndef NTRACE_CONTROL
#define NTRACE
#endif
#include <stdio.h>
#include <stdlib.h>

#include "trace/event.h"

static int side_effects;
static int touch(void) { return ++side_effects; }
static int never(void) {
  abort(); /* an argument that must not be evaluated */
}

static void every_macro(void)
#include "every_macro.inc"

/* OVERVIEW.md: "with #define NTRACE before the include,
 * TRACE_DURATION("example", "DoSomething"); produces nothing". */
static void DoSomething(int a, const char* b) {
  TRACE_DURATION("example", "DoSomething");
  TRACE_DURATION("example", "DoSomething", "a", TA_INT32(a), "b", TA_STRING(b));
  TRACE_INSTANT("example", "never", TRACE_SCOPE_THREAD, "x", never(), "y", TA_INT64(never()));
}

int main(void) {
  every_macro();
  DoSomething(1, "b");
  if (side_effects != 0) {
    fprintf(stderr, "NTRACE evaluated %d argument(s)\n", side_effects);
    return 1;
  }
  /* the statement forms work as single statements */
  if (side_effects == 0)
    TRACE_INSTANT("cat", "x", TRACE_SCOPE_THREAD, "v", never());
  else
    TRACE_COUNTER("cat", "y", 1, "v", never());
  printf("ok: no side effects\n");
  return 0;
}
