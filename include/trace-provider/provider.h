/* Public API: register this process as a trace provider (API.md §9).
 *
 * One provider per process. trace_provider_create_with_name() picks, in this
 * order:
 *
 * 1. File mode, when FXTRACE_OUTPUT is set (an explicit request wins over a
 *    running manager): the provider records straight into a file.
 *      FXTRACE_OUTPUT=path            the archive to write (required)
 *      FXTRACE_CATEGORIES=a,b,gfx*    enabled categories (default: all)
 *      FXTRACE_BUFFERING_MODE=oneshot|circular|streaming   (default oneshot)
 *      FXTRACE_BUFFER_SIZE=MiB        buffer size (default 4; streaming appends
 *                                     every saved buffer to the file, so only
 *                                     streaming records more than this)
 *    Tracing starts inside trace_provider_create_with_name() and stops at
 *    trace_provider_destroy() or at exit, which turns the file into a
 *    complete FXT archive. The buffer is the file mapped shared: after a
 *    crash the file still holds every committed record, and `trace dump` /
 *    `trace convert` recover them with a warning.
 *
 * 2. The trace manager, when one answers on its socket (FXTRACE_SOCKET, else
 *    $XDG_RUNTIME_DIR/fxtrace/manager.sock, else /run/fxtrace/manager.sock for
 *    root and /tmp/fxtrace-$UID/manager.sock otherwise) and runs as this
 *    user or root: the provider registers under its name, and a small
 *    control thread of the library follows the manager's commands
 *    (initialize with a shared buffer, start, stop, terminate; streaming
 *    saves) — tracing starts and stops when a `trace record` client asks,
 *    any number of times. The manager going away ends the current trace;
 *    the program runs on untraced.
 *
 *    When a trace is running, registration waits until the manager has
 *    started this provider, so the first event after the call is recorded:
 *    at most FXTRACE_REGISTER_TIMEOUT milliseconds (default 3000, 0 = do
 *    not wait); no wait when no trace runs (docs/provider.md).
 *
 * 3. Otherwise the provider is inert: no thread, and every trace macro costs
 *    the disabled check only.
 *
 * Problems (bad variables, an unwritable path, a full disk, a manager that
 * refuses) are reported on stderr, prefixed "fxtrace:"; the program runs on
 * untraced. A fork child never records into, nor talks over, its parent's
 * provider. */
#ifndef TRACE_PROVIDER_PROVIDER_H_
#define TRACE_PROVIDER_PROVIDER_H_

#include "trace-engine/types.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct trace_provider trace_provider_t;

/* name: at most 100 characters; NULL means the process name. NULL only when
 * out of memory or when a provider already exists in this process. */
TRACE_EXPORT trace_provider_t* trace_provider_create_with_name(const char* name);
TRACE_EXPORT trace_provider_t* trace_provider_create(void);

/* Like trace_provider_create_with_name(), but registers with the trace
 * manager synchronously: waits (at most 5 s) for the manager's answer, and
 * sets *out_already_started (if not NULL) to true when a trace is already
 * running — the manager then initializes and starts this provider right
 * away, and the call waits for that start as trace_provider_create_with_name()
 * does (FXTRACE_REGISTER_TIMEOUT), so TRACE_ENABLED() is then true unless the
 * wait was cut short. false in file mode, with no manager, or when the
 * manager did not answer in time (the provider is then inert). NULL as for
 * trace_provider_create_with_name(). */
TRACE_EXPORT trace_provider_t* trace_provider_create_synchronously(const char* name,
                                                                   bool* out_already_started);

/* Declares a category this program may record, answered to the manager's
 * GetKnownCategories (`trace list-categories`). name: 1 to 100 characters;
 * description: at most 400 (NULL means ""). Declaring a name again replaces
 * its description. Any time, from any thread, in every mode (file mode and
 * inert providers keep the list but have no one to tell). 0, -EINVAL (bad
 * argument), -ENOSPC (more than 5000 categories, or more than one protocol
 * message holds: 256 KiB), -ENOMEM. */
TRACE_EXPORT int trace_provider_add_known_category(trace_provider_t* provider, const char* name,
                                                   const char* description);

/* True while the provider is registered with a trace manager and its
 * connection is alive; false for a file-mode or inert provider, and once the
 * manager has gone away (the provider is then inert for good: a program that
 * should follow a restarted manager exits and is restarted, as
 * trace_kernel_provider does). Thread-safe. */
TRACE_EXPORT bool trace_provider_is_connected(trace_provider_t* provider);

/* Stops tracing, finishes the archive (file mode) or ends the trace and the
 * connection to the manager (waiting at most 5 s for the engine to let go of
 * the buffer), joins the control thread and frees the provider. The same
 * happens at exit for a provider not destroyed. */
TRACE_EXPORT void trace_provider_destroy(trace_provider_t* provider);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* TRACE_PROVIDER_PROVIDER_H_ */
