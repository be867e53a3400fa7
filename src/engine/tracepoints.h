/* Not part of the public API: the engine's side of TRACE_EVENT()
 * (tracepoints.c): the registered events and their formats. */
#ifndef FXTRACE_ENGINE_TRACEPOINTS_H_
#define FXTRACE_ENGINE_TRACEPOINTS_H_

#include <stddef.h>

/* Engine thread of `session`, after its start: writes the format of every
 * registered event whose category it enables into its durable buffer (once
 * per trace). */
void tracepoints__on_start(unsigned session);

/* Calls fn(system, arg) once for every distinct TRACE_SYSTEM registered so
 * far (for a provider's known categories). */
void tracepoints__for_each_system(void (*fn)(const char* system, void* arg), void* arg);

#endif /* FXTRACE_ENGINE_TRACEPOINTS_H_ */
