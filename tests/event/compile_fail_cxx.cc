// C++ compile-fail case for test_compile_fail.sh: TRACE_DURATION keeps its
// string values by reference until the scope ends, so a temporary
// std::string is rejected; a named one (the control) is fine.
#include <string>

#include "trace/event.h"

void compile_fail_cxx_case(const std::string& name) {
#if defined(CASE_OK)
  std::string copy = name + "!";
  TRACE_DURATION("c", "n", "s", copy, "t", name);
  TRACE_INSTANT("c", "n", TRACE_SCOPE_THREAD, "s", name + "!");  // fine: written at once
#elif defined(CASE_TEMPORARY_STRING)
  TRACE_DURATION("c", "n", "s", name + "!");
#else
#error "no CASE_* defined"
#endif
}
