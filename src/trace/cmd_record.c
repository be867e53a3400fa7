/* `trace record`: records a trace through the trace manager (PROTOCOL.md
 * §12.1): InitializeTracing with the write end of a pipe, StartTracing
 * (RETAIN), optionally a command to trace, then TerminateTracing with
 * write_results while a thread reads the archive from the pipe into the
 * output file (FXT as received, or converted to JSON on the fly). With no
 * manager running, one runs inside this process for the recording. */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <math.h>
#include <poll.h>
#include <pthread.h>
#include <pwd.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "alert/alert_trigger.h"
#include "protocol/manager_socket.h"
#include "remote/remote.h"
#include "ring/archive_ring.h"
#include "trace-reader/reader.h"
#include "trace/archive_scan.h"
#include "trace/archive_writer.h"
#include "trace/cli.h"
#include "trace/compress_writer.h"
#include "trace/controller.h"
#include "trace/fxt_writer.h"
#include "trace/json_events.h"
#include "trace/local_manager.h"
#include "trace/output.h"
#include "trace/record_kernel.h"
#include "trace/record_signals.h"
#include "trace/record_snapshot.h"
#include "trace/spawn.h"
#include "trace/text_escape.h"

static const char kCmd[] = "record";

static const char kUsage[] =
    "Usage: trace record [OPTIONS] [-- COMMAND [ARGS...]]\n"
    "\n"
    "Records a trace of every registered provider through the trace manager and\n"
    "writes the archive. With COMMAND, tracing starts first, then COMMAND runs (with\n"
    "FXTRACE_SOCKET set so its provider finds the same manager) and recording ends\n"
    "when it exits; otherwise after --duration. Ctrl-C ends recording cleanly, and\n"
    "so does 'trace stop ID' (a session of 'trace list-sessions'), said with who did it.\n"
    "With no manager running, trace runs one of its own for the recording.\n"
    "kernel:* categories (kernel:sched, kernel:task, kernel:irq, kernel:SYSTEM/EVENT)\n"
    "come from ftrace: as root, trace runs a kernel provider itself when none is\n"
    "registered (docs/kernel-provider.md).\n"
    "\n"
    "Options:\n"
    "      --categories=LIST     comma-separated categories to record ('prefix*' works);\n"
    "                            default: all\n"
    "      --kernel-sched=FORM   how kernel:sched is written: 'scheduling' (default:\n"
    "                            context switches with weights and wakeup records,\n"
    "                            which Perfetto shows as sched slices and runnable\n"
    "                            time) or 'legacy' (legacy context switches and\n"
    "                            wakeups as instant events, for readers that know only\n"
    "                            the legacy layout); legacy adds the category\n"
    "                            kernel:sched-legacy, so --categories must name the\n"
    "                            categories without a pattern that covers it\n"
    "      --buffering-mode=MODE oneshot (default), circular or streaming\n"
    "      --buffer-size=MB      each provider's buffer, 1 to 64 MB (default 4)\n"
    "      --duration=SECONDS    how long to record (default 10 without COMMAND; with\n"
    "                            COMMAND, until it exits unless given); 0: until\n"
    "                            stopped (a signal, a trigger, COMMAND's exit)\n"
    "      --trigger=ALERT:ACTION  when a provider raises TRACE_ALERT named ALERT:\n"
    "                            stop (end recording as --duration would, and write\n"
    "                            the archive; with circular buffering it holds what\n"
    "                            came before the alert) or snapshot (write what the\n"
    "                            buffers hold now to a numbered file beside the\n"
    "                            output and go on; circular and oneshot modes, not\n"
    "                            with -o - or --format=json). Repeatable\n"
    "      --stop-timeout=SECONDS how long the manager waits for a provider to stop\n"
    "                            (default 60)\n"
    "  -o, --output=FILE         where to write the trace ('-' for stdout; default\n"
    "                            trace.fxt, or trace.json with --format=json)\n"
    "      --format=FORMAT       fxt (the archive as received, default) or json\n"
    "                            (Chrome Trace Event JSON, converted as it arrives)\n"
    "      --compress=CODEC      zstd, gzip or none: compress the output as it is\n"
    "                            written (a standard .zst / .gz file); default: by\n"
    "                            the output name (*.zst zstd, *.gz gzip), else none\n"
    "      --max-snapshots=N     keep only the newest N snapshots (default: all)\n"
    "      --host=NAME=COMMAND   record host NAME too, through COMMAND (split like a\n"
    "                            shell line, e.g. \"ssh -T db1\"), which runs\n"
    "                            'trace remote' there: its stdin and stdout are the\n"
    "                            channel. Repeatable. All hosts start and stop\n"
    "                            together; each host's clock offset is measured over\n"
    "                            its channel, and the archives are merged into one\n"
    "                            (FXT only; COMMAND after -- runs on this host):\n"
    "                            docs/multi-host.md\n"
    "      --remote-trace=PATH   the trace command on the hosts (default: trace)\n"
    "      --no-local            with --host: this host takes no part\n"
    "  -h, --help                show this help\n"
    "\n"
    "Snapshots (circular and oneshot modes, FXT output to a file): SIGUSR1 to trace\n"
    "writes what the buffers hold now to a numbered file beside the output (-o\n"
    "out.fxt: out.1.fxt, out.2.fxt, ...; out.fxt.zst: out.1.fxt.zst, ...), a\n"
    "complete archive of its own, and tracing goes on (docs/snapshots.md).\n"
    "Every alert raised while recording is printed on stderr as it arrives (name,\n"
    "provider, pid, time); docs/flight-recorder.md has the flight-recorder recipe.\n"
    "\n"
    "While recording, stderr shows the elapsed time and bytes received when it is a\n"
    "terminal; at the end a summary per provider: process id, buffering mode, records\n"
    "in the archive, records dropped, durable buffer use and buffer wraps, and a\n"
    "warning for each provider that dropped records or did not stop in time.\n"
    "\n"
    "A failed write of the output (a full disk) stops the trace at once; the file is\n"
    "kept, cut after its last complete record (compressed: frame; JSON: event).\n"
    "\n"
    "Exit status: COMMAND's exit status when it exited by itself (128+N if killed by\n"
    "signal N), else 0; 1 if recording failed (a failed write too); 2 on a usage error.\n";

enum {
  DEFAULT_BUFFER_MB = 4,
  MIN_BUFFER_MB = 1,
  MAX_BUFFER_MB = 64,
  DEFAULT_DURATION_S = 10,
  DEFAULT_START_TIMEOUT_MS = 5000,
  DEFAULT_STOP_TIMEOUT_MS = 60000,
  REPLY_MARGIN_MS = 30000, /* on top of the manager's own timeouts */
  PROGRESS_INTERVAL_MS = 200,
  KILL_GRACE_MS = 2000, /* SIGTERM, then SIGKILL */
  MAX_COUNTED_PROVIDERS = 256,
  ARCHIVE_PIPE_SIZE = 1 << 20,
  ARCHIVE_READ_SIZE = 1 << 20, /* one read takes a full pipe */
  ARCHIVE_RING_SIZE = 8 << 20, /* the in-process manager's ring: 8 pipes' worth */
};

