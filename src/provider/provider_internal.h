/* Not part of the public API: the kinds of provider behind trace_provider_t.
 * A provider records to a file (FXTRACE_OUTPUT, file_provider.c), talks to
 * the trace manager (manager_provider.c), or is inert. */
#ifndef FXTRACE_PROVIDER_PROVIDER_INTERNAL_H_
#define FXTRACE_PROVIDER_PROVIDER_INTERNAL_H_

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>

#include "trace-provider/provider.h"

typedef struct file_session file_session_t;
typedef struct manager_session manager_session_t;

typedef struct known_category {
  char* name;
  char* description;
} known_category_t;

struct trace_provider {
  char name[101];
  file_session_t* file;       /* file mode */
  manager_session_t* manager; /* connected to the trace manager */
  /* neither: inert */

  /* trace_provider_add_known_category(); read by the manager session's
   * control thread to answer GET_KNOWN_CATEGORIES */
  pthread_mutex_t known_lock;
  known_category_t* known;
  size_t known_count;
  size_t known_capacity;
  size_t known_bytes; /* their size in a KNOWN_CATEGORIES message */
};

/* Starts recording into `path` from the FXTRACE_* variables. NULL (after a
 * message on stderr) when the variables or the file are unusable. */
file_session_t* file_session__start(const char* path, const char* name);

/* Stops, writes the archive and frees the session. */
void file_session__finish(file_session_t* session);

/* Declares the TRACE_SYSTEM of every registered TRACE_EVENT() as a known
 * category, unless the program declared it itself (provider.c). */
void provider__add_tracepoint_categories(trace_provider_t* provider);

/* Connects to the trace manager and registers `provider` (its name and known
 * categories). NULL when no manager answers (silently) or on any other
 * failure (after a message on stderr): the provider is then inert.
 * synchronous: REGISTER_PROVIDER with synchronous=1, waiting (bounded) for
 * REGISTER_RESULT; *out_started receives its `started` hint (false on any
 * failure). */
manager_session_t* manager_session__start(trace_provider_t* provider, bool synchronous,
                                          bool* out_started);

/* True while the session is registered and its connection alive. */
bool manager_session__connected(manager_session_t* session);

/* Stops and terminates any trace, closes the connection, joins the control
 * thread and frees the session. false when the engine did not let go in
 * time: the session (and the provider it reads) must then be leaked. */
bool manager_session__finish(manager_session_t* session);

#endif /* FXTRACE_PROVIDER_PROVIDER_INTERNAL_H_ */
