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

/* What the handler reads. `state` leaves NONE only once the rest is
 * complete, and is back to NONE before any of it changes, so a handler that
 * claims it reads a whole entry. The arrays are never freed while a handler
 * could read them: a withdrawn entry stays allocated until the next
 * publish. */
typedef struct entry {
  char* dir;        /* "<tracefs>/instances/fxtrace-PID" */
  char* tracing_on; /* dir + "/tracing_on" */
  int* fds;
  size_t count;
} entry_t;

static entry_t entry;

/* Who owns what, in one word, so that exactly one party closes the
 * descriptors (a number closed twice may by then name someone else's file:
 * the session's close after a handler's, or a handler's after the
 * session's) and at most one handler removes the directory. Each party
 * claims its part with a CAS from the state it saw, so of a handler and the
 * session racing for the descriptors one wins and the other never touches
 * them. A handler's states (HANDLER, HANDLER_DIR) are left by that handler
 * only, when it is done; HANDLED is left only by the next publish (tests: a
 * process whose handler ran then dies). */
enum {
  KCLEANUP_NONE,        /* nothing published: the entry is the owner's to change */
  KCLEANUP_PUBLISHED,   /* the entry is whole; the descriptors are unclaimed */
  KCLEANUP_SESSION,     /* the session closes the descriptors; the directory is still published */
  KCLEANUP_HANDLER,     /* a handler has the descriptors and the directory */
  KCLEANUP_HANDLER_DIR, /* a handler removes the directory; the session closes the descriptors */
  KCLEANUP_HANDLED,     /* a handler closed the descriptors and is done */
};
static _Atomic int state;

/* How long kcleanup__now() waits for the instance's last open file to be
 * closed (rmdir's EBUSY): a read of one in progress on another thread, or the
 * session closing its own (kcleanup__closing) ends in a moment; a file
 * someone else holds open does not, and is given up on. */
enum {
  KCLEANUP_BUSY_TRIES = 100,
  KCLEANUP_BUSY_WAIT_NS = 10 * 1000 * 1000,
  KCLEANUP_BUSY_MARGIN = 20, /* more waits for another party's removal */
};

int kcleanup__publish(const char* instance_dir, const int* fds, size_t count) {
  int s = atomic_load(&state);
  do /* a handler at work reads the entry (and the process then dies) */
    if (s == KCLEANUP_HANDLER || s == KCLEANUP_HANDLER_DIR) return -2;
  while (!atomic_compare_exchange_weak(&state, &s, KCLEANUP_NONE));
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
  atomic_store(&state, KCLEANUP_PUBLISHED);
  return 0;
}

/* While a handler on another thread is at work (it removes the instance,
 * then the process dies): waits for it, bounded by its own longest wait
 * and a margin, so that neither the session nor a second handler ends the
 * process under it. Only system calls and atomics (a handler calls it). */
static int wait_for_handler(void) {
  int s = atomic_load(&state);
  for (int i = 0; (s == KCLEANUP_HANDLER || s == KCLEANUP_HANDLER_DIR) &&
                  i < KCLEANUP_BUSY_TRIES + KCLEANUP_BUSY_MARGIN;
       i++) {
    struct timespec wait = {0, KCLEANUP_BUSY_WAIT_NS};
    nanosleep(&wait, NULL);
    s = atomic_load(&state);
  }
  return s;
}

bool kcleanup__closing(void) {
  int s = KCLEANUP_PUBLISHED;
  if (atomic_compare_exchange_strong(&state, &s, KCLEANUP_SESSION)) return true;
  if (s == KCLEANUP_HANDLER) s = wait_for_handler();
  return s != KCLEANUP_HANDLER && s != KCLEANUP_HANDLED;
}

void kcleanup__withdraw(void) {
  int s = KCLEANUP_SESSION;
  if (atomic_compare_exchange_strong(&state, &s, KCLEANUP_NONE)) return;
  if (s == KCLEANUP_PUBLISHED) atomic_compare_exchange_strong(&state, &s, KCLEANUP_NONE);
  /* a handler's states are left to it */
}

/* Waits a moment for the instance's last open file to be closed. */
static void remove_dir(void) {
  for (int i = 0; rmdir(entry.dir) != 0 && errno == EBUSY && i < KCLEANUP_BUSY_TRIES; i++) {
    struct timespec wait = {0, KCLEANUP_BUSY_WAIT_NS};
    nanosleep(&wait, NULL);
  }
}

void kcleanup__now(void) {
  int s = atomic_load(&state);
  int claimed;
  do { /* nothing, or another thread does it */
    if (s == KCLEANUP_PUBLISHED)
      claimed = KCLEANUP_HANDLER;
    else if (s == KCLEANUP_SESSION)
      claimed = KCLEANUP_HANDLER_DIR;
    else {
      /* another handler at work: returning would let this one's signal end
       * the process under it */
      if (s == KCLEANUP_HANDLER || s == KCLEANUP_HANDLER_DIR) wait_for_handler();
      return;
    }
  } while (!atomic_compare_exchange_weak(&state, &s, claimed));
  int fd = open(entry.tracing_on, O_WRONLY | O_CLOEXEC);
  if (fd >= 0) {
    ssize_t n = write(fd, "0", 1);
    (void)n; /* the removal below matters; this only stops recording sooner */
    close(fd);
  }
  if (claimed == KCLEANUP_HANDLER)
    for (size_t i = 0; i < entry.count; i++)
      if (entry.fds[i] >= 0) close(entry.fds[i]);
  /* with the events enabled in it: the kernel disables them */
  remove_dir();
  atomic_store(&state, claimed == KCLEANUP_HANDLER ? KCLEANUP_HANDLED : KCLEANUP_NONE);
}
