/* `trace record --host NAME=COMMAND ...` (remote.h, docs/multi-host.md):
 * every host's channel on a thread of its own (remote_host.c); all started
 * together once every one finished its handshake and first clock exchange;
 * stopped together at --duration, a termination signal, the exit of the
 * local COMMAND, or when every host dropped out; then each host's archive
 * mapped onto this host's clock (its offset at the start, its rate from the
 * offsets at the start and at the end) and merged (src/merge) into one
 * archive, led by a clock record per host (docs/multi-host.md#metadata). */
#include <errno.h>
#include <inttypes.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "anchor/clock_anchor.h"
#include "fxt/fxt_encode.h"
#include "merge/merge.h"
#include "remote/remote.h"
#include "remote/remote_host.h"
#include "trace/cli.h"
#include "trace/compress_writer.h"
#include "trace/record_signals.h"
#include "trace/spawn.h"

static const char kCmd[] = "record";
enum {
  PROGRESS_INTERVAL_MS = 200,
  KILL_GRACE_MS = 2000,
  ORDER_MEMORY = 64 << 20,
  /* one host's clock record: about 40 words besides its name, which is at
   * most REMOTE_MAX_HOST_NAME bytes (32 words) */
  HOST_CLOCK_MAX_WORDS = 160,
};

static int64_t now_ms(void) { return (int64_t)(remote_clock__now() / 1000000); }

typedef struct recording {
  const remote_options_t* o;
  remote_host_t* hosts;
  size_t count;
  remote_sync_t sync;
  char local_name[REMOTE_MAX_HOST_NAME + 1];
  uint64_t start_ns; /* this host's clock when every host was told to start */
  pid_t child;
  bool child_done, child_exited;
  int child_status;
} recording_t;

static void show_progress(const recording_t* r, int64_t start_ms) {
  fprintf(stderr, "\r\033[Krecording: %.1f s", (now_ms() - start_ms) / 1000.0);
  for (size_t i = 0; i < r->count; i++) {
    char b[32];
    cli__format_bytes(atomic_load(&r->hosts[i].bytes), b, sizeof(b));
    fprintf(stderr, ", %s %s", r->hosts[i].name, b);
  }
  fflush(stderr);
}

static void clear_progress(void) {
  fputs("\r\033[K", stderr);
  fflush(stderr);
}

/* Tells every host thread (a go or a stop). */
static void tell_hosts(recording_t* r, bool stop) {
  pthread_mutex_lock(&r->sync.mutex);
  if (stop)
    r->sync.stop = true;
  else
    r->sync.go = true;
  pthread_cond_broadcast(&r->sync.changed);
  pthread_mutex_unlock(&r->sync.mutex);
  for (size_t i = 0; i < r->count; i++)
    if (r->hosts[i].wake[1] >= 0) (void)!write(r->hosts[i].wake[1], "x", 1);
}

/* Waits until no host is before `state` (or done); false on a signal. */
static bool wait_hosts(recording_t* r, remote_host_state_t state) {
  for (;;) {
    bool all = true;
    pthread_mutex_lock(&r->sync.mutex);
    for (size_t i = 0; i < r->count; i++)
      if (r->hosts[i].state < state) all = false;
    pthread_mutex_unlock(&r->sync.mutex);
    if (all) return true;
    if (record_signals__interrupted()) return false;
    struct pollfd p = {record_signals__wake_fd(), POLLIN, 0};
    if (poll(&p, 1, 1000) > 0) record_signals__drain();
  }
}

static size_t count_in(recording_t* r, remote_host_state_t state) {
  size_t n = 0;
  pthread_mutex_lock(&r->sync.mutex);
  for (size_t i = 0; i < r->count; i++) n += r->hosts[i].state == state;
  pthread_mutex_unlock(&r->sync.mutex);
  return n;
}

static int status_of(int wait_status) {
  if (WIFEXITED(wait_status)) return WEXITSTATUS(wait_status);
  if (WIFSIGNALED(wait_status)) return 128 + WTERMSIG(wait_status);
  return EXIT_FAILED;
}

static void reap_child(recording_t* r) {
  if (r->child <= 0 || r->child_done) return;
  int status;
  if (waitpid(r->child, &status, WNOHANG) == r->child) {
    record_signals__set_command(0);
    r->child_done = true;
    r->child_exited = WIFEXITED(status);
    r->child_status = status_of(status);
  }
}

