/* TRACE_EVENT() example: records every kind of typed event once per
 * iteration. `trace dump` prints them through their TP_printk formats and
 * `trace formats` lists their formats.
 *
 *     FXTRACE_OUTPUT=tp.fxt ./tracepoints [N [PAUSE_MS]]    (file mode)
 *     trace record -o tp.fxt -- ./tracepoints [N]
 *     trace dump tp.fxt; trace formats tp.fxt */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <trace-provider/provider.h>

#include "tp_demo.h"

int main(int argc, char** argv) {
  int n = argc > 1 ? atoi(argv[1]) : 3;
  int pause_ms = argc > 2 ? atoi(argv[2]) : 0; /* between iterations */
  /* When a trace is already running (`trace record -- tracepoints`), the
   * manager starts this provider at once: wait for that (at most 1 s). */
  bool started = false;
  trace_provider_t* provider = trace_provider_create_synchronously("tracepoints", &started);
  for (int i = 0; started && !trace_tp_demo_send_enabled() && i < 1000; i++)
    nanosleep(&(struct timespec){0, 1000000}, NULL);
  static const uint8_t bytes[] = {0xde, 0xad, 0xbe, 0xef, 0x01};
  struct tp_demo_point pt = {3, -4};
  for (int i = 0; i < n; i++) {
    trace_tp_demo_send(i, "10.0.0.1:80", (size_t)(100 + i));
    trace_tp_demo_scalars((signed char)-5, (short)-300, 200, 65000, -((int64_t)1 << 40),
                          UINT64_MAX - (uint64_t)i, true, 3.25, 1.5f, (const void*)0x1234);
    trace_tp_demo_arrays("worker", bytes, sizeof(bytes), 5u, i % 3, pt);
    trace_tp_demo_read((unsigned)i, 4096);
    trace_tp_demo_write((unsigned)i, i % 2 ? 512 : 0); /* only when bytes > 0 */
    if (pause_ms > 0)
      nanosleep(&(struct timespec){pause_ms / 1000, (pause_ms % 1000) * 1000000L}, NULL);
  }
  trace_provider_destroy(provider);
  return 0;
}