typedef struct record_options {
  char* category_text; /* owned copy, split in place */
  const char** categories;
  size_t category_count;
  uint8_t mode;
  uint32_t buffer_mb;
  double duration_s;  /* 0: none (a command, a signal or a trigger ends recording) */
  bool until_stopped; /* --duration=0 */
  alert_trigger_t* triggers;
  size_t trigger_count;
  uint64_t stop_timeout_ms;
  const char* output;
  bool json;
  compress_codec_t codec;
  unsigned max_snapshots; /* 0: every snapshot is kept */
  char** command;         /* NULL-terminated, or NULL */
  bool legacy_sched;      /* --kernel-sched=legacy */
  /* --host (docs/multi-host.md): src/remote records every host */
  remote_host_spec_t* hosts;
  size_t host_count;
  bool no_local;
  const char* remote_trace;
  char* forwarded[REMOTE_MAX_OPTIONS]; /* the options every host records with */
  size_t forwarded_count;
} record_options_t;

/* ---- options ---- */

static bool parse_seconds(const char* text, double max, double* out) {
  char* end;
  errno = 0;
  double v = strtod(text, &end);
  if (errno != 0 || end == text || *end != '\0' || !isfinite(v) || v < 0 || v > max) return false;
  *out = v;
  return true;
}

static int split_categories(record_options_t* o, const char* text) {
  free(o->category_text);
  free(o->categories);
  o->categories = NULL;
  o->category_count = 0;
  o->category_text = strdup(text);
  size_t n = 1;
  for (const char* p = text; *p; p++) n += *p == ',';
  o->categories = calloc(n + 1, sizeof(char*)); /* + kernel:sched-legacy */
  if (!o->category_text || !o->categories) {
    cli__error(kCmd, "out of memory");
    return EXIT_FAILED;
  }
  char* save = NULL;
  for (char* c = strtok_r(o->category_text, ",", &save); c; c = strtok_r(NULL, ",", &save)) {
    while (*c == ' ') c++;
    char* e = c + strlen(c);
    while (e > c && e[-1] == ' ') *--e = '\0';
    if (*c == '\0') continue;
    if (strlen(c) > WIRE_MAX_NAME)
      return cli__usage_error(kCmd, "category '%s' is longer than %d bytes", c, WIRE_MAX_NAME);
    o->categories[o->category_count++] = c;
  }
  if (o->category_count > WIRE_MAX_CATEGORIES)
    return cli__usage_error(kCmd, "more than %d categories", WIRE_MAX_CATEGORIES);
  return 0;
}

static void free_options(record_options_t* o) {
  for (size_t i = 0; i < o->forwarded_count; i++) free(o->forwarded[i]);
  for (size_t i = 0; i < o->host_count; i++) free((char*)o->hosts[i].name);
  free(o->hosts);
  free(o->category_text);
  free(o->categories);
  free(o->triggers);
}

static int add_trigger(record_options_t* o, const char* text) {
  alert_trigger_t t;
  const char* bad = alert_trigger__parse(text, strlen(text), &t);
  if (bad) return cli__usage_error(kCmd, "bad trigger '%s': %s", text, bad);
  alert_trigger_t* grown = realloc(o->triggers, (o->trigger_count + 1) * sizeof(*grown));
  if (!grown) {
    cli__error(kCmd, "out of memory");
    return EXIT_FAILED;
  }
  o->triggers = grown;
  o->triggers[o->trigger_count++] = t;
  return 0;
}

/* --kernel-sched=legacy: the kernel provider (in-process or the daemon)
 * learns it from the trace's categories, which reach every provider: the
 * category kernel:sched-legacy, honoured only when named exactly. A set that
 * covers it by a pattern (or the empty set: every category) cannot say it,
 * so that is a usage error rather than a silently different trace. */
static int add_legacy_sched(record_options_t* o) {
  static const char kLegacy[] = "kernel:sched-legacy";
  if (o->category_count == 0)
    return cli__usage_error(kCmd,
                            "--kernel-sched=legacy needs --categories (name the categories to "
                            "record, e.g. kernel:sched,kernel:task,myapp)");
  for (size_t i = 0; i < o->category_count; i++) {
    const char* c = o->categories[i];
    size_t n = strlen(c);
    if (n > 0 && c[n - 1] == '*' && strncmp(c, kLegacy, n - 1) == 0)
      return cli__usage_error(kCmd,
                              "--kernel-sched=legacy cannot be combined with the pattern '%s' "
                              "(name the kernel categories one by one)",
                              c);
    if (strcmp(c, kLegacy) == 0) return 0;
  }
  if (o->category_count >= WIRE_MAX_CATEGORIES)
    return cli__usage_error(kCmd, "more than %d categories", WIRE_MAX_CATEGORIES);
  o->categories[o->category_count++] = kLegacy;
  return 0;
}

/* --host=NAME=COMMAND */
static int add_host(record_options_t* o, const char* text) {
  const char* eq = strchr(text, '=');
  if (!eq || eq == text || eq[1] == '\0')
    return cli__usage_error(kCmd, "bad --host '%s' (NAME=COMMAND, e.g. db1=\"ssh -T db1\")", text);
  /* a hostname's size at most: the host's clock record is sized for it
   * (remote_record.c, HOST_CLOCK_MAX_WORDS) */
  if ((size_t)(eq - text) > REMOTE_MAX_HOST_NAME)
    return cli__usage_error(kCmd, "--host: NAME longer than %d bytes", REMOTE_MAX_HOST_NAME);
  remote_host_spec_t* grown = realloc(o->hosts, (o->host_count + 1) * sizeof(*grown));
  if (grown) o->hosts = grown;
  char* name = grown ? strndup(text, (size_t)(eq - text)) : NULL;
  if (!name) {
    cli__error(kCmd, "out of memory");
    return EXIT_FAILED;
  }
  o->hosts[o->host_count].name = name;
  o->hosts[o->host_count].command = eq + 1;
  o->host_count++;
  return 0;
}

/* An option every host records with, as `trace record` takes it. */
static int forward_option(record_options_t* o, const char* name, const char* value) {
  if (o->forwarded_count == REMOTE_MAX_OPTIONS) return cli__usage_error(kCmd, "too many options");
  if (asprintf(&o->forwarded[o->forwarded_count], "%s%s", name, value) < 0) {
    cli__error(kCmd, "out of memory");
    return EXIT_FAILED;
  }
  o->forwarded_count++;
  return 0;
}

static int check_host_options(const record_options_t* o) {
  if (o->host_count == 0)
    return cli__usage_error(kCmd, "--no-local and --remote-trace go with --host");
  if (o->json) return cli__usage_error(kCmd, "--host records FXT only (no --format=json)");
  if (o->trigger_count) return cli__usage_error(kCmd, "--trigger does not go with --host");
  if (o->max_snapshots) return cli__usage_error(kCmd, "--max-snapshots does not go with --host");
  return 0;
}

