/* `trace remote --protocol=N` (hidden): the far end of a `trace record
 * --host` channel (docs/multi-host.md#protocol), on its standard input and
 * output. It answers clock requests with its trace clock, and on START
 * records with a `trace record -o -` of its own, which finds that host's
 * trace manager (or runs one in-process) exactly as a local recording
 * does; the archive it writes comes back as DATA frames.
 *
 * That `trace record` traces a command, `trace remote-hold NOTIFY HOLD` (two
 * descriptor numbers):
 * started only once tracing has started, it writes the manager's socket
 * path to NOTIFY (so the agent knows, and says STARTED), then waits for
 * HOLD to reach its end: the agent closes HOLD on STOP (or when its
 * channel ends), the command exits, and `trace record` stops the trace and
 * writes the archive, as when any traced command exits. */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "remote/remote.h"
#include "trace/cli.h"

/* The only `trace record` options the near end may pass. */
static bool allowed_option(const char* o) {
  static const char* const kAllowed[] = {
      "--categories=", "--buffering-mode=", "--buffer-size=", "--stop-timeout=", "--kernel-sched="};
  for (size_t i = 0; i < sizeof(kAllowed) / sizeof(kAllowed[0]); i++)
    if (strncmp(o, kAllowed[i], strlen(kAllowed[i])) == 0) return true;
  return false;
}

typedef struct agent {
  pid_t child;
  int out_fd;    /* the archive `trace record` writes */
  int notify_fd; /* remote-hold's socket path, then its end */
  int hold_fd;   /* closed: remote-hold exits, the recording stops */
  bool started, start_failed, stopped, channel_gone;
  char socket_path[256];
  size_t socket_length;
} agent_t;

static bool say_error(const char* fmt, const char* arg) {
  char msg[512];
  snprintf(msg, sizeof(msg), fmt, arg);
  fprintf(stderr, "trace remote: %s\n", msg);
  return remote_channel__write(STDOUT_FILENO, REMOTE_ERROR, msg, strlen(msg) + 1);
}

static int dup_high(int fd) { return fcntl(fd, F_DUPFD_CLOEXEC, 10); }

/* Starts `trace record -o - OPTIONS -- trace remote-hold NOTIFY HOLD`. */
static bool start_recording(agent_t* a, const remote_frame_t* f) {
  const char* options[REMOTE_MAX_OPTIONS];
  size_t count = 0;
  size_t at = 0;
  while (at < f->length) {
    const char* o = (const char*)f->payload + at;
    size_t n = strnlen(o, f->length - at);
    if (n == f->length - at || count == REMOTE_MAX_OPTIONS || !allowed_option(o))
      return say_error("bad START options%s", "");
    options[count++] = o;
    at += n + 1;
  }
  char self[4096];
  ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
  if (n <= 0) return say_error("cannot find its own executable: %s", strerror(errno));
  self[n] = '\0';
  char* argv[REMOTE_MAX_OPTIONS + 12];
  size_t k = 0;
  argv[k++] = self;
  argv[k++] = "record";
  argv[k++] = "-o";
  argv[k++] = "-";
  for (size_t i = 0; i < count; i++) argv[k++] = (char*)options[i];
  argv[k++] = "--";
  argv[k++] = self;
  argv[k++] = "remote-hold";
  char notify_arg[16], hold_arg[16];
  argv[k++] = notify_arg;
  argv[k++] = hold_arg;
  argv[k] = NULL;
  int out[2] = {-1, -1}, notify[2] = {-1, -1}, hold[2] = {-1, -1};
  if (pipe2(out, O_CLOEXEC) != 0 || pipe2(notify, O_CLOEXEC) != 0 || pipe2(hold, O_CLOEXEC) != 0) {
    int e = errno;
    /* the pipes made before the one that failed (a failed pipe2 leaves -1s) */
    int made[] = {out[0], out[1], notify[0], notify[1], hold[0], hold[1]};
    for (size_t i = 0; i < sizeof(made) / sizeof(made[0]); i++)
      if (made[i] >= 0) close(made[i]);
    return say_error("cannot create a pipe: %s", strerror(e));
  }
  int devnull = open("/dev/null", O_RDONLY | O_CLOEXEC);
  /* above 0..2, so that the child's dup2s onto 0..2 cannot overwrite them */
  int h_out = dup_high(out[1]), h_notify = dup_high(notify[1]), h_hold = dup_high(hold[0]),
      h_null = devnull >= 0 ? dup_high(devnull) : -1;
  snprintf(notify_arg, sizeof(notify_arg), "%d", h_notify);
  snprintf(hold_arg, sizeof(hold_arg), "%d", h_hold);
  pid_t pid = h_out >= 0 && h_notify >= 0 && h_hold >= 0 && h_null >= 0 ? fork() : -1;
  if (pid == 0) {
    /* the two descriptors remote-hold uses cross both execs on purpose:
     * trace record passes on what it inherited (trace/spawn.h) */
    if (dup2(h_null, STDIN_FILENO) < 0 || dup2(h_out, STDOUT_FILENO) < 0 ||
        fcntl(h_notify, F_SETFD, 0) != 0 || fcntl(h_hold, F_SETFD, 0) != 0)
      _exit(127);
    execv(self, argv);
    fprintf(stderr, "trace remote: cannot run %s: %s\n", self, strerror(errno));
    _exit(127);
  }
  int err = errno;
  int fds[] = {out[1], notify[1], hold[0], devnull, h_out, h_notify, h_hold, h_null};
  for (size_t i = 0; i < sizeof(fds) / sizeof(fds[0]); i++)
    if (fds[i] >= 0) close(fds[i]);
  if (pid < 0) {
    close(out[0]), close(notify[0]), close(hold[1]);
    return say_error("cannot start trace record: %s", strerror(err));
  }
  a->child = pid;
  a->out_fd = out[0];
  a->notify_fd = notify[0];
  a->hold_fd = hold[1];
  return true;
}

