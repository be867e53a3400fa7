/* Placeholder → raw buffer image (see live_input.h). */
#include "trace/live_input.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "engine/buffer_header.h"
#include "engine/live_placeholder.h"
#include "trace/cli.h"

/* Copies `bytes` (at most; fewer if `in` ends) from `in` at `offset` to the
 * end of `out`. 0 or an errno. */
static int copy_range(int in, off_t offset, uint64_t bytes, int out) {
  char block[1 << 16];
  while (bytes > 0) {
    size_t want = bytes < sizeof(block) ? (size_t)bytes : sizeof(block);
    ssize_t got = pread(in, block, want, offset);
    if (got < 0 && errno == EINTR) continue;
    if (got < 0) return errno;
    if (got == 0) return 0;
    for (ssize_t done = 0; done < got;) {
      ssize_t w = write(out, block + done, (size_t)(got - done));
      if (w < 0 && errno == EINTR) continue;
      if (w <= 0) return w < 0 ? errno : EIO;
      done += w;
    }
    offset += got;
    bytes -= (uint64_t)got;
  }
  return 0;
}

int live_input__follow(const char* cmd, const char* path, int fd) {
  char head[LIVE_PLACEHOLDER_BYTES];
  ssize_t n = pread(fd, head, sizeof(head), 0);
  if (n < 8 || !live_placeholder__is(head, (size_t)n)) return fd; /* the readers report it */
  char shm_path[PATH_MAX];
  if (!live_placeholder__buffer_path(head, (size_t)n, shm_path, sizeof(shm_path))) {
    cli__error(cmd,
               "'%s' is the placeholder of an unfinished file-mode trace, but names no live "
               "buffer (damaged placeholder)",
               path);
    close(fd);
    return -1;
  }
  int shm = open(shm_path, O_RDONLY | O_CLOEXEC);
  if (shm < 0) {
    cli__error(cmd,
               "'%s' is the placeholder of an unfinished file-mode trace, but its live buffer "
               "'%s' cannot be opened: %s (removed, or the machine restarted: nothing to recover)",
               path, shm_path, strerror(errno));
    close(fd);
    return -1;
  }
  struct stat shm_st, out_st;
  int err = fstat(shm, &shm_st) == 0 && fstat(fd, &out_st) == 0 ? 0 : errno;
  trace_buffer_header_t header;
  memset(&header, 0, sizeof(header));
  if (!err && pread(shm, &header, sizeof(header), 0) < 0) err = errno;
  int image = err ? -1 : memfd_create("fxtrace-recovered", MFD_CLOEXEC);
  if (!err && image < 0) err = errno;
  /* the live buffer, then the streamed saves: no more than the header says
   * (the file may still hold its reservation behind them) */
  if (!err) err = copy_range(shm, 0, (uint64_t)shm_st.st_size, image);
  if (!err && out_st.st_size > LIVE_PLACEHOLDER_BYTES) {
    uint64_t available = (uint64_t)out_st.st_size - LIVE_PLACEHOLDER_BYTES;
    uint64_t streamed = header.streamed_bytes < available ? header.streamed_bytes : available;
    err = copy_range(fd, LIVE_PLACEHOLDER_BYTES, streamed, image);
  }
  if (!err && lseek(image, 0, SEEK_SET) != 0) err = errno;
  close(shm);
  close(fd);
  if (err) {
    cli__error(cmd, "cannot read the live buffer '%s' of '%s': %s", shm_path, path, strerror(err));
    if (image >= 0) close(image);
    return -1;
  }
  return image;
}
