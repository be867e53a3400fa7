/* Instantiates tests/tracepoint/tp_test.h, compiled as C++. */
#define CREATE_TRACE_POINTS
#include "tracepoint/tp_test.h"
