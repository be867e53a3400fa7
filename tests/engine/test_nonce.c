/* TRACE_NONCE() (src/engine/nonce.c): never zero, one more each call, the
 * process id above the counter, below 2^53, and different in a fork child,
 * which must not repeat the parent's ids. No engine initialization needed. */
#include <stdio.h>
#include <sys/wait.h>
#include <unistd.h>

#include "test.h"
#include "trace/event.h"

static const uint64_t kPidMask = (UINT64_C(1) << 22) - 1; /* PID_MAX_LIMIT: every pid */

static void check_ids_of_this_process(const char* who) {
  uint64_t first = TRACE_NONCE();
  ASSERT_MSG(first != 0, "%s: a zero nonce", who);
  ASSERT_MSG(first < (UINT64_C(1) << 53), "%s: nonce %#llx not exact as a JSON number", who,
             (unsigned long long)first);
  ASSERT_MSG((uint64_t)getpid() == ((uint64_t)getpid() & kPidMask), "%s: pid %d above 2^22", who,
             (int)getpid());
  ASSERT_MSG(first >> 31 == (uint64_t)getpid(), "%s: nonce %#llx lacks pid %d", who,
             (unsigned long long)first, (int)getpid());
  uint64_t previous = first;
  for (int i = 0; i < 1000; i++) {
    uint64_t id = TRACE_NONCE();
    ASSERT_MSG(id == previous + 1, "%s: nonce %#llx after %#llx", who, (unsigned long long)id,
               (unsigned long long)previous);
    previous = id;
  }
}

int main(void) {
  check_ids_of_this_process("parent");
  uint64_t parent_next = TRACE_NONCE() + 1;
  int pipefd[2];
  if (pipe(pipefd) != 0) return 2;
  pid_t child = fork();
  if (child == 0) {
    check_ids_of_this_process("fork child");
    uint64_t id = TRACE_NONCE();
    ssize_t n = write(pipefd[1], &id, sizeof(id));
    _exit(n == (ssize_t)sizeof(id) ? 0 : 1); /* a failed check exits 1 */
  }
  uint64_t child_id = 0;
  ssize_t n = read(pipefd[0], &child_id, sizeof(child_id));
  int status = 0;
  waitpid(child, &status, 0);
  ASSERT_MSG(WIFEXITED(status) && WEXITSTATUS(status) == 0, "the fork child's checks failed");
  ASSERT_MSG(n == (ssize_t)sizeof(child_id), "no id from the child");
  ASSERT_MSG(child_id >> 31 != parent_next >> 31, "the child's ids %#llx share the parent's range",
             (unsigned long long)child_id);
  printf("ok: nonces (pid %d: %#llx...)\n", (int)getpid(), (unsigned long long)parent_next);
  return 0;
}