/* 0 to record, -1 after --help, else the exit status. */
static int parse_options(int argc, char** argv, record_options_t* o) {
  enum {
    OPT_CATEGORIES = 256,
    OPT_MODE,
    OPT_SIZE,
    OPT_DURATION,
    OPT_STOP_TIMEOUT,
    OPT_FORMAT,
    OPT_COMPRESS,
    OPT_MAX_SNAPSHOTS,
    OPT_KERNEL_SCHED,
    OPT_TRIGGER,
    OPT_HOST,
    OPT_REMOTE_TRACE,
    OPT_NO_LOCAL
  };
  static const struct option kLong[] = {
      {"categories", required_argument, NULL, OPT_CATEGORIES},
      {"buffering-mode", required_argument, NULL, OPT_MODE},
      {"buffer-size", required_argument, NULL, OPT_SIZE},
      {"duration", required_argument, NULL, OPT_DURATION},
      {"stop-timeout", required_argument, NULL, OPT_STOP_TIMEOUT},
      {"output", required_argument, NULL, 'o'},
      {"format", required_argument, NULL, OPT_FORMAT},
      {"compress", required_argument, NULL, OPT_COMPRESS},
      {"max-snapshots", required_argument, NULL, OPT_MAX_SNAPSHOTS},
      {"kernel-sched", required_argument, NULL, OPT_KERNEL_SCHED},
      {"trigger", required_argument, NULL, OPT_TRIGGER},
      {"host", required_argument, NULL, OPT_HOST},
      {"remote-trace", required_argument, NULL, OPT_REMOTE_TRACE},
      {"no-local", no_argument, NULL, OPT_NO_LOCAL},
      {"help", no_argument, NULL, 'h'},
      {NULL, 0, NULL, 0}};
  memset(o, 0, sizeof(*o));
  bool codec_given = false;
  o->buffer_mb = DEFAULT_BUFFER_MB;
  o->stop_timeout_ms = DEFAULT_STOP_TIMEOUT_MS;
  int opt;
  opterr = 0;
  optind = 1;
  /* '+': the first non-option starts the command, whose own options are its own. */
  while ((opt = getopt_long(argc, argv, "+:o:h", kLong, NULL)) != -1) {
    static const struct {
      int opt;
      const char* name;
    } kForwarded[] = {{OPT_CATEGORIES, "--categories="},
                      {OPT_MODE, "--buffering-mode="},
                      {OPT_SIZE, "--buffer-size="},
                      {OPT_STOP_TIMEOUT, "--stop-timeout="},
                      {OPT_KERNEL_SCHED, "--kernel-sched="}};
    for (size_t i = 0; i < sizeof(kForwarded) / sizeof(kForwarded[0]); i++) {
      int rc = kForwarded[i].opt == opt ? forward_option(o, kForwarded[i].name, optarg) : 0;
      if (rc != 0) return rc;
    }
    switch (opt) {
      case OPT_HOST: {
        int rc = add_host(o, optarg);
        if (rc != 0) return rc;
        break;
      }
      case OPT_REMOTE_TRACE:
        if (optarg[0] == '\0') return cli__usage_error(kCmd, "empty --remote-trace");
        o->remote_trace = optarg;
        break;
      case OPT_NO_LOCAL:
        o->no_local = true;
        break;
      case OPT_CATEGORIES: {
        int rc = split_categories(o, optarg);
        if (rc != 0) return rc;
        break;
      }
      case OPT_MODE:
        if (strcmp(optarg, "oneshot") == 0)
          o->mode = 0;
        else if (strcmp(optarg, "circular") == 0)
          o->mode = 1;
        else if (strcmp(optarg, "streaming") == 0)
          o->mode = 2;
        else
          return cli__usage_error(
              kCmd, "unknown buffering mode '%s' (oneshot, circular or streaming)", optarg);
        break;
      case OPT_SIZE: {
        char* end;
        errno = 0;
        unsigned long v = strtoul(optarg, &end, 10);
        if (errno != 0 || end == optarg || *end != '\0' || optarg[0] == '-' || v < MIN_BUFFER_MB ||
            v > MAX_BUFFER_MB)
          return cli__usage_error(kCmd, "bad buffer size '%s' (a whole number of MB, %d to %d)",
                                  optarg, MIN_BUFFER_MB, MAX_BUFFER_MB);
        o->buffer_mb = (uint32_t)v;
        break;
      }
      case OPT_DURATION:
        if (!parse_seconds(optarg, 1e7, &o->duration_s))
          return cli__usage_error(kCmd, "bad duration '%s' (seconds; 0: until stopped)", optarg);
        o->until_stopped = o->duration_s == 0;
        break;
      case OPT_TRIGGER: {
        int rc = add_trigger(o, optarg);
        if (rc != 0) return rc;
        break;
      }
      case OPT_STOP_TIMEOUT: {
        double s;
        if (!parse_seconds(optarg, 1e6, &s) || s == 0)
          return cli__usage_error(kCmd, "bad stop timeout '%s' (seconds, more than 0)", optarg);
        o->stop_timeout_ms = (uint64_t)(s * 1000 + 0.5);
        if (o->stop_timeout_ms == 0) o->stop_timeout_ms = 1;
        break;
      }
      case 'o':
        if (optarg[0] == '\0') return cli__usage_error(kCmd, "empty output file name");
        o->output = optarg;
        break;
      case OPT_FORMAT:
        if (strcmp(optarg, "json") == 0)
          o->json = true;
        else if (strcmp(optarg, "fxt") == 0)
          o->json = false;
        else
          return cli__usage_error(kCmd, "unknown format '%s' (fxt or json)", optarg);
        break;
      case OPT_COMPRESS:
        if (!compress__parse_codec(optarg, &o->codec))
          return cli__usage_error(kCmd, "unknown compression '%s' (zstd, gzip or none)", optarg);
        codec_given = true;
        break;
      case OPT_KERNEL_SCHED:
        if (strcmp(optarg, "legacy") == 0)
          o->legacy_sched = true;
        else if (strcmp(optarg, "scheduling") == 0)
          o->legacy_sched = false;
        else
          return cli__usage_error(kCmd, "unknown kernel:sched form '%s' (scheduling or legacy)",
                                  optarg);
        break;
      case OPT_MAX_SNAPSHOTS: {
        char* end;
        errno = 0;
        unsigned long v = strtoul(optarg, &end, 10);
        if (errno != 0 || end == optarg || *end != '\0' || optarg[0] == '-' || v < 1 || v > 1000000)
          return cli__usage_error(kCmd, "bad --max-snapshots '%s' (a whole number, 1 or more)",
                                  optarg);
        o->max_snapshots = (unsigned)v;
        break;
      }
      case 'h':
        fputs(kUsage, stdout);
        return -1;
      case ':':
        return cli__usage_error(kCmd, "option '%s' needs a value", argv[optind - 1]);
      default:
        return cli__usage_error(kCmd, "unknown option '%s'", argv[optind - 1]);
    }
  }
  if (optind < argc) o->command = argv + optind;
  if (o->legacy_sched) {
    int rc = add_legacy_sched(o);
    if (rc != 0) return rc;
  }
  if (!o->command && o->duration_s == 0 && !o->until_stopped) o->duration_s = DEFAULT_DURATION_S;
  if (!o->output) o->output = o->json ? "trace.json" : "trace.fxt";
  for (size_t i = 0; i < o->trigger_count; i++) {
    const char* why = record_snapshot__unsupported(o->mode, o->output, o->json);
    if (o->triggers[i].action == ALERT_ACTION_SNAPSHOT && why)
      return cli__usage_error(kCmd, "--trigger=%s:snapshot: %s", o->triggers[i].name, why);
  }
  if (!codec_given) o->codec = compress__codec_for_name(o->output);
  if (o->host_count > 0 || o->no_local || o->remote_trace) {
    int rc = check_host_options(o);
    if (rc != 0) return rc;
  }
  const char* no_snapshots = record_snapshot__unsupported(o->mode, o->output, o->json);
  if (o->max_snapshots > 0 && no_snapshots)
    return cli__usage_error(kCmd, "--max-snapshots: %s", no_snapshots);
  return 0;
}

static int64_t now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* ---- the archive reader thread ---- */

typedef struct provider_count {
  uint32_t id;
  char name[WIRE_MAX_NAME + 1];
  uint64_t records;
  bool matched; /* paired with a stats entry for the summary */
} provider_count_t;

