/* Not part of the public API: ftrace pages read ahead of their turn. The
 * kernel provider converts each CPU's pages in order, CPU after CPU; when
 * a thread's process is known only from its birth on another CPU whose
 * pages come later (kbirths.h), that CPU's pages are read now, scanned for
 * births, and queued here. The reader converts a CPU's queued pages before
 * it reads that CPU again, so every CPU's events are still converted in the
 * order the kernel recorded them. */
#ifndef FXTRACE_KERNEL_KAHEAD_H_
#define FXTRACE_KERNEL_KAHEAD_H_

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "kernel/kconvert.h"
#include "kernel/kcpu.h"

typedef struct kahead_page {
  struct kahead_page* next;
  uint64_t seq; /* the reader's count of pages read, when this one was */
  size_t size;
  unsigned char data[];
} kahead_page_t;

typedef struct kahead {
  int cpus;
  size_t page_size;
  size_t max_queued;    /* per CPU: more is left in the kernel's buffer */
  kahead_page_t** head; /* per CPU, oldest first */
  kahead_page_t** tail;
  size_t* queued;
  kahead_page_t* spare; /* a page that read nothing, for the next read */
  /* its own converter: a read-ahead runs while the reader's is in the
   * middle of a page */
  kconv_t scan;
  uint64_t pages; /* pages read ahead so far */
} kahead_t;

/* 0, or -1 when out of memory. At most max_queued pages per CPU. */
int kahead__init(kahead_t* a, int cpus, size_t page_size, size_t max_queued);
/* Frees the queued pages too. */
void kahead__free(kahead_t* a);

/* Reads the whole pages `cpu` holds now (with `partial`, then the page the
 * kernel is writing, as far as it is written) into its queue, never past
 * max_queued (never chasing events that keep coming), each numbered by
 * ++*seq and its events handed to `sink` (a scan: the events are written
 * later, when the page is converted in its turn). Pages read. */
size_t kahead__read(kahead_t* a, kcpu_t* c, int cpu, bool partial, uint64_t* seq,
                    const kev_table_t* table, kconv_sink_t sink, void* arg);

/* Moves the oldest page queued for `cpu` into `page` (page_size bytes): its
 * length (*seq: its number), 0 when none is queued. */
int kahead__take(kahead_t* a, int cpu, void* page, uint64_t* seq);

#endif /* FXTRACE_KERNEL_KAHEAD_H_ */
