/* An in-process trace manager for `trace record` (see local_manager.h). */
#include "trace/local_manager.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#ifdef FXTRACE_HAVE_MANAGER

#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <unistd.h>

#include "manager/manager.h"

struct local_manager {
  manager_t* manager;
  pthread_t thread;
  char directory[64];
  char socket_path[128];
};

bool local_manager__available(void) { return true; }

static void log_line(void* arg, manager_log_level_t level, const char* message) {
  (void)arg;
  fprintf(stderr, "trace record: manager: %s%s\n", level == MANAGER_LOG_ERROR ? "error: " : "",
          message);
}

static void* run(void* arg) {
  pthread_setname_np(pthread_self(), "trace-manager"); /* for top -H and bench/run */
  manager__run(arg);
  return NULL;
}

int local_manager__start(local_manager_t** out, char* socket_path, size_t path_size, char* error,
                         size_t error_size) {
  *out = NULL;
  local_manager_t* m = calloc(1, sizeof(*m));
  if (!m) {
    snprintf(error, error_size, "out of memory");
    return -ENOMEM;
  }
  const char* tmp = getenv("TMPDIR");
  if (!tmp || !tmp[0] || strlen(tmp) > 40) tmp = "/tmp";
  snprintf(m->directory, sizeof(m->directory), "%s/fxtrace-record-XXXXXX", tmp);
  if (!mkdtemp(m->directory)) {
    int err = errno;
    snprintf(error, error_size, "cannot create a directory for the manager's socket in %s: %s", tmp,
             strerror(err));
    free(m);
    return -err;
  }
  snprintf(m->socket_path, sizeof(m->socket_path), "%s/manager.sock", m->directory);
  if (strlen(m->socket_path) >= path_size) {
    snprintf(error, error_size, "socket path too long");
    rmdir(m->directory);
    free(m);
    return -ENAMETOOLONG;
  }
  manager_config_t config;
  memset(&config, 0, sizeof(config)); /* zero: the defaults */
  config.socket_path = m->socket_path;
  config.log_level = MANAGER_LOG_ERROR; /* the summary reports the rest */
  config.log_fn = log_line;
  int status = manager__create(&config, &m->manager);
  if (status != 0) {
    snprintf(error, error_size, "cannot start a trace manager: %s", strerror(-status));
    rmdir(m->directory);
    free(m);
    return status;
  }
  sigset_t all, old;
  sigfillset(&all);
  pthread_sigmask(SIG_SETMASK, &all, &old);
  status = -pthread_create(&m->thread, NULL, run, m->manager);
  pthread_sigmask(SIG_SETMASK, &old, NULL);
  if (status != 0) {
    snprintf(error, error_size, "cannot start the trace manager's thread: %s", strerror(-status));
    manager__destroy(m->manager);
    unlink(m->socket_path);
    rmdir(m->directory);
    free(m);
    return status;
  }
  snprintf(socket_path, path_size, "%s", m->socket_path);
  *out = m;
  return 0;
}

void local_manager__stop(local_manager_t* m) {
  if (!m) return;
  manager__shutdown(m->manager);
  pthread_join(m->thread, NULL);
  manager__destroy(m->manager);
  unlink(m->socket_path); /* if the manager left it */
  rmdir(m->directory);
  free(m);
}

#else /* no manager library in this build */

bool local_manager__available(void) { return false; }

int local_manager__start(local_manager_t** out, char* socket_path, size_t path_size, char* error,
                         size_t error_size) {
  (void)socket_path;
  (void)path_size;
  *out = NULL;
  snprintf(error, error_size, "this build of trace cannot run a trace manager of its own");
  return -ENOSYS;
}

void local_manager__stop(local_manager_t* m) { (void)m; }

#endif