static void release_hold(agent_t* a) {
  if (a->hold_fd >= 0) close(a->hold_fd);
  a->hold_fd = -1;
}

/* A frame from the near end. false: the channel cannot go on. */
static bool on_frame(agent_t* a, const remote_frame_t* f) {
  switch (f->type) {
    case REMOTE_CLOCK: {
      unsigned char reply[16];
      if (f->length != 8) return say_error("bad CLOCK frame%s", "");
      memcpy(reply, f->payload, 8);
      remote__put64(reply + 8, remote_clock__now());
      return remote_channel__write(STDOUT_FILENO, REMOTE_CLOCK_REPLY, reply, sizeof(reply));
    }
    case REMOTE_START:
      if (a->child > 0) return say_error("a second START%s", "");
      return start_recording(a, f);
    case REMOTE_STOP:
      a->stopped = true;
      release_hold(a);
      return true;
    default: {
      char type[16];
      snprintf(type, sizeof(type), "%u", f->type);
      return say_error("unknown frame type %s", type);
    }
  }
}

/* remote-hold's line (tracing started), or the pipe's end without one
 * (trace record failed first). Its line ends the wait: trace record holds
 * the pipe's write end too, so its end comes only with trace record's. */
static void on_notify(agent_t* a) {
  ssize_t n = read(a->notify_fd, a->socket_path + a->socket_length,
                   sizeof(a->socket_path) - 1 - a->socket_length);
  if (n < 0 && errno == EINTR) return;
  if (n > 0) a->socket_length += (size_t)n;
  a->socket_path[a->socket_length] = '\0';
  char* nl = strchr(a->socket_path, '\n');
  if (n > 0 && !nl && a->socket_length < sizeof(a->socket_path) - 1) return;
  close(a->notify_fd);
  a->notify_fd = -1;
  if (nl) {
    *nl = '\0';
    a->started = true;
    remote_channel__write(STDOUT_FILENO, REMOTE_STARTED, a->socket_path,
                          strlen(a->socket_path) + 1);
  } else {
    a->start_failed = true;
  }
}

/* The archive's next bytes as a DATA frame; false at its end. */
static bool forward_archive(agent_t* a, unsigned char* buf) {
  ssize_t n = read(a->out_fd, buf, REMOTE_MAX_PAYLOAD);
  if (n < 0 && errno == EINTR) return true;
  if (n <= 0) return false;
  if (!a->channel_gone && !remote_channel__write(STDOUT_FILENO, REMOTE_DATA, buf, (size_t)n))
    a->channel_gone = true; /* read on, so trace record is never blocked */
  return true;
}

