/* Not part of the public API: what the `trace` subcommands share: the
 * command table, error reporting and input opening. */
#ifndef FXTRACE_TRACE_CLI_H_
#define FXTRACE_TRACE_CLI_H_

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

/* Exit statuses of every subcommand. */
enum { EXIT_OK = 0, EXIT_FAILED = 1, EXIT_USAGE = 2 };

int cmd__convert(int argc, char** argv);
int cmd__dump(int argc, char** argv);
int cmd__formats(int argc, char** argv);
int cmd__gen_sample(int argc, char** argv);
int cmd__list_categories(int argc, char** argv);
int cmd__list_providers(int argc, char** argv);
int cmd__list_sessions(int argc, char** argv); /* cmd_sessions.c */
int cmd__merge(int argc, char** argv);         /* src/merge/cmd_merge.c */
int cmd__record(int argc, char** argv);
int cmd__recover(int argc, char** argv);
int cmd__stop(int argc, char** argv); /* cmd_sessions.c */
int cmd__summary(int argc, char** argv);

/* Prints "trace CMD: message" to stderr. */
void cli__error(const char* cmd, const char* fmt, ...) __attribute__((format(printf, 2, 3)));

/* Prints "trace CMD: warning: message" to stderr. */
void cli__warning(const char* cmd, const char* fmt, ...) __attribute__((format(printf, 2, 3)));

/* Opens `path` for reading ("-" is stdin); returns the fd, or -1 after
 * printing why. */
int cli__open_input(const char* cmd, const char* path);

/* True when f is a regular file. Only such an output is removed after a
 * failed write: never a device, a FIFO or whatever else the user named. */
bool cli__is_regular_file(FILE* f);

/* When the reader recovered `path` from a raw trace buffer (a traced program
 * that crashed or was killed before finishing its file), warns so on
 * stderr with the number of records read: the trace is incomplete, but the
 * exit status stays 0. */
struct trace_reader;
void cli__warn_if_recovered(const char* path, const struct trace_reader* reader);

/* An anonymous read-write file in $TMPDIR (else /tmp), close-on-exec, gone
 * when closed: tmpfile(3) without the descriptor leaking into a child. NULL
 * with errno. */
FILE* cli__temporary_file(void);
/* The reader's warnings (trace_reader_warning(): records whose size field
 * covers words past their contents, which are skipped), as dump, convert
 * and summary show them: the first MAX_SHOWN each on stderr with the
 * record's offset ("trace CMD: warning: PATH: at byte offset N: ..."), then
 * how many in all. */
typedef struct cli_warnings {
  const char* cmd;
  const char* path;
  uint64_t count;
} cli_warnings_t;

/* Call after each TRACE_READ_RECORD: reports its warning, if any; true if
 * there was one. */
bool cli__note_warning(cli_warnings_t* w, const struct trace_reader* reader);

/* At the end: the total when some were not shown. */
void cli__warnings_done(const cli_warnings_t* w);

/* Prints the usage error and a hint to run --help; returns EXIT_USAGE. */
int cli__usage_error(const char* cmd, const char* fmt, ...) __attribute__((format(printf, 2, 3)));
/* A command whose only option is --help: prints `usage` on --help (then
 * returns -1), else checks that exactly `positional` arguments follow (a
 * usage error's exit status when not; `missing` says what a missing one is)
 * and sets *first to the first one's index: 0. */
int cli__parse_help_only(const char* cmd, const char* usage, int argc, char** argv, int positional,
                         const char* missing, int* first);
/* A byte count for people: "123 B", "45.6 KiB", "7.8 MiB". */
void cli__format_bytes(uint64_t bytes, char* out, size_t size);
/* --order-memory's value: N, NK, NM or NG (binary units), at least
 * ORDERED_MIN_MEMORY (src/ordered/ordered.h). 0, or a usage error's exit
 * status (said for `cmd`). */
int cli__parse_order_memory(const char* cmd, const char* text, size_t* bytes);

#endif /* FXTRACE_TRACE_CLI_H_ */
