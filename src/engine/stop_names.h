/* Not part of the public API: the names of the engine's threads at the stop
 * (docs/buffer-layout.md, "Names at the stop"; docs/manager.md, "The names
 * section").
 *
 * A thread's record names it once, when it first writes in a trace; a thread
 * renamed after that would be known by a stale name, and in oneshot mode a
 * full buffer (this process's, or the kernel provider's, which loses the
 * kernel's rename events but may keep an older exec) leaves nothing better.
 * So at each stop, after the writers are quiet, the engine writes one thread
 * kernel-object record for each thread that wrote in the trace: its name at
 * its end (threads that ended) or now, with the `process` koid argument and
 * a uint64 argument `name_at`, the time (trace clock, ns) it had that name.
 * They go where a full buffer cannot keep them out: oneshot, chunk 0 (the
 * engine's own, after the initialization and process records), otherwise
 * the durable buffer. The threads renamed since they first wrote come
 * first, and one of them that does not fit is counted as dropped; then,
 * while room is plentiful (the rest of chunk 0; at most half of the durable
 * buffer's room), the names the program gave its own process and threads
 * (explicit_name.h: a circular buffer may have wrapped past the records
 * that gave them) and the other threads. Nothing here is on the record
 * path. */
#ifndef FXTRACE_ENGINE_STOP_NAMES_H_
#define FXTRACE_ENGINE_STOP_NAMES_H_

/* The argument that marks a name at the stop (its value: when). */
#define STOP_NAMES_ARG "name_at"

/* From a session's stop (its engine thread), writers quiet, before the stop
 * publishes the data ends: into that session's buffer. */
typedef struct engine engine_t;
void stop_names__write(engine_t* session);

#endif /* FXTRACE_ENGINE_STOP_NAMES_H_ */