typedef struct archive {
  int fd;               /* the pipe's read end */
  archive_ring_t* ring; /* or this, from the in-process manager */
  archive_writer_t* out;
  const char* output_name; /* for messages */
  bool json;
  atomic_uint_least64_t bytes;
  atomic_bool done;
  /* A write of the output failed: reported, the file cut after its last
   * complete record, at once; the main loop then ends the trace as when
   * --duration ends, and the archive thread reads the rest without writing. */
  atomic_bool write_failed;
  int read_error; /* errno */
  bool damaged;
  char damage[300];
  uint64_t skipped;
  char first_skip[300];
  bool recovered;
  provider_count_t providers[MAX_COUNTED_PROVIDERS];
  size_t provider_count;
  json_converter_t converter;
  json_writer_t writer; /* 64 KiB; the struct lives on the heap */
} archive_t;

static ssize_t archive_read(void* cookie, char* buf, size_t size) {
  archive_t* a = cookie;
  if (a->ring) {
    size_t n = archive_ring__read(a->ring, buf, size);
    atomic_fetch_add(&a->bytes, (uint64_t)n);
    return (ssize_t)n;
  }
  for (;;) {
    ssize_t n = read(a->fd, buf, size);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      a->read_error = errno;
      return -1;
    }
    if (n > 0) atomic_fetch_add(&a->bytes, (uint64_t)n);
    return n;
  }
}

/* The first failed write of the output: said at once, the file cut after
 * its last complete record (JSON: event, then closed), and the trace
 * stopped. */
static void write_failed(archive_t* a, int error) {
  if (atomic_exchange(&a->write_failed, true)) return;
  fprintf(stderr, "trace record: writing %s failed: %s; stopping the trace\n", a->output_name,
          strerror(error));
  archive_writer__keep(a->out, "record", a->json ? "event" : "record",
                       a->json ? JSON_CLOSING_AFTER_CUT : NULL);
  record_signals__wake();
}

static void count_provider_record(archive_t* a, uint32_t id, const char* name, size_t name_length) {
  for (size_t i = 0; i < a->provider_count; i++)
    if (a->providers[i].id == id) {
      a->providers[i].records++;
      return;
    }
  if (a->provider_count == MAX_COUNTED_PROVIDERS) return;
  provider_count_t* p = &a->providers[a->provider_count++];
  p->id = id;
  if (name_length > WIRE_MAX_NAME) name_length = WIRE_MAX_NAME;
  memcpy(p->name, name, name_length);
  p->name[name_length] = '\0';
  p->records = 1;
}

static void count_record(archive_t* a, const trace_record_t* r) {
  if (r->type == 0 || !r->provider || r->provider->id == 0) return; /* metadata */
  count_provider_record(a, r->provider->id, r->provider->name.data, r->provider->name.length);
}

/* The scan's counts: providers with records only, in the order of their
 * first provider-info or provider-section record, which is the manager's
 * (count_record(), on the JSON path, orders them by their first record: the
 * same but for a provider whose first section holds no record). */
static void take_scanned_counts(archive_t* a, const archive_scan_t* scan) {
  for (size_t i = 0; i < scan->provider_count && a->provider_count < MAX_COUNTED_PROVIDERS; i++) {
    const archive_scan_provider_t* sp = &scan->providers[i];
    if (sp->records == 0) continue;
    provider_count_t* p = &a->providers[a->provider_count++];
    size_t length = sp->name_length < WIRE_MAX_NAME ? sp->name_length : WIRE_MAX_NAME;
    p->id = sp->id;
    memcpy(p->name, sp->name, length);
    p->name[length] = '\0';
    p->records = sp->records;
    p->matched = false;
  }
}

/* FXT output: the archive is written as it comes and scanned for framing
 * only (archive_scan.h), which keeps up with the fastest streaming trace.
 * After a failed write it is read to the end without being written. */
static void copy_and_scan(archive_t* a) {
  archive_scan_t* scan = malloc(sizeof(*scan));
  uint8_t* buf = malloc(ARCHIVE_READ_SIZE);
  if (!scan || !buf) {
    a->damaged = true;
    snprintf(a->damage, sizeof(a->damage), "out of memory");
    char drain[65536];
    while (archive_read(a, drain, sizeof(drain)) > 0) {
    }
  } else {
    archive_scan__init(scan);
    ssize_t n;
    if (a->ring) { /* scanned and written where the manager put it, without a copy */
      const void* data;
      size_t got;
      while ((got = archive_ring__peek(a->ring, &data, ARCHIVE_READ_SIZE)) > 0) {
        atomic_fetch_add(&a->bytes, (uint64_t)got);
        if (!atomic_load(&a->write_failed) &&
            !fxt_writer__write(a->out, scan, (const uint8_t*)data, got))
          write_failed(a, a->out->error);
        archive_ring__consume(a->ring, got);
      }
    }
    while ((n = archive_read(a, (char*)buf, ARCHIVE_READ_SIZE)) > 0)
      if (!atomic_load(&a->write_failed) && !fxt_writer__write(a->out, scan, buf, (size_t)n))
        write_failed(a, a->out->error);
    take_scanned_counts(a, scan);
    if (!atomic_load(&a->write_failed)) {
      if (!archive_scan__finish(scan)) {
        a->damaged = true;
        snprintf(a->damage, sizeof(a->damage), "%s", scan->damage);
      }
      if (!archive_writer__finish(a->out)) write_failed(a, a->out->error);
    }
  }
  free(buf);
  free(scan);
}

static void* archive_main(void* arg) {
  archive_t* a = arg;
  pthread_setname_np(pthread_self(), "trace-archive"); /* for top -H and bench/run */
  if (!a->json) {
    copy_and_scan(a); /* reads to the end, whatever happens */
    atomic_store(&a->done, true);
    record_signals__wake();
    return NULL;
  }
  cookie_io_functions_t io = {archive_read, NULL, NULL, NULL};
  FILE* in = fopencookie(a, "r", io);
  trace_reader_t* reader = in ? trace_reader_open_file(in, NULL) : NULL;
  if (!reader) {
    a->damaged = true;
    snprintf(a->damage, sizeof(a->damage), "out of memory");
  } else {
    json_writer__init_archive(&a->writer, a->out);
    json_converter__begin(&a->converter, &a->writer);
    trace_record_t record;
    int rc;
    while (!a->writer.failed && (rc = trace_reader_next(reader, &record)) != TRACE_READ_END) {
      if (rc == TRACE_READ_ERROR) {
        trace_reader_error_t e = trace_reader_error(reader);
        a->damaged = true;
        snprintf(a->damage, sizeof(a->damage), "at byte offset %llu: %s",
                 (unsigned long long)e.offset, e.message);
        break;
      }
      if (rc == TRACE_READ_SKIPPED) {
        if (a->skipped++ == 0) {
          trace_reader_error_t e = trace_reader_error(reader);
          snprintf(a->first_skip, sizeof(a->first_skip), "at byte offset %llu: %s",
                   (unsigned long long)e.offset, e.message);
        }
        continue;
      }
      count_record(a, &record);
      json_converter__record(&a->converter, &record);
    }
    a->recovered = trace_reader_recovered(reader);
    json_converter__end(&a->converter); /* after a failed write it only frees */
    if (!a->writer.failed && json__flush(&a->writer)) archive_writer__finish(a->out);
    if (a->writer.failed || a->out->error) write_failed(a, a->out->error);
    trace_reader_close(reader);
  }
  /* Whatever happened, read to the end so the manager is never blocked. */
  char buf[65536];
  if (in) {
    while (fread(buf, 1, sizeof(buf), in) > 0) {
    }
    fclose(in);
  } else {
    while (archive_read(a, buf, sizeof(buf)) > 0) {
    }
  }
  atomic_store(&a->done, true);
  record_signals__wake();
  return NULL;
}

