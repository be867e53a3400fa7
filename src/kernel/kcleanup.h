/* Not part of the public API: removing the kernel provider's tracefs
 * instance from a signal handler. A process that is about to die of a signal
 * (trace record on a second Ctrl-C, or on a crash) cannot take the orderly
 * path (ktracefs__destroy: libtracefs, locks, memory), yet must not leave
 * `instances/fxtrace-PID` behind recording the whole system into 4 MiB per
 * CPU. The session publishes the instance's directory and the descriptors
 * it holds open on it; kcleanup__now() closes those (the kernel refuses to
 * remove an instance with open files: EBUSY), turns tracing off and removes
 * the directory, with system calls only. The directory stays published until
 * the session has removed it itself, so that a signal during the session's
 * own removal (its reader's last drain, a second Ctrl-C) still removes it. */
#ifndef FXTRACE_KERNEL_KCLEANUP_H_
#define FXTRACE_KERNEL_KCLEANUP_H_

#include <stdbool.h>
#include <stddef.h>

/* The session's instance directory and its open descriptors (count may be 0);
 * replaces what was published. Call from one thread at a time (the
 * session's owner); 0, -1 when out of memory (nothing published then), or
 * -2 while a kcleanup__now() on another thread is at work (its entry stays
 * as it was, and the process is about to die: descriptors the session has
 * opened since are in no entry, and it closes them itself). */
int kcleanup__publish(const char* instance_dir, const int* fds, size_t count);

/* Before the session closes the published descriptors itself (with the
 * signals blocked on its thread). true: they are the session's to close
 * (also when nothing is published), and the session removes the instance; a
 * kcleanup__now() from now on leaves them alone (their numbers may be
 * reused) and only waits a moment for them to be closed before it removes
 * the directory too. false: a kcleanup__now() on another thread claimed
 * them first and closes them, and removes the instance: this waits for
 * it (bounded), and the session must neither close them (not even after
 * that handler did: a number may name another file by then) nor remove the
 * instance (the process is dying). */
bool kcleanup__closing(void);

/* Once the session has removed the instance itself (after
 * kcleanup__closing; nothing if a handler has the instance). */
void kcleanup__withdraw(void);

/* Async-signal-safe (atomics and system calls only), from any thread: closes
 * the published descriptors unless the session claimed them
 * (kcleanup__closing), turns tracing off and removes the instance, once;
 * nothing when nothing is published. Only for a process that then dies: the session's own
 * descriptors are closed under it. */
void kcleanup__now(void);

#endif /* FXTRACE_KERNEL_KCLEANUP_H_ */
