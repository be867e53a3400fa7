/* Instantiates the benchmark's TRACE_EVENT() headers. */
#define CREATE_TRACE_POINTS
#include "fxbench_events.h"

#include "fxbench_events_off.h"
