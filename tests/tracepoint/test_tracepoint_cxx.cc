/* TRACE_EVENT() in C++17 (the header and its CREATE_TRACE_POINTS file both
 * compiled as C++): see tp_check.inc. */
#include "tp_check.inc"
