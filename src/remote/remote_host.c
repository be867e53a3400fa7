/* The near end of one host's channel (remote_host.h). */
#include "remote/remote_host.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "trace/record_signals.h"
#include "trace/text_escape.h"

extern char** environ;

enum {
  HELLO_TIMEOUT_MS = 60000, /* ssh: name lookup, key exchange, a slow login */
  REPLY_TIMEOUT_MS = 30000, /* a clock reply; STARTED on top of the start timeout */
  START_TIMEOUT_MS = 65000,
  END_MARGIN_MS = 60000, /* END: on top of the providers' stop timeout */
  KILL_GRACE_MS = 2000,
};

enum { GOT_FRAME = 1, GOT_STOP = 0, GOT_END = -1, GOT_TIMEOUT = -2 };

static int64_t now_ms(void) { return (int64_t)(remote_clock__now() / 1000000); }

static void set_state(remote_host_t* h, remote_host_state_t state) {
  pthread_mutex_lock(&h->sync->mutex);
  h->state = state;
  pthread_cond_broadcast(&h->sync->changed);
  pthread_mutex_unlock(&h->sync->mutex);
  record_signals__wake();
}

static bool sync_flag(remote_host_t* h, bool go) {
  pthread_mutex_lock(&h->sync->mutex);
  bool v = go ? h->sync->go : h->sync->stop;
  pthread_mutex_unlock(&h->sync->mutex);
  return v;
}

static void fail(remote_host_t* h, const char* fmt, const char* arg) {
  if (h->failed) return;
  h->failed = true;
  snprintf(h->failure, sizeof(h->failure), fmt, arg);
}

/* A failure on this host's side (a pipe, memory, the temporary file, the
 * options, a stop before the start): the far end's last words are not its
 * cause, and are not attached to it (remote_record.c report_hosts). */
static void fail_here(remote_host_t* h, const char* fmt, const char* arg) {
  if (!h->failed) h->failure_local = true;
  fail(h, fmt, arg);
}

/* ---- the far end's standard error: echoed line by line, the last kept ---- */

static void stderr_line(remote_host_t* h) {
  h->err_line[h->err_length] = '\0';
  if (h->err_length > 0) {
    /* the far end's bytes, made safe for a terminal as archive text is */
    fprintf(stderr, "trace record: [%s] ", h->name);
    text__put_escaped(stderr, h->err_line, h->err_length, NULL, false);
    fputc('\n', stderr);
    text__escaped(h->err_line, h->last_stderr, sizeof(h->last_stderr));
  }
  h->err_length = 0;
}

static void read_stderr(remote_host_t* h) {
  char buf[4096];
  ssize_t n = read(h->far_stderr, buf, sizeof(buf));
  if (n < 0 && errno == EINTR) return;
  if (n <= 0) {
    if (h->err_length) stderr_line(h);
    close(h->far_stderr);
    h->far_stderr = -1;
    return;
  }
  for (ssize_t i = 0; i < n; i++) {
    if (buf[i] == '\n' || h->err_length == sizeof(h->err_line) - 1) stderr_line(h);
    if (buf[i] != '\n') h->err_line[h->err_length++] = buf[i];
  }
}

/* ---- frames ---- */

static void save_data(remote_host_t* h, const remote_frame_t* f) {
  if (!h->write_failed && fwrite(f->payload, 1, f->length, h->file) != f->length) {
    h->write_failed = true;
    fail_here(h, "cannot keep its archive in a temporary file: %s", strerror(errno));
  }
  atomic_fetch_add(&h->bytes, f->length);
}

/* The next frame other than DATA (saved as it comes) into *f: GOT_FRAME;
 * GOT_STOP when watch_stop and the recording says stop; GOT_END when the
 * channel ended (or broke: h->reader says); GOT_TIMEOUT past deadline_ms
 * (-1: none). The far end's standard error is read meanwhile. */
