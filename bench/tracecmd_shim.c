/* LD_PRELOAD shim for bench/kernel_bench.py: lets Debian's trace-cmd record
 * run in sandboxes whose kernel forbids the function tracer's files
 * (set_ftrace_filter, set_ftrace_pid, ... give EPERM) and whose
 * /proc/sys/kernel/ftrace_enabled is read-only. trace-cmd resets those files
 * even when it records only events; the benchmark uses no function tracing,
 * so opening them yields /dev/null instead. Nothing else changes. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <fcntl.h>
#include <stdarg.h>
#include <string.h>

static int redirected(const char* path) {
  static const char* const kFiles[] = {"set_ftrace_filter", "set_ftrace_notrace",
                                       "set_ftrace_pid",    "set_graph_function",
                                       "set_graph_notrace", "/proc/sys/kernel/ftrace_enabled"};
  size_t n = strlen(path);
  for (size_t i = 0; i < sizeof(kFiles) / sizeof(kFiles[0]); i++) {
    size_t m = strlen(kFiles[i]);
    if (n >= m && strcmp(path + n - m, kFiles[i]) == 0) return 1;
  }
  return 0;
}

static mode_t mode_of(int flags, va_list ap) {
  return (flags & (O_CREAT | O_TMPFILE)) ? (mode_t)va_arg(ap, int) : 0;
}

int openat(int dirfd, const char* path, int flags, ...) {
  static int (*real)(int, const char*, int, ...);
  if (!real) real = (int (*)(int, const char*, int, ...))dlsym(RTLD_NEXT, "openat");
  va_list ap;
  va_start(ap, flags);
  mode_t mode = mode_of(flags, ap);
  va_end(ap);
  if (path && redirected(path)) return real(AT_FDCWD, "/dev/null", flags & ~O_TRUNC, mode);
  return real(dirfd, path, flags, mode);
}

int open(const char* path, int flags, ...) {
  va_list ap;
  va_start(ap, flags);
  mode_t mode = mode_of(flags, ap);
  va_end(ap);
  return openat(AT_FDCWD, path, flags, mode);
}

int open64(const char* path, int flags, ...) {
  va_list ap;
  va_start(ap, flags);
  mode_t mode = mode_of(flags, ap);
  va_end(ap);
  return openat(AT_FDCWD, path, flags, mode);
}

int openat64(int dirfd, const char* path, int flags, ...) {
  va_list ap;
  va_start(ap, flags);
  mode_t mode = mode_of(flags, ap);
  va_end(ap);
  return openat(dirfd, path, flags, mode);
}
