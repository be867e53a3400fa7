/* The shared object of test_tp_dlopen.c: instantiates tp_dso.h and records
 * its event from tp_dso_emit(). */
#define CREATE_TRACE_POINTS
#include "tracepoint/tp_dso.h"

void tp_dso_emit(int n);
__attribute__((visibility("default"))) void tp_dso_emit(int n) { trace_tp_dso_hello(n, "dso"); }
