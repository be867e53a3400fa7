/* trace_provider_create*: one provider per process. FXTRACE_OUTPUT selects
 * file mode (an explicit request wins); otherwise the provider registers with
 * the trace manager if one answers, and is inert if none does. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/tracepoints.h"
#include "protocol/wire.h"
#include "provider/provider_internal.h"

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static trace_provider_t* current;
static bool atexit_registered;

static void free_provider(trace_provider_t* p) {
  for (size_t i = 0; i < p->known_count; i++) {
    free(p->known[i].name);
    free(p->known[i].description);
  }
  free(p->known);
  pthread_mutex_destroy(&p->known_lock);
  free(p);
}

/* Finishes whatever p records into, then frees it. */
static void finish(trace_provider_t* p) {
  if (p->file) file_session__finish(p->file);
  if (p->manager && !manager_session__finish(p->manager))
    return; /* the control thread still reads p: leaked */
  free_provider(p);
}

static void finish_at_exit(void) {
  pthread_mutex_lock(&lock);
  trace_provider_t* p = current;
  current = NULL;
  pthread_mutex_unlock(&lock);
  if (p) finish(p);
}

static void process_name(char* out, size_t size) {
  FILE* f = fopen("/proc/self/comm", "re");
  out[0] = '\0';
  if (f) {
    if (fgets(out, (int)size, f)) out[strcspn(out, "\n")] = '\0';
    fclose(f);
  }
}

static trace_provider_t* create(const char* name, bool synchronous, bool* out_started) {
  if (out_started) *out_started = false;
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
  pthread_mutex_init(&p->known_lock, NULL);
  if (name) {
    snprintf(p->name, sizeof(p->name), "%s", name);
  } else {
    process_name(p->name, sizeof(p->name));
  }
  const char* path = getenv("FXTRACE_OUTPUT");
  if (path && path[0])
    p->file = file_session__start(path, p->name);
  else
    p->manager = manager_session__start(p, synchronous, out_started);
  current = p;
  if (!atexit_registered) atexit_registered = atexit(finish_at_exit) == 0;
  pthread_mutex_unlock(&lock);
  return p;
}

trace_provider_t* trace_provider_create_with_name(const char* name) {
  return create(name, false, NULL);
}

trace_provider_t* trace_provider_create(void) { return create(NULL, false, NULL); }

trace_provider_t* trace_provider_create_synchronously(const char* name, bool* out_already_started) {
  return create(name, true, out_already_started);
}

bool trace_provider_is_connected(trace_provider_t* provider) {  // thread-safe
  return provider && provider->manager && manager_session__connected(provider->manager);
}

void trace_provider_destroy(trace_provider_t* provider) {
  if (!provider) return;
  pthread_mutex_lock(&lock);
  bool mine = current == provider; /* else the exit handler has taken it */
  if (mine) current = NULL;
  pthread_mutex_unlock(&lock);
  if (mine) finish(provider);
}

static void add_tracepoint_category(const char* system, void* arg) {
  trace_provider_t* p = arg;
  pthread_mutex_lock(&p->known_lock);
  bool known = false;
  for (size_t i = 0; i < p->known_count; i++) known |= strcmp(p->known[i].name, system) == 0;
  pthread_mutex_unlock(&p->known_lock);
  if (!known) trace_provider_add_known_category(p, system, "TRACE_EVENT() events");
}

void provider__add_tracepoint_categories(trace_provider_t* p) {
  tracepoints__for_each_system(add_tracepoint_category, p);
}

int trace_provider_add_known_category(trace_provider_t* p, const char* name,
                                      const char* description) {
  if (!p || !name) return -EINVAL;
  if (!description) description = "";
  size_t name_length = strlen(name), description_length = strlen(description);
  if (name_length == 0 || name_length > WIRE_MAX_NAME || description_length > WIRE_MAX_DESCRIPTION)
    return -EINVAL;
  pthread_mutex_lock(&p->known_lock);
  int status = 0;
  known_category_t* existing = NULL;
  for (size_t i = 0; i < p->known_count; i++)
    if (strcmp(p->known[i].name, name) == 0) existing = &p->known[i];
  /* the whole list must fit one KNOWN_CATEGORIES message */
  size_t bytes = 4 + name_length + description_length;
  size_t old_bytes = existing ? 4 + name_length + strlen(existing->description) : 0;
  if (p->known_bytes - old_bytes + bytes > WIRE_MAX_MESSAGE - WIRE_HEADER_SIZE - 2 ||
      (!existing && p->known_count >= WIRE_MAX_CATEGORIES)) {
    status = -ENOSPC;
  } else if (existing) { /* a new description for a known name */
    char* copy = strdup(description);
    if (!copy) {
      status = -ENOMEM;
    } else {
      free(existing->description);
      existing->description = copy;
      p->known_bytes = p->known_bytes - old_bytes + bytes;
    }
  } else {
    if (p->known_count == p->known_capacity) {
      size_t capacity = p->known_capacity ? p->known_capacity * 2 : 16;
      known_category_t* grown = realloc(p->known, capacity * sizeof(*grown));
      if (grown) {
        p->known = grown;
        p->known_capacity = capacity;
      }
    }
    char* name_copy = strdup(name);
    char* description_copy = strdup(description);
    if (p->known_count == p->known_capacity || !name_copy || !description_copy) {
      free(name_copy);
      free(description_copy);
      status = -ENOMEM;
    } else {
      p->known[p->known_count++] = (known_category_t){name_copy, description_copy};
      p->known_bytes += bytes;
    }
  }
  pthread_mutex_unlock(&p->known_lock);
  return status;
}
