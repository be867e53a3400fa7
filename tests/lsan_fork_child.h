/* For a test that forks a child of a multi-threaded process and lets the
 * child exit() (to run the provider's exit handler).
 *
 * LeakSanitizer's check at exit locks the sanitizer's allocator. clang 14's
 * runtime (Debian 12's) does not take that lock around fork(), so a child
 * forked while another thread of the parent (the engine thread, the
 * provider's control or prefault thread) was inside malloc or free inherits
 * it held and hangs in the check. The child's leak check is therefore
 * skipped; the parent's still runs. The runtime calls this hook at its
 * check; without LeakSanitizer nothing calls it. Include once per test. */
#ifndef FXTRACE_TESTS_LSAN_FORK_CHILD_H
#define FXTRACE_TESTS_LSAN_FORK_CHILD_H

#include <sys/types.h>
#include <unistd.h>

static pid_t lsan_fork_child__parent;

__attribute__((constructor)) static void lsan_fork_child__init(void) {
  lsan_fork_child__parent = getpid();
}

int __lsan_is_turned_off(void);
int __lsan_is_turned_off(void) { return getpid() != lsan_fork_child__parent; }

#endif
