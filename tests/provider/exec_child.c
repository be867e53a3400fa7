/* A traced program that execs another while its provider runs, for
 * test_exec_descriptors.py (issue 18: the child must get none of the
 * provider's descriptors — its buffer, its archive, its manager socket).
 *
 *   exec_child PROGRAM [ARGS...]
 *       Creates the provider "exec_child" (file mode or manager mode, as the
 *       environment says), records the instant test/"before", runs PROGRAM
 *       with fork() and execv() as any program might (no descriptor closed
 *       by hand), waits for it, records test/"after", destroys the provider
 *       and exits with PROGRAM's exit status. */
#include <stdio.h>
#include <sys/wait.h>
#include <unistd.h>

#include "trace-provider/provider.h"
#include "trace/event.h"

int main(int argc, char** argv) {
  if (argc < 2) {
    fprintf(stderr, "usage: exec_child PROGRAM [ARGS...]\n");
    return 2;
  }
  trace_provider_t* provider = trace_provider_create_with_name("exec_child");
  TRACE_INSTANT("test", "before", TRACE_SCOPE_THREAD);
  fflush(NULL);
  pid_t pid = fork();
  if (pid == 0) {
    execv(argv[1], argv + 1);
    perror("exec_child: execv");
    _exit(127);
  }
  int status = 0;
  if (pid < 0 || waitpid(pid, &status, 0) != pid) {
    perror("exec_child: fork");
    return 1;
  }
  TRACE_INSTANT("test", "after", TRACE_SCOPE_THREAD);
  trace_provider_destroy(provider);
  return WIFEXITED(status) ? WEXITSTATUS(status) : 1;
}
