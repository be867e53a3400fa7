/* Write-behind (write_behind.h). */
#include "trace/write_behind.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

void write_behind__init(write_behind_t* w, int fd) {
  struct stat st;
  *w = (write_behind_t){0};
  off_t at = lseek(fd, 0, SEEK_CUR);
  w->active = fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && at >= 0;
  w->start = w->active ? (uint64_t)at : 0;
}

void write_behind__wrote(write_behind_t* w, int fd, uint64_t bytes) {
  w->written += bytes;
  if (!w->active || w->written - w->handed < WRITE_BEHIND_BYTES) return;
  uint64_t offset = w->start + w->handed, length = w->written - w->handed;
  sync_file_range(fd, (off_t)offset, (off_t)length, SYNC_FILE_RANGE_WRITE);
  if (w->previous_length > 0) {
    sync_file_range(
        fd, (off_t)w->previous_offset, (off_t)w->previous_length,
        SYNC_FILE_RANGE_WAIT_BEFORE | SYNC_FILE_RANGE_WRITE | SYNC_FILE_RANGE_WAIT_AFTER);
    posix_fadvise(fd, (off_t)w->previous_offset, (off_t)w->previous_length, POSIX_FADV_DONTNEED);
  }
  w->previous_offset = offset;
  w->previous_length = length;
  w->handed = w->written;
}
