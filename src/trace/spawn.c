/* `trace record`'s COMMAND, with only the descriptors trace inherited (see
 * spawn.h).
 *
 * fork(), not posix_spawn(): posix_spawn can close one range from a number
 * up (closefrom), but the descriptors to keep can lie anywhere, with trace's
 * own between them. Between fork and exec the child of this multi-threaded
 * process calls only async-signal-safe functions (sigaction, sigprocmask,
 * dup2, close, close_range, execve, write, _exit) on data prepared before
 * the fork. */
#include "trace/spawn.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

extern char** environ;

enum { FALLBACK_MAX_FD = 1 << 16 }; /* without /proc: the descriptors probed */

/* Ascending, not close-on-exec when main() began. */
static int* inherited;
static size_t inherited_count;

static void note(int fd) {
  int flags = fcntl(fd, F_GETFD);
  if (flags < 0 || (flags & FD_CLOEXEC)) return; /* closed, or never crosses an exec */
  int* grown = realloc(inherited, (inherited_count + 1) * sizeof(*grown));
  if (!grown) return; /* out of memory this early: the command gets less */
  inherited = grown;
  inherited[inherited_count++] = fd;
}

static int compare_ints(const void* a, const void* b) {
  int x = *(const int*)a, y = *(const int*)b;
  return (x > y) - (x < y);
}

void spawn__note_inherited(void) {
  free(inherited);
  inherited = NULL;
  inherited_count = 0;
  DIR* d = opendir("/proc/self/fd"); /* glibc opens it close-on-exec */
  if (d) {
    struct dirent* e;
    while ((e = readdir(d)) != NULL) {
      char* end;
      long fd = strtol(e->d_name, &end, 10);
      if (e->d_name[0] < '0' || e->d_name[0] > '9' || *end != '\0' || fd == dirfd(d)) continue;
      note((int)fd);
    }
    closedir(d);
  } else {
    long max = sysconf(_SC_OPEN_MAX);
    if (max < 0 || max > FALLBACK_MAX_FD) max = FALLBACK_MAX_FD;
    for (int fd = 0; fd < max; fd++) note(fd);
  }
  qsort(inherited, inherited_count, sizeof(int), compare_ints);
}

static bool was_inherited(int fd) {
  return bsearch(&fd, inherited, inherited_count, sizeof(int), compare_ints) != NULL;
}

/* The files execvp(3) would try for `file`, in order; NULL when out of memory. */
static char** exec_candidates(const char* file) {
  if (strchr(file, '/') || file[0] == '\0') {
    char** one = calloc(2, sizeof(char*));
    if (one && !(one[0] = strdup(file))) {
      free(one);
      return NULL;
    }
    return one;
  }
  const char* path = getenv("PATH");
  if (!path) path = "/bin:/usr/bin"; /* glibc's default */
  size_t n = 2;
  for (const char* p = path; *p; p++) n += *p == ':';
  char** list = calloc(n, sizeof(char*));
  if (!list) return NULL;
  size_t i = 0;
  for (const char* p = path;; i++) {
    const char* colon = strchr(p, ':');
    size_t length = colon ? (size_t)(colon - p) : strlen(p);
    size_t size = length + strlen(file) + 3;
    if (!(list[i] = malloc(size))) break;
    if (length == 0) /* an empty element is the current directory */
      snprintf(list[i], size, "./%s", file);
    else
      snprintf(list[i], size, "%.*s/%s", (int)length, p, file);
    if (!colon) return list;
    p = colon + 1;
  }
  for (size_t j = 0; list[j]; j++) free(list[j]);
  free(list);
  return NULL;
}

static void free_list(char** list) {
  for (size_t i = 0; list && list[i]; i++) free(list[i]);
  free(list);
}

/* Closes [from, to] in the child; async-signal-safe. */
static void close_between(int from, int to, int max_fd) {
  if (from > to) return;
#ifdef SYS_close_range
  if (syscall(SYS_close_range, (unsigned)from, (unsigned)to, 0u) == 0) return;
#endif
  if (to > max_fd) to = max_fd; /* an old kernel: one by one */
  for (int fd = from; fd <= to; fd++) close(fd);
}

/* The child: never returns. keep: ascending, the error pipe among them. It
 * waits for the parent's byte on go_pipe (the parent has published its pid):
 * the pipe's end without it means the parent died first, and the command
 * never runs. */
