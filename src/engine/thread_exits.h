/* Not part of the public API: the names the engine's threads had when they
 * ended, so that file mode (src/provider/file_provider.c) can end its archive
 * with each thread's last name (docs/file-mode.md, "Names"), not the one it
 * had when it first wrote, and so that the stop can write the names its
 * threads have at the end (stop_names.h). Nothing on the
 * record path: a thread's name is read once, when it exits. */
#ifndef FXTRACE_ENGINE_THREAD_EXITS_H_
#define FXTRACE_ENGINE_THREAD_EXITS_H_

#include <stdbool.h>
#include <stdint.h>

#include "trace-engine/record_path.h"

/* How many ended threads are remembered per trace; past it the oldest are
 * forgotten (they keep the name they wrote with). */
enum { THREAD_EXITS_MAX = 4096 };

/* From the exiting thread itself, under its session's lock: remembers its
 * name now (and when) if it wrote in that session's current trace. */
void thread_exits__note(const trace_context_t* w);

/* Calls fn for each thread that wrote in the current trace: those that ended
 * (their name at the end) and those still running (their name when they
 * first wrote; alive: /proc has the newest). Takes engine.lock. */
void thread_exits__each(void (*fn)(void* arg, uint64_t tid, const char* name, int alive),
                        void* arg);

/* Calls fn, under the session's lock, for each thread that wrote in its
 * current trace and `renamed`: no longer has the name it wrote with (its thread
 * record's), or (false) still has it: those that ended, with their name and
 * the time (trace clock, ns) when they ended, then those still running, with
 * their name from /proc now and the current time. For the stop (engine
 * thread; reads /proc). */
typedef struct engine engine_t;
void thread_exits__each_at_end(engine_t* session, bool renamed,
                               void (*fn)(void* arg, uint64_t tid, const char* name, uint64_t ns),
                               void* arg);

#endif /* FXTRACE_ENGINE_THREAD_EXITS_H_ */
