/* kcleanup (src/kernel/kcleanup.h): of a signal handler's kcleanup__now() on
 * one thread and the session's orderly close on another, exactly one closes
 * the published descriptors, whichever comes first, and the other never
 * touches them, not even once their numbers name other files. Needs no
 * tracefs: the "instance" is an empty temporary directory and the
 * descriptors are /dev/null. */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "kernel/kcleanup.h"
#include "test.h"

enum { FDS = 4 };

typedef struct instance {
  char dir[64];
  int fds[FDS];
} instance_t;

static void instance_open(instance_t* in) {
  snprintf(in->dir, sizeof(in->dir), "/tmp/fxtrace-kcleanup-XXXXXX");
  ASSERT_TRUE(mkdtemp(in->dir) != NULL);
  for (int i = 0; i < FDS; i++) {
    in->fds[i] = open("/dev/null", O_RDONLY | O_CLOEXEC);
    ASSERT_TRUE(in->fds[i] >= 0);
  }
  ASSERT_EQ(kcleanup__publish(in->dir, in->fds, FDS), 0);
}

static bool is_open(int fd) { return fcntl(fd, F_GETFD) != -1; }

static bool dir_exists(const char* dir) {
  struct stat st;
  return stat(dir, &st) == 0;
}

/* Files that take the lowest free numbers: those of descriptors just closed. */
static void open_others(int* others) {
  for (int i = 0; i < FDS; i++) {
    others[i] = open("/dev/null", O_RDONLY | O_CLOEXEC);
    ASSERT_TRUE(others[i] >= 0);
  }
}

static void* handler(void* arg) {
  (void)arg;
  kcleanup__now();
  return NULL;
}

static void run_handler(void) {
  pthread_t t;
  ASSERT_EQ(pthread_create(&t, NULL, handler, NULL), 0);
  ASSERT_EQ(pthread_join(t, NULL), 0);
}

/* The session's side, as kprovider.c's instance_free takes it; false: it
 * left the descriptors and the directory to a handler. */
static bool orderly_close(instance_t* in) {
  bool ours = kcleanup__closing();
  if (ours) {
    for (int i = 0; i < FDS; i++) ASSERT_EQ(close(in->fds[i]), 0); /* not closed by anyone else */
    ASSERT_EQ(rmdir(in->dir) == 0 || errno == ENOENT, 1);
  }
  kcleanup__withdraw();
  return ours;
}

/* The handler first (on another thread), then the session: the session
 * must not close the numbers again, which name other files by then. */
static void handler_then_session(void) {
  instance_t in;
  instance_open(&in);
  run_handler();
  for (int i = 0; i < FDS; i++) ASSERT_TRUE(!is_open(in.fds[i]));
  ASSERT_TRUE(!dir_exists(in.dir));
  int others[FDS];
  open_others(others);
  ASSERT_TRUE(!orderly_close(&in));
  for (int i = 0; i < FDS; i++) ASSERT_TRUE(is_open(others[i]));
  run_handler(); /* once: a second handler does nothing */
  for (int i = 0; i < FDS; i++) {
    ASSERT_TRUE(is_open(others[i]));
    close(others[i]);
  }
}

/* The session first, then a handler: it leaves the reused numbers alone
 * (and the directory is gone, removed by one of them). */
static void session_then_handler(void) {
  instance_t in;
  instance_open(&in);
  ASSERT_TRUE(kcleanup__closing());
  for (int i = 0; i < FDS; i++) ASSERT_EQ(close(in.fds[i]), 0);
  int others[FDS];
  open_others(others);
  run_handler(); /* between the session's close and its withdrawal */
  for (int i = 0; i < FDS; i++) ASSERT_TRUE(is_open(others[i]));
  ASSERT_TRUE(!dir_exists(in.dir)); /* the handler still removes the directory */
  ASSERT_EQ(rmdir(in.dir) == 0 || errno == ENOENT, 1);
  kcleanup__withdraw();
  run_handler(); /* withdrawn: nothing */
  for (int i = 0; i < FDS; i++) {
    ASSERT_TRUE(is_open(others[i]));
    close(others[i]);
  }
}

/* Both at once, many times: whoever wins, each descriptor is closed once
 * (the session's close() succeeds), files opened after the session's close
 * survive the handler, and nothing is left open or behind. */
static void racing(int rounds) {
  int handler_won = 0;
  for (int round = 0; round < rounds; round++) {
    instance_t in;
    instance_open(&in);
    pthread_t t;
    ASSERT_EQ(pthread_create(&t, NULL, handler, NULL), 0);
    /* a varying head start for the handler thread, so that either wins */
    for (volatile int spin = 0; spin < (round % 64) * (TEST_UNDER_TSAN ? 40 : 4000); spin++) {
    }
    bool ours = orderly_close(&in);
    handler_won += !ours;
    int others[FDS];
    open_others(others);
    ASSERT_EQ(pthread_join(t, NULL), 0);
    for (int i = 0; i < FDS; i++) ASSERT_TRUE(is_open(others[i]));
    for (int i = 0; i < FDS; i++) ASSERT_EQ(close(others[i]), 0);
    for (int i = 0; i < FDS; i++) ASSERT_TRUE(!is_open(in.fds[i])); /* none leaked */
    ASSERT_TRUE(!dir_exists(in.dir));
  }
  printf("racing: the handler won %d of %d rounds\n", handler_won, rounds);
}

int main(void) {
  handler_then_session();
  session_then_handler();
  racing(TEST_UNDER_TSAN ? 300 : 2000);
  printf("ok\n");
  return 0;
}
