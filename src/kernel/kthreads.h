/* Not part of the public API: what the kernel provider knows of the system's
 * threads during one trace: tid -> process (tgid), and whether a thread or
 * process kernel-object record has been written. Used by one thread at a time. */
#ifndef FXTRACE_KERNEL_KTHREADS_H_
#define FXTRACE_KERNEL_KTHREADS_H_

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "kernel/kbirths.h"

enum { KTHREAD_NAMED = 1, KPROCESS_NAMED = 2 };

/* The kernel's comm: at most 15 bytes and its NUL (TASK_COMM_LEN). */
enum { KTHREAD_COMM_SIZE = 16 };

typedef struct kthread_entry {
  uint32_t tid; /* 0: free slot */
  uint32_t tgid;
  uint32_t flags;
  /* the name the session's last thread record gave it (its first
   * KTHREAD_COMM_SIZE bytes), so that a switch reporting another comm names
   * it again */
  uint8_t name_length;
  char name[KTHREAD_COMM_SIZE];
  /* the ftrace time of the event that name came from (0: /proc at the
   * start): an event older than it reports an older name, not a new one */
  uint64_t name_ts;
} kthread_entry_t;

typedef struct kthreads {
  kthread_entry_t* slots;
  size_t capacity; /* a power of two */
  size_t used;
  /* the kernel's saved_tgids, read whole (at most every 200 ms) into pairs
   * sorted by pid, searched for threads /proc no longer knows: not read once
   * per such thread (on a machine with many short-lived processes that was
   * most of the provider's CPU), and kept out of the table above, which
   * stays as small as the threads seen (it is looked up for every event) */
  uint32_t (*saved)[2];
  size_t saved_count;
  uint64_t saved_ns; /* CLOCK_MONOTONIC of the last read; 0 never */
  kbirths_t* births; /* the tasks born during the trace (shared by the sessions); NULL: none */
} kthreads_t;

void kthreads__free(kthreads_t* t);
void kthreads__clear(kthreads_t* t);

/* The entry of tid (tid != 0), created with tgid 0 and no flags when new;
 * NULL only when out of memory. */
kthread_entry_t* kthreads__get(kthreads_t* t, uint32_t tid);

/* The process of tid: known, else from /proc/TID/status, else (a thread
 * gone already) from its birth in this trace (kbirths.h), else from the
 * kernel's saved_tgids (when the instance records tgids), else tid itself;
 * remembered. */
uint32_t kthreads__tgid(kthreads_t* t, uint32_t tid);

/* tid's process from /proc/TID/status; 0 when it is gone. */
uint32_t kthreads__proc_tgid(uint32_t tid);

/* Remembers name as the one the last thread record written gave e, from an
 * event at ftrace time ts. */
void kthreads__set_name(kthread_entry_t* e, const char* name, size_t length, uint64_t ts);

/* Whether name is the one the last thread record written gave e. */
bool kthreads__has_name(const kthread_entry_t* e, const char* name, size_t length);

/* Reads /proc/PID/comm (or /proc/PID/task/TID/comm) into name; false if gone. */
bool kthreads__read_comm(uint32_t pid, uint32_t tid, char* name, size_t size);

#endif /* FXTRACE_KERNEL_KTHREADS_H_ */