/* ---- the command ---- */

static int status_of(int wait_status) {
  if (WIFEXITED(wait_status)) return WEXITSTATUS(wait_status);
  if (WIFSIGNALED(wait_status)) return 128 + WTERMSIG(wait_status);
  return EXIT_FAILED;
}

/* Ends a command still running when recording ends: SIGTERM, then SIGKILL. */
static void end_command(pid_t pid) {
  kill(pid, SIGTERM);
  int64_t deadline = now_ms() + KILL_GRACE_MS;
  int status;
  while (waitpid(pid, &status, WNOHANG) == 0) {
    if (now_ms() >= deadline) {
      kill(pid, SIGKILL);
      while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
      }
      return;
    }
    struct timespec ts = {0, 10 * 1000000};
    nanosleep(&ts, NULL);
  }
}

/* ---- progress and summary ---- */

static void show_progress(int64_t start_ms, const archive_t* a) {
  char bytes[32];
  cli__format_bytes(atomic_load(&a->bytes), bytes, sizeof(bytes));
  fprintf(stderr, "\r\033[Krecording: %.1f s, %s received", (now_ms() - start_ms) / 1000.0, bytes);
  fflush(stderr);
}

static void clear_progress(void) {
  fputs("\r\033[K", stderr);
  fflush(stderr);
}

/* The records the archive holds for the provider of `s`: providers are
 * matched by name, in order, as the archive can hold several of one name. */
static bool records_of(archive_t* a, const controller_stats_t* s, uint64_t* records) {
  for (size_t i = 0; i < a->provider_count; i++)
    if (!a->providers[i].matched && strcmp(a->providers[i].name, s->name) == 0) {
      a->providers[i].matched = true;
      *records = a->providers[i].records;
      return true;
    }
  return false;
}

/* A provider whose process is the command, gone because the command exited
 * by itself before recording ended: expected, not worth a warning. */
static bool ended_with_command(const controller_stats_t* s, pid_t command, bool command_exited) {
  return s->state == CONTROLLER_DIED && command > 0 && command_exited &&
         s->pid == (uint64_t)command;
}

/* Why a provider in this buffering mode drops records, and what helps. */
static const char* drop_reason(uint8_t buffering_mode) {
  switch (buffering_mode) {
    case 1: /* circular: the rolling buffers overwrite their oldest data instead */
      return "its durable buffer (strings and threads) was full, which stops the provider, or "
             "a record was larger than a rolling buffer (try a larger --buffer-size)";
    case 2:
      return "every rolling segment was full, waiting for the trace manager to save it (try a "
             "larger --buffer-size)";
    default:
      return "its buffer was full (try a larger --buffer-size, or --buffering-mode=circular "
             "or streaming)";
  }
}

static void print_summary(archive_t* a, const char* output, const char* codec,
                          uint64_t compressed_bytes, const controller_stats_t* stats, size_t count,
                          pid_t command, bool command_exited) {
  uint64_t total = 0;
  for (size_t i = 0; i < a->provider_count; i++) total += a->providers[i].records;
  char bytes[32], compressed[64] = "", packed[32];
  cli__format_bytes(atomic_load(&a->bytes), bytes, sizeof(bytes));
  if (codec) {
    cli__format_bytes(compressed_bytes, packed, sizeof(packed));
    snprintf(compressed, sizeof(compressed), ", %s-compressed to %s", codec, packed);
  }
  fprintf(stderr,
          "trace record: wrote %s (%s of FXT received%s, %llu records from %zu provider%s)\n",
          strcmp(output, "-") == 0 ? "standard output" : output, bytes, compressed,
          (unsigned long long)total, count, count == 1 ? "" : "s");
  if (count == 0) {
    fputs("trace record: warning: no provider took part in the trace\n", stderr);
    return;
  }
  fprintf(stderr, "  %-24s %8s  %-9s %10s %10s %7s %7s  %s\n", "PROVIDER", "PID", "MODE", "RECORDS",
          "DROPPED", "DURABLE", "WRAPPED", "STATE");
  for (size_t i = 0; i < count; i++) {
    const controller_stats_t* s = &stats[i];
    uint64_t records = 0;
    char records_text[24] = "-", durable[8] = "-", name[TEXT_ESCAPED_SIZE(WIRE_MAX_NAME)];
    if (records_of(a, s, &records))
      snprintf(records_text, sizeof(records_text), "%llu", (unsigned long long)records);
    if (s->buffering_mode != 0) snprintf(durable, sizeof(durable), "%u%%", s->durable_percent);
    fprintf(stderr, "  %-24s %8llu  %-9s %10s %10llu %7s %7u  %s\n",
            text__escaped(s->name, name, sizeof(name)), (unsigned long long)s->pid,
            controller__mode_name(s->buffering_mode), records_text,
            (unsigned long long)s->records_dropped, durable, (unsigned)s->wrapped_count,
            ended_with_command(s, command, command_exited) ? "exited"
                                                           : controller__state_name(s->state));
  }
  for (size_t i = 0; i < count; i++) {
    const controller_stats_t* s = &stats[i];
    /* names and texts the manager relays from providers: escaped */
    char name[TEXT_ESCAPED_SIZE(WIRE_MAX_NAME)], damage[TEXT_ESCAPED_SIZE(WIRE_MAX_DAMAGE)];
    text__escaped(s->name, name, sizeof(name));
    if (s->records_dropped > 0)
      fprintf(stderr,
              "trace record: warning: provider '%s' (pid %llu) dropped %llu records: %s; or its "
              "events came before the trace started in it (its registration wait, "
              "FXTRACE_REGISTER_TIMEOUT, ran out), or TRACE_EVENT() formats were left out of "
              "the trace (it says which on its standard error)\n",
              name, (unsigned long long)s->pid, (unsigned long long)s->records_dropped,
              drop_reason(s->buffering_mode));
    if (s->state == CONTROLLER_NOT_STOPPED_IN_TIME)
      fprintf(stderr,
              "trace record: warning: provider '%s' (pid %llu) did not stop in time; its buffer "
              "was read as it was\n",
              name, (unsigned long long)s->pid);
    else if (s->state == CONTROLLER_DIED && !ended_with_command(s, command, command_exited))
      fprintf(stderr,
              "trace record: warning: provider '%s' (pid %llu) went away during the trace "
              "without stopping (its process exited or crashed); the records it committed are "
              "in the archive\n",
              name, (unsigned long long)s->pid);
    if (s->damage[0]) {
      char lost[64];
      if (s->damaged_records == WIRE_RECORDS_UNKNOWN)
        snprintf(lost, sizeof(lost), "its records%s could not be read",
                 s->buffering_mode == 2 ? " since its last streaming save" : "");
      else
        snprintf(lost, sizeof(lost), "%llu record(s) left out",
                 (unsigned long long)s->damaged_records);
      fprintf(stderr,
              "trace record: warning: provider '%s' (pid %llu) damaged its trace buffer: %s; "
              "%s\n",
              name, (unsigned long long)s->pid, text__escaped(s->damage, damage, sizeof(damage)),
              lost);
    }
  }
}

/* ---- recording ---- */

