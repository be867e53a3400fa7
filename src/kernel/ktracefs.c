/* The kernel provider's tracefs instance (see ktracefs.h). */
#include "kernel/ktracefs.h"

#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <tracefs.h>
#include <unistd.h>

#include "engine/clock.h"

#define INSTANCE_PREFIX "fxtrace-"
#define MOUNT_POINT "/sys/kernel/tracing"

int ktracefs__ensure_mounted(void) {
  /* libtracefs finds (and caches) a mounted tracefs, and mounts one at
   * /sys/kernel/tracing itself when none is (tracefs_tracing_dir(3); that is
   * the path kernel_mount exercises, in a mount namespace without tracefs).
   * The mount below is the fallback for a libtracefs that did not.
   * tracefs_tracing_dir_is_mounted() would hand back a copy of the path
   * nobody frees. */
  if (tracefs_tracing_dir()) return 0;
  if (mount("nodev", MOUNT_POINT, "tracefs", 0, NULL) != 0 && errno != EBUSY) return -errno;
  /* libtracefs caches the directory it found (or not) at first use */
  tracefs_set_tracing_dir(MOUNT_POINT);
  return 0;
}

bool ktracefs__is_mounted(void) {
  /* /proc/mounts itself: tracefs_tracing_dir() would mount tracefs, and
   * tracefs_tracing_dir_is_mounted() hands back a path nobody frees */
  FILE* f = fopen("/proc/mounts", "re");
  if (!f) return false;
  char line[4096];
  bool found = false;
  while (!found && fgets(line, sizeof(line), f)) {
    char type[64];
    found = sscanf(line, "%*s %*s %63s", type) == 1 && strcmp(type, "tracefs") == 0;
  }
  fclose(f);
  return found;
}

bool ktracefs__available(char* reason, size_t reason_size) {
  if (geteuid() != 0) {
    snprintf(reason, reason_size, "root");
    return false;
  }
  if (ktracefs__ensure_mounted() != 0 || !tracefs_tracing_dir()) {
    snprintf(reason, reason_size, "tracefs");
    return false;
  }
  char path[256];
  snprintf(path, sizeof(path), "%s/instances", tracefs_tracing_dir());
  if (access(path, W_OK) != 0) {
    snprintf(reason, reason_size, "tracefs");
    return false;
  }
  return true;
}

static bool pid_alive(long pid) { return pid > 0 && (kill((pid_t)pid, 0) == 0 || errno == EPERM); }

int ktracefs__remove_stale(void) {
  const char* dir = tracefs_tracing_dir();
  if (!dir) return 0;
  char path[512];
  snprintf(path, sizeof(path), "%s/instances", dir);
  DIR* d = opendir(path);
  if (!d) return 0;
  int removed = 0;
  struct dirent* e;
  while ((e = readdir(d)) != NULL) {
    if (strncmp(e->d_name, INSTANCE_PREFIX, strlen(INSTANCE_PREFIX)) != 0) continue;
    char* end = NULL;
    long pid = strtol(e->d_name + strlen(INSTANCE_PREFIX), &end, 10);
    if (!end || *end != '\0' || pid == (long)getpid() || pid_alive(pid)) continue;
    struct tracefs_instance* inst = tracefs_instance_alloc(NULL, e->d_name);
    if (!inst) continue;
    tracefs_trace_off(inst);
    tracefs_event_disable(inst, NULL, NULL);
    if (tracefs_instance_destroy(inst) == 0) removed++;
    tracefs_instance_free(inst);
  }
  closedir(d);
  return removed;
}

const char* ktracefs__clock_for_engine(void) {
  return strcmp(trace_clock__source_name(), "tsc") == 0 ? "x86-tsc" : "mono";
}

struct tracefs_instance* ktracefs__create(const char* clock, size_t buffer_kb, char* error,
                                          size_t error_size) {
  char name[64];
  snprintf(name, sizeof(name), INSTANCE_PREFIX "%ld", (long)getpid());
  struct tracefs_instance* old = tracefs_instance_alloc(NULL, name);
  if (old) { /* a leftover of this very pid (an earlier trace that was cut short) */
    if (tracefs_instance_exists(name)) {
      tracefs_trace_off(old);
      tracefs_event_disable(old, NULL, NULL);
      tracefs_instance_destroy(old);
    }
    tracefs_instance_free(old);
  }
  struct tracefs_instance* inst = tracefs_instance_create(name);
  if (!inst) {
    snprintf(error, error_size, "cannot create the tracefs instance %s: %s", name, strerror(errno));
    return NULL;
  }
  tracefs_trace_off(inst);
  if (tracefs_instance_file_write(inst, "trace_clock", clock) < 0) {
    snprintf(error, error_size, "cannot set the tracefs clock to %s", clock);
    ktracefs__destroy(inst);
    return NULL;
  }
  /* The kernel then keeps every traced task's process id in saved_tgids, so
   * a thread that has exited before its records are converted still gets
   * its process (kthreads__tgid). Best effort: without it, /proc decides. */
  tracefs_option_enable(inst, TRACEFS_OPTION_RECORD_TGID);
  if (buffer_kb > 0 && tracefs_instance_set_buffer_size(inst, buffer_kb, -1) != 0) {
    snprintf(error, error_size, "cannot set the tracefs buffer size to %zu KiB", buffer_kb);
    ktracefs__destroy(inst);
    return NULL;
  }
  return inst;
}

void ktracefs__destroy(struct tracefs_instance* instance) {
  if (!instance) return;
  tracefs_trace_off(instance);
  tracefs_event_disable(instance, NULL, NULL);
  tracefs_instance_destroy(instance);
  tracefs_instance_free(instance);
}

void ktracefs__forget(struct tracefs_instance* instance) { tracefs_instance_free(instance); }

int ktracefs__enable(struct tracefs_instance* instance, const char* system, const char* event) {
  return tracefs_event_enable(instance, system, event) == 0 ? 0 : -1;
}

int ktracefs__disable(struct tracefs_instance* instance, const char* system, const char* event) {
  return tracefs_event_disable(instance, system, event) == 0 ? 0 : -1;
}

int ktracefs__set_on(struct tracefs_instance* instance, bool on) {
  return (on ? tracefs_trace_on(instance) : tracefs_trace_off(instance)) == 0 ? 0 : -1;
}

/* "name: value" in a per_cpu stats file. */
static uint64_t stat_value(const char* text, const char* key) {
  const char* p = text;
  size_t n = strlen(key);
  while (p && *p) {
    if (strncmp(p, key, n) == 0 && p[n] == ':') return strtoull(p + n + 1, NULL, 10);
    p = strchr(p, '\n');
    if (p) p++;
  }
  return 0;
}

uint64_t ktracefs__lost_events(struct tracefs_instance* instance, int cpus) {
  uint64_t lost = 0;
  for (int cpu = 0; cpu < cpus; cpu++) {
    char file[64];
    snprintf(file, sizeof(file), "per_cpu/cpu%d/stats", cpu);
    char* text = tracefs_instance_file_read(instance, file, NULL);
    if (!text) continue;
    lost += stat_value(text, "overrun") + stat_value(text, "dropped events");
    free(text);
  }
  return lost;
}
