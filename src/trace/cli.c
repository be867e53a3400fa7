/* Error reporting and input opening shared by the `trace` subcommands. */
#include "trace/cli.h"

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ordered/ordered.h"
#include "trace-reader/reader.h"
#include "trace/live_input.h"

static void vreport(const char* cmd, const char* fmt, va_list ap) {
  fprintf(stderr, "trace %s: ", cmd);
  vfprintf(stderr, fmt, ap);
  fputc('\n', stderr);
}

void cli__error(const char* cmd, const char* fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vreport(cmd, fmt, ap);
  va_end(ap);
}

void cli__warning(const char* cmd, const char* fmt, ...) {
  fprintf(stderr, "trace %s: warning: ", cmd);
  va_list ap;
  va_start(ap, fmt);
  vfprintf(stderr, fmt, ap);
  va_end(ap);
  fputc('\n', stderr);
}

int cli__usage_error(const char* cmd, const char* fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vreport(cmd, fmt, ap);
  va_end(ap);
  fprintf(stderr, "Run 'trace %s --help' for usage.\n", cmd);
  return EXIT_USAGE;
}

int cli__parse_help_only(const char* cmd, const char* usage, int argc, char** argv, int positional,
                         const char* missing, int* first) {
  static const struct option kLong[] = {{"help", no_argument, NULL, 'h'}, {NULL, 0, NULL, 0}};
  int opt;
  opterr = 0;
  optind = 1;
  while ((opt = getopt_long(argc, argv, ":h", kLong, NULL)) != -1) {
    if (opt == 'h') {
      fputs(usage, stdout);
      return -1;
    }
    return cli__usage_error(cmd, "unknown option '%s'", argv[optind - 1]);
  }
  if (argc - optind < positional) return cli__usage_error(cmd, "%s", missing);
  if (argc - optind > positional)
    return cli__usage_error(cmd, "unexpected argument '%s'", argv[optind + positional]);
  *first = optind;
  return 0;
}

void cli__format_bytes(uint64_t bytes, char* out, size_t size) {
  if (bytes < 10 * 1024)
    snprintf(out, size, "%llu B", (unsigned long long)bytes);
  else if (bytes < 10 * 1024 * 1024)
    snprintf(out, size, "%.1f KiB", bytes / 1024.0);
  else
    snprintf(out, size, "%.1f MiB", bytes / (1024.0 * 1024.0));
}

int cli__open_input(const char* cmd, const char* path) {
  if (strcmp(path, "-") == 0) return STDIN_FILENO;
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    cli__error(cmd, "cannot open '%s': %s", path, strerror(errno));
    return -1;
  }
  struct stat st;
  bool stat_ok = fstat(fd, &st) == 0;
  if (stat_ok && S_ISDIR(st.st_mode)) {
    cli__error(cmd, "'%s' is a directory, not a trace archive", path);
    close(fd);
    return -1;
  }
  /* an unfinished file-mode trace: read its live buffer instead */
  if (stat_ok && S_ISREG(st.st_mode)) return live_input__follow(cmd, path, fd);
  return fd;
}

bool cli__is_regular_file(FILE* f) {
  struct stat st;
  return fstat(fileno(f), &st) == 0 && S_ISREG(st.st_mode);
}

void cli__warn_if_recovered(const char* path, const trace_reader_t* reader) {
  if (!reader || !trace_reader_recovered(reader)) return;
  fprintf(stderr,
          "trace: warning: %s is the raw buffer of a trace that did not finish (the program "
          "crashed or was killed); recovered %llu records\n",
          strcmp(path, "-") == 0 ? "the input" : path,
          (unsigned long long)trace_reader_stats(reader).records);
}

FILE* cli__temporary_file(void) {
  const char* dir = getenv("TMPDIR");
  if (!dir || !dir[0]) dir = "/tmp";
  int fd = open(dir, O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
  if (fd < 0) { /* a file system without O_TMPFILE: a named file, unlinked at once */
    char path[4096];
    if (snprintf(path, sizeof(path), "%s/fxtrace-XXXXXX", dir) >= (int)sizeof(path)) return NULL;
    fd = mkostemp(path, O_CLOEXEC);
    if (fd < 0) return NULL;
    unlink(path);
  }
  FILE* f = fdopen(fd, "w+");
  if (!f) close(fd);
  return f;
}

enum { MAX_SHOWN_WARNINGS = 10 };

bool cli__note_warning(cli_warnings_t* w, const trace_reader_t* reader) {
  trace_reader_error_t warning;
  if (!trace_reader_warning(reader, &warning)) return false;
  if (++w->count <= MAX_SHOWN_WARNINGS)
    fprintf(stderr, "trace %s: warning: %s: at byte offset %llu: %s\n", w->cmd,
            strcmp(w->path, "-") == 0 ? "the input" : w->path, (unsigned long long)warning.offset,
            warning.message);
  return true;
}

void cli__warnings_done(const cli_warnings_t* w) {
  if (w->count > MAX_SHOWN_WARNINGS)
    fprintf(stderr,
            "trace %s: warning: %llu records in all have a size field past their contents (the "
            "first %d are above)\n",
            w->cmd, (unsigned long long)w->count, MAX_SHOWN_WARNINGS);
}

int cli__parse_order_memory(const char* cmd, const char* text, size_t* bytes) {
  char* end;
  errno = 0;
  unsigned long long v = strtoull(text, &end, 10);
  unsigned shift = 0;
  if (*end == 'K' || *end == 'k') shift = 10;
  if (*end == 'M' || *end == 'm') shift = 20;
  if (*end == 'G' || *end == 'g') shift = 30;
  if (shift) end++;
  if (errno || *end || end == text || text[0] == '-' || v > (SIZE_MAX >> shift) ||
      (size_t)v << shift < ORDERED_MIN_MEMORY)
    return cli__usage_error(cmd, "--order-memory: expected a size of at least 4K, not '%s'", text);
  *bytes = (size_t)v << shift;
  return 0;
}
