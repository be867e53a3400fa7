/* Instantiates tests/tracepoint/tp_formats.h. */
#define CREATE_TRACE_POINTS
#include "tracepoint/tp_formats.h"