static void end_command(recording_t* r) {
  reap_child(r);
  if (r->child <= 0 || r->child_done) return;
  record_signals__set_command(0);
  kill(r->child, SIGTERM);
  int64_t deadline = now_ms() + KILL_GRACE_MS;
  int status;
  while (waitpid(r->child, &status, WNOHANG) == 0) {
    if (now_ms() >= deadline) {
      kill(r->child, SIGKILL);
      while (waitpid(r->child, &status, 0) < 0 && errno == EINTR) {
      }
      return;
    }
    struct timespec ts = {0, 10 * 1000000};
    nanosleep(&ts, NULL);
  }
}

/* The local COMMAND, with FXTRACE_SOCKET set to the local host's manager. */
static bool start_command(recording_t* r) {
  if (!r->o->command) return true;
  for (size_t i = 0; i < r->count; i++) {
    /* state under the mutex: the host's thread may be ending it now */
    pthread_mutex_lock(&r->sync.mutex);
    bool started = r->hosts[i].state == HOST_STARTED;
    pthread_mutex_unlock(&r->sync.mutex);
    if (r->hosts[i].local && started && r->hosts[i].socket_path[0] &&
        setenv("FXTRACE_SOCKET", r->hosts[i].socket_path, 1) != 0) {
      cli__error(kCmd, "cannot set FXTRACE_SOCKET: %s", strerror(errno));
      return false;
    }
  }
  bool to_stderr = strcmp(r->o->output, "-") == 0;
  int err = spawn__command(r->o->command, to_stderr, &r->child, record_signals__set_command);
  if (err != 0) {
    cli__error(kCmd, "cannot run '%s': %s", r->o->command[0], strerror(err));
    r->child = 0;
    return false;
  }
  record_signals__set_command(r->child);
  return true;
}

/* Until --duration, a signal, COMMAND's exit, or every host gone. */
static void wait_for_end(recording_t* r) {
  bool progress = isatty(STDERR_FILENO);
  int64_t start = now_ms();
  int64_t deadline = r->o->duration_s > 0 ? start + (int64_t)(r->o->duration_s * 1000 + 0.5) : -1;
  for (;;) {
    reap_child(r);
    if (record_signals__interrupted() || (r->child > 0 && r->child_done)) break;
    if (count_in(r, HOST_STARTED) == 0) {
      cli__warning(kCmd, "every host's recording ended: stopping");
      break;
    }
    int64_t now = now_ms();
    if (deadline >= 0 && now >= deadline) break;
    int wait_ms = progress ? PROGRESS_INTERVAL_MS : 1000;
    if (deadline >= 0 && deadline - now < wait_ms) wait_ms = (int)(deadline - now);
    struct pollfd p = {record_signals__wake_fd(), POLLIN, 0};
    if (poll(&p, 1, wait_ms) > 0) record_signals__drain();
    if (progress) show_progress(r, start);
  }
  if (progress) clear_progress();
}

/* ---- the clocks ---- */

static remote_clock_map_t clock_map(const remote_host_t* h) {
  if (h->local) { /* the same clock: nothing to measure */
    remote_clock_map_t same = {0};
    return same;
  }
  return remote_clock__map(&h->start, &h->end);
}

/* A rate in whole ppb, for the record (the merge itself uses the fraction). */
static int64_t whole_ppb(double ppb) { return (int64_t)(ppb < 0 ? ppb - 0.5 : ppb + 0.5); }

