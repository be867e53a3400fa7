/* Not part of the public API: what the engine offers the other components of
 * fxtrace (the provider library) beyond <trace-engine/handler.h>. */
#ifndef FXTRACE_ENGINE_ENGINE_H_
#define FXTRACE_ENGINE_ENGINE_H_

#include "trace-engine/handler.h"

/* trace_engine_initialize() for a buffer known to be zero-filled (a fresh
 * memfd or a new file): skips clearing it, so pages are touched only as
 * records reach them. */
int trace_engine__initialize_zeroed(trace_handler_t* handler, trace_buffering_mode_t mode,
                                    void* buffer, size_t size);

#endif /* FXTRACE_ENGINE_ENGINE_H_ */
