/* The calling thread asks for a short scheduler slice (latency_hint.h). */
#include "protocol/latency_hint.h"

#include <errno.h>
#include <stdint.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

/* struct sched_attr (sched_setattr(2)) as the kernel reads it; glibc has no
 * wrapper before 2.41, and <linux/sched/types.h> clashes with <sched.h>. */
struct latency_hint_attr {
  uint32_t size;
  uint32_t sched_policy;
  uint64_t sched_flags;
  int32_t sched_nice;
  uint32_t sched_priority;
  uint64_t sched_runtime;
  uint64_t sched_deadline;
  uint64_t sched_period;
};

enum { SHORT_SLICE_NS = 100000 }; /* the kernel's smallest custom slice: 0.1 ms */

void latency_hint__short_slice(void) {
#ifdef SYS_sched_setattr
  /* sched_runtime is the slice the EEVDF scheduler gives a SCHED_OTHER
   * thread (Linux 6.12 and later); the thread keeps its niceness (a flag
   * that keeps parameters would keep the slice too). A thread under another
   * policy keeps it: only SCHED_OTHER is asked for. A kernel without custom
   * slices ignores sched_runtime: the thread then runs as before. */
  errno = 0;
  int nice = getpriority(PRIO_PROCESS, (id_t)syscall(SYS_gettid));
  if (nice == -1 && errno != 0) return;
  int policy = (int)syscall(SYS_sched_getscheduler, 0);
  if (policy != 0) return; /* SCHED_OTHER only */
  struct latency_hint_attr attr = {
      .size = sizeof(attr),
      .sched_policy = 0,
      .sched_nice = nice,
      .sched_runtime = SHORT_SLICE_NS,
  };
  (void)syscall(SYS_sched_setattr, 0, &attr, 0);
#endif
}
