/* Not part of the public API: the kinds of provider behind trace_provider_t.
 * Issue 4 adds the manager-connected kind; today a provider either records
 * to a file (FXTRACE_OUTPUT) or is inert. */
#ifndef FXTRACE_PROVIDER_PROVIDER_INTERNAL_H_
#define FXTRACE_PROVIDER_PROVIDER_INTERNAL_H_

#include <pthread.h>
#include <stdbool.h>

#include "trace-provider/provider.h"

typedef struct file_session file_session_t;

struct trace_provider {
  char name[101];
  file_session_t* file; /* NULL: inert */
};

/* Starts recording into `path` from the FXTRACE_* variables. NULL (after a
 * message on stderr) when the variables or the file are unusable. */
file_session_t* __file_session_start(const char* path, const char* name);

/* Stops, writes the archive and frees the session. */
void __file_session_finish(file_session_t* session);

#endif /* FXTRACE_PROVIDER_PROVIDER_INTERNAL_H_ */
