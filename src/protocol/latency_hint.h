/* A scheduling hint for the threads a streaming save waits for: the
 * engine's thread, the provider's control thread and the trace manager's
 * loop. Each sleeps most of the time and runs briefly when woken (the
 * manager copies a segment: a fraction of a millisecond), but a save's round trip wakes three of
 * them in turn, and records are dropped once it takes longer than the buffer's other segments take
 * to fill. With the default slice, a woken thread may wait for whatever runs on its CPU (an archive
 * writer, a compressor) to use up its slice, several milliseconds on a 250 Hz kernel; a thread with
 * a shorter slice than the running one is run at once (EEVDF). docs/manager.md, "What a save waits
 * for". */
#ifndef FXTRACE_PROTOCOL_LATENCY_HINT_H_
#define FXTRACE_PROTOCOL_LATENCY_HINT_H_

/* Asks for a 0.1 ms slice for the calling thread (SCHED_OTHER only; its
 * niceness is kept). Best effort: a kernel without custom slices (before
 * Linux 6.12) ignores it. */
void latency_hint__short_slice(void);

#endif