static int next_frame(remote_host_t* h, int64_t deadline_ms, bool watch_stop, remote_frame_t* f) {
  for (;;) {
    int got;
    while ((got = remote_reader__next(&h->reader, f)) == 1) {
      if (f->type != REMOTE_DATA) return GOT_FRAME;
      save_data(h, f);
    }
    if (got < 0) { /* its last words may come after the channel's end */
      int64_t until = now_ms() + 2000;
      while (h->far_stderr >= 0 && now_ms() < until) {
        struct pollfd p = {h->far_stderr, POLLIN, 0};
        if (poll(&p, 1, 100) > 0) read_stderr(h);
      }
      return GOT_END;
    }
    if (watch_stop && sync_flag(h, false)) return GOT_STOP;
    int wait_ms = -1;
    if (deadline_ms >= 0) {
      int64_t left = deadline_ms - now_ms();
      if (left <= 0) return GOT_TIMEOUT;
      wait_ms = left > 1000 ? 1000 : (int)left;
    }
    struct pollfd p[3] = {
        {h->from_far, POLLIN, 0}, {h->far_stderr, POLLIN, 0}, {h->wake[0], POLLIN, 0}};
    if (poll(p, 3, wait_ms) < 0 && errno != EINTR) return GOT_END;
    if (p[2].revents) {
      char drain[16];
      (void)!read(h->wake[0], drain, sizeof(drain));
    }
    if (p[1].revents) read_stderr(h);
    if (p[0].revents) remote_reader__fill(&h->reader);
  }
}

static const char* last_words(remote_host_t* h) {
  return h->last_stderr[0] ? h->last_stderr : "(nothing on its standard error)";
}

/* The channel ended or broke while waiting for `what`. */
static void channel_lost(remote_host_t* h, int got, const remote_frame_t* f, const char* what) {
  char msg[1800];
  if (got == GOT_FRAME && f->type == REMOTE_ERROR) {
    char raw[400], safe[TEXT_ESCAPED_SIZE(sizeof(raw))];
    snprintf(raw, sizeof(raw), "%.*s", (int)strnlen((const char*)f->payload, f->length),
             (const char*)f->payload);
    snprintf(msg, sizeof(msg), "remote trace failed: %s", text__escaped(raw, safe, sizeof(safe)));
    fail(h, "%s", msg);
    return;
  }
  if (got == GOT_TIMEOUT)
    snprintf(msg, sizeof(msg), "no %s in time; last error: %s", what, last_words(h));
  else if (got == GOT_FRAME)
    snprintf(msg, sizeof(msg), "unexpected frame %u while waiting for %s", f->type, what);
  else if (h->reader.error == EPROTO)
    snprintf(msg, sizeof(msg),
             "not an fxtrace channel (what came is no frame: is the remote trace too old, or "
             "does its login print text?); last error: %s",
             last_words(h));
  else
    snprintf(msg, sizeof(msg), "the channel ended before %s: %s", what, last_words(h));
  fail(h, "%s", msg);
}

static bool wait_hello(remote_host_t* h) {
  remote_frame_t f;
  int got = next_frame(h, now_ms() + HELLO_TIMEOUT_MS, true, &f);
  if (got == GOT_STOP) return false;
  if (got != GOT_FRAME || f.type != REMOTE_HELLO) {
    channel_lost(h, got, &f, "its hello");
    return false;
  }
  size_t magic = sizeof(REMOTE_HELLO_MAGIC);
  if (f.length < magic + 5 || memcmp(f.payload, REMOTE_HELLO_MAGIC, magic) != 0) {
    fail(h, "not an fxtrace channel (a bad hello)%s", "");
    return false;
  }
  uint32_t version = remote__get32(f.payload + magic);
  snprintf(h->far_hostname, sizeof(h->far_hostname), "%.*s",
           (int)strnlen((const char*)f.payload + magic + 4, f.length - magic - 4),
           (const char*)f.payload + magic + 4);
  if (version != REMOTE_PROTOCOL_VERSION) {
    char msg[128];
    snprintf(msg, sizeof(msg), "its trace speaks protocol version %u, this one version %u", version,
             REMOTE_PROTOCOL_VERSION);
    fail(h, "%s", msg);
    return false;
  }
  return true;
}

