/* Write-behind for a long trace written to a regular file, as LTTng's
 * consumer daemon does. Every WRITE_BEHIND_BYTES the range just written is
 * handed to writeback at once, and the range before it is waited for and
 * dropped from the page cache. The file is then written at the disk's pace,
 * instead of dirty pages piling up until the kernel stalls the writer for
 * long stretches (balance_dirty_pages): during such a stall the trace
 * manager cannot hand the archive on, streaming saves wait, and providers
 * drop records. It also keeps a multi-gigabyte trace out of the page cache,
 * and where a page the cache takes fresh is expensive (a VM whose pages are
 * first touched through the host) the recycled pages keep the write 7-10x
 * cheaper per byte than a growing cache (bench_archive_write_cost; O_DIRECT,
 * cheaper still in CPU, blocks for the disk: bench/RESULTS.md, session 19).
 * Anything but a regular file is left alone. All of it is advice: a failed
 * call changes nothing, and write errors still surface from write(2). */
#ifndef FXTRACE_TRACE_WRITE_BEHIND_H_
#define FXTRACE_TRACE_WRITE_BEHIND_H_

#include <stdbool.h>
#include <stdint.h>

enum { WRITE_BEHIND_BYTES = 8 << 20 };

typedef struct write_behind {
  bool active;              /* a regular file */
  uint64_t start;           /* file offset where this writer began */
  uint64_t written;         /* bytes written since */
  uint64_t handed;          /* bytes handed to writeback */
  uint64_t previous_offset; /* the range handed last time, waited for next time */
  uint64_t previous_length;
} write_behind_t;

/* For writes to `fd` from its current offset on. */
void write_behind__init(write_behind_t* w, int fd);

/* After write(2)s to fd of `bytes` more bytes. */
void write_behind__wrote(write_behind_t* w, int fd, uint64_t bytes);

#endif /* FXTRACE_TRACE_WRITE_BEHIND_H_ */
