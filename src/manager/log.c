/* Levelled logging: stderr (with a timestamp and the level), syslog(3), or
 * the embedding program's callback. */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <syslog.h>
#include <time.h>

#include "manager/manager_internal.h"

static const char* const kLevelNames[] = {"error", "warn", "info", "debug"};

const char* manager__log_level_name(manager_log_level_t level) {
  return (unsigned)level < 4 ? kLevelNames[level] : "?";
}

int manager__parse_log_level(const char* name, manager_log_level_t* out) {
  for (int i = 0; i < 4; i++) {
    if (strcmp(name, kLevelNames[i]) == 0) {
      *out = (manager_log_level_t)i;
      return 0;
    }
  }
  if (strcmp(name, "warning") == 0) {
    *out = MANAGER_LOG_WARN;
    return 0;
  }
  return -1;
}

void mgr__log(manager_t* m, manager_log_level_t level, const char* format, ...) {
  if (level > m->config.log_level) return;
  char message[1024];
  va_list ap;
  va_start(ap, format);
  vsnprintf(message, sizeof(message), format, ap);
  va_end(ap);
  if (m->config.log_fn) {
    m->config.log_fn(m->config.log_arg, level, message);
  } else if (m->config.log_syslog) {
    static const int kPriority[] = {LOG_ERR, LOG_WARNING, LOG_INFO, LOG_DEBUG};
    syslog(kPriority[level], "%s", message);
  } else {
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    struct tm tm;
    localtime_r(&ts.tv_sec, &tm);
    fprintf(stderr, "trace_manager %02d:%02d:%02d.%03ld %s: %s\n", tm.tm_hour, tm.tm_min, tm.tm_sec,
            ts.tv_nsec / 1000000, kLevelNames[level], message);
  }
}
