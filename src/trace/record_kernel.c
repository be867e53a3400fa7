/* `trace record`'s in-process kernel provider (see record_kernel.h). */
#include "trace/record_kernel.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char* first_kernel_category(const char** categories, size_t count) {
  for (size_t i = 0; i < count; i++)
    if (strncmp(categories[i], "kernel:", 7) == 0 && categories[i][7] != '\0') return categories[i];
  return NULL;
}

#ifdef FXTRACE_HAVE_KERNEL

#include <sys/stat.h>
#include <tracefs.h>
#include <unistd.h>

#include "kernel/kcleanup.h"
#include "kernel/kprovider.h"
#include "kernel/ktracefs.h"
#include "trace-provider/provider.h"

struct record_kernel {
  trace_provider_t* provider;
};

static bool kernel_provider_registered(controller_t* controller) {
  controller_provider_t* list = NULL;
  size_t count = 0;
  if (controller__get_providers(controller, &list, &count) != 0) return false;
  bool found = false;
  for (size_t i = 0; i < count; i++) found |= strcmp(list[i].name, KPROVIDER_NAME) == 0;
  free(list);
  return found;
}

record_kernel_t* record_kernel__start(const char** categories, size_t count,
                                      const char* socket_path, controller_t* controller) {
  const char* category = first_kernel_category(categories, count);
  if (!category || kernel_provider_registered(controller)) return NULL;
  char reason[32];
  if (!ktracefs__available(reason, sizeof(reason))) {
    fprintf(stderr, "trace record: warning: %s needs %s; recording without kernel events\n",
            category, strcmp(reason, "root") == 0 ? "root (tracefs)" : "tracefs (not available)");
    return NULL;
  }
  record_kernel_t* k = calloc(1, sizeof(*k));
  if (!k) return NULL;
  /* the provider library takes its mode from the environment: the manager
   * trace record talks to, never a file */
  char* output = getenv("FXTRACE_OUTPUT") ? strdup(getenv("FXTRACE_OUTPUT")) : NULL;
  char* socket = getenv("FXTRACE_SOCKET") ? strdup(getenv("FXTRACE_SOCKET")) : NULL;
  unsetenv("FXTRACE_OUTPUT");
  setenv("FXTRACE_SOCKET", socket_path, 1);
  bool ok = kprovider__install() == 0;
  bool started = false;
  if (ok) k->provider = trace_provider_create_synchronously(KPROVIDER_NAME, &started);
  if (output) setenv("FXTRACE_OUTPUT", output, 1);
  if (socket)
    setenv("FXTRACE_SOCKET", socket, 1);
  else
    unsetenv("FXTRACE_SOCKET");
  free(output);
  free(socket);
  if (!k->provider) {
    fprintf(stderr,
            "trace record: warning: cannot start a kernel provider; recording without "
            "kernel events\n");
    kprovider__uninstall();
    free(k);
    return NULL;
  }
  kprovider__add_known_categories(k->provider);
  /* a kernel:SYSTEM/EVENT the kernel does not have would record nothing, silently */
  for (size_t i = 0; i < count; i++) {
    const char* c = categories[i];
    size_t n = strlen(c);
    if (strncmp(c, "kernel:", 7) != 0 || !strchr(c + 7, '/') || (n && c[n - 1] == '*')) continue;
    char path[1024];
    struct stat st;
    snprintf(path, sizeof(path), "%s/events/%s", tracefs_tracing_dir(), c + 7);
    if (stat(path, &st) != 0)
      fprintf(stderr, "trace record: warning: %s: the kernel has no tracefs event %s\n", c, c + 7);
  }
  return k;
}

void record_kernel__stop(record_kernel_t* k) {
  if (!k) return;
  trace_provider_destroy(k->provider);
  kprovider__uninstall();
  free(k);
}

void record_kernel__emergency(void) { kcleanup__now(); }

void record_kernel__remove_stale(void) {
  /* never mounts tracefs for a recording that may not use it: only when one
   * is mounted already (tracefs_tracing_dir() would mount it) */
  if (geteuid() != 0 || !ktracefs__is_mounted()) return;
  int removed = ktracefs__remove_stale();
  if (removed > 0)
    fprintf(stderr,
            "trace record: removed %d tracefs instance%s left by a kernel provider that was "
            "killed\n",
            removed, removed == 1 ? "" : "s");
}

const char* record_kernel__provider_name(void) { return KPROVIDER_NAME; }

bool record_kernel__category(size_t i, const char** name, const char** description) {
  size_t count = 0;
  const kprovider_category_t* table = kprovider__known_categories(&count);
  if (i >= count) return false;
  *name = table[i].name;
  *description = table[i].description;
  return true;
}

#else /* built without libtracefs */

record_kernel_t* record_kernel__start(const char** categories, size_t count,
                                      const char* socket_path, controller_t* controller) {
  (void)socket_path;
  (void)controller;
  const char* category = first_kernel_category(categories, count);
  if (category)
    fprintf(stderr,
            "trace record: warning: %s needs a trace built with libtracefs; recording without "
            "kernel events\n",
            category);
  return NULL;
}

void record_kernel__stop(record_kernel_t* k) { (void)k; }

void record_kernel__emergency(void) {}

void record_kernel__remove_stale(void) {}

const char* record_kernel__provider_name(void) { return NULL; }

bool record_kernel__category(size_t i, const char** name, const char** description) {
  (void)i;
  (void)name;
  (void)description;
  return false;
}

#endif
