/* Instantiates tests/tracepoint/tp_test.h (C). */
#define CREATE_TRACE_POINTS
#include "tracepoint/tp_test.h"