/* The clock record of each merged host (docs/multi-host.md#metadata). */
static size_t encode_clock_records(const recording_t* r, const size_t* merged, size_t count,
                                   uint64_t* words) {
  static const char kName[] = CLOCK_ANCHOR_PROVIDER_NAME;
  uint64_t* p =
      fxt_write_provider_info_record(words, CLOCK_ANCHOR_PROVIDER_ID, kName, sizeof(kName) - 1);
  p = fxt_write_initialization_record(p, 1000000000u);
  /* koid 0 for process and thread: no process has it (Linux pid 0 is the
   * kernel's idle task, never a traced program's), so with --no-local these
   * records cannot land inside a far process that shares the recorder's pid
   * (docs/multi-host.md#metadata) */
  trace_thread_ref_t thread = trace_make_inline_thread_ref(0, 0);
  trace_string_ref_t category = trace_make_inline_c_string_ref(CLOCK_ANCHOR_CATEGORY);
  trace_string_ref_t name = trace_make_inline_c_string_ref("host");
  for (size_t k = 0; k < count; k++) {
    const remote_host_t* h = &r->hosts[merged[k]];
    remote_clock_map_t m = clock_map(h);
    trace_arg_t args[10];
    size_t n = 0;
#define ARG(key, value) args[n++] = trace_make_arg(trace_make_inline_c_string_ref(key), value)
    ARG("host", trace_make_string_arg_value(trace_make_inline_c_string_ref(h->name)));
    ARG("offset_ns", trace_make_int64_arg_value(h->local ? 0 : remote_clock__offset(&h->start)));
    ARG("uncertainty_ns", trace_make_uint64_arg_value(h->local ? 0 : h->start.uncertainty_ns));
    if (!h->local && h->end.valid) {
      ARG("end_offset_ns", trace_make_int64_arg_value(remote_clock__offset(&h->end)));
      ARG("end_uncertainty_ns", trace_make_uint64_arg_value(h->end.uncertainty_ns));
    }
    ARG("drift_ppb", trace_make_int64_arg_value(m.rate_used ? whole_ppb(m.measured_ppb) : 0));
    if (!h->local && h->end.valid) {
      ARG("measured_ppb", trace_make_int64_arg_value(whole_ppb(m.measured_ppb)));
      ARG("rate_applied", trace_make_bool_arg_value(m.rate_used));
    }
    ARG("round_trips", trace_make_uint64_arg_value(h->start.rounds + h->end.rounds));
#undef ARG
    size_t w = fxt_event_record_words(FXT_EVENT_INSTANT, &thread, &category, &name, args, n);
    p = fxt_write_event_record(p, w, FXT_EVENT_INSTANT, r->start_ns, &thread, &category, &name,
                               args, n, TRACE_SCOPE_THREAD);
  }
  return (size_t)(p - words) * 8;
}

static void describe(const remote_host_t* h, char* out, size_t size) {
  if (h->local) {
    snprintf(out, size, "this host (its clock is the timeline)");
    return;
  }
  remote_clock_map_t m = clock_map(h);
  int n = snprintf(out, size, "clock offset %+.6f s +- %" PRIu64 " ns",
                   (double)remote_clock__offset(&h->start) / 1e9, h->start.uncertainty_ns);
  if (n > 0 && (size_t)n < size) {
    if (m.rate_used)
      snprintf(out + n, size - (size_t)n, ", rate %+.0f ppb corrected", m.measured_ppb);
    else if (h->end.valid)
      snprintf(
          out + n, size - (size_t)n, ", rate %+.0f ppb %s: not corrected", m.measured_ppb,
          m.measured_ppb > 500000 || m.measured_ppb < -500000 ? "implausible" : "not significant");
    else if (h->end_refused[0])
      snprintf(out + n, size - (size_t)n,
               ", end clock exchange implausible (%s): rate not corrected", h->end_refused);
    else
      snprintf(out + n, size - (size_t)n, ", no end exchange: rate not corrected");
  }
}

static int merge_hosts(recording_t* r) {
  size_t* merged = calloc(r->count, sizeof(size_t));
  merge_host_t* mh = calloc(r->count, sizeof(merge_host_t));
  char** paths = calloc(r->count, sizeof(char*));
  char** labels = calloc(r->count, sizeof(char*));
  char** notes = calloc(r->count, sizeof(char*));
  uint64_t* words = calloc(HOST_CLOCK_MAX_WORDS * (r->count + 1), 8);
  int rc = EXIT_FAILED;
  if (!merged || !mh || !paths || !labels || !notes || !words) {
    cli__error(kCmd, "out of memory");
    goto done;
  }
  size_t count = 0;
  for (size_t i = 0; i < r->count; i++) {
    remote_host_t* h = &r->hosts[i];
    if (atomic_load(&h->bytes) == 0 || h->write_failed) continue;
    remote_clock_map_t m = clock_map(h);
    mh[count].name = h->name;
    mh[count].clock.shift_ns = m.shift_ns;
    mh[count].clock.origin_ns = m.origin_ns;
    mh[count].clock.drift_ppb = m.drift_ppb;
    char note[400];
    describe(h, note, sizeof(note));
    if (asprintf(&paths[count], "/proc/self/fd/%d", fileno(h->file)) < 0 ||
        asprintf(&labels[count], "host %s", h->name) < 0 || !(notes[count] = strdup(note))) {
      cli__error(kCmd, "out of memory");
      goto done;
    }
    merged[count++] = i;
  }
  if (count == 0) {
    cli__error(kCmd, "no host sent any trace: nothing written");
    goto done;
  }
  size_t preamble = encode_clock_records(r, merged, count, words);
  merge_job_t job = {
      .cmd = kCmd,
      .output = r->o->output,
      .codec = r->o->codec,
      .order_memory = ORDER_MEMORY,
      .count = count,
      .paths = (const char* const*)paths,
      .labels = (const char* const*)labels,
      .notes = (const char* const*)notes,
      .hosts = mh,
      .preamble = words,
      .preamble_bytes = preamble,
  };
  rc = merge__run(&job);
done:
  for (size_t i = 0; i < r->count && paths; i++) {
    free(paths[i]);
    if (labels) free(labels[i]);
    if (notes) free(notes[i]);
  }
  free(merged);
  free(mh);
  free(paths);
  free(labels);
  free(notes);
  free(words);
  return rc;
}

