/* Not part of the public API: the tasks created while the kernel provider
 * traces (ftrace task_newtask), tid -> process, for the threads that exit
 * before their events are converted. /proc no longer knows such a thread
 * and the kernel's saved_tgids is read at most every 200 ms (kthreads.h):
 * without its birth, a short-lived thread was written as a process of its
 * own (a reader then shows a process per thread). A new task's process is
 * its creator's when it was cloned with CLONE_THREAD, else the task itself.
 *
 * Events are converted CPU by CPU, so a thread's first events (on the CPU
 * it ran on) can be converted before its birth (on its creator's CPU): a
 * lookup that misses has the reader read the other CPUs' pages ahead (the
 * `ahead` hook), which notes the births they hold, and looks again. */
#ifndef FXTRACE_KERNEL_KBIRTHS_H_
#define FXTRACE_KERNEL_KBIRTHS_H_

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "kernel/kevents.h"

/* Direct-mapped by tid: a birth takes the slot of an older one of another
 * tid, which is fine as a thread is looked up soon after its birth (while
 * its events are converted, seconds at most); 768 KiB. */
enum { KBIRTHS_SLOTS = 1 << 16 };

/* Reads the other CPUs' pages ahead, noting the births they hold
 * (kbirths__note); the pages are converted later, in their turn. `partial`:
 * also the page each CPU is writing. False when it read nothing because a
 * read-ahead as deep began after the page being converted was read (every
 * birth that page's events can need is noted already). */
typedef bool (*kbirths_ahead_fn)(void* arg, bool partial);

typedef struct kbirths {
  /* tid; its process, or (link) the creator whose process it shares; link */
  uint32_t (*slots)[3];
  kbirths_ahead_fn ahead; /* NULL: none */
  void* ahead_arg;
  bool recording;       /* task_newtask is on in the instance: a read-ahead can find births */
  bool in_ahead;        /* a read-ahead runs: no other from inside it */
  uint64_t noted;       /* births noted */
  uint64_t read_aheads; /* read-aheads done */
} kbirths_t;

/* 0, or -1 when out of memory. */
int kbirths__init(kbirths_t* b);
void kbirths__free(kbirths_t* b);

/* Notes the birth reported by a task_newtask event (d's kind KEV_NEWTASK;
 * common_pid is the creator). A thread whose creator's process is not known
 * yet (the creator gone from /proc and its own birth not noted yet) is noted
 * as a link to its creator. */
void kbirths__note(kbirths_t* b, const kev_table_t* t, const kev_desc_t* d, const void* data,
                   size_t size);

/* tid's process from its birth, else 0 with *creator set when tid is a
 * thread of a creator whose process was unknown at its birth (the caller
 * looks the creator up), else 0 with *creator 0; when both are unknown and
 * `ahead`, after reading ahead (whole pages, then the partial ones). */
uint32_t kbirths__find(kbirths_t* b, uint32_t tid, bool ahead, uint32_t* creator);

#endif /* FXTRACE_KERNEL_KBIRTHS_H_ */
