/* systemd socket activation: the LISTEN_PID / LISTEN_FDS protocol
 * (sd_listen_fds(3)), in the few lines it takes. */
#include "manager/listen_fds.h"

#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* A decimal number without sign or junk into *out; false otherwise. */
static bool parse_count(const char* s, unsigned long* out) {
  if (!s || !*s || *s < '0' || *s > '9') return false;
  char* end;
  errno = 0;
  unsigned long v = strtoul(s, &end, 10);
  if (errno || *end) return false;
  *out = v;
  return true;
}

int listen_fds__take(void) {
  const char* pid_text = getenv("LISTEN_PID");
  const char* fds_text = getenv("LISTEN_FDS");
  int result = 0;
  unsigned long pid, n;
  if (pid_text || fds_text) {
    if (!parse_count(pid_text, &pid) || !parse_count(fds_text, &n) || n > 1024 - LISTEN_FDS_START) {
      result = -EINVAL;
    } else if (pid == (unsigned long)getpid()) {
      for (unsigned long i = 0; i < n && result == 0; i++) {
        int fd = LISTEN_FDS_START + (int)i;
        int flags = fcntl(fd, F_GETFD);
        if (flags < 0 || fcntl(fd, F_SETFD, flags | FD_CLOEXEC) < 0) result = -EBADF;
      }
      if (result == 0) result = (int)n;
    }
  }
  unsetenv("LISTEN_PID");
  unsetenv("LISTEN_FDS");
  unsetenv("LISTEN_FDNAMES");
  return result;
}
