/* Not part of the public API: the file a `trace` command writes (record's
 * archive, convert's JSON, recover's archive), written with write(2) so that
 * the bytes that reached it are known exactly: after a failed write
 * (ENOSPC, EIO, EFBIG, EPIPE...) `offset` is where the file ends, and the
 * writers above cut it back to their last complete record
 * (archive_writer.h). A regular file is written behind (write_behind.h). */
#ifndef FXTRACE_TRACE_OUTPUT_H_
#define FXTRACE_TRACE_OUTPUT_H_

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "trace/write_behind.h"

typedef struct output {
  int fd;
  bool owned;       /* opened here, closed by output__close() */
  bool regular;     /* a regular file: it can be cut, and removed */
  const char* path; /* NULL for standard output */
  const char* name; /* for messages: the path, or "standard output" */
  uint64_t offset;  /* bytes written: where the file ends */
  int error;        /* errno of the first failed write; sticky: nothing is written after it */
  write_behind_t write_behind;
} output_t;

/* Opens `path` for writing, created (mode 0600) or truncated, keeping its
 * mode ("-": standard output).
 * false after printing "trace CMD: cannot write 'PATH': why". */
bool output__open(output_t* o, const char* cmd, const char* path);

/* Writes all `size` bytes; returns how many reached the file (all, unless
 * this or an earlier write failed: `error` says why). */
size_t output__write(output_t* o, const void* data, size_t size);

/* Cuts a regular file to `length` bytes and goes on writing there (after a
 * failed write, to keep what is whole; `error` is cleared for that). 0, or
 * the errno of ftruncate. */
int output__cut(output_t* o, uint64_t length);

/* Closes the file if it was opened here. 0, or the errno of close(2) (a
 * delayed write error of some file systems), also kept in `error`. */
int output__close(output_t* o);

/* Removes the file (a regular one only: never a device or a FIFO the user
 * named); true if it did. After output__close(). */
bool output__remove(output_t* o);

#endif /* FXTRACE_TRACE_OUTPUT_H_ */
