/* A command's output file (see output.h). */
#include "trace/output.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "trace/cli.h"

bool output__open(output_t* o, const char* cmd, const char* path) {
  memset(o, 0, sizeof(*o));
  if (strcmp(path, "-") == 0) {
    o->fd = STDOUT_FILENO;
    o->name = "standard output";
  } else {
    /* created readable by its owner only, whatever the umask: a trace may
     * hold every process's scheduling (kernel categories, as root) or a
     * program's arguments; an existing file keeps its mode */
    o->fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    if (o->fd < 0) {
      cli__error(cmd, "cannot write '%s': %s", path, strerror(errno));
      return false;
    }
    o->owned = true;
    o->path = o->name = path;
  }
  struct stat st;
  o->regular = fstat(o->fd, &st) == 0 && S_ISREG(st.st_mode);
  off_t at = lseek(o->fd, 0, SEEK_CUR);
  o->offset = at > 0 ? (uint64_t)at : 0; /* stdout may be a file opened for appending */
  write_behind__init(&o->write_behind, o->fd);
  return true;
}

size_t output__write(output_t* o, const void* data, size_t size) {
  size_t done = 0;
  while (o->error == 0 && done < size) {
    ssize_t n = write(o->fd, (const char*)data + done, size - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      o->error = n < 0 ? errno : EIO;
      break;
    }
    done += (size_t)n;
    o->offset += (uint64_t)n;
  }
  if (done > 0) write_behind__wrote(&o->write_behind, o->fd, done);
  return done;
}

int output__cut(output_t* o, uint64_t length) {
  if (!o->regular) return ESPIPE;
  if (ftruncate(o->fd, (off_t)length) != 0 || lseek(o->fd, (off_t)length, SEEK_SET) < 0)
    return errno;
  o->offset = length;
  o->error = 0;
  return 0;
}

int output__close(output_t* o) {
  if (!o->owned) return 0;
  o->owned = false;
  if (close(o->fd) != 0 && errno != EINTR) { /* EINTR: closed all the same */
    if (o->error == 0) o->error = errno;
    return errno;
  }
  return 0;
}

bool output__remove(output_t* o) { return o->path && o->regular && unlink(o->path) == 0; }
