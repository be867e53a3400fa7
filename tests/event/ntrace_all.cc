// The C++ form of ntrace_all.c: every macro with NTRACE and side-effecting
// arguments, plus C++-only argument types (std::string, enums, nullptr).
#ifndef NTRACE_CONTROL
#define NTRACE
#endif
#include <cstdio>
#include <cstdlib>
#include <string>

#include "trace/event.h"

static int side_effects;
static int touch(void) { return ++side_effects; }
[[noreturn]] static int never() { abort(); }  // an argument that must not be evaluated

static void every_macro(void)
#include "every_macro.inc"

enum class Color : uint8_t { kRed = 1 };

// OVERVIEW.md's C++ example, with and without arguments.
static void DoSomething(int a, std::string b) {
  TRACE_DURATION("example", "DoSomething", "a", a, "b", b);
  TRACE_DURATION("example", "DoSomething");
  TRACE_INSTANT("example", "cxx", TRACE_SCOPE_THREAD, "s", std::string(touch(), 'x'), "c",
                Color::kRed, "n", nullptr, "sv", std::string_view(b), "never", never());
}

int main() {
  every_macro();
  DoSomething(1, "b");
  if (side_effects != 0) {
    fprintf(stderr, "NTRACE evaluated %d argument(s)\n", side_effects);
    return 1;
  }
  printf("ok: no side effects\n");
  return 0;
}
