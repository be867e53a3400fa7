/* Instantiates tests/tracepoint/tp_test.h (C), in the late form: the header
 * was read (twice) before CREATE_TRACE_POINTS, as when another header of
 * this file had included it, so define_trace.h adds only the formats and
 * descriptors to the record functions of the first read. test_tracepoint
 * records through all of it. */
#include "tracepoint/tp_test.h"
#define CREATE_TRACE_POINTS
#include "tracepoint/tp_test.h"
