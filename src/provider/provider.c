/* trace_provider_create*: one provider per process. With no trace manager
 * (issue 4 adds the connection), FXTRACE_OUTPUT selects file mode. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "provider/provider_internal.h"

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static trace_provider_t* current;
static bool atexit_registered;

static void finish_at_exit(void) {
  pthread_mutex_lock(&lock);
  trace_provider_t* p = current;
  current = NULL;
  pthread_mutex_unlock(&lock);
  if (p && p->file) __file_session_finish(p->file);
  free(p);
}

static void process_name(char* out, size_t size) {
  FILE* f = fopen("/proc/self/comm", "r");
  out[0] = '\0';
  if (f) {
    if (fgets(out, (int)size, f)) out[strcspn(out, "\n")] = '\0';
    fclose(f);
  }
}

trace_provider_t* trace_provider_create_with_name(const char* name) {
  pthread_mutex_lock(&lock);
  if (current) {
    pthread_mutex_unlock(&lock);
    fprintf(stderr, "fxtrace: a trace provider already exists in this process\n");
    return NULL;
  }
  trace_provider_t* p = calloc(1, sizeof(*p));
  if (!p) {
    pthread_mutex_unlock(&lock);
    return NULL;
  }
  if (name) {
    snprintf(p->name, sizeof(p->name), "%s", name);
  } else {
    process_name(p->name, sizeof(p->name));
  }
  const char* path = getenv("FXTRACE_OUTPUT");
  if (path && path[0]) p->file = __file_session_start(path, p->name);
  current = p;
  if (!atexit_registered) atexit_registered = atexit(finish_at_exit) == 0;
  pthread_mutex_unlock(&lock);
  return p;
}

trace_provider_t* trace_provider_create(void) { return trace_provider_create_with_name(NULL); }

void trace_provider_destroy(trace_provider_t* provider) {
  if (!provider) return;
  pthread_mutex_lock(&lock);
  bool mine = current == provider; /* else the exit handler has taken it */
  if (mine) current = NULL;
  pthread_mutex_unlock(&lock);
  if (!mine) return;
  if (provider->file) __file_session_finish(provider->file);
  free(provider);
}