typedef struct session {
  const record_options_t* o;
  controller_t controller;
  bool connected;
  local_manager_t* local;
  record_kernel_t* kernel; /* trace record's own kernel provider, if it runs one */
  char socket_path[128];
  int pipe[2];
  archive_ring_t* ring; /* the archive from the in-process manager, or NULL */
  bool ring_shared;     /* ring: a daemon's (ARCHIVE_RING), which ends it */
  output_t out;
  bool out_open;
  archive_writer_t writer; /* into `out`, compressed or not */
  bool writer_ready;
  archive_t* archive;
  pthread_t archive_thread;
  bool archive_running;
  record_snapshot_t snapshots;
  pid_t child;
  bool child_done;   /* reaped: it ended by itself */
  bool child_exited; /* ... and by exiting, not by a signal */
  int child_status;
  bool failed;
  int64_t start_ms;        /* CLOCK_MONOTONIC, when tracing started */
  bool watching;           /* alerts are asked for */
  bool stopped_by_trigger; /* a --trigger=NAME:stop alert ended recording */
  bool polling;            /* the controller connection is read for SESSION_STOPPED */
  uint64_t alerts;         /* received */
  uint64_t alerts_lost;    /* the manager reported lost (its limit, its full queue) */
} session_t;

/* The manager at the socket the rule names (protocol/manager_socket.h), else
 * one of its own in a private directory: when none answers there, and when
 * the default directory is not safe to use (another user may listen in it). */
static bool connect_or_start_manager(session_t* s) {
  struct manager_socket where;
  if (manager_socket__locate(&where, false, 0, (gid_t)-1) != 0) {
    cli__error(kCmd, "the manager's socket path is too long (check FXTRACE_SOCKET)");
    return false;
  }
  snprintf(s->socket_path, sizeof(s->socket_path), "%s", where.path);
  if (where.kind == MANAGER_SOCKET_UNSAFE) {
    cli__warning(kCmd,
                 "not looking for a trace manager in %s: %s; %s. Recording with a trace manager "
                 "of its own in a private directory",
                 where.directory, where.problem, MANAGER_SOCKET_ADVICE);
  } else {
    int status =
        controller__open(&s->controller, where.absent ? NULL : where.connect_path, where.path);
    manager_socket__release(&where);
    if (status == 0) {
      s->connected = true;
      return true;
    }
    if (status == -EPERM && where.kind == MANAGER_SOCKET_DEFAULT) {
      /* another user's listener in a default place: as a squatted directory */
      cli__warning(kCmd, "%s. Recording with a trace manager of its own in a private directory",
                   s->controller.error);
    } else if (status != -ENOENT && status != -ECONNREFUSED) {
      cli__error(kCmd, "%s", s->controller.error);
      return false;
    }
  }
  if (!local_manager__available()) {
    cli__error(kCmd, "%s; start trace_manager first", s->controller.error);
    return false;
  }
  char error[256];
  int status =
      local_manager__start(&s->local, s->socket_path, sizeof(s->socket_path), error, sizeof(error));
  if (status != 0) {
    cli__error(kCmd, "no trace manager is running, and %s", error);
    return false;
  }
  status = controller__open(&s->controller, s->socket_path, NULL);
  if (status != 0) {
    cli__error(kCmd, "the in-process trace manager: %s", s->controller.error);
    return false;
  }
  s->connected = true;
  return true;
}

static bool open_output(session_t* s) {
  if (!output__open(&s->out, kCmd, s->o->output)) return false;
  s->out_open = true;
  if (s->out.owned) record_signals__set_output(s->out.fd, s->o->output);
  if (!archive_writer__init(&s->writer, &s->out, s->o->codec)) {
    cli__error(kCmd, "cannot start compressing: %s", strerror(errno));
    return false;
  }
  s->writer_ready = true;
  return true;
}

static bool start_archive_reader(session_t* s) {
  if (pipe2(s->pipe, O_CLOEXEC) != 0) {
    cli__error(kCmd, "cannot create a pipe: %s", strerror(errno));
    return false;
  }
  fcntl(s->pipe[0], F_SETPIPE_SZ, ARCHIVE_PIPE_SIZE); /* best effort: fewer wake-ups */
  s->archive = calloc(1, sizeof(*s->archive));
  if (!s->archive) {
    cli__error(kCmd, "out of memory");
    return false;
  }
  s->archive->fd = s->pipe[0];
  /* With the in-process manager the archive crosses a ring, not the pipe
   * (docs/manager.md, "The archive in the same process"); the pipe still
   * names it to the manager. */
  if (s->local && (s->ring = archive_ring__create(ARCHIVE_RING_SIZE)) != NULL) {
    if (local_manager__archive_into(s->local, s->pipe[1], s->ring))
      s->archive->ring = s->ring;
    else
      archive_ring__close(s->ring); /* unused: freed at the end */
  } else if (!s->local) {
    /* a daemon: its ring, shared, when it has them (docs/manager.md, "The
     * archive ring of a daemon"); else, when it says so, the pipe */
    bool refused;
    int status = controller__archive_ring(&s->controller, ARCHIVE_RING_SIZE, &s->ring, &refused);
    if (status == 0) {
      s->ring_shared = true;
      s->archive->ring = s->ring;
    } else if (!refused) {
      cli__error(kCmd, "%s", s->controller.error);
      return false;
    } else if (status != -ENOSYS) {
      cli__warning(kCmd, "the archive comes through a pipe: %s", s->controller.error);
    }
  }
  s->archive->out = &s->writer;
  s->archive->output_name = s->out.name;
  s->archive->json = s->o->json;
  int err = pthread_create(&s->archive_thread, NULL, archive_main, s->archive);
  if (err != 0) {
    cli__error(kCmd, "cannot start the archive reader: %s", strerror(err));
    return false;
  }
  s->archive_running = true;
  return true;
}

static bool initialize_and_start(session_t* s) {
  const record_options_t* o = s->o;
  controller_config_t config = {
      .categories = o->categories,
      .category_count = o->category_count,
      .buffer_size_mb = o->buffer_mb,
      .start_timeout_ms = DEFAULT_START_TIMEOUT_MS,
      .buffering_mode = o->mode,
      .stop_timeout_ms = o->stop_timeout_ms,
  };
  int status = controller__initialize_tracing(&s->controller, &config, s->pipe[1]);
  close(s->pipe[1]); /* the manager has its own copy: the archive ends when it closes it */
  s->pipe[1] = -1;
  /* INITIALIZE_TRACING has no answer: whether the manager took the ring
   * is known later. A refusal closes the pipe without it: finish_archive()
   * then closes the ring, once the manager is stopped. */
  if (status != 0) {
    cli__error(kCmd, "%s", s->controller.error);
    return false;
  }
  s->controller.reply_timeout_ms = DEFAULT_START_TIMEOUT_MS + REPLY_MARGIN_MS;
  uint32_t start_error;
  status = controller__start_tracing(&s->controller, CONTROLLER_RETAIN, NULL, 0, &start_error);
  if (status != 0) {
    cli__error(kCmd, "%s", s->controller.error);
    return false;
  }
  if (start_error != 0) {
    cli__error(kCmd, "the trace manager could not start tracing: %s%s",
               controller__start_error_name(start_error),
               start_error == CONTROLLER_START_NOT_INITIALIZED
                   ? " (another client's trace may be running)"
                   : "");
    return false;
  }
  return true;
}

static void reap_child(session_t* s) {
  if (s->child <= 0 || s->child_done) return;
  int status;
  pid_t r = waitpid(s->child, &status, WNOHANG);
  if (r == s->child) {
    record_signals__set_command(0);      /* its pid may be reused from now on */
    s->child_exited = WIFEXITED(status); /* a crash is no ordinary end */
    s->child_done = true;
    s->child_status = status_of(status);
  }
}

/* SIGUSR1s since the last look: one snapshot each, or a warning when the
 * options allow none. */
