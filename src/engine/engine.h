/* Not part of the public API: what the engine offers the other components of
 * fxtrace (the provider library) beyond <trace-engine/handler.h>. */
#ifndef FXTRACE_ENGINE_ENGINE_H_
#define FXTRACE_ENGINE_ENGINE_H_

#include <stdbool.h>
#include <stdint.h>

#include "trace-engine/handler.h"

/* trace_engine_initialize() for a buffer known to be zero-filled (a fresh
 * memfd or a new file): skips clearing it, so pages are touched only as
 * records reach them. */
int trace_engine__session_initialize_zeroed(unsigned session, trace_handler_t* handler,
                                            trace_buffering_mode_t mode, void* buffer, size_t size);
int trace_engine__initialize_zeroed(trace_handler_t* handler, trace_buffering_mode_t mode,
                                    void* buffer, size_t size);

/* A start the process waits for (pending.c): the provider's registration
 * wait ran out before its engine started, so the events until the start
 * (or engine__end_pending) are counted as missed and become dropped records
 * of the trace that starts. begin is a no-op while a trace is started. */
void engine__begin_pending(void);
/* The awaited start came (it took the count) or will not: trace_ran says
 * whether a trace ran that this process belonged to (it stopped before
 * starting here, or the process leaves it); its missed events are then
 * added to the buffer's dropped count, if a buffer was handed over. */
void engine__end_pending(bool trace_ran);
/* The events counted so far while a start is pending (0 when none is). */
uint64_t engine__pending_count(void);
bool engine__pending_active(void);

#endif /* FXTRACE_ENGINE_ENGINE_H_ */
