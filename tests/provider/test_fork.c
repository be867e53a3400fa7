/* A process that forks while recording in file mode: the child shares the
 * parent's buffer mapping, so it must neither record into it nor finish the
 * archive at its exit (which would also hang waiting for a stop that never
 * comes). The parent's archive ends up complete, with none of the child's
 * events. */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include "lsan_fork_child.h"
#include "test.h"
#include "trace-provider/provider.h"
#include "trace-reader/reader.h"
#include "trace/event.h"

int main(void) {
  char path[] = "/tmp/fxtrace-test-fork-XXXXXX";
  int fd = mkstemp(path);
  ASSERT_TRUE(fd >= 0);
  close(fd);
  setenv("FXTRACE_OUTPUT", path, 1);
  trace_provider_t* provider = trace_provider_create_with_name("fork_test");
  ASSERT_TRUE(provider != NULL);
  for (int i = 0; i < 100; i++) TRACE_INSTANT("test", "parent", TRACE_SCOPE_THREAD, "i", i);

  pid_t child = fork();
  ASSERT_TRUE(child >= 0);
  if (child == 0) {
    alarm(20); /* a hang at exit fails the test instead of stalling it */
    for (int i = 0; i < 100; i++) TRACE_INSTANT("test", "child", TRACE_SCOPE_THREAD, "i", i);
    exit(0); /* runs the provider's exit handler */
  }
  int status;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFEXITED(status));
  ASSERT_EQ(WEXITSTATUS(status), 0);

  for (int i = 100; i < 200; i++) TRACE_INSTANT("test", "parent", TRACE_SCOPE_THREAD, "i", i);
  trace_provider_destroy(provider);

  FILE* f = fopen(path, "rb");
  ASSERT_TRUE(f != NULL);
  trace_reader_t* r = trace_reader_open_file(f, NULL);
  trace_record_t rec;
  int read;
  int parent = 0, other = 0;
  while ((read = trace_reader_next(r, &rec)) == TRACE_READ_RECORD) {
    if (rec.type != 4) continue;
    if (strcmp(rec.event.category.data, "fxtrace:clock") == 0) continue; /* the anchors */
    if (strcmp(rec.event.name.data, "parent") == 0 && rec.event.process_koid == (uint64_t)getpid())
      parent++;
    else
      other++;
  }
  ASSERT_EQ(read, TRACE_READ_END);
  ASSERT_TRUE(!trace_reader_recovered(r)); /* a finished archive, not a raw buffer */
  trace_reader_close(r);
  fclose(f);
  unlink(path);
  ASSERT_EQ(parent, 200);
  ASSERT_EQ(other, 0);
  printf("fork: ok\n");
  return 0;
}
