/* The one file that instantiates the example's events. */
#define CREATE_TRACE_POINTS
#include "tp_demo.h"
