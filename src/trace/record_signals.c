/* `trace record`'s signals (see record_signals.h). Everything a handler
 * touches is a sig_atomic_t or a lock-free atomic set before the handler
 * can need it; the handlers call only async-signal-safe functions. */
#include "trace/record_signals.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdatomic.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "trace/local_manager.h"
#include "trace/record_kernel.h"

static int wake_pipe[2] = {-1, -1};
static volatile sig_atomic_t interrupted;
static atomic_bool stopping;
static atomic_int command_pid;
static atomic_int output_fd = -1;
static const char* _Atomic output_path;

static const int kCrashSignals[] = {SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGABRT, SIGTRAP, SIGSYS};
static const int kIgnoredSignals[] = {SIGPIPE, SIGXFSZ};
static const int kTerminationSignals[] = {SIGHUP,    SIGINT,  SIGQUIT, SIGTERM, SIGUSR2,   SIGALRM,
                                          SIGVTALRM, SIGPROF, SIGIO,   SIGPWR,  SIGSTKFLT, SIGXCPU};
static atomic_uint snapshot_requests;

void record_signals__wake(void) {
  int saved = errno;
  ssize_t n = write(wake_pipe[1], "x", 1);
  (void)n; /* full: a wake-up is pending anyway */
  errno = saved;
}

/* What must not outlive trace, removed with system calls only. */
static void clean_up_now(void) {
  record_kernel__emergency();
  local_manager__emergency();
  pid_t pid = atomic_exchange(&command_pid, 0);
  if (pid > 0) kill(pid, SIGTERM);
  int fd = atomic_exchange(&output_fd, -1);
  const char* path = atomic_exchange(&output_path, NULL);
  struct stat st;
  if (fd >= 0 && path && fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_size == 0) {
    struct stat named; /* the same file still under its name */
    if (stat(path, &named) == 0 && named.st_dev == st.st_dev && named.st_ino == st.st_ino)
      unlink(path);
  }
}

/* Cleans up, then dies of `sig` with its default action. */
static void die_of(int sig) {
  clean_up_now();
  struct sigaction dfl;
  memset(&dfl, 0, sizeof(dfl));
  dfl.sa_handler = SIG_DFL;
  sigaction(sig, &dfl, NULL);
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, sig);
  /* a signal sent from outside is delivered here; a crash repeats itself
   * when the handler returns, and then takes its default action */
  raise(sig);
  pthread_sigmask(SIG_UNBLOCK, &set, NULL);
}

static void on_termination(int sig) {
  if (interrupted || atomic_load(&stopping)) {
    die_of(sig);
    return;
  }
  interrupted = sig;
  record_signals__wake();
}

static void on_snapshot(int sig) {
  (void)sig;
  atomic_fetch_add(&snapshot_requests, 1);
  record_signals__wake();
}

static void on_child(int sig) {
  (void)sig;
  record_signals__wake();
}

static void set_action(int sig, void (*handler)(int), int flags) {
  struct sigaction sa;
  memset(&sa, 0, sizeof(sa));
  sa.sa_handler = handler;
  sa.sa_flags = flags;
  sigfillset(&sa.sa_mask); /* one handler at a time */
  sigaction(sig, &sa, NULL);
}

int record_signals__start(void) {
  if (pipe2(wake_pipe, O_CLOEXEC | O_NONBLOCK) != 0) return -errno;
  interrupted = 0;
  atomic_store(&stopping, false);
  for (size_t i = 0; i < sizeof(kTerminationSignals) / sizeof(kTerminationSignals[0]); i++)
    set_action(kTerminationSignals[i], on_termination, 0);
  for (int sig = SIGRTMIN; sig <= SIGRTMAX; sig++) set_action(sig, on_termination, 0);
  for (size_t i = 0; i < sizeof(kCrashSignals) / sizeof(kCrashSignals[0]); i++)
    set_action(kCrashSignals[i], die_of, 0);
  for (size_t i = 0; i < sizeof(kIgnoredSignals) / sizeof(kIgnoredSignals[0]); i++)
    set_action(kIgnoredSignals[i], SIG_IGN, 0);
  atomic_store(&snapshot_requests, 0);
  set_action(SIGUSR1, on_snapshot, SA_RESTART);
  set_action(SIGCHLD, on_child, SA_NOCLDSTOP);
  return 0;
}

void record_signals__stop(void) {
  for (size_t i = 0; i < sizeof(kTerminationSignals) / sizeof(kTerminationSignals[0]); i++)
    set_action(kTerminationSignals[i], SIG_DFL, 0);
  for (int sig = SIGRTMIN; sig <= SIGRTMAX; sig++) set_action(sig, SIG_DFL, 0);
  for (size_t i = 0; i < sizeof(kCrashSignals) / sizeof(kCrashSignals[0]); i++)
    set_action(kCrashSignals[i], SIG_DFL, 0);
  for (size_t i = 0; i < sizeof(kIgnoredSignals) / sizeof(kIgnoredSignals[0]); i++)
    set_action(kIgnoredSignals[i], SIG_DFL, 0);
  set_action(SIGCHLD, SIG_DFL, 0);
  set_action(SIGUSR1, SIG_DFL, 0);
  atomic_store(&command_pid, 0);
  atomic_store(&output_fd, -1);
  atomic_store(&output_path, NULL);
  for (int i = 0; i < 2; i++) {
    if (wake_pipe[i] >= 0) close(wake_pipe[i]);
    wake_pipe[i] = -1;
  }
}

int record_signals__wake_fd(void) { return wake_pipe[0]; }

void record_signals__drain(void) {
  char buf[64];
  while (read(wake_pipe[0], buf, sizeof(buf)) > 0) {
  }
}

int record_signals__interrupted(void) { return interrupted; }

unsigned record_signals__snapshot_requests(void) { return atomic_exchange(&snapshot_requests, 0); }

void record_signals__stopping(void) { atomic_store(&stopping, true); }

void record_signals__set_command(pid_t pid) { atomic_store(&command_pid, pid); }

void record_signals__set_output(int fd, const char* path) {
  atomic_store(&output_path, NULL);
  atomic_store(&output_fd, fd);
  atomic_store(&output_path, path);
}