static void take_requested_snapshots(session_t* s) {
  unsigned requests = record_signals__snapshot_requests();
  if (requests == 0) return;
  const char* no_snapshots = record_snapshot__unsupported(s->o->mode, s->o->output, s->o->json);
  if (no_snapshots) {
    cli__warning(kCmd, "SIGUSR1: no snapshot: %s", no_snapshots);
    return;
  }
  for (unsigned i = 0; i < requests; i++) record_snapshot__take(&s->snapshots, "SIGUSR1");
}

/* Prints an alert as it arrives: name, provider, pid, time (wall clock, and
 * since tracing started). */
static void print_alert(session_t* s, const controller_alert_t* a) {
  struct timespec mono, real;
  clock_gettime(CLOCK_MONOTONIC, &mono);
  clock_gettime(CLOCK_REALTIME, &real);
  int64_t mono_ns = (int64_t)mono.tv_sec * 1000000000 + mono.tv_nsec;
  int64_t age_ns = mono_ns - (int64_t)a->time_ns; /* how long ago the manager got it */
  int64_t real_ns = (int64_t)real.tv_sec * 1000000000 + real.tv_nsec - (age_ns > 0 ? age_ns : 0);
  time_t secs = (time_t)(real_ns / 1000000000);
  struct tm tm;
  char when[32] = "?";
  if (localtime_r(&secs, &tm)) strftime(when, sizeof(when), "%H:%M:%S", &tm);
  double since = ((double)a->time_ns / 1e6 - (double)s->start_ms) / 1e3;
  char name[64], provider[4 * WIRE_MAX_NAME + 8];
  if (a->dropped > 0)
    fprintf(stderr,
            "trace record: warning: %u alert(s) lost before the next one (the trace "
            "manager's limit of 16 a second per provider, or its queue of 16)\n",
            (unsigned)a->dropped);
  fprintf(stderr, "trace record: alert '%s' from provider '%s' (pid %llu) at %s.%03d (%+.3f s)\n",
          text__escaped(a->name, name, sizeof(name)),
          text__escaped(a->provider_name, provider, sizeof(provider)), (unsigned long long)a->pid,
          when, (int)(real_ns / 1000000 % 1000), since);
}

/* Takes the alerts that have come, prints them and runs their triggers; asks
 * for the next. True if one of them stops the trace. */
static bool take_alerts(session_t* s) {
  bool stop = false;
  for (;;) {
    controller_alert_t a;
    int got = controller__read_alert(&s->controller, &a);
    if (got < 0) {
      cli__warning(kCmd, "alerts are no longer received: %s", s->controller.error);
      s->watching = false;
      return stop;
    }
    if (got == 0) break;
    s->alerts++;
    s->alerts_lost += a.dropped;
    print_alert(s, &a);
    alert_action_t action = alert_trigger__find(s->o->triggers, s->o->trigger_count, a.name);
    if (action == ALERT_ACTION_STOP && !stop) {
      fprintf(stderr, "trace record: trigger %s:stop: stopping\n", a.name);
      stop = true;
    } else if (action == ALERT_ACTION_SNAPSHOT && !stop) {
      char reason[64];
      snprintf(reason, sizeof(reason), "alert '%s'", a.name);
      record_snapshot__take(&s->snapshots, reason);
    }
    if (stop) break; /* the rest: printed at the end */
    if (controller__watch_alert(&s->controller) != 0) {
      cli__warning(kCmd, "alerts are no longer received: %s", s->controller.error);
      s->watching = false;
      return stop;
    }
  }
  return stop;
}

/* Another client stopped this session (`trace stop ID`: SESSION_STOPPED):
 * said with who did it; recording then ends as at the end of --duration. */
static void say_stopped_by_other(const controller_t* c) {
  char buf[4096], who[64];
  struct passwd pw, *found = NULL;
  if (getpwuid_r((uid_t)c->stopped_by_uid, &pw, buf, sizeof(buf), &found) == 0 && found)
    snprintf(who, sizeof(who), "%s", found->pw_name);
  else
    snprintf(who, sizeof(who), "uid %u", (unsigned)c->stopped_by_uid);
  fprintf(stderr, "trace record: session %u stopped by %s (pid %llu, trace stop): stopping\n",
          (unsigned)c->session_id, who, (unsigned long long)c->stopped_by_pid);
}

/* Reads the controller connection when no alert is watched (take_alerts
 * reads it otherwise): SESSION_STOPPED may come. */
static void poll_controller(session_t* s) {
  if (!s->polling || s->watching) return;
  if (controller__poll(&s->controller) != 0) {
    cli__warning(kCmd, "the trace manager's connection: %s", s->controller.error);
    s->polling = false;
  }
}

/* Waits for the end of recording: duration, a signal, the command's exit, a
 * --trigger=NAME:stop alert, another client's `trace stop`, the archive
 * ending early (the manager went away), or a failed write of the output (a
 * full disk), which ends it as the duration would. */
static void wait_for_end(session_t* s) {
  const record_options_t* o = s->o;
  bool progress = isatty(STDERR_FILENO);
  int64_t start = s->start_ms;
  int64_t deadline = o->duration_s > 0 ? start + (int64_t)(o->duration_s * 1000 + 0.5) : -1;
  for (;;) {
    reap_child(s);
    if (record_signals__interrupted() || (s->child > 0 && s->child_done) ||
        atomic_load(&s->archive->done) || atomic_load(&s->archive->write_failed))
      break;
    take_requested_snapshots(s);
    if (s->watching) {
      if (progress && (s->controller.alert_ready)) clear_progress();
      if (take_alerts(s)) {
        s->stopped_by_trigger = true;
        break;
      }
    }
    poll_controller(s);
    if (s->controller.session_stopped) {
      say_stopped_by_other(&s->controller);
      break;
    }
    int64_t now = now_ms();
    if (deadline >= 0 && now >= deadline) break;
    int wait_ms = progress ? PROGRESS_INTERVAL_MS : 1000;
    if (deadline >= 0 && deadline - now < wait_ms) wait_ms = (int)(deadline - now);
    struct pollfd p[2] = {{record_signals__wake_fd(), POLLIN, 0},
                          {s->watching || s->polling ? s->controller.fd : -1, POLLIN, 0}};
    if (s->controller.alert_ready) wait_ms = 0;
    if (poll(p, 2, wait_ms) > 0) {
      if (p[0].revents) record_signals__drain();
      if (p[1].revents && progress) clear_progress();
    }
    if (progress) show_progress(start, s->archive);
  }
  if (progress) clear_progress();
}

static bool terminate(session_t* s, controller_stats_t** stats, size_t* count) {
  s->controller.reply_timeout_ms = (int)(s->o->stop_timeout_ms + REPLY_MARGIN_MS);
  if (controller__terminate_tracing(&s->controller, true, stats, count) != 0) {
    cli__error(kCmd, "%s", s->controller.error);
    return false;
  }
  return true;
}

static void finish_archive(session_t* s) {
  if (!s->archive_running) return;
  if (s->pipe[1] >= 0) {
    close(s->pipe[1]);
    s->pipe[1] = -1;
  }
  /* the in-process manager is stopped by now: it closed the ring if it
   * took it; if not, this ends the reader. A daemon's ring ends when the
   * daemon is done with it (or with this connection, closed by now). */
  if (s->ring && !s->ring_shared) archive_ring__close(s->ring);
  pthread_join(s->archive_thread, NULL);
  s->archive_running = false;
}

