/* Not part of the public API: how `trace record` runs its COMMAND. The
 * command starts with standard input, output and error plus exactly the
 * descriptors `trace` itself inherited from its parent, untouched; nothing
 * that trace, its libraries (libfxtrace, libtracefs, libzstd...) or the
 * in-process manager and kernel provider opened crosses the exec, even a
 * descriptor another thread opens without close-on-exec at the very moment
 * of the spawn: the child closes every descriptor that is not on the list
 * before it execs. */
#ifndef FXTRACE_TRACE_SPAWN_H_
#define FXTRACE_TRACE_SPAWN_H_

#include <stdbool.h>
#include <sys/types.h>

/* Notes the descriptors open now, and not close-on-exec, as the ones trace
 * inherited. Call first thing in main(), before anything opens one (a
 * descriptor opened earlier by a library constructor without close-on-exec
 * would count as inherited). trace must never close one of them: its number
 * could then be reused by a descriptor of its own, which would pass. */
void spawn__note_inherited(void);

/* Starts `command` (NULL-terminated; command[0] looked up in PATH as
 * execvp(3) does, without its fallback to /bin/sh) with the environment,
 * every signal at its default action and none blocked; stdout_to_stderr
 * makes its standard output trace's standard error. 0 with *pid, or the
 * errno of the failed fork or exec (the exec's error comes back through a
 * close-on-exec pipe, so an unknown command fails here). started, if not
 * NULL, is called with the child's pid before the command can run (the child
 * waits for it), and with 0 when there is no command after all: a signal
 * handler that ends the command (record_signals__set_command) knows its pid
 * from the moment the command runs. */
int spawn__command(char** command, bool stdout_to_stderr, pid_t* pid, void (*started)(pid_t));

#endif /* FXTRACE_TRACE_SPAWN_H_ */
