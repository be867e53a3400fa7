/* The instance's removal from a signal handler (see kcleanup.h). */
#include "kernel/kcleanup.h"

#include <errno.h>
#include <fcntl.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* What the handler reads. `published` is set only once the rest is
 * complete and cleared before any of it changes, so a handler that sees it
 * set reads a whole entry. The arrays are reused, never freed while a
 * handler could read them: a withdrawn entry stays allocated until the next
 * publish. */
typedef struct entry {
  char* dir;        /* "<tracefs>/instances/fxtrace-PID" */
  char* tracing_on; /* dir + "/tracing_on" */
  int* fds;
  size_t count;
} entry_t;

static entry_t entry;
static atomic_bool published;
/* kcleanup__now() may close entry.fds: the session has not begun to close
 * them itself (kcleanup__closing) */
static atomic_bool fds_ours;

/* How long kcleanup__now() waits for the instance's last open file to be
 * closed (rmdir's EBUSY): a read of one in progress on another thread, or the
 * session closing its own (kcleanup__closing) ends in a moment; a file
 * someone else holds open does not, and is given up on. */
enum { KCLEANUP_BUSY_TRIES = 100, KCLEANUP_BUSY_WAIT_NS = 10 * 1000 * 1000 };

int kcleanup__publish(const char* instance_dir, const int* fds, size_t count) {
  atomic_store(&published, false);
  free(entry.dir);
  free(entry.tracing_on);
  free(entry.fds);
  memset(&entry, 0, sizeof(entry));
  size_t n = strlen(instance_dir) + sizeof("/tracing_on");
  entry.dir = strdup(instance_dir);
  entry.tracing_on = malloc(n);
  entry.fds = malloc((count ? count : 1) * sizeof(int));
  if (!entry.dir || !entry.tracing_on || !entry.fds) return -1;
  snprintf(entry.tracing_on, n, "%s/tracing_on", instance_dir);
  if (count) memcpy(entry.fds, fds, count * sizeof(int));
  entry.count = count;
  atomic_store(&fds_ours, true);
  atomic_store(&published, true);
  return 0;
}

void kcleanup__closing(void) { atomic_store(&fds_ours, false); }

void kcleanup__withdraw(void) { atomic_store(&published, false); }

void kcleanup__now(void) {
  if (!atomic_exchange(&published, false)) return; /* nothing, or another thread does it */
  int fd = open(entry.tracing_on, O_WRONLY | O_CLOEXEC);
  if (fd >= 0) {
    ssize_t n = write(fd, "0", 1);
    (void)n; /* the removal below matters; this only stops recording sooner */
    close(fd);
  }
  if (atomic_exchange(&fds_ours, false))
    for (size_t i = 0; i < entry.count; i++)
      if (entry.fds[i] >= 0) close(entry.fds[i]);
  /* with the events enabled in it: the kernel disables them */
  for (int i = 0; rmdir(entry.dir) != 0 && errno == EBUSY && i < KCLEANUP_BUSY_TRIES; i++) {
    struct timespec wait = {0, KCLEANUP_BUSY_WAIT_NS};
    nanosleep(&wait, NULL);
  }
}