/* Reports what the archive reader saw; false if the trace is unusable. */
static bool check_archive(session_t* s) {
  archive_t* a = s->archive;
  bool ok = !atomic_load(&a->write_failed); /* reported when it happened, the file cut */
  if (a->read_error) {
    cli__error(kCmd, "reading the archive from the trace manager failed: %s",
               strerror(a->read_error));
    ok = false;
  }
  if (s->ring_shared && archive_ring__was_cut(s->ring)) {
    cli__error(kCmd,
               "the trace manager ended the archive before its end (the trace was aborted "
               "or the manager shut down: its log says which)");
    ok = false;
  } else if (s->ring_shared && !archive_ring__closed(s->ring)) {
    cli__error(kCmd, "the trace manager went away before the end of the archive");
    ok = false;
  }
  if (atomic_load(&a->bytes) == 0) {
    cli__error(kCmd, "the trace manager sent no archive");
    ok = false;
  } else if (a->damaged) {
    cli__error(kCmd, "the archive from the trace manager is damaged %s", a->damage);
    ok = false;
  }
  if (a->skipped > 0)
    fprintf(stderr, "trace record: warning: %llu record(s) of the archive skipped (first %s)\n",
            (unsigned long long)a->skipped, a->first_skip);
  if (a->json && a->converter.events == 0 && ok)
    fprintf(stderr, "trace record: warning: the trace holds no event\n");
  record_signals__set_output(-1, NULL); /* the descriptor is closed below */
  /* a delayed write error (NFS...) shows at close: the file stays as it is */
  if (output__close(&s->out) != 0 && ok) {
    cli__error(kCmd, "writing %s failed: %s", s->out.name, strerror(s->out.error));
    ok = false;
  }
  s->out_open = false;
  return ok;
}

static int record(const record_options_t* o) {
  session_t s;
  memset(&s, 0, sizeof(s));
  s.o = o;
  s.pipe[0] = s.pipe[1] = -1;
  s.controller.fd = -1;
  controller_stats_t* stats = NULL;
  size_t stats_count = 0;
  bool ok = false, traced = false;

  int status = record_signals__start();
  if (status != 0) {
    cli__error(kCmd, "cannot create a pipe: %s", strerror(-status));
    return EXIT_FAILED;
  }
  /* what SIGKILLed recordings left: never a live recording's */
  record_kernel__remove_stale();
  local_manager__remove_stale();
  bool connected = connect_or_start_manager(&s);
  if (connected) /* registers before the trace is initialized, so it records from the start */
    s.kernel = record_kernel__start(o->categories, o->category_count, s.socket_path, &s.controller);
  record_snapshot__init(&s.snapshots, &s.controller, o->output, o->codec, o->max_snapshots);
  /* alerts are asked for before the trace starts: none is missed */
  if (connected) {
    if (controller__watch_alert(&s.controller) == 0)
      s.watching = true;
    else
      cli__warning(kCmd, "alerts will not be received: %s", s.controller.error);
  }
  if (connected && open_output(&s) && start_archive_reader(&s) && initialize_and_start(&s)) {
    traced = true;
    s.polling = true;
    s.start_ms = now_ms();
    ok = true;
    if (o->command) {
      if (setenv("FXTRACE_SOCKET", s.socket_path, 1) != 0) {
        cli__error(kCmd, "cannot set FXTRACE_SOCKET: %s", strerror(errno));
        ok = false;
      } else {
        /* the trace goes to standard output: the command's output must not */
        int err = spawn__command(o->command, s.out.fd == STDOUT_FILENO, &s.child,
                                 record_signals__set_command);
        if (err != 0) {
          cli__error(kCmd, "cannot run '%s': %s", o->command[0], strerror(err));
          s.child = 0;
          ok = false;
        }
        record_signals__set_command(s.child);
      }
    }
    if (ok) wait_for_end(&s);
    int sig = record_signals__interrupted();
    if (sig) fprintf(stderr, "trace record: %s: stopping\n", strsignal(sig));
    /* A second Ctrl-C while the trace is being collected ends trace at once
     * (and removes what must not outlive it: record_signals.h). */
    record_signals__stopping();
    if (!terminate(&s, &stats, &stats_count)) ok = false;
    /* alerts that came while stopping: printed, their triggers moot */
    while (s.watching) {
      /* a round trip: the manager answers a waiting WATCH_ALERT at once when
       * an alert is queued, so its ALERT comes before this reply */
      controller_provider_t* list = NULL;
      size_t n = 0;
      if (!s.controller.alert_ready && controller__get_providers(&s.controller, &list, &n) != 0)
        break;
      free(list);
      controller_alert_t a;
      if (controller__read_alert(&s.controller, &a) != 1) break;
      s.alerts++;
      s.alerts_lost += a.dropped;
      print_alert(&s, &a);
      if (controller__watch_alert(&s.controller) != 0) break;
    }
    if (s.alerts > 0 || s.alerts_lost > 0)
      fprintf(stderr, "trace record: %llu alert(s) received, %llu lost in the trace manager\n",
              (unsigned long long)s.alerts, (unsigned long long)s.alerts_lost);
  }
  record_signals__stopping();
  if (s.child > 0) { /* the command outlived the recording (duration, Ctrl-C): end it */
    reap_child(&s);
    record_signals__set_command(0);
    if (!s.child_done) end_command(s.child);
  }
  /* Closing the last controller connection ends any session still open, and
   * stopping an in-process manager closes whatever it holds: either way the
   * archive pipe reaches its end. */
  if (s.connected) controller__close(&s.controller);
  record_kernel__stop(s.kernel);
  local_manager__stop(s.local);
  s.local = NULL;
  finish_archive(&s);
  if (s.archive && traced && !check_archive(&s)) ok = false;
  if (s.archive && traced && ok)
    print_summary(s.archive, o->output,
                  o->codec == COMPRESS_NONE ? NULL : compress__codec_name(o->codec), s.out.offset,
                  stats, stats_count, s.child, s.child_exited);
  if (s.out_open) { /* the trace did not start: nothing was recorded into it */
    record_signals__set_output(-1, NULL);
    output__close(&s.out);
    output__remove(&s.out);
  }
  if (s.writer_ready) archive_writer__free(&s.writer);
  if (s.pipe[0] >= 0) close(s.pipe[0]);
  archive_ring__free(s.ring);
  free(s.archive);
  free(stats);
  record_snapshot__free(&s.snapshots);
  record_signals__stop();
  if (!ok) return EXIT_FAILED;
  if (s.child > 0 && s.child_done) return s.child_status;
  return EXIT_OK;
}

/* --host: every host, this one too unless --no-local (src/remote). */
static int record_hosts(const record_options_t* o) {
  remote_options_t r = {
      .hosts = o->hosts,
      .host_count = o->host_count,
      .local = !o->no_local,
      .remote_trace = o->remote_trace ? o->remote_trace : "trace",
      .duration_s = o->duration_s,
      .stop_timeout_ms = o->stop_timeout_ms,
      .output = o->output,
      .codec = strcmp(o->output, "-") == 0 ? COMPRESS_NONE : o->codec,
      .command = o->command,
  };
  for (size_t i = 0; i < o->forwarded_count; i++)
    r.record_options[r.record_option_count++] = o->forwarded[i];
  return remote__record(&r);
}

int cmd__record(int argc, char** argv) {
  record_options_t o;
  int rc = parse_options(argc, argv, &o);
  if (rc == 0 && o.host_count > 0)
    rc = record_hosts(&o);
  else if (rc == 0)
    rc = record(&o);
  else if (rc < 0)
    rc = EXIT_OK;
  free_options(&o);
  return rc;
}
