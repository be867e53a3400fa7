/* Not part of the public API: the names the engine's threads had when they
 * ended, so that file mode (src/provider/file_provider.c) can end its archive
 * with each thread's last name (docs/file-mode.md, "Names"), not the one it
 * had when it first wrote. Nothing on the record path: a thread's name is
 * read once, when it exits. */
#ifndef FXTRACE_ENGINE_THREAD_EXITS_H_
#define FXTRACE_ENGINE_THREAD_EXITS_H_

#include <stdint.h>

#include "trace-engine/record_path.h"

/* How many ended threads are remembered per trace; past it the oldest are
 * forgotten (they keep the name they wrote with). */
enum { THREAD_EXITS_MAX = 4096 };

/* From the exiting thread itself, under engine.lock: remembers its name now
 * if it wrote in the current trace. */
void thread_exits__note(const trace_context_t* w);

/* Calls fn for each thread that wrote in the current trace: those that ended
 * (their name at the end) and those still running (their name when they
 * first wrote; alive: /proc has the newest). Takes engine.lock. */
void thread_exits__each(void (*fn)(void* arg, uint64_t tid, const char* name, int alive),
                        void* arg);

#endif /* FXTRACE_ENGINE_THREAD_EXITS_H_ */
