/* Pages read ahead of their turn (see kahead.h). */
#include "kernel/kahead.h"

#include <stdlib.h>
#include <string.h>

int kahead__init(kahead_t* a, int cpus, size_t page_size, size_t max_queued) {
  memset(a, 0, sizeof(*a));
  a->cpus = cpus;
  a->page_size = page_size;
  a->max_queued = max_queued;
  a->head = calloc((size_t)cpus, sizeof(*a->head));
  a->tail = calloc((size_t)cpus, sizeof(*a->tail));
  a->queued = calloc((size_t)cpus, sizeof(*a->queued));
  if (!a->head || !a->tail || !a->queued || kconv__init(&a->scan, page_size) != 0) {
    kahead__free(a);
    return -1;
  }
  return 0;
}

void kahead__free(kahead_t* a) {
  for (int cpu = 0; a->head && cpu < a->cpus; cpu++)
    while (a->head[cpu]) {
      kahead_page_t* p = a->head[cpu];
      a->head[cpu] = p->next;
      free(p);
    }
  free(a->head);
  free(a->tail);
  free(a->queued);
  free(a->spare);
  kconv__free(&a->scan);
  memset(a, 0, sizeof(*a));
}

size_t kahead__read(kahead_t* a, kcpu_t* c, int cpu, bool partial, uint64_t* seq,
                    const kev_table_t* table, kconv_sink_t sink, void* arg) {
  size_t pages = 0;
  if (!a->head || cpu < 0 || cpu >= a->cpus || c->fd < 0) return 0;
  for (bool flushed = !partial; a->queued[cpu] < a->max_queued;) {
    kahead_page_t* p = a->spare ? a->spare : malloc(sizeof(*p) + a->page_size);
    a->spare = NULL;
    if (!p) break;
    int n = kcpu__read(c, p->data);
    if (n <= 0 && !flushed) { /* the page the kernel is writing: a birth just now */
      n = kcpu__flush(c, p->data);
      flushed = true;
    }
    if (n <= 0) {
      a->spare = p;
      break;
    }
    p->seq = ++*seq;
    p->size = (size_t)n;
    p->next = NULL;
    if (a->tail[cpu])
      a->tail[cpu]->next = p;
    else
      a->head[cpu] = p;
    a->tail[cpu] = p;
    a->queued[cpu]++;
    kconv__page(&a->scan, table, (uint32_t)cpu, p->data, p->size, sink, arg);
    pages++;
    a->pages++;
  }
  return pages;
}

int kahead__take(kahead_t* a, int cpu, void* page, uint64_t* seq) {
  if (!a->head || cpu < 0 || cpu >= a->cpus || !a->head[cpu]) return 0;
  kahead_page_t* p = a->head[cpu];
  a->head[cpu] = p->next;
  if (!a->head[cpu]) a->tail[cpu] = NULL;
  a->queued[cpu]--;
  memcpy(page, p->data, p->size);
  int n = (int)p->size;
  *seq = p->seq;
  free(a->spare);
  a->spare = p;
  return n;
}
