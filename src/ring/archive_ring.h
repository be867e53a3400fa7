/* A byte ring from the trace manager's loop to `trace record`'s archive
 * thread when both run in the same process (docs/manager.md, "The archive
 * in the same process"). It takes the place of the pipe the archive
 * otherwise crosses: one copy in user space instead of a copy into pipe
 * pages the kernel allocates, a copy out of them and a system call each
 * way. One writer thread, one reader thread.
 *
 * The writer never blocks: a write takes what fits, and room_fd (an
 * eventfd) becomes readable once the reader has made room after a write
 * that did not fit whole; the writer then calls archive_ring__clear_room()
 * before writing again. The reader blocks until there is data or the
 * writer closed the ring. */
#ifndef FXTRACE_RING_ARCHIVE_RING_H_
#define FXTRACE_RING_ARCHIVE_RING_H_

#include <stddef.h>

typedef struct archive_ring archive_ring_t;

/* A ring of `size` bytes (a power of two, at least 4096). NULL on failure
 * (errno set). */
archive_ring_t* archive_ring__create(size_t size);
/* Neither thread may use it any more. NULL is ignored. */
void archive_ring__free(archive_ring_t* r);

/* Writer: copies up to `size` bytes; how many (0: full). */
size_t archive_ring__write(archive_ring_t* r, const void* data, size_t size);
/* Writer, without a copy from elsewhere: `size` contiguous free bytes to
 * fill in place, or NULL when fewer are free before the ring's end (write
 * instead; room_fd is not armed). Nothing is the reader's until
 * archive_ring__commit() hands over the first `n` of them (n <= size; the
 * rest stay free). No other write between the two. */
void* archive_ring__reserve(archive_ring_t* r, size_t size);
void archive_ring__commit(archive_ring_t* r, size_t n);
/* Writer: readable when room was made after a short write. */
int archive_ring__room_fd(const archive_ring_t* r);
/* Writer: resets room_fd (call when it was readable, before writing). */
void archive_ring__clear_room(archive_ring_t* r);
/* Writer: the end of the data; the reader reads what is left, then 0. */
void archive_ring__close(archive_ring_t* r);

/* Reader: copies up to `size` bytes, waiting for some; 0 once the ring is
 * closed and empty. */
size_t archive_ring__read(archive_ring_t* r, void* out, size_t size);

/* Reader, without the copy: waits as archive_ring__read, then points *data
 * at the next bytes in place (at most `max`, and not across the ring's
 * end) and returns their count; 0 at the end. They stay as they are until
 * archive_ring__consume() hands them back to the writer. */
size_t archive_ring__peek(archive_ring_t* r, const void** data, size_t max);
void archive_ring__consume(archive_ring_t* r, size_t n);

#endif /* FXTRACE_RING_ARCHIVE_RING_H_ */
