/* TRACE_EVENT() in C11: see tp_check.inc. */
#include "tp_check.inc"
