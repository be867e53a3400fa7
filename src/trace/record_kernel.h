/* Not part of the public API: `trace record`'s own kernel provider. When the
 * categories ask for kernel:* and no kernel provider is registered with the
 * manager, trace record runs one in its own process (the engine and
 * src/kernel on threads of their own, registered with the manager as
 * trace_kernel_provider) for the length of the recording. Without root or
 * tracefs it prints a one-line warning and the rest records as usual. */
#ifndef FXTRACE_TRACE_RECORD_KERNEL_H_
#define FXTRACE_TRACE_RECORD_KERNEL_H_

#include <stdbool.h>
#include <stddef.h>

#include "trace/controller.h"

typedef struct record_kernel record_kernel_t;

/* Call once the manager answers on socket_path and before the trace is
 * initialized. Returns the running provider, or NULL (none needed, or not
 * possible: a warning was printed then). */
record_kernel_t* record_kernel__start(const char** categories, size_t count,
                                      const char* socket_path, controller_t* controller);

/* After the trace has been terminated; NULL is ignored. */
void record_kernel__stop(record_kernel_t* k);

/* Async-signal-safe: for a trace record about to die of a signal, removes
 * the tracefs instance of the kernel provider it runs (src/kernel/kcleanup.h),
 * if any. */
void record_kernel__emergency(void);

/* As root with tracefs mounted: removes the instances of kernel providers
 * that died without removing theirs (a SIGKILLed trace record), never one of
 * a live process (ktracefs__remove_stale), with a note on stderr. Nothing
 * otherwise: never mounts tracefs. */
void record_kernel__remove_stale(void);

/* The name the kernel provider registers with ("trace_kernel_provider"), or
 * NULL when trace is built without libtracefs (it never starts one then). */
const char* record_kernel__provider_name(void);

/* The i-th category the kernel provider started by record_kernel__start()
 * serves, from the kernel provider's own table (kprovider.h): true with its
 * name and description, false past the last one (always false without
 * libtracefs). For `trace list-categories`, which lists them also when no
 * kernel provider is registered; needs neither root nor tracefs. */
bool record_kernel__category(size_t i, const char** name, const char** description);

#endif /* FXTRACE_TRACE_RECORD_KERNEL_H_ */
