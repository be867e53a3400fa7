/* One CPU's ftrace buffer, read through splice (see kcpu.h). */
#include "kernel/kcpu.h"

#include <errno.h>
#include <event-parse.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <tracefs.h>
#include <unistd.h>

size_t kcpu__page_size(void) {
  int length = 0;
  char* text = tracefs_instance_file_read(NULL, "events/header_page", &length);
  struct tep_handle* tep = text ? tep_alloc() : NULL;
  int size = 0;
  if (tep && tep_parse_header_page(tep, text, (unsigned long)length, (int)sizeof(long)) == 0)
    size = tep_get_sub_buffer_size(tep);
  tep_free(tep);
  free(text);
  return size > 0 ? (size_t)size : 0;
}

int kcpu__open(kcpu_t* c, struct tracefs_instance* instance, int cpu, size_t page_size) {
  c->fd = c->pipe[0] = c->pipe[1] = -1;
  c->page_size = page_size;
  c->buffered = 0;
  char file[64];
  snprintf(file, sizeof(file), "per_cpu/cpu%d/trace_pipe_raw", cpu);
  char* path = tracefs_instance_get_file(instance, file);
  if (!path) return -ENOMEM;
  int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  int err = fd < 0 ? errno : 0;
  tracefs_put_tracing_file(path);
  if (fd < 0) return -err;
  if (pipe2(c->pipe, O_CLOEXEC) != 0) {
    err = errno;
    close(fd);
    return -err;
  }
  int size = fcntl(c->pipe[0], F_GETPIPE_SZ);
  /* one splice takes as many whole pages as the pipe holds */
  c->pipe_size = size > 0 && (size_t)size >= page_size ? (size_t)size : page_size;
  c->fd = fd;
  return 0;
}

static int read_pipe(kcpu_t* c, void* page) {
  ssize_t n;
  do n = read(c->pipe[0], page, c->page_size);
  while (n < 0 && errno == EINTR);
  if (n < 0) return -1;
  c->buffered = (size_t)n < c->buffered ? c->buffered - (size_t)n : 0;
  return (int)n;
}

int kcpu__read(kcpu_t* c, void* page) {
  if (c->buffered > 0) return read_pipe(c, page);
  /* trace_pipe_raw splices whole pages only, and none while the kernel
   * still writes the page (EAGAIN) */
  ssize_t n =
      splice(c->fd, NULL, c->pipe[1], NULL, c->pipe_size, SPLICE_F_MOVE | SPLICE_F_NONBLOCK);
  if (n < 0) return errno == EAGAIN || errno == EINTR ? 0 : -1;
  if (n == 0) return 0;
  c->buffered = (size_t)n;
  return read_pipe(c, page);
}

int kcpu__flush(kcpu_t* c, void* page) {
  if (c->buffered > 0) return read_pipe(c, page);
  ssize_t n;
  do n = read(c->fd, page, c->page_size);
  while (n < 0 && errno == EINTR);
  if (n < 0) return errno == EAGAIN ? 0 : -1;
  return (int)n;
}

void kcpu__close(kcpu_t* c) {
  if (c->fd >= 0) close(c->fd);
  if (c->pipe[0] >= 0) close(c->pipe[0]);
  if (c->pipe[1] >= 0) close(c->pipe[1]);
  c->fd = c->pipe[0] = c->pipe[1] = -1;
  c->buffered = 0;
}
