/* A byte ring from the trace manager's loop to `trace record`'s archive
 * thread, in place of the pipe the archive otherwise crosses: one copy in
 * user space instead of a copy into pipe pages the kernel allocates, a copy
 * out of them and a system call each way. One writer, one reader.
 *
 * Two kinds (docs/manager.md, "The archive in the same process" and "The
 * archive ring of a daemon"):
 *   - in-process (archive_ring__create): `trace record`'s own manager
 *     thread writes, its archive thread reads; wake-ups through eventfds;
 *   - shared (archive_ring__create_shared, archive_ring__attach): a
 *     trace_manager daemon writes, the client process reads. The daemon
 *     makes two memfds, a control page (the counts and flags, written by
 *     both) and the data, sealed so that the client's own mappings of the
 *     data can only read it (F_SEAL_FUTURE_WRITE) and neither can be
 *     resized; wake-ups are one-byte messages on a socket pair, each side
 *     holding only its own end, sent and received without blocking (a
 *     client cannot make the daemon wait). Each side keeps its own count
 *     and takes the other's, read from the shared page, only as far as it
 *     is consistent (at most a ring's size apart): a client that scribbles
 *     on the control page spoils its own archive, nothing else.
 *
 * The writer never blocks: a write takes what fits, and room_fd becomes
 * readable once the reader has made room after a write that did not fit
 * whole; the writer then calls archive_ring__clear_room() before writing
 * again. The reader blocks until there is data or the writer closed the
 * ring (or, shared, the writer's process closed its end). */
#ifndef FXTRACE_RING_ARCHIVE_RING_H_
#define FXTRACE_RING_ARCHIVE_RING_H_

#include <stdbool.h>
#include <stddef.h>

typedef struct archive_ring archive_ring_t;

/* The sizes a shared ring may have: powers of two in this range. */
enum {
  ARCHIVE_RING_MIN_SHARED = 64 * 1024,
  ARCHIVE_RING_MAX_SHARED = 16 * 1024 * 1024,
};

/* A ring of `size` bytes (a power of two, at least 4096). NULL on failure
 * (errno set). */
archive_ring_t* archive_ring__create(size_t size);
/* The writer's side of a shared ring of `size` bytes (a power of two in
 * [ARCHIVE_RING_MIN_SHARED, ARCHIVE_RING_MAX_SHARED]); fds gets what the
 * reader's process needs, to send it and then close: the control memfd,
 * the data memfd and the reader's end of the socket pair. NULL on failure
 * (errno set). */
archive_ring_t* archive_ring__create_shared(size_t size, int fds[3]);
/* The reader's side of a shared ring from those fds (taken: closed on
 * failure too) and the size the writer announced; checked against what
 * the fds are. NULL on failure (errno set). */
archive_ring_t* archive_ring__attach(size_t size, const int fds[3]);
/* Neither side may use it any more (in-process: neither thread). NULL is
 * ignored. */
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
/* Writer: readable when room was made after a short write (shared: also
 * when the reader's process closed its end). */
int archive_ring__room_fd(const archive_ring_t* r);
/* Writer: resets room_fd (call when it was readable, before writing). */
void archive_ring__clear_room(archive_ring_t* r);
/* Writer, shared: whether the reader's process closed its end (seen by
 * archive_ring__clear_room): nothing written will be read any more. */
bool archive_ring__reader_gone(const archive_ring_t* r);
/* Writer: the end of the data; the reader reads what is left, then 0. */
void archive_ring__close(archive_ring_t* r);
/* Writer: the same, for data that was cut short (archive_ring__closed then
 * says false). */
void archive_ring__cut(archive_ring_t* r);
/* Writer: whether the reader has bytes left to read (false too when its
 * end was closed); if so, room_fd becomes readable when it reads some. */
bool archive_ring__unread(archive_ring_t* r);

/* Reader: copies up to `size` bytes, waiting for some; 0 once the ring is
 * closed and empty (shared: or the writer's process closed its end). */
size_t archive_ring__read(archive_ring_t* r, void* out, size_t size);

/* Reader, without the copy: waits as archive_ring__read, then points *data
 * at the next bytes in place (at most `max`, and not across the ring's
 * end) and returns their count; 0 at the end. They stay as they are until
 * archive_ring__consume() hands them back to the writer. */
size_t archive_ring__peek(archive_ring_t* r, const void** data, size_t max);
void archive_ring__consume(archive_ring_t* r, size_t n);
/* Reader, after 0 from read or peek: whether the writer closed the ring
 * with the whole archive (false: its process went away without closing
 * it, or it cut the archive short). */
bool archive_ring__closed(const archive_ring_t* r);
/* Reader, after 0 from read or peek: whether the writer cut the archive
 * short (archive_ring__cut) rather than its process going away. */
bool archive_ring__was_cut(const archive_ring_t* r);

#endif /* FXTRACE_RING_ARCHIVE_RING_H_ */
