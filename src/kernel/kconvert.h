/* Not part of the public API: one ftrace ring-buffer page (as read from
 * per_cpu/cpuN/trace_pipe_raw) into events, with libtraceevent's kbuffer.
 * A damaged page never makes it read outside the page: the page is copied
 * into a zero-padded buffer, its commit size is checked, and every event is
 * checked to lie inside the committed data before it is handed on (a page
 * read into kconv__page_buffer() is converted there, not copied). */
#ifndef FXTRACE_KERNEL_KCONVERT_H_
#define FXTRACE_KERNEL_KCONVERT_H_

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "kernel/kevents.h"

struct kbuffer;

typedef struct kconv_event {
  uint32_t cpu;
  uint64_t ts; /* raw ftrace clock value */
  const kev_desc_t* desc;
  const void* data;
  size_t size;
  /* the first event of a page whose header says the kernel overwrote events
   * before it (ftrace's overrun, counted as the provider's drops): the
   * events of this CPU do not continue the ones converted before */
  bool after_loss;
} kconv_event_t;

typedef void (*kconv_sink_t)(void* arg, const kconv_event_t* event);

typedef struct kconv {
  struct kbuffer* kbuf;
  unsigned char* copy; /* page_size + padding */
  size_t page_size;
  uint64_t pages, events, unknown, damaged_pages, missed;
} kconv_t;

/* 0, or -1 when out of memory. */
int kconv__init(kconv_t* c, size_t page_size);
void kconv__free(kconv_t* c);

/* A page_size buffer to read a page into: kconv__page() given it converts
 * the page in place (zero-padding only the rest) instead of copying it. */
void* kconv__page_buffer(kconv_t* c);

/* Converts one page of `size` bytes (<= page_size) read for `cpu`; returns
 * the number of events handed to the sink, or -1 for a page rejected as
 * damaged. Events of unknown ids are counted and skipped. */
int kconv__page(kconv_t* c, const kev_table_t* table, uint32_t cpu, const void* page, size_t size,
                kconv_sink_t sink, void* arg);

#endif /* FXTRACE_KERNEL_KCONVERT_H_ */
