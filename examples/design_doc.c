/* The design document's C example (OVERVIEW.md), unchanged, in a program.
 *
 *     cc design_doc.c $(pkg-config --cflags --libs fxtrace) -o design_doc
 *     FXTRACE_OUTPUT=design_doc.fxt ./design_doc && trace dump design_doc.fxt
 */
#include <trace-provider/provider.h>
#include <trace/event.h>

void DoSomething(int a, const char* b) {
  TRACE_DURATION("example", "DoSomething", "a", TA_INT32(a), "b", TA_STRING(b));
  /* ... the work being measured ... */
}

int main(void) {
  trace_provider_t* provider = trace_provider_create_with_name("design_doc");
  DoSomething(42, "hello");
  trace_provider_destroy(provider); /* finishes the archive */
  return 0;
}
