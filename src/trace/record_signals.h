/* Not part of the public API: `trace record`'s signals. trace record cleans
 * up after itself on every signal it can catch: its tracefs instance and its
 * socket directory never outlive it.
 *
 *   - SIGUSR1 asks for a snapshot (record_snapshot.h): counted, and the main
 *     loop takes them (record_signals__snapshot_requests()).
 *   - A termination signal (INT, TERM, HUP, QUIT, USR2, ALRM, VTALRM,
 *     PROF, IO, PWR, STKFLT, XCPU, the real-time ones) asks for the orderly
 *     end: the main loop sees record_signals__interrupted(), the trace is
 *     collected and written, everything removed.
 *   - The same once the end has begun (record_signals__stopping(), or a
 *     second signal) ends trace at once: a signal handler removes the
 *     instance and the directory (async-signal-safe: record_kernel__emergency,
 *     local_manager__emergency), sends the command SIGTERM, removes an output
 *     file still empty, and trace dies of the signal.
 *   - A crash (SEGV, BUS, ILL, FPE, ABRT, TRAP, SYS) does the same, then
 *     takes its default action (a core dump).
 *   - PIPE and XFSZ are ignored: the write fails instead (EPIPE, EFBIG) and
 *     is reported like any failed write.
 * SIGKILL cannot be caught: the next recording removes what it left
 * (record_kernel__remove_stale, local_manager__remove_stale). */
#ifndef FXTRACE_TRACE_RECORD_SIGNALS_H_
#define FXTRACE_TRACE_RECORD_SIGNALS_H_

#include <stdbool.h>
#include <sys/types.h>

/* Installs the handlers and the self-pipe. 0, or -errno. */
int record_signals__start(void);

/* Restores the default actions and closes the self-pipe. */
void record_signals__stop(void);

/* A descriptor that becomes readable on a signal, SIGCHLD included, or a
 * record_signals__wake(); record_signals__drain() empties it. */
int record_signals__wake_fd(void);
void record_signals__drain(void);

/* Wakes the main loop (from any thread; async-signal-safe). */
void record_signals__wake(void);

/* The termination signal received, or 0. */
int record_signals__interrupted(void);

/* The SIGUSR1s received since the last call (each asks for a snapshot). */
unsigned record_signals__snapshot_requests(void);

/* From now on a termination signal ends trace at once. */
void record_signals__stopping(void);

/* The command's pid (0: none, or reaped), sent SIGTERM on an ending at once. */
void record_signals__set_command(pid_t pid);

/* The output file (descriptor and name; -1 / NULL: none, or standard
 * output), removed on an ending at once when it is a regular file that is
 * still empty. */
void record_signals__set_output(int fd, const char* path);

#endif /* FXTRACE_TRACE_RECORD_SIGNALS_H_ */
