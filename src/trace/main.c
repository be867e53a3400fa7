/* `trace`: the fxtrace command-line client. Each subcommand lives in its own
 * cmd_*.c file; this file only dispatches. */
#include <stdio.h>
#include <string.h>

#include "remote/remote.h"
#include "trace/cli.h"
#include "trace/spawn.h"

typedef struct command {
  const char* name;
  int (*run)(int argc, char** argv);
  const char* summary; /* NULL: hidden from --help */
} command_t;

static const command_t kCommands[] = {
    {"convert", cmd__convert, "convert an FXT archive to Chrome Trace Event JSON"},
    {"dump", cmd__dump, "print every record of an FXT archive, one per line"},
    {"formats", cmd__formats, "list the typed-event formats an FXT archive defines"},
    {"recover", cmd__recover, "rebuild the FXT archive of a program that crashed while tracing"},
    {"merge", cmd__merge, "merge archives of several hosts into one on one timeline"},
    {"record", cmd__record, "record a trace through the trace manager (of COMMAND, if given)"},
    {"list-providers", cmd__list_providers, "list the providers registered with the manager"},
    {"list-categories", cmd__list_categories, "list the categories the manager knows"},
    {"list-sessions", cmd__list_sessions, "list the manager's running trace sessions"},
    {"stop", cmd__stop, "stop a running trace session (its client writes its archive)"},
    {"summary", cmd__summary, "summarize an FXT archive: durations, counters, threads, CPU time"},
    {"gen-sample", cmd__gen_sample, NULL},
    /* the far end of `trace record --host` (docs/multi-host.md) */
    {"remote", remote__agent_main, NULL},
    {"remote-hold", remote__hold_main, NULL},
};

static void usage(FILE* out) {
  fputs(
      "Usage: trace COMMAND [OPTIONS]\n\nfxtrace, the Fuchsia tracing system for Linux.\n\n"
      "Commands:\n",
      out);
  for (size_t i = 0; i < sizeof(kCommands) / sizeof(kCommands[0]); i++)
    if (kCommands[i].summary) fprintf(out, "  %-16s %s\n", kCommands[i].name, kCommands[i].summary);
  fputs("\nRun 'trace COMMAND --help' for a command's options.\n", out);
}

int main(int argc, char** argv) {
  spawn__note_inherited(); /* before anything opens a descriptor */
  if (argc < 2) {
    usage(stderr);
    return EXIT_USAGE;
  }
  const char* name = argv[1];
  if (strcmp(name, "--help") == 0 || strcmp(name, "-h") == 0 || strcmp(name, "help") == 0) {
    usage(stdout);
    return EXIT_OK;
  }
  if (strcmp(name, "--version") == 0) {
    puts("trace (fxtrace) " FXTRACE_VERSION);
    return EXIT_OK;
  }
  for (size_t i = 0; i < sizeof(kCommands) / sizeof(kCommands[0]); i++)
    if (strcmp(name, kCommands[i].name) == 0) return kCommands[i].run(argc - 1, argv + 1);
  fprintf(stderr, "trace: unknown command '%s'\n", name);
  usage(stderr);
  return EXIT_USAGE;
}