/* REMOTE_CLOCK_ROUNDS round trips into *s. */
/* The exchange's round trips into *s; false when the channel broke (the
 * host failed). *why: "" when plausible, else why not (uncertainty past
 * REMOTE_CLOCK_MAX_UNCERTAINTY_NS, or a far reading of 0 or past INT64_MAX
 * ns: no CLOCK_MONOTONIC reads that). */
static bool exchange_clocks(remote_host_t* h, remote_clock_sample_t* s, char* why, size_t size) {
  memset(s, 0, sizeof(*s));
  why[0] = '\0';
  for (uint64_t seq = 1; seq <= REMOTE_CLOCK_ROUNDS; seq++) {
    unsigned char q[8];
    remote__put64(q, seq);
    uint64_t sent = remote_clock__now();
    if (!remote_channel__write(h->to_far, REMOTE_CLOCK, q, sizeof(q))) {
      fail(h, "the channel broke during the clock exchange: %s", last_words(h));
      return false;
    }
    remote_frame_t f;
    int got = next_frame(h, now_ms() + REPLY_TIMEOUT_MS, false, &f);
    uint64_t received = remote_clock__now();
    if (got != GOT_FRAME || f.type != REMOTE_CLOCK_REPLY || f.length != 16 ||
        remote__get64(f.payload) != seq) {
      channel_lost(h, got, &f, "a clock reply");
      return false;
    }
    uint64_t far = remote__get64(f.payload + 8);
    if ((far == 0 || far > INT64_MAX) && !why[0])
      snprintf(why, size, "its clock read %" PRIu64 " ns", far);
    remote_clock__note(s, sent, far, received);
  }
  if (!why[0] && s->uncertainty_ns > REMOTE_CLOCK_MAX_UNCERTAINTY_NS)
    snprintf(why, size, "its shortest clock round trip was %.3f s (uncertainty past 1 s)",
             (double)s->uncertainty_ns / 5e8);
  return true;
}

static bool send_start(remote_host_t* h) {
  size_t n = 0;
  for (size_t i = 0; i < h->o->record_option_count; i++) n += strlen(h->o->record_options[i]) + 1;
  if (n > REMOTE_MAX_PAYLOAD) { /* never cut: the host would record other categories */
    fail_here(h, "the trace record options are too long for START%s", "");
    return false;
  }
  unsigned char* payload = malloc(n ? n : 1);
  if (!payload) {
    fail_here(h, "out of memory%s", "");
    return false;
  }
  n = 0;
  for (size_t i = 0; i < h->o->record_option_count; i++) {
    size_t len = strlen(h->o->record_options[i]) + 1;
    memcpy(payload + n, h->o->record_options[i], len);
    n += len;
  }
  bool sent = remote_channel__write(h->to_far, REMOTE_START, payload, n);
  free(payload);
  if (!sent) {
    fail(h, "the channel broke before START: %s", last_words(h));
    return false;
  }
  remote_frame_t f;
  int got = next_frame(h, now_ms() + START_TIMEOUT_MS, false, &f);
  if (got != GOT_FRAME || f.type != REMOTE_STARTED) {
    channel_lost(h, got, &f, "tracing started");
    return false;
  }
  snprintf(h->socket_path, sizeof(h->socket_path), "%.*s",
           (int)strnlen((const char*)f.payload, f.length), (const char*)f.payload);
  return true;
}

