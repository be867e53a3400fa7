/* `trace list-sessions` and `trace stop ID`: the running trace manager's
 * sessions (docs/sessions.md), seen and stopped by their own user (root:
 * every session). Another user's session is absent to them: the manager
 * neither lists it nor admits it exists. */
#include <errno.h>
#include <getopt.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "trace/cli.h"
#include "trace/controller.h"
#include "trace/manager_connect.h"
#include "trace/text_escape.h"

static const char kListUsage[] =
    "Usage: trace list-sessions\n"
    "\n"
    "Lists the trace sessions the running trace manager runs (up to 4 at once),\n"
    "one per line: the session's id, its client's process id and user, buffering\n"
    "mode, state, when it started (local time), the bytes of archive written to its\n"
    "client so far, the providers taking part, and its categories ('*' for every\n"
    "category). A user sees their own sessions; root sees every session. The\n"
    "manager's socket is found as for 'trace list-providers'.\n"
    "\n"
    "Exit status: 0 on success (also when no session runs), 1 if no manager is\n"
    "running or it fails to answer, 2 on a usage error.\n";

static const char kStopUsage[] =
    "Usage: trace stop ID\n"
    "\n"
    "Stops the running trace session ID (see 'trace list-sessions') as if its own\n"
    "client had stopped it: its providers stop, and its client (a 'trace record')\n"
    "writes the archive and ends as at the end of --duration, saying who stopped\n"
    "it. The other sessions go on. A user may stop their own sessions; root may\n"
    "stop any. Another user's session is reported as not found.\n"
    "\n"
    "Exit status: 0 when the session was stopped (or was already stopping), 1 if\n"
    "there is no such session of yours, no manager is running or it fails to\n"
    "answer, 2 on a usage error.\n";

static void user_name(uint32_t uid, char* out, size_t size) {
  char buf[4096];
  struct passwd pw, *found = NULL;
  if (getpwuid_r((uid_t)uid, &pw, buf, sizeof(buf), &found) == 0 && found)
    snprintf(out, size, "%s", found->pw_name);
  else
    snprintf(out, size, "%u", (unsigned)uid);
}

static void start_time(uint64_t realtime_ns, char* out, size_t size) {
  time_t secs = (time_t)(realtime_ns / 1000000000u);
  struct tm tm;
  if (realtime_ns == 0 || !localtime_r(&secs, &tm) ||
      strftime(out, size, "%Y-%m-%d %H:%M:%S", &tm) == 0)
    snprintf(out, size, "-");
}

/* The categories, comma-separated and escaped (a client's own names). */
static void print_categories(const controller_session_t* s) {
  if (s->category_count == 0) {
    fputs("*", stdout);
    return;
  }
  for (size_t i = 0; i < s->category_count; i++) {
    char name[TEXT_ESCAPED_SIZE(WIRE_MAX_NAME)];
    printf("%s%s", i ? "," : "", text__escaped(s->categories[i], name, sizeof(name)));
  }
}

int cmd__list_sessions(int argc, char** argv) {
  static const char kCmd[] = "list-sessions";
  int first;
  int rc = cli__parse_help_only(kCmd, kListUsage, argc, argv, 0, "", &first);
  if (rc != 0) return rc < 0 ? EXIT_OK : rc;
  controller_t c;
  if (manager_connect__controller(kCmd, &c) != 0) return EXIT_FAILED;
  controller_session_t* list;
  size_t count;
  rc = EXIT_OK;
  if (controller__list_sessions(&c, &list, &count) != 0) {
    cli__error(kCmd, "%s", c.error);
    rc = EXIT_FAILED;
  } else {
    printf("%-4s %-8s %-12s %-9s %-11s %-19s %10s %5s  %s\n", "ID", "PID", "USER", "MODE", "STATE",
           "STARTED", "BYTES", "PROVS", "CATEGORIES");
    for (size_t i = 0; i < count; i++) {
      const controller_session_t* s = &list[i];
      char user[64], started[32], bytes[32];
      user_name(s->client_uid, user, sizeof(user));
      start_time(s->start_realtime_ns, started, sizeof(started));
      cli__format_bytes(s->bytes, bytes, sizeof(bytes));
      printf("%-4u %-8llu %-12s %-9s %-11s %-19s %10s %5u  ", (unsigned)s->id,
             (unsigned long long)s->client_pid, user, controller__mode_name(s->buffering_mode),
             controller__session_state_name(s->state), started, bytes, (unsigned)s->providers);
      print_categories(s);
      putchar('\n');
    }
    if (count == 0) fprintf(stderr, "trace %s: no session of yours is running\n", kCmd);
    controller__free_sessions(list, count);
  }
  controller__close(&c);
  if (fflush(stdout) != 0) rc = EXIT_FAILED;
  return rc;
}

int cmd__stop(int argc, char** argv) {
  static const char kCmd[] = "stop";
  int first;
  int rc = cli__parse_help_only(kCmd, kStopUsage, argc, argv, 1,
                                "missing the session id (see 'trace list-sessions')", &first);
  if (rc != 0) return rc < 0 ? EXIT_OK : rc;
  const char* text = argv[first];
  char* end;
  errno = 0;
  unsigned long id = strtoul(text, &end, 10);
  if (errno != 0 || end == text || *end != '\0' || text[0] == '-' || id == 0 || id > UINT32_MAX)
    return cli__usage_error(kCmd, "bad session id '%s' (a number from 'trace list-sessions')",
                            text);
  controller_t c;
  if (manager_connect__controller(kCmd, &c) != 0) return EXIT_FAILED;
  int status = controller__stop_session(&c, (uint32_t)id);
  if (status == -ENOENT) {
    cli__error(kCmd, "no session %lu is running that you may stop (see 'trace list-sessions')", id);
    rc = EXIT_FAILED;
  } else if (status != 0) {
    cli__error(kCmd, "%s", c.error);
    rc = EXIT_FAILED;
  } else {
    printf("session %lu stopped: its client writes its archive\n", id);
    rc = EXIT_OK;
  }
  controller__close(&c);
  if (fflush(stdout) != 0) rc = EXIT_FAILED;
  return rc;
}
