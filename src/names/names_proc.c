/* Names from /proc (names.h): a process's program and a thread's comm. */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
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
 * have neither). false if the process is gone. *from_exe (may be NULL):
 * whether the executable said it (argv[0] is the program's to rewrite). */
static bool program_of(uint64_t pid, char name[NAMES_MAX_LENGTH + 1], bool* from_exe) {
  if (from_exe) *from_exe = false;
  char path[64], buf[4096];
  snprintf(path, sizeof(path), "/proc/%" PRIu64 "/exe", pid);
  ssize_t n = readlink(path, buf, sizeof(buf) - 1);
  if (n > 0) {
    buf[n] = '\0';
    static const char kDeleted[] = " (deleted)";
    size_t tail = sizeof(kDeleted) - 1;
    if ((size_t)n > tail && strcmp(buf + n - tail, kDeleted) == 0) buf[n - tail] = '\0';
    if (copy_name(name, base_of(buf))) {
      if (from_exe) *from_exe = true;
      return true;
    }
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

/* /proc/PID/stat's starttime (field 22: clock ticks after boot), or 0 if
 * pid is gone. */
static uint64_t start_time_of(uint64_t pid) {
  char path[64], buf[1024];
  snprintf(path, sizeof(path), "/proc/%" PRIu64 "/stat", pid);
  if (read_small(path, buf, sizeof(buf)) <= 0) return 0;
  const char* p = strrchr(buf, ')'); /* after the comm, which may hold anything */
  if (!p) return 0;
  /* fields 3 (state) .. 22 follow, one space before each */
  for (int field = 2; field < 22; field++) {
    p = strchr(p + 1, ' ');
    if (!p) return 0;
  }
  return strtoull(p + 1, NULL, 10);
}

/* Whether pid is a process now (its thread-group leader), not a thread of
 * another process that was given the same number: /proc/TID answers for any
 * thread, under its own comm. */
static bool is_process(uint64_t pid) {
  char path[64], buf[2048];
  snprintf(path, sizeof(path), "/proc/%" PRIu64 "/status", pid);
  if (read_small(path, buf, sizeof(buf)) <= 0) return false;
  const char* tgid = strstr(buf, "\nTgid:");
  return tgid && strtoull(tgid + 6, NULL, 10) == pid;
}

/* Whether /proc/PID is still the process e names: the same start time as
 * when its program was read (a provider, alive then), else at least a
 * process. A process that ended and whose pid was given to a thread of
 * another process must not take that thread's comm (nor its threads). */
static bool same_process(names_entry_t* e) {
  if (!e->checked) {
    e->checked = 1;
    e->same = e->start_time ? start_time_of(e->koid) == e->start_time : is_process(e->koid);
  }
  return e->same;
}

/* Never 0 (0: no program read). */
static uint64_t hash_of(const char* name) {
  uint64_t h = UINT64_C(0xcbf29ce484222325);
  for (; *name; name++) h = (h ^ (unsigned char)*name) * UINT64_C(0x100000001b3);
  return h ? h : 1;
}

void names__note_program(names_t* n, uint64_t pid, uint64_t now_ns) {
  char name[NAMES_MAX_LENGTH + 1];
  if (!n || pid == 0) return;
  uint64_t start_time = start_time_of(pid); /* first: the program read after is its own */
  bool from_exe;
  if (!program_of(pid, name, &from_exe)) return;
  /* a provider of this pid came before: the pid now runs another program
   * (an exec) or is another process, or the same program made its
   * provider again, whose engine then says its names again at its stop
   * (stop_names.c), with that time */
  names_entry_t* e = names__lookup(n, false, pid);
  if (e && e->start_time != 0) names__program_changed(n, pid, now_ns);
  names__set(n, false, pid, 0, name, strlen(name), NAMES_RANK_PROGRAM, 0);
  e = names__lookup(n, false, pid);
  if (e) {
    e->start_time = start_time;
    /* only an executable's name tells an exec: argv[0] can be rewritten */
    e->program_hash = from_exe ? hash_of(name) : 0;
  }
}

/* /proc's name for thread t of process `process`, if it is still one of its
 * threads (a tid reused by another process is not it). */
static void refresh_thread(names_t* n, uint64_t process, uint64_t tid) {
  char path[96], name[NAMES_MAX_LENGTH + 1];
  snprintf(path, sizeof(path), "/proc/%" PRIu64 "/task/%" PRIu64 "/comm", process, tid);
  if (read_small(path, name, sizeof(name)) > 0)
    names__set(n, true, tid, 0, name, strlen(name), NAMES_RANK_PROC, 0);
}

void names__refresh_from_proc(names_t* n, uint64_t now_ns) {
  if (!n) return;
  char name[NAMES_MAX_LENGTH + 1];
  for (size_t i = 0; i < n->capacity; i++) n->slots[i].checked = 0;
  for (size_t i = 0; i < n->capacity; i++) {
    names_entry_t* e = &n->slots[i];
    if (!e->used || !e->local) continue; /* another pid namespace's koid */
    if (!e->thread) {
      bool from_exe;
      if (!same_process(e) || !program_of(e->koid, name, &from_exe)) continue;
      uint64_t hash = hash_of(name);
      if (e->program_hash && from_exe && hash != e->program_hash) {
        /* it exec'd another program since its provider joined: what that
         * program named (its main thread, the process) is no longer so;
         * the table neither grows nor moves here */
        e->program_hash = hash;
        names__entry_changed(e, now_ns);
        names_entry_t* main_thread = names__lookup(n, true, e->koid);
        names__entry_changed(main_thread, now_ns);
        if (main_thread) refresh_thread(n, e->koid, e->koid);
      }
      names__set(n, false, e->koid, 0, name, strlen(name), NAMES_RANK_PROC, 0);
      continue;
    }
    if (e->process_koid == 0) continue;
    names_entry_t* process = names__lookup(n, false, e->process_koid);
    if (process ? !same_process(process) : !is_process(e->process_koid)) continue;
    /* under its own process only: a tid reused by another process is not it */
    refresh_thread(n, e->process_koid, e->koid);
  }
}