/* Waits for the recording's stop; false when the host dropped out first. */
static bool wait_stop(remote_host_t* h) {
  remote_frame_t f;
  int got = next_frame(h, -1, true, &f);
  if (got == GOT_STOP) return true;
  h->dropped = true;
  if (got == GOT_FRAME && f.type == REMOTE_END && f.length == 4) {
    h->ended = true;
    h->end_status = (int)remote__get32(f.payload);
    char msg[64];
    snprintf(msg, sizeof(msg), "%d", h->end_status);
    fail(h, "its recording ended early (trace record's exit status %s)", msg);
    return false;
  }
  channel_lost(h, got, &f, "the end of the recording");
  return false;
}

static void collect(remote_host_t* h) {
  if (!remote_channel__write(h->to_far, REMOTE_STOP, NULL, 0)) {
    h->dropped = true;
    fail(h, "the channel broke before STOP: %s", last_words(h));
    return;
  }
  remote_frame_t f;
  int got = next_frame(h, now_ms() + (int64_t)h->o->stop_timeout_ms + END_MARGIN_MS, false, &f);
  if (got == GOT_FRAME && f.type == REMOTE_END && f.length == 4) {
    h->ended = true;
    h->end_status = (int)remote__get32(f.payload);
    if (h->end_status != 0) {
      char msg[64];
      snprintf(msg, sizeof(msg), "%d", h->end_status);
      fail(h, "its trace record failed (exit status %s)", msg);
    }
    return;
  }
  h->dropped = true;
  channel_lost(h, got, &f, "the end of its archive");
}

/* ---- the far end's process ---- */

static bool spawn(remote_host_t* h) {
  int in[2] = {-1, -1}, out[2] = {-1, -1}, err[2] = {-1, -1};
  if (pipe2(in, O_CLOEXEC) != 0 || pipe2(out, O_CLOEXEC) != 0 || pipe2(err, O_CLOEXEC) != 0) {
    int e = errno;
    /* the pipes made before the one that failed (a failed pipe2 leaves -1s) */
    int* made[] = {in, out, err};
    for (size_t i = 0; i < 3; i++)
      for (int j = 0; j < 2; j++)
        if (made[i][j] >= 0) close(made[i][j]);
    fail_here(h, "cannot create a pipe: %s", strerror(e));
    return false;
  }
  posix_spawn_file_actions_t actions;
  posix_spawnattr_t attr;
  posix_spawn_file_actions_init(&actions);
  posix_spawnattr_init(&attr);
  posix_spawn_file_actions_adddup2(&actions, in[0], 0);
  posix_spawn_file_actions_adddup2(&actions, out[1], 1);
  posix_spawn_file_actions_adddup2(&actions, err[1], 2);
  sigset_t none, all;
  sigemptyset(&none);
  sigfillset(&all);
  posix_spawnattr_setsigmask(&attr, &none);
  posix_spawnattr_setsigdefault(&attr, &all);
  /* its own process group: Ctrl-C reaches trace record alone, which stops
   * every host in order */
  posix_spawnattr_setpgroup(&attr, 0);
  posix_spawnattr_setflags(&attr,
                           POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETPGROUP);
  int rc = posix_spawnp(&h->pid, h->argv[0], &actions, &attr, h->argv, environ);
  posix_spawn_file_actions_destroy(&actions);
  posix_spawnattr_destroy(&attr);
  close(in[0]), close(out[1]), close(err[1]);
  h->to_far = in[1];
  h->from_far = out[0];
  h->reader.fd = out[0];
  h->far_stderr = err[0];
  if (rc != 0) {
    h->pid = 0;
    char msg[600];
    snprintf(msg, sizeof(msg), "cannot run '%s': %s", h->argv[0], strerror(rc));
    snprintf(h->last_stderr, sizeof(h->last_stderr), "%s", msg);
    fail(h, "%s", msg);
    return false;
  }
  return true;
}

