/* Lists the descriptors this process started with and those of its parent,
 * for test_descriptors.py and test_exec_descriptors.py (issue 18: nothing
 * fxtrace opens crosses an exec). One line each, on standard output or the
 * file given by --out (trace record -o - makes the command's stdout trace's
 * stderr):
 *
 *   self FD TARGET
 *   parent FD TARGET cloexec|inherit
 *
 * TARGET is the /proc/PID/fd link; the parent's close-on-exec flag comes from
 * /proc/PID/fdinfo's "flags:" (O_CLOEXEC). This program opens nothing before
 * it lists its own descriptors, except the listing's own directory, which it
 * leaves out. --wait-for=TEXT first waits (up to 20 s) until one of the
 * parent's descriptors links to a path containing TEXT, so the parent's list
 * is taken once that descriptor exists. */
#include <dirent.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static bool link_of(const char* dir, const char* name, char* out, size_t size) {
  char path[512];
  snprintf(path, sizeof(path), "%s/%s", dir, name);
  ssize_t n = readlink(path, out, size - 1);
  if (n < 0) return false;
  out[n] = '\0';
  return true;
}

/* The O_CLOEXEC bit of /proc/PID/fdinfo/FD's flags (octal); -1 if unknown. */
static int cloexec_of(long pid, const char* fd) {
  char path[320], line[256];
  snprintf(path, sizeof(path), "/proc/%ld/fdinfo/%s", pid, fd);
  FILE* f = fopen(path, "re");
  if (!f) return -1;
  int result = -1;
  while (fgets(line, sizeof(line), f))
    if (strncmp(line, "flags:", 6) == 0) result = (strtoul(line + 6, NULL, 8) & O_CLOEXEC) != 0;
  fclose(f);
  return result;
}

static bool parent_has(long pid, const char* text) {
  char dir[64], target[4096];
  snprintf(dir, sizeof(dir), "/proc/%ld/fd", pid);
  DIR* d = opendir(dir);
  if (!d) return false;
  bool found = false;
  struct dirent* e;
  while (!found && (e = readdir(d)) != NULL)
    found = e->d_name[0] != '.' && link_of(dir, e->d_name, target, sizeof(target)) &&
            strstr(target, text) != NULL;
  closedir(d);
  return found;
}

int main(int argc, char** argv) {
  const char* wait_for = NULL;
  const char* out_path = NULL;
  for (int i = 1; i < argc; i++) {
    if (strncmp(argv[i], "--wait-for=", 11) == 0)
      wait_for = argv[i] + 11;
    else if (strncmp(argv[i], "--out=", 6) == 0)
      out_path = argv[i] + 6;
    else {
      fprintf(stderr, "usage: fd_report [--wait-for=TEXT] [--out=FILE]\n");
      return 2;
    }
  }
  /* our own descriptors first, before anything here opens one */
  static char lines[64 * 1024];
  size_t used = 0;
  DIR* d = opendir("/proc/self/fd");
  if (!d) {
    perror("fd_report: /proc/self/fd");
    return 1;
  }
  struct dirent* e;
  char target[4096];
  while ((e = readdir(d)) != NULL) {
    if (e->d_name[0] == '.' || atoi(e->d_name) == dirfd(d)) continue;
    if (!link_of("/proc/self/fd", e->d_name, target, sizeof(target))) continue;
    used += (size_t)snprintf(lines + used, sizeof(lines) - used, "self %s %s\n", e->d_name, target);
    if (used >= sizeof(lines)) return 1;
  }
  closedir(d);

  long parent = (long)getppid();
  if (wait_for) {
    struct timespec step = {0, 20 * 1000 * 1000};
    for (int i = 0; i < 1000 && !parent_has(parent, wait_for); i++) nanosleep(&step, NULL);
  }
  FILE* out = out_path ? fopen(out_path, "we") : stdout;
  if (!out) {
    perror("fd_report: --out");
    return 1;
  }
  fputs(lines, out);
  char dir[64];
  snprintf(dir, sizeof(dir), "/proc/%ld/fd", parent);
  d = opendir(dir);
  while (d && (e = readdir(d)) != NULL) {
    if (e->d_name[0] == '.' || !link_of(dir, e->d_name, target, sizeof(target))) continue;
    int cloexec = cloexec_of(parent, e->d_name);
    if (cloexec < 0) continue; /* closed meanwhile */
    fprintf(out, "parent %s %s %s\n", e->d_name, target, cloexec ? "cloexec" : "inherit");
  }
  if (d) closedir(d);
  return fclose(out) == 0 ? 0 : 1;
}
