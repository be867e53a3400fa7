/* The ordered view's temporary file (see spill.h). */
#include "ordered/spill.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const char* directory(const ordered_t* o) {
  const char* dir = o->opt.tmpdir;
  if (!dir || !*dir) dir = getenv("TMPDIR");
  return dir && *dir ? dir : "/tmp";
}

static bool create(ordered_t* o) {
  const char* dir = directory(o);
  int fd = open(dir, O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
  if (fd < 0) { /* a file system without O_TMPFILE: a name, removed at once */
    char path[PATH_MAX];
    if (snprintf(path, sizeof(path), "%s/fxtrace-ordered-XXXXXX", dir) >= (int)sizeof(path)) {
      errno = ENAMETOOLONG;
    } else if ((fd = mkostemp(path, O_CLOEXEC)) >= 0) {
      unlink(path);
    }
  }
  if (fd < 0)
    return ordered__fail(o, "cannot create a temporary file in %s (TMPDIR): %s", dir,
                         strerror(errno));
  o->spill.buf = malloc(ORDERED_IO_BYTES);
  if (!o->spill.buf) {
    close(fd);
    return ordered__fail(o, "out of memory");
  }
  ordered__hold(o, ORDERED_IO_BYTES, 0);
  o->spill.fd = fd;
  return true;
}

static bool write_all(ordered_t* o, const unsigned char* data, size_t n) {
  while (n) {
    ssize_t w = pwrite(o->spill.fd, data, n, (off_t)o->spill.written);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0)
      return ordered__fail(o, "writing the temporary file in %s (TMPDIR) failed: %s", directory(o),
                           w < 0 ? strerror(errno) : "no progress");
    data += w;
    n -= (size_t)w;
    o->spill.written += (uint64_t)w;
    o->stats.spilled_bytes += (uint64_t)w;
  }
  return true;
}

static bool flush(ordered_t* o) {
  size_t n = o->spill.used;
  o->spill.used = 0;
  return write_all(o, o->spill.buf, n);
}

uint64_t ordered__spill_end(const ordered_t* o) { return o->spill.written + o->spill.used; }

bool ordered__spill_append(ordered_t* o, const void* data, size_t n) {
  if (o->spill.fd < 0 && !create(o)) return false;
  if (!o->spill.buf) return ordered__fail(o, "internal error: a run written after the merge began");
  if (n > ORDERED_IO_BYTES - o->spill.used) {
    if (!flush(o)) return false;
    if (n > ORDERED_IO_BYTES) return write_all(o, data, n);
  }
  memcpy(o->spill.buf + o->spill.used, data, n);
  o->spill.used += n;
  return true;
}

bool ordered__spill_seal(ordered_t* o) {
  if (!o->spill.buf) return true;
  bool ok = flush(o);
  ordered__hold(o, 0, ORDERED_IO_BYTES);
  free(o->spill.buf);
  o->spill.buf = NULL;
  return ok;
}

bool ordered__spill_read(ordered_t* o, uint64_t off, void* dst, size_t n) {
  if (off + n > o->spill.written && !flush(o)) return false;
  unsigned char* p = dst;
  while (n) {
    ssize_t r = pread(o->spill.fd, p, n, (off_t)off);
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0)
      return ordered__fail(o, "reading the temporary file in %s (TMPDIR) failed: %s", directory(o),
                           r < 0 ? strerror(errno) : "it is shorter than written");
    p += r;
    off += (uint64_t)r;
    n -= (size_t)r;
  }
  return true;
}

void ordered__spill_discard(ordered_t* o, uint64_t off, uint64_t len) {
  /* Only the range's own bytes are affected (partial blocks are zeroed), so
   * neighbouring runs are safe. A file system that cannot punch keeps them. */
  if (o->spill.fd >= 0 && len)
    (void)fallocate(o->spill.fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, (off_t)off,
                    (off_t)len);
}

void ordered__spill_close(ordered_t* o) {
  if (o->spill.fd >= 0) close(o->spill.fd);
  if (o->spill.buf) ordered__hold(o, 0, ORDERED_IO_BYTES);
  free(o->spill.buf);
  o->spill.fd = -1;
  o->spill.buf = NULL;
  o->spill.used = 0;
}