static int finish(agent_t* a) {
  int status = 0;
  while (waitpid(a->child, &status, 0) < 0 && errno == EINTR) {
  }
  int code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  if (a->channel_gone) return EXIT_FAILED;
  if (!a->started) {
    char text[32];
    snprintf(text, sizeof(text), "%d", code);
    say_error("trace record failed before tracing started (exit status %s)", text);
    return EXIT_FAILED;
  }
  unsigned char end[4];
  remote__put32(end, (uint32_t)code);
  remote_channel__write(STDOUT_FILENO, REMOTE_END, end, sizeof(end));
  return code == 0 ? EXIT_OK : EXIT_FAILED;
}

int remote__agent_main(int argc, char** argv) {
  unsigned version = 0;
  for (int i = 1; i < argc; i++)
    if (strncmp(argv[i], "--protocol=", 11) == 0)
      version = (unsigned)strtoul(argv[i] + 11, NULL, 10);
  signal(SIGPIPE, SIG_IGN); /* a channel gone shows as EPIPE */
  char host[256];
  if (gethostname(host, sizeof(host)) != 0) host[0] = '\0';
  host[sizeof(host) - 1] = '\0';
  unsigned char hello[sizeof(REMOTE_HELLO_MAGIC) + 4 + sizeof(host)];
  size_t magic = sizeof(REMOTE_HELLO_MAGIC);
  memcpy(hello, REMOTE_HELLO_MAGIC, magic);
  remote__put32(hello + magic, REMOTE_PROTOCOL_VERSION);
  size_t host_length = strlen(host) + 1;
  memcpy(hello + magic + 4, host, host_length);
  if (!remote_channel__write(STDOUT_FILENO, REMOTE_HELLO, hello, magic + 4 + host_length))
    return EXIT_FAILED;
  if (version != REMOTE_PROTOCOL_VERSION) {
    char v[16];
    snprintf(v, sizeof(v), "%u", version);
    say_error("protocol version %s asked for; this trace speaks version 1 only", v);
    return EXIT_FAILED;
  }
  agent_t a = {.child = 0, .out_fd = -1, .notify_fd = -1, .hold_fd = -1};
  remote_reader_t in;
  unsigned char* buf = malloc(REMOTE_MAX_PAYLOAD);
  if (!buf || !remote_reader__init(&in, STDIN_FILENO)) {
    free(buf);
    return say_error("out of memory%s", ""), EXIT_FAILED;
  }
  int rc = EXIT_FAILED;
  bool input_open = true;
  for (;;) {
    remote_frame_t f;
    int got;
    while (input_open && (got = remote_reader__next(&in, &f)) == 1)
      if (!on_frame(&a, &f)) {
        input_open = false;
        a.channel_gone = true;
      }
    if (input_open && in.error) { /* a bad frame, or the read failed */
      input_open = false;
      if (in.error == EPROTO) say_error("a bad frame from the near end%s", "");
      a.channel_gone = true;
    }
    if (!input_open) release_hold(&a); /* the near end is gone: stop recording */
    if (!input_open && a.child <= 0) break;
    struct pollfd p[3] = {{input_open ? STDIN_FILENO : -1, POLLIN, 0},
                          {a.notify_fd, POLLIN, 0},
                          {a.out_fd, POLLIN, 0}};
    if (poll(p, 3, -1) < 0) {
      if (errno == EINTR) continue;
      break;
    }
    if (p[0].revents && !remote_reader__fill(&in)) {
      input_open = false;
      if (in.eof) a.channel_gone = a.channel_gone || !a.stopped;
    }
    if (p[1].revents) on_notify(&a);
    if (p[2].revents && !forward_archive(&a, buf)) {
      while (a.notify_fd >= 0) on_notify(&a);
      rc = finish(&a);
      break;
    }
  }
  release_hold(&a);
  if (a.out_fd >= 0) close(a.out_fd);
  remote_reader__free(&in);
  free(buf);
  return rc;
}

int remote__hold_main(int argc, char** argv) {
  if (argc != 3) {
    fprintf(stderr, "trace remote-hold: for trace remote only\n");
    return EXIT_USAGE;
  }
  int notify = atoi(argv[1]), hold = atoi(argv[2]);
  const char* socket = getenv("FXTRACE_SOCKET");
  char line[300];
  int n = snprintf(line, sizeof(line), "%s\n", socket ? socket : "");
  if (write(notify, line, (size_t)n) != n) return EXIT_FAILED;
  close(notify);
  char c;
  for (;;) { /* the agent never writes: the end is all that comes */
    ssize_t n = read(hold, &c, 1);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
  }
  return EXIT_OK;
}
