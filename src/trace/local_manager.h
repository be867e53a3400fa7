/* Not part of the public API: a trace manager run inside the `trace` process
 * (src/manager/manager.h on a thread of its own), listening on a private
 * socket in a fresh temporary directory ($TMPDIR/fxtrace-record-XXXXXX, with
 * an `owner` file holding the owner's pid, locked while it runs). `trace record` starts one when no
 * manager is running, so recording needs no daemon. */
#ifndef FXTRACE_TRACE_LOCAL_MANAGER_H_
#define FXTRACE_TRACE_LOCAL_MANAGER_H_

#include <stdbool.h>
#include <stddef.h>

typedef struct local_manager local_manager_t;

/* false when this build has no manager library to run. */
bool local_manager__available(void);

/* Creates the manager and starts its event loop on a new thread (with every
 * signal blocked there: signals stay the client's). Its socket path is in
 * socket_path. 0, or -errno with a description in error. */
int local_manager__start(local_manager_t** out, char* socket_path, size_t path_size, char* error,
                         size_t error_size);

/* The archive of the session about to be initialized through this manager
 * is read from `ring` instead of the pipe whose write end is `pipe_fd`: when
 * the manager receives that pipe for a session's archive, it writes into
 * the ring (and closes it at the end) rather than into the pipe. Call before
 * handing the pipe over. The ring must outlive local_manager__stop(); if
 * the manager never took it (a refused session), the caller closes it after
 * that. false: not registered (the pipe then carries the archive). */
struct archive_ring;
bool local_manager__archive_into(local_manager_t* m, int pipe_fd, struct archive_ring* ring);

/* Shuts the manager down, joins its thread, frees it and removes its
 * directory. NULL is ignored. */
void local_manager__stop(local_manager_t* m);

/* Removes the socket directories ($TMPDIR/fxtrace-record-*) of this user's
 * trace records that died without removing theirs (SIGKILL), with a note on
 * stderr for each; never one whose owner still runs (the directory's owner
 * file is locked by its owner for its whole life), nor one without an owner
 * file. */
void local_manager__remove_stale(void);

/* Async-signal-safe: for a trace record about to die of a signal, removes
 * the running manager's socket and directory, once. The manager's thread is
 * left running: the process is ending. */
void local_manager__emergency(void);

#endif /* FXTRACE_TRACE_LOCAL_MANAGER_H_ */