/* ---- hosts ---- */

static char** local_argv(void) {
  char self[4096];
  ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
  if (n <= 0) return NULL;
  self[n] = '\0';
  char proto[32];
  snprintf(proto, sizeof(proto), "--protocol=%u", REMOTE_PROTOCOL_VERSION);
  const char* parts[] = {self, "remote", proto};
  size_t bytes = 4 * sizeof(char*);
  for (size_t i = 0; i < 3; i++) bytes += strlen(parts[i]) + 1;
  char** argv = malloc(bytes);
  if (!argv) return NULL;
  char* text = (char*)(argv + 4);
  for (size_t i = 0; i < 3; i++) {
    argv[i] = strcpy(text, parts[i]);
    text += strlen(parts[i]) + 1;
  }
  argv[3] = NULL;
  return argv;
}

/* COMMAND's words, then the far trace (quoted for a remote shell), remote,
 * --protocol=N. */
static char** remote_argv(const remote_options_t* o, const remote_host_spec_t* spec) {
  const char* error = NULL;
  char** words = remote_words__split(spec->command, &error);
  if (!words) {
    cli__error(kCmd, "--host %s: bad COMMAND: %s", spec->name, error);
    return NULL;
  }
  char* trace = remote_words__quote(o->remote_trace);
  char proto[32];
  snprintf(proto, sizeof(proto), "--protocol=%u", REMOTE_PROTOCOL_VERSION);
  size_t count = 0, bytes = 0;
  for (; words[count]; count++) bytes += strlen(words[count]) + 1;
  bytes += (trace ? strlen(trace) : 0) + 1 + sizeof("remote") + strlen(proto) + 1;
  char** argv = trace ? malloc((count + 4) * sizeof(char*) + bytes) : NULL;
  if (argv) {
    char* text = (char*)(argv + count + 4);
    size_t k = 0;
    for (size_t i = 0; i < count; i++) {
      argv[k++] = strcpy(text, words[i]);
      text += strlen(words[i]) + 1;
    }
    const char* tail[] = {trace, "remote", proto};
    for (size_t i = 0; i < 3; i++) {
      argv[k++] = strcpy(text, tail[i]);
      text += strlen(tail[i]) + 1;
    }
    argv[k] = NULL;
  } else {
    cli__error(kCmd, "out of memory");
  }
  free(words);
  free(trace);
  return argv;
}

/* 0, or the exit status (a usage error for two hosts of one name). */
static int set_up_hosts(recording_t* r) {
  const remote_options_t* o = r->o;
  r->count = (o->local ? 1 : 0) + o->host_count;
  r->hosts = calloc(r->count, sizeof(remote_host_t));
  if (!r->hosts) {
    cli__error(kCmd, "out of memory");
    return EXIT_FAILED;
  }
  for (size_t i = 0; i < r->count; i++) { /* closed at the end only when opened */
    remote_host_t* h = &r->hosts[i];
    h->wake[0] = h->wake[1] = h->to_far = h->from_far = h->far_stderr = -1;
  }
  if (gethostname(r->local_name, sizeof(r->local_name)) != 0 || !r->local_name[0])
    snprintf(r->local_name, sizeof(r->local_name), "local");
  r->local_name[sizeof(r->local_name) - 1] = '\0';
  size_t k = 0;
  if (o->local) {
    r->hosts[k].name = r->local_name;
    r->hosts[k].local = true;
    r->hosts[k].argv = local_argv();
    if (!r->hosts[k].argv) {
      cli__error(kCmd, "cannot find trace's own executable: %s", strerror(errno));
      return EXIT_FAILED;
    }
    k++;
  }
  for (size_t i = 0; i < o->host_count; i++, k++) {
    r->hosts[k].name = o->hosts[i].name;
    r->hosts[k].argv = remote_argv(o, &o->hosts[i]);
    if (!r->hosts[k].argv) return EXIT_FAILED;
  }
  for (size_t i = 0; i < r->count; i++)
    for (size_t j = 0; j < i; j++)
      if (strcmp(r->hosts[i].name, r->hosts[j].name) == 0) {
        return cli__usage_error(
            kCmd, "two hosts are named '%s'%s", r->hosts[i].name,
            r->hosts[j].local ? " (this host's name: give --no-local, or another NAME)" : "");
      }
  for (size_t i = 0; i < r->count; i++) {
    remote_host_t* h = &r->hosts[i];
    h->o = o;
    h->sync = &r->sync;
    h->file = cli__temporary_file();
    if (!h->file) {
      cli__error(kCmd, "cannot create a temporary file: %s", strerror(errno));
      return EXIT_FAILED;
    }
  }
  return 0;
}

