/* For test_blob_readers.py: for each size given, TRACE_BLOB_ATTACHMENT and
 * TRACE_BLOB_EVENT (one int32 argument "k" = 7) of that many bytes, each
 * followed by an instant ("after-attachment", "after-event") whose argument
 * "size" is the size; then an instant "end". Byte i of every blob is
 * (i * 131 + (i >> 9)) & 0xff. Traced by FXTRACE_OUTPUT (file mode) or
 * `trace record`. With BLOB_WRITER_KILL set, it kills itself with SIGKILL
 * instead of finishing the trace. */
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "trace-provider/provider.h"
#include "trace/event.h"

static uint8_t g_blob[1 << 19];

int main(int argc, char** argv) {
  for (size_t i = 0; i < sizeof(g_blob); i++) g_blob[i] = (uint8_t)(i * 131 + (i >> 9));
  trace_provider_t* provider = trace_provider_create_with_name("blob_writer");
  if (!provider) {
    fputs("blob_writer: trace_provider_create_with_name failed\n", stderr);
    return 1;
  }
  for (int i = 1; i < argc; i++) {
    size_t size = strtoul(argv[i], NULL, 10);
    if (size > sizeof(g_blob)) {
      fprintf(stderr, "blob_writer: %zu bytes is more than %zu\n", size, sizeof(g_blob));
      return 2;
    }
    TRACE_BLOB_ATTACHMENT("blob", "attachment", g_blob, size);
    TRACE_INSTANT("blob", "after-attachment", TRACE_SCOPE_THREAD, "size", (uint64_t)size);
    TRACE_BLOB_EVENT("blob", "event", g_blob, size, "k", (int32_t)7);
    TRACE_INSTANT("blob", "after-event", TRACE_SCOPE_THREAD, "size", (uint64_t)size);
  }
  TRACE_INSTANT("blob", "end", TRACE_SCOPE_THREAD);
  if (getenv("BLOB_WRITER_KILL")) raise(SIGKILL); /* leaves the live buffer to recover */
  trace_provider_destroy(provider);
  return 0;
}
