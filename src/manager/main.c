/* trace_manager: the trace manager daemon (docs/manager.md). */
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>

#include "manager/listen_fds.h"
#include "manager/manager.h"

static manager_t* g_manager;

static void on_signal(int sig) {
  (void)sig;
  if (g_manager) manager__shutdown(g_manager);
}

static void usage(FILE* out) {
  fputs(
      "usage: trace_manager [OPTIONS]\n"
      "\n"
      "The fxtrace trace manager: traced programs (providers) register with it, `trace`\n"
      "clients start and stop traces through it and receive the archive.\n"
      "\n"
      "  --socket PATH           listen there (default: $FXTRACE_SOCKET, else\n"
      "                          $XDG_RUNTIME_DIR/fxtrace/manager.sock, else\n"
      "                          /run/fxtrace/manager.sock for root, "
      "/tmp/fxtrace-$UID/manager.sock)\n"
      "  --group NAME            also let this group's members control tracing\n"
      "                          (socket mode 0660; default: owner only, 0600)\n"
      "  --category NAME=DESCRIPTION\n"
      "                          declare a known category (repeatable): listed by\n"
      "                          `trace list-categories` as the manager's own\n"
      "  --stop-timeout-ms N     how long a provider may take to stop (default 60000)\n"
      "  --archive-queue-mb N    archive a session may queue for a slow client, in MiB\n"
      "                          (default 256; past it the session is aborted); streaming\n"
      "                          saves wait to be acknowledged past N/2 or 32, the lower\n"
      "  --log-level LEVEL       error, warn, info (default) or debug\n"
      "  --syslog                log to syslog instead of stderr\n"
      "  --help                  this text\n"
      "\n"
      "SIGTERM or SIGINT: an active trace is stopped, its archive delivered, then exit.\n"
      "Started by systemd socket activation (LISTEN_PID, LISTEN_FDS: trace_manager.socket),\n"
      "it accepts on the one socket passed instead of binding its own.\n",
      out);
}

/* --category NAME=DESCRIPTION into out (pointing into arg). 0, or a usage
 * error (2) after saying why. */
static int parse_category(char* arg, manager_category_t* out) {
  char* eq = strchr(arg, '=');
  if (!eq || eq == arg) {
    fprintf(stderr, "trace_manager: --category: NAME=DESCRIPTION, not %s\n", arg);
    return 2;
  }
  *eq = '\0';
  if (strlen(arg) > 100 || strlen(eq + 1) > 400) {
    fprintf(stderr,
            "trace_manager: --category %s: names are at most 100 bytes, descriptions "
            "at most 400\n",
            arg);
    return 2;
  }
  *out = (manager_category_t){arg, eq + 1};
  return 0;
}

int main(int argc, char** argv) {
  manager_config_t config = {.log_level = MANAGER_LOG_INFO};
  /* at most one per argument; argv outlives the manager (static: reachable
   * until exit, whichever way main returns) */
  static manager_category_t* categories;
  categories = calloc((size_t)argc, sizeof(*categories));
  if (!categories) {
    fprintf(stderr, "trace_manager: out of memory\n");
    return 1;
  }
  config.known_categories = categories;
  static const struct option kOptions[] = {
      {"socket", required_argument, NULL, 's'},
      {"group", required_argument, NULL, 'g'},
      {"category", required_argument, NULL, 'c'},
      {"stop-timeout-ms", required_argument, NULL, 't'},
      {"archive-queue-mb", required_argument, NULL, 'q'},
      {"log-level", required_argument, NULL, 'l'},
      {"syslog", no_argument, NULL, 'y'},
      {"help", no_argument, NULL, 'h'},
      {NULL, 0, NULL, 0},
  };
  int c;
  while ((c = getopt_long(argc, argv, "h", kOptions, NULL)) != -1) {
    switch (c) {
      case 's':
        config.socket_path = optarg;
        break;
      case 'g':
        config.group = optarg;
        break;
      case 'c':
        if (parse_category(optarg, &categories[config.known_category_count]) != 0) return 2;
        config.known_category_count++;
        break;
      case 't': {
        char* end;
        errno = 0;
        unsigned long long v = strtoull(optarg, &end, 10);
        if (errno || *end || end == optarg || v == 0 || optarg[0] == '-') {
          fprintf(stderr, "trace_manager: --stop-timeout-ms: not a positive number: %s\n", optarg);
          return 2;
        }
        config.stop_timeout_ms = v;
        break;
      }
      case 'q': {
        char* end;
        errno = 0;
        unsigned long long v = strtoull(optarg, &end, 10);
        if (errno || *end || end == optarg || v == 0 || v > 65536 || optarg[0] == '-') {
          fprintf(stderr, "trace_manager: --archive-queue-mb: not a number from 1 to 65536: %s\n",
                  optarg);
          return 2;
        }
        config.max_output_queue = (size_t)v << 20;
        break;
      }
      case 'l':
        if (manager__parse_log_level(optarg, &config.log_level) != 0) {
          fprintf(stderr, "trace_manager: --log-level: error, warn, info or debug, not %s\n",
                  optarg);
          return 2;
        }
        break;
      case 'y':
        config.log_syslog = true;
        break;
      case 'h':
        usage(stdout);
        return 0;
      default:
        usage(stderr);
        return 2;
    }
  }
  if (optind < argc) {
    fprintf(stderr, "trace_manager: unexpected argument: %s\n", argv[optind]);
    usage(stderr);
    return 2;
  }
  int passed = listen_fds__take();
  if (passed < 0) {
    fprintf(stderr, "trace_manager: bad socket activation variables (LISTEN_PID, LISTEN_FDS)\n");
    return 2;
  }
  if (passed > 1) {
    fprintf(stderr, "trace_manager: socket activation passed %d sockets; expected one\n", passed);
    return 2;
  }
  if (passed == 1) config.listen_fd = LISTEN_FDS_START;
  if (config.log_syslog) openlog("trace_manager", LOG_PID, LOG_DAEMON);
  signal(SIGPIPE, SIG_IGN);
  int status = manager__create(&config, &g_manager);
  if (status != 0) {
    fprintf(stderr, "trace_manager: cannot start: %s\n", strerror(-status));
    return 1;
  }
  struct sigaction sa = {0};
  sa.sa_handler = on_signal;
  sigemptyset(&sa.sa_mask);
  sigaction(SIGTERM, &sa, NULL);
  sigaction(SIGINT, &sa, NULL);
  status = manager__run(g_manager);
  manager__destroy(g_manager);
  g_manager = NULL;
  free(categories);
  return status == 0 ? 0 : 1;
}
