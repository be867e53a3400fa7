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

static uint32_t lookup(const kbirths_t* b, uint32_t tid) {
  if (!b->slots || tid == 0) return 0;
  const uint32_t* slot = b->slots[tid % KBIRTHS_SLOTS];
  return slot[0] == tid ? slot[1] : 0;
}

void kbirths__note(kbirths_t* b, const kev_table_t* t, const kev_desc_t* d, const void* data,
                   size_t size) {
  int64_t child, flags, creator = kev__common_pid(t, data, size);
  if (!b->slots || !kev__int(d->f[KF_NEWTASK_PID], data, size, &child) ||
      !kev__int(d->f[KF_NEWTASK_CLONE_FLAGS], data, size, &flags) || child <= 0 ||
      child > UINT32_MAX)
    return;
  uint32_t process = (uint32_t)child;
  if ((uint64_t)flags & CLONE_THREAD_FLAG) {
    /* a thread of its creator's process: the creator ran the clone, so it
     * was alive then; if it is gone now, its own birth may say */
    if (creator <= 0 || creator > UINT32_MAX) return;
    process = lookup(b, (uint32_t)creator);
    if (process == 0) process = kthreads__proc_tgid((uint32_t)creator);
    if (process == 0) return;
  }
  uint32_t* slot = b->slots[(uint32_t)child % KBIRTHS_SLOTS];
  slot[0] = (uint32_t)child;
  slot[1] = process;
  b->noted++;
}

uint32_t kbirths__tgid(kbirths_t* b, uint32_t tid, bool ahead) {
  uint32_t process = lookup(b, tid);
  if (process != 0 || !ahead || !b->ahead || b->in_ahead) return process;
  b->in_ahead = true;
  b->read_aheads++;
  b->ahead(b->ahead_arg);
  b->in_ahead = false;
  return lookup(b, tid);
}
