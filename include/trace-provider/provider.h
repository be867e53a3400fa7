/* Public API: register this process as a trace provider (API.md §9).
 *
 * With no trace manager (the embedded default), a provider records straight
 * into a file when the environment says so:
 *   FXTRACE_OUTPUT=path            the archive to write (required)
 *   FXTRACE_CATEGORIES=a,b,gfx*    enabled categories (default: all)
 *   FXTRACE_BUFFERING_MODE=oneshot|circular|streaming   (default oneshot)
 *   FXTRACE_BUFFER_SIZE=MiB        buffer size (default 4; streaming appends
 *                                  every saved buffer to the file, so only
 *                                  streaming records more than this)
 * Tracing starts inside trace_provider_create_with_name() and stops at
 * trace_provider_destroy() or at exit, which turns the file into a complete
 * FXT archive. The buffer is the file mapped shared: after a crash the file
 * still holds every committed record, and `trace dump` / `trace convert`
 * recover them with a warning. Without FXTRACE_OUTPUT the provider is inert.
 * Problems (bad variables, an unwritable path, a full disk) are reported on
 * stderr, prefixed "fxtrace:"; the program runs on untraced. */
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

/* Stops tracing, finishes the archive and frees the provider. */
TRACE_EXPORT void trace_provider_destroy(trace_provider_t* provider);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* TRACE_PROVIDER_PROVIDER_H_ */
