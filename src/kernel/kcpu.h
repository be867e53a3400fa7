/* Not part of the public API: one CPU's ftrace ring buffer in the kernel
 * provider's tracefs instance, read a sub-buffer (page) at a time. Whole
 * pages move through a pipe with splice(2) while tracing; the page the
 * kernel is still writing comes with kcpu__flush(), as far as it is written
 * (a drain, and a read-ahead for a thread's birth: kahead.h), and the kernel
 * goes on writing after what it gave. The provider's own reader rather than libtracefs's
 * tracefs_cpu, whose trace_pipe_raw and pipes are opened without
 * close-on-exec: both descriptors here are close-on-exec, as the file of
 * raw ring-buffer pages must never reach a program `trace record` runs. */
#ifndef FXTRACE_KERNEL_KCPU_H_
#define FXTRACE_KERNEL_KCPU_H_

#include <stddef.h>

struct tracefs_instance;

typedef struct kcpu {
  int fd;           /* per_cpu/cpuN/trace_pipe_raw, non-blocking; -1: not open */
  int pipe[2];      /* splice's pipe */
  size_t pipe_size; /* bytes one splice asks for */
  size_t page_size; /* one sub-buffer: what a read gives at most */
  size_t buffered;  /* spliced into the pipe, not read yet */
} kcpu_t;

/* The size of ftrace's sub-buffer (from events/header_page), which every
 * read buffer must hold; 0 when it cannot be read. */
size_t kcpu__page_size(void);

/* Opens `cpu`'s buffer of the instance. 0, or -errno with c->fd == -1. */
int kcpu__open(kcpu_t* c, struct tracefs_instance* instance, int cpu, size_t page_size);

/* One whole page into `page` (page_size bytes): its length, 0 when no whole
 * page is ready, -1 on an error (errno). */
int kcpu__read(kcpu_t* c, void* page);

/* A page still in the pipe, else what the buffer holds, the page the
 * kernel is writing included (as far as it is written). Its length, 0 when
 * empty, -1 on an error. */
int kcpu__flush(kcpu_t* c, void* page);

/* Closes what is open; c->fd == -1 after (also safe then). */
void kcpu__close(kcpu_t* c);

#endif /* FXTRACE_KERNEL_KCPU_H_ */
