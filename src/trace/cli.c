/* Error reporting and input opening shared by the `trace` subcommands. */
#include "trace/cli.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "trace-reader/reader.h"

static void vreport(const char* cmd, const char* fmt, va_list ap) {
  fprintf(stderr, "trace %s: ", cmd);
  vfprintf(stderr, fmt, ap);
  fputc('\n', stderr);
}

void __cli_error(const char* cmd, const char* fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vreport(cmd, fmt, ap);
  va_end(ap);
}

int __cli_usage_error(const char* cmd, const char* fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vreport(cmd, fmt, ap);
  va_end(ap);
  fprintf(stderr, "Run 'trace %s --help' for usage.\n", cmd);
  return EXIT_USAGE;
}

int __cli_open_input(const char* cmd, const char* path) {
  if (strcmp(path, "-") == 0) return STDIN_FILENO;
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    __cli_error(cmd, "cannot open '%s': %s", path, strerror(errno));
    return -1;
  }
  struct stat st;
  if (fstat(fd, &st) == 0 && S_ISDIR(st.st_mode)) {
    __cli_error(cmd, "'%s' is a directory, not a trace archive", path);
    close(fd);
    return -1;
  }
  return fd;
}

bool __cli_is_regular_file(FILE* f) {
  struct stat st;
  return fstat(fileno(f), &st) == 0 && S_ISREG(st.st_mode);
}

void __cli_warn_if_recovered(const char* path, const trace_reader_t* reader) {
  if (!reader || !trace_reader_recovered(reader)) return;
  fprintf(stderr,
          "trace: warning: %s is the raw buffer of a trace that did not finish (the program "
          "crashed or was killed); recovered %llu records\n",
          strcmp(path, "-") == 0 ? "the input" : path,
          (unsigned long long)trace_reader_stats(reader).records);
}