static void free_hosts(recording_t* r) {
  for (size_t i = 0; i < r->count; i++) {
    free(r->hosts[i].argv);
    if (r->hosts[i].file) fclose(r->hosts[i].file);
  }
  free(r->hosts);
}

/* Each host's outcome; true when every host did its part. */
static bool report_hosts(const recording_t* r) {
  bool all = true;
  for (size_t i = 0; i < r->count; i++) {
    const remote_host_t* h = &r->hosts[i];
    if (!h->failed) continue;
    all = false;
    char b[32];
    cli__format_bytes(atomic_load(&h->bytes), b, sizeof(b));
    if (h->dropped)
      cli__error(kCmd, "host %s dropped out during the trace: %s (the %s it sent are merged)",
                 h->name, h->failure, b);
    else {
      /* the far end's last line only with a failure that is the far end's */
      bool words = !h->failure_local && h->last_stderr[0] && !strstr(h->failure, h->last_stderr);
      cli__error(kCmd, "host %s: %s%s%s", h->name, h->failure, words ? "; its last error: " : "",
                 words ? h->last_stderr : "");
    }
  }
  return all;
}

int remote__record(const remote_options_t* o) {
  recording_t r;
  memset(&r, 0, sizeof(r));
  r.o = o;
  pthread_mutex_init(&r.sync.mutex, NULL);
  pthread_cond_init(&r.sync.changed, NULL);
  int status = record_signals__start();
  if (status != 0) {
    cli__error(kCmd, "cannot create a pipe: %s", strerror(-status));
    return EXIT_FAILED;
  }
  int setup = set_up_hosts(&r);
  bool ok = setup == 0;
  for (size_t i = 0; ok && i < r.count; i++)
    if (!remote_host__start(&r.hosts[i])) {
      r.hosts[i].state = HOST_DONE;
      cli__error(kCmd, "host %s: %s", r.hosts[i].name, r.hosts[i].failure);
      ok = false;
    }
  bool traced = false;
  if (ok && wait_hosts(&r, HOST_READY) && count_in(&r, HOST_READY) > 0) {
    r.start_ns = remote_clock__now();
    tell_hosts(&r, false); /* go: START to every host at once */
    if (wait_hosts(&r, HOST_STARTED) && count_in(&r, HOST_STARTED) > 0) {
      traced = true;
      if (start_command(&r)) wait_for_end(&r);
    }
  }
  int sig = record_signals__interrupted();
  if (sig) fprintf(stderr, "trace record: %s: stopping\n", strsignal(sig));
  record_signals__stopping();
  tell_hosts(&r, true);
  for (size_t i = 0; i < r.count; i++) remote_host__join(&r.hosts[i]);
  end_command(&r);
  bool all = report_hosts(&r);
  int rc = EXIT_FAILED;
  if (ok && traced)
    rc = merge_hosts(&r);
  else if (ok)
    cli__error(kCmd, "no host started tracing: nothing written");
  free_hosts(&r);
  record_signals__stop();
  pthread_cond_destroy(&r.sync.changed);
  pthread_mutex_destroy(&r.sync.mutex);
  if (setup != 0) return setup;
  if (rc != EXIT_OK || !all) return EXIT_FAILED;
  if (r.child > 0 && r.child_done) return r.child_status;
  return EXIT_OK;
}
