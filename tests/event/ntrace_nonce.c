/* API.md §1: TRACE_NONCE() is not disabled by NTRACE; with NTRACE it must be
 * the only engine symbol an object references (test_ntrace.sh). */
#define NTRACE
#include <stdint.h>

#include "trace/event.h"

uint64_t ntrace_nonce_user(void) {
  TRACE_INSTANT("cat", "name", TRACE_SCOPE_THREAD, "id", TRACE_NONCE());
  if (TRACE_ENABLED() || TRACE_CATEGORY_ENABLED("cat")) return 0;
  return TRACE_NONCE();
}
