/* The tasks born during the trace (see kbirths.h). */
#include "kernel/kbirths.h"

#include <stdlib.h>

#include "kernel/kthreads.h"

#define CLONE_THREAD_FLAG 0x00010000u /* <linux/sched.h> CLONE_THREAD */

int kbirths__init(kbirths_t* b) {
  *b = (kbirths_t){0};
  b->slots = calloc(KBIRTHS_SLOTS, sizeof(*b->slots));
  return b->slots ? 0 : -1;
}

void kbirths__free(kbirths_t* b) {
  free(b->slots);
  b->slots = NULL;
}

/* Whether tid's birth is noted: its process, or *creator for a link. */
static bool lookup(const kbirths_t* b, uint32_t tid, uint32_t* process, uint32_t* creator) {
  *process = *creator = 0;
  if (!b->slots || tid == 0) return false;
  const uint32_t* slot = b->slots[tid % KBIRTHS_SLOTS];
  if (slot[0] != tid) return false;
  if (slot[2])
    *creator = slot[1];
  else
    *process = slot[1];
  return true;
}

static void store(kbirths_t* b, uint32_t tid, uint32_t value, bool link) {
  uint32_t* slot = b->slots[tid % KBIRTHS_SLOTS];
  slot[0] = tid;
  slot[1] = value;
  slot[2] = link;
  b->noted++;
}

void kbirths__note(kbirths_t* b, const kev_table_t* t, const kev_desc_t* d, const void* data,
                   size_t size) {
  int64_t child, flags, creator = kev__common_pid(t, data, size);
  if (!b->slots || !kev__int(d->f[KF_NEWTASK_PID], data, size, &child) ||
      !kev__int(d->f[KF_NEWTASK_CLONE_FLAGS], data, size, &flags) || child <= 0 ||
      child > UINT32_MAX)
    return;
  if (!((uint64_t)flags & CLONE_THREAD_FLAG)) {
    store(b, (uint32_t)child, (uint32_t)child, false); /* a process of its own */
    return;
  }
  if (creator <= 0 || creator > UINT32_MAX) return;
  /* a thread of its creator's process: the creator ran the clone, so /proc
   * knew it then and may still; else its own birth, or later the lookup */
  uint32_t process, link;
  if (!lookup(b, (uint32_t)creator, &process, &link) || process == 0)
    process = kthreads__proc_tgid((uint32_t)creator);
  if (process != 0)
    store(b, (uint32_t)child, process, false);
  else
    store(b, (uint32_t)child, (uint32_t)creator, true);
}

uint32_t kbirths__find(kbirths_t* b, uint32_t tid, bool ahead, uint32_t* creator) {
  uint32_t process;
  if (lookup(b, tid, &process, creator) || !ahead || !b->ahead || !b->recording || b->in_ahead)
    return process;
  for (int partial = 0; partial < 2; partial++) {
    b->in_ahead = true;
    bool read = b->ahead(b->ahead_arg, partial != 0);
    b->in_ahead = false;
    b->read_aheads += read;
    if (lookup(b, tid, &process, creator)) return process;
  }
  return 0;
}