static void child(char** command, char** candidates, const int* keep, size_t keep_count,
                  bool stdout_to_stderr, int error_fd, int max_fd, const int go_pipe[2]) {
  close(go_pipe[1]);
  char go = 0;
  ssize_t got;
  do got = read(go_pipe[0], &go, 1);
  while (got < 0 && errno == EINTR);
  if (got != 1) _exit(127);
  struct sigaction dfl;
  memset(&dfl, 0, sizeof(dfl));
  dfl.sa_handler = SIG_DFL;
  for (int sig = 1; sig < NSIG; sig++)
    if (sig != SIGKILL && sig != SIGSTOP) sigaction(sig, &dfl, NULL); /* EINVAL: libc's own */
  if (stdout_to_stderr) dup2(STDERR_FILENO, STDOUT_FILENO); /* trace's stdout is the trace */
  int next = 0;
  for (size_t i = 0; i < keep_count; i++) {
    close_between(next, keep[i] - 1, max_fd);
    next = keep[i] + 1;
  }
  close_between(next, ~0u >> 1, max_fd);
  sigset_t none;
  sigemptyset(&none);
  sigprocmask(SIG_SETMASK, &none, NULL);
  int error = ENOENT;
  bool denied = false;
  for (size_t i = 0; candidates[i]; i++) {
    execve(candidates[i], command, environ);
    error = errno;
    if (error == EACCES)
      denied = true;
    else if (error != ENOENT && error != ENOTDIR && error != ESTALE && error != ENODEV &&
             error != ETIMEDOUT)
      break; /* execvp(3) stops at any other error too */
  }
  if (denied && (error == ENOENT || error == ENOTDIR)) error = EACCES;
  ssize_t n = write(error_fd, &error, sizeof(error));
  (void)n; /* the parent then sees the pipe's end: the exit status tells */
  _exit(127);
}

int spawn__command(char** command, bool stdout_to_stderr, pid_t* pid, void (*started)(pid_t)) {
  char** candidates = exec_candidates(command[0]);
  /* the inherited descriptors, with 1 when it becomes a copy of 2, and the
   * error pipe; one more slot for each */
  int* keep = malloc((inherited_count + 2) * sizeof(int));
  int error_pipe[2] = {-1, -1}, go_pipe[2] = {-1, -1};
  int err = 0;
  if (!candidates || !keep)
    err = ENOMEM;
  else if (pipe2(error_pipe, O_CLOEXEC) != 0 || pipe2(go_pipe, O_CLOEXEC) != 0)
    err = errno;
  if (err != 0) {
    for (int i = 0; i < 2; i++) {
      if (error_pipe[i] >= 0) close(error_pipe[i]);
      if (go_pipe[i] >= 0) close(go_pipe[i]);
    }
    free_list(candidates);
    free(keep);
    return err;
  }
  size_t keep_count = 0;
  for (size_t i = 0; i < inherited_count; i++)
    if (inherited[i] != STDOUT_FILENO || !stdout_to_stderr) keep[keep_count++] = inherited[i];
  bool redirect = stdout_to_stderr && was_inherited(STDERR_FILENO);
  if (redirect) keep[keep_count++] = STDOUT_FILENO;
  keep[keep_count++] = error_pipe[1]; /* close-on-exec: gone once the exec succeeds */
  qsort(keep, keep_count, sizeof(int), compare_ints);
  long max = sysconf(_SC_OPEN_MAX);
  int max_fd = max > 0 && max < (1L << 30) ? (int)max - 1 : (1 << 20);

  /* No handler of trace's may run in the child before it resets them. */
  sigset_t all, old;
  sigfillset(&all);
  pthread_sigmask(SIG_SETMASK, &all, &old);
  pid_t child_pid = fork();
  if (child_pid == 0)
    child(command, candidates, keep, keep_count, redirect, error_pipe[1], max_fd, go_pipe);
  if (child_pid < 0) err = errno;
  /* the pid is published before the command can run (the child waits for
   * the byte), so a signal that ends trace once the command runs also ends
   * the command (record_signals.h) */
  if (child_pid > 0 && started) started(child_pid);
  if (child_pid > 0 && write(go_pipe[1], "g", 1) != 1) err = errno;
  close(go_pipe[0]);
  close(go_pipe[1]); /* a child without the byte sees the end: it exits */
  pthread_sigmask(SIG_SETMASK, &old, NULL);
  close(error_pipe[1]);
  if (child_pid > 0) {
    int exec_error = 0;
    ssize_t n;
    do n = read(error_pipe[0], &exec_error, sizeof(exec_error));
    while (n < 0 && errno == EINTR);
    if (err != 0 || n == (ssize_t)sizeof(exec_error)) { /* no command: reap the child */
      if (err == 0) err = exec_error;
      if (started) started(0);
      while (waitpid(child_pid, NULL, 0) < 0 && errno == EINTR) {
      }
    } else {
      *pid = child_pid;
    }
  }
  close(error_pipe[0]);
  free_list(candidates);
  free(keep);
  return err;
}
