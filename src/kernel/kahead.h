/* Not part of the public API: ftrace pages read ahead of their turn. The
 * kernel provider converts each CPU's pages in order, CPU after CPU; when
 * a thread's process is known only from its birth on another CPU whose
 * pages come later (kbirths.h), that CPU's pages are read now, scanned for
 * births, and queued here. The reader converts a CPU's queued pages before
 * it reads that CPU again, so every CPU's events are still converted in the
 * order the kernel recorded them. */
#ifndef FXTRACE_KERNEL_KAHEAD_H_
#define FXTRACE_KERNEL_KAHEAD_H_

#include <stddef.h>
#include <stdint.h>

#include "kernel/kconvert.h"
#include "kernel/kcpu.h"

typedef struct kahead_page {
  struct kahead_page* next;
  size_t size;
  unsigned char data[];
} kahead_page_t;

typedef struct kahead {
  int cpus;
  size_t page_size;
  kahead_page_t** head; /* per CPU, oldest first */
  kahead_page_t** tail;
  /* its own converter: a read-ahead runs while the reader's is in the
   * middle of a page */
  kconv_t scan;
  uint64_t pages; /* pages read ahead so far */
} kahead_t;

/* 0, or -1 when out of memory. */
int kahead__init(kahead_t* a, int cpus, size_t page_size);
/* Frees the queued pages too. */
void kahead__free(kahead_t* a);

/* Reads the pages `cpu` holds now, the partial one included, at most
 * max_pages (never chasing events that keep coming), into its queue, each
 * page's events handed to `sink` (a scan: the events are written later,
 * when the page is converted in its turn). Pages read. */
size_t kahead__read(kahead_t* a, kcpu_t* c, int cpu, size_t max_pages, const kev_table_t* table,
                    kconv_sink_t sink, void* arg);

/* Moves the oldest page queued for `cpu` into `page` (page_size bytes): its
 * length, 0 when none is queued. */
int kahead__take(kahead_t* a, int cpu, void* page);

#endif /* FXTRACE_KERNEL_KAHEAD_H_ */