static void end_process(remote_host_t* h) {
  if (h->to_far >= 0) close(h->to_far); /* the far end sees its channel end */
  h->to_far = -1;
  if (h->pid <= 0) return;
  int64_t deadline = now_ms() + KILL_GRACE_MS;
  int status;
  bool termed = false;
  while (waitpid(h->pid, &status, WNOHANG) == 0) {
    if (now_ms() >= deadline) {
      if (termed) {
        kill(-h->pid, SIGKILL);
        while (waitpid(h->pid, &status, 0) < 0 && errno == EINTR) {
        }
        break;
      }
      kill(-h->pid, SIGTERM); /* its process group: ssh or nsenter and what it runs */
      termed = true;
      deadline = now_ms() + KILL_GRACE_MS;
    }
    if (h->far_stderr >= 0) {
      struct pollfd p = {h->far_stderr, POLLIN, 0};
      if (poll(&p, 1, 10) > 0) read_stderr(h);
    } else {
      struct timespec ts = {0, 10 * 1000000};
      nanosleep(&ts, NULL);
    }
  }
  h->pid = 0;
}

static void* host_main(void* arg) {
  remote_host_t* h = arg;
  char why[128];
  bool ok = spawn(h) && wait_hello(h) && exchange_clocks(h, &h->start, why, sizeof(why));
  if (ok && why[0]) {
    fail(h, "its clock exchange is implausible (%s): host refused", why);
    ok = false;
  }
  if (ok) {
    set_state(h, HOST_READY);
    pthread_mutex_lock(&h->sync->mutex);
    while (!h->sync->go && !h->sync->stop) pthread_cond_wait(&h->sync->changed, &h->sync->mutex);
    bool go = h->sync->go && !h->sync->stop;
    pthread_mutex_unlock(&h->sync->mutex);
    ok = go && send_start(h);
  }
  if (ok) {
    set_state(h, HOST_STARTED);
    if (wait_stop(h)) {
      /* the end exchange before STOP: the far clock while still recording */
      remote_clock_sample_t end;
      if (!exchange_clocks(h, &end, why, sizeof(why)))
        h->dropped = true;
      else if (why[0]) /* the start map alone, no rate; said at the end (describe) */
        snprintf(h->end_refused, sizeof(h->end_refused), "%s", why);
      else
        h->end = end;
      if (!h->dropped) collect(h);
    }
  } else if (!h->failed && sync_flag(h, false)) {
    fail_here(h, "stopped before tracing started%s", "");
  }
  end_process(h);
  if (fflush(h->file) != 0 && !h->write_failed) {
    h->write_failed = true;
    fail_here(h, "cannot keep its archive in a temporary file: %s", strerror(errno));
  }
  set_state(h, HOST_DONE);
  return NULL;
}

bool remote_host__start(remote_host_t* h) {
  h->to_far = h->from_far = h->far_stderr = -1;
  h->wake[0] = h->wake[1] = -1;
  if (pipe2(h->wake, O_CLOEXEC | O_NONBLOCK) != 0) {
    fail_here(h, "cannot create a pipe: %s", strerror(errno));
    return false;
  }
  if (!remote_reader__init(&h->reader, -1)) {
    fail_here(h, "out of memory%s", "");
    return false;
  }
  int err = pthread_create(&h->thread, NULL, host_main, h);
  if (err != 0) {
    fail_here(h, "cannot start a thread: %s", strerror(err));
    return false;
  }
  h->thread_running = true;
  return true;
}

void remote_host__join(remote_host_t* h) {
  if (h->thread_running) pthread_join(h->thread, NULL);
  h->thread_running = false;
  if (h->from_far >= 0) close(h->from_far);
  if (h->far_stderr >= 0) close(h->far_stderr);
  for (int i = 0; i < 2; i++)
    if (h->wake[i] >= 0) close(h->wake[i]);
  h->from_far = h->far_stderr = h->wake[0] = h->wake[1] = -1;
  remote_reader__free(&h->reader);
}
