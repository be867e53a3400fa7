/* Names from /proc (names.h): a process's program and a thread's comm. */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "names/names_internal.h"

/* The whole (small) file, NUL-terminated; its length, or -1. */
static ssize_t read_small(const char* path, char* buf, size_t size) {
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return -1;
  ssize_t n;
  do n = read(fd, buf, size - 1);
  while (n < 0 && errno == EINTR);
  close(fd);
  if (n < 0) return -1;
  buf[n] = '\0';
  return n;
}

static const char* base_of(const char* path) {
  const char* slash = strrchr(path, '/');
  return slash ? slash + 1 : path;
}

/* src's name bounded (names__bound) into name (NAMES_MAX_LENGTH + 1 bytes);
 * false if empty. */
static bool copy_name(char* name, const char* src) {
  size_t length = names__bound(src, strlen(src));
  memcpy(name, src, length);
  name[length] = '\0';
  return length > 0;
}

/* The program of a live process: the executable's base name (without the
 * kernel's " (deleted)" for a replaced file), else argv[0]'s up to its first
 * space (a process that rewrote its argv), else its comm (kernel threads
 * have neither). false if the process is gone. */
static bool program_of(uint64_t pid, char name[NAMES_MAX_LENGTH + 1]) {
  char path[64], buf[4096];
  snprintf(path, sizeof(path), "/proc/%" PRIu64 "/exe", pid);
  ssize_t n = readlink(path, buf, sizeof(buf) - 1);
  if (n > 0) {
    buf[n] = '\0';
    static const char kDeleted[] = " (deleted)";
    size_t tail = sizeof(kDeleted) - 1;
    if ((size_t)n > tail && strcmp(buf + n - tail, kDeleted) == 0) buf[n - tail] = '\0';
    if (copy_name(name, base_of(buf))) return true;
  }
  snprintf(path, sizeof(path), "/proc/%" PRIu64 "/cmdline", pid);
  n = read_small(path, buf, sizeof(buf));
  if (n > 0 && buf[0]) {
    buf[strcspn(buf, " ")] = '\0';
    if (copy_name(name, base_of(buf))) return true;
  }
  snprintf(path, sizeof(path), "/proc/%" PRIu64 "/comm", pid);
  return read_small(path, name, NAMES_MAX_LENGTH + 1) > 0;
}

void names__note_program(names_t* n, uint64_t pid) {
  char name[NAMES_MAX_LENGTH + 1];
  if (n && pid != 0 && program_of(pid, name))
    names__set(n, false, pid, 0, name, strlen(name), NAMES_RANK_PROGRAM, 0);
}

void names__refresh_from_proc(names_t* n) {
  if (!n) return;
  char name[NAMES_MAX_LENGTH + 1], path[96];
  for (size_t i = 0; i < n->capacity; i++) {
    names_entry_t* e = &n->slots[i];
    if (!e->used || !e->local) continue; /* another pid namespace's koid */
    if (!e->thread) {
      if (program_of(e->koid, name))
        names__set(n, false, e->koid, 0, name, strlen(name), NAMES_RANK_PROC, 0);
      continue;
    }
    if (e->process_koid == 0) continue;
    /* under its own process only: a tid reused by another process is not it */
    snprintf(path, sizeof(path), "/proc/%" PRIu64 "/task/%" PRIu64 "/comm", e->process_koid,
             e->koid);
    if (read_small(path, name, sizeof(name)) > 0)
      names__set(n, true, e->koid, 0, name, strlen(name), NAMES_RANK_PROC, 0);
  }
}
