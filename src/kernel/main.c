/* trace_kernel_provider: the kernel trace provider program. Registers with
 * the trace manager like any provider (libtrace-provider) and records the
 * kernel:* categories of each trace from ftrace (docs/kernel-provider.md).
 * Runs until SIGINT or SIGTERM (status 0), or until the manager goes away
 * or none answers (status 1). */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "kernel/kprovider.h"
#include "kernel/ktracefs.h"
#include "trace-provider/provider.h"

static const char kUsage[] =
    "usage: trace_kernel_provider [--help]\n"
    "Registers with the trace manager (FXTRACE_SOCKET, else the default socket) as\n"
    "'" KPROVIDER_NAME
    "' and records the kernel:* categories a trace enables\n"
    "(kernel:sched, kernel:task, kernel:irq, kernel:SYSTEM/EVENT) from ftrace, in a\n"
    "tracefs instance of its own. Needs root. Ends on SIGINT or SIGTERM (exit status\n"
    "0), or with status 1 when no manager answers or the manager goes away.\n";

int main(int argc, char** argv) {
  if (argc > 1) {
    bool help = strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0;
    fputs(kUsage, help ? stdout : stderr);
    return help ? 0 : 2;
  }
  char reason[32];
  if (!ktracefs__available(reason, sizeof(reason))) {
    fprintf(stderr, "trace_kernel_provider: kernel tracing needs %s\n",
            strcmp(reason, "root") == 0 ? "root (tracefs)" : "tracefs");
    return 1;
  }
  unsetenv("FXTRACE_OUTPUT"); /* this provider only works with a manager */
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGINT);
  sigaddset(&set, SIGTERM);
  sigaddset(&set, SIGHUP);
  pthread_sigmask(SIG_BLOCK, &set, NULL); /* every thread inherits the mask */
  if (kprovider__install() != 0) {
    fprintf(stderr, "trace_kernel_provider: cannot observe the trace engine\n");
    return 1;
  }
  bool started = false;
  trace_provider_t* provider = trace_provider_create_synchronously(KPROVIDER_NAME, &started);
  if (!provider) {
    fprintf(stderr, "trace_kernel_provider: cannot create the provider\n");
    return 1;
  }
  /* registered (synchronously) or not: asked at once, before the manager
   * has much time to go away, so that the message below says which */
  bool was_connected = trace_provider_is_connected(provider);
  kprovider__add_known_categories(provider);
  /* Until a signal, or until the manager goes away: a provider cannot
   * re-register, so the program ends (status 1) and its supervisor (systemd's
   * Restart=on-failure) starts it again for the next manager. */
  int status = 0;
  for (;;) {
    if (!trace_provider_is_connected(provider)) {
      fprintf(stderr, "trace_kernel_provider: %s\n",
              was_connected ? "the trace manager went away" : "no trace manager to register with");
      status = 1;
      break;
    }
    struct timespec poll = {0, 200 * 1000 * 1000};
    if (sigtimedwait(&set, NULL, &poll) >= 0) break;
  }
  trace_provider_destroy(provider);
  kprovider__uninstall();
  return status;
}
