/* Not part of the public API: the sample archive, which holds every FXT
 * record type and every argument type, with inline and indexed strings and
 * threads, two providers and a buffer-overflow provider event. Used by
 * `trace gen-sample`, the tests and the benchmarks. */
#ifndef FXTRACE_TRACE_SAMPLE_H_
#define FXTRACE_TRACE_SAMPLE_H_

#include <stdint.h>

#include "fxt/fxt_buffer.h"

/* Appends the sample archive to `out`: the magic-number record, then
 * provider sections. With repeat > 1 the event section of the first provider
 * is repeated (timestamps advancing), for large inputs; repeat 0 counts as 1.
 * Returns 0, or -1 when out of memory. */
int sample_archive__build(fxt_buffer_t* out, uint64_t repeat);

#endif /* FXTRACE_TRACE_SAMPLE_H_ */
