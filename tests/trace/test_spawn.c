/* trace record's COMMAND (src/trace/spawn.h): `started` gets the child's pid
 * before the command can run, so a signal that ends trace once the command
 * runs finds its pid (record_signals__set_command); 0 after a failed exec;
 * the pid spawn__command returns is the one published. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "test.h"
#include "trace/spawn.h"

static char marker[64];
static pid_t published[4];
static int calls;
static bool ran_before_started;

/* What trace record's record_signals__set_command is: here it also looks,
 * after a pause long enough for a command that was let run to write its
 * marker, whether the command ran already. */
static void started(pid_t pid) {
  if (calls < 4) published[calls] = pid;
  calls++;
  if (pid <= 0) return;
  struct timespec pause = {0, 200 * 1000 * 1000};
  nanosleep(&pause, NULL);
  ran_before_started |= access(marker, F_OK) == 0;
}

static int wait_for(pid_t pid) {
  int status;
  while (waitpid(pid, &status, 0) < 0)
    if (errno != EINTR) return -1;
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

int main(void) {
  spawn__note_inherited();
  snprintf(marker, sizeof(marker), "/tmp/fxtrace-spawn-%ld", (long)getpid());
  unlink(marker);

  /* the command writes its marker first thing: not before `started` returned */
  char* command[] = {"sh", "-c", "echo ran > \"$0\"", marker, NULL};
  pid_t pid = 0;
  ASSERT_EQ(spawn__command(command, false, &pid, started), 0);
  ASSERT_EQ(calls, 1);
  ASSERT_MSG(pid > 0 && published[0] == pid, "published %ld, spawned %ld", (long)published[0],
             (long)pid);
  ASSERT_MSG(!ran_before_started, "the command ran before its pid was published");
  ASSERT_EQ(wait_for(pid), 0);
  ASSERT_MSG(access(marker, F_OK) == 0, "the command did not run");
  unlink(marker);

  /* an unknown command: its pid published, then 0 (reaped: it may be reused) */
  calls = 0;
  char* unknown[] = {"/nonexistent-fxtrace-dir/command", NULL};
  pid = 0;
  ASSERT_EQ(spawn__command(unknown, false, &pid, started), ENOENT);
  ASSERT_EQ(calls, 2);
  ASSERT_MSG(published[0] > 0 && published[1] == 0, "published %ld then %ld", (long)published[0],
             (long)published[1]);
  ASSERT_EQ(pid, 0);

  /* without `started` */
  char* truth[] = {"true", NULL};
  ASSERT_EQ(spawn__command(truth, false, &pid, NULL), 0);
  ASSERT_EQ(wait_for(pid), 0);
  puts("ok");
  return 0;
}
