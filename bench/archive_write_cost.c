/* The CPU cost of writing a streaming archive to a file, per byte, the way
 * `trace record`'s archive thread writes it and the ways it could
 * (bench/RESULTS.md, "Streaming: the archive write and the other CPU").
 *
 *   bench_archive_write_cost MODE [PIECE_BYTES [GIB [FILE]]]
 *
 * writes GIB GiB (default 2) to FILE (default ./archive_write_cost.bin,
 * removed after) from an 8 MiB ring, PIECE_BYTES (default 1 MiB) per
 * write(2), as the archive thread does from the archive ring. MODE:
 *   write-behind  buffered writes with src/trace/write_behind.c, as `trace
 *                 record` writes a regular file
 *   keep          buffered writes, handed to writeback as write-behind does
 *                 but never dropped from the page cache
 *   plain         buffered writes only, then fdatasync
 *   direct        O_DIRECT (PIECE_BYTES a multiple of 4096), no page cache
 * and prints the process's CPU time (user + system) per byte and per 56-byte
 * record (the 2-int instant), and the rate. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* O_DIRECT, sync_file_range */
#endif
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include "trace/write_behind.h"

enum { RING_BYTES = 8 << 20, RECORD_BYTES = 56 };

static double cpu_seconds(void) {
  struct rusage ru;
  getrusage(RUSAGE_SELF, &ru);
  return (double)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) +
         (double)(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e6;
}

static double now_seconds(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void usage(void) {
  fprintf(stderr,
          "usage: bench_archive_write_cost write-behind|keep|plain|direct "
          "[PIECE_BYTES [GIB [FILE]]]\n");
  exit(2);
}

int main(int argc, char** argv) {
  if (argc < 2 || argc > 5) usage();
  const char* mode = argv[1];
  bool direct = !strcmp(mode, "direct"), behind = !strcmp(mode, "write-behind"),
       keep = !strcmp(mode, "keep");
  if (!direct && !behind && !keep && strcmp(mode, "plain")) usage();
  size_t piece = argc > 2 ? strtoull(argv[2], NULL, 10) : (1u << 20);
  uint64_t gib = argc > 3 ? strtoull(argv[3], NULL, 10) : 2;
  uint64_t total = gib <= 1024 ? gib << 30 : 0; /* 0: refused below */
  const char* path = argc > 4 ? argv[4] : "archive_write_cost.bin";
  if (piece == 0 || piece > RING_BYTES || RING_BYTES % piece || total == 0 ||
      (direct && piece % 4096)) {
    fprintf(stderr,
            "bench_archive_write_cost: PIECE_BYTES must divide 8 MiB (and be a "
            "multiple of 4096 for direct), GIB 1 to 1024\n");
    return 2;
  }
  uint8_t* ring = mmap(NULL, RING_BYTES, PROT_READ | PROT_WRITE,
                       MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
  if (ring == MAP_FAILED) {
    perror("bench_archive_write_cost: mmap");
    return 1;
  }
  memset(ring, 0x11, RING_BYTES); /* written once: no first-touch cost in the loop */
  int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | (direct ? O_DIRECT : 0), 0600);
  if (fd < 0) {
    fprintf(stderr, "bench_archive_write_cost: %s: %s\n", path, strerror(errno));
    return 1;
  }
  write_behind_t wb;
  write_behind__init(&wb, fd);
  uint64_t handed = 0;
  double cpu0 = cpu_seconds(), t0 = now_seconds();
  for (uint64_t done = 0; done < total; done += piece) {
    ssize_t n = write(fd, ring + done % RING_BYTES, piece);
    if (n != (ssize_t)piece) {
      fprintf(stderr, "bench_archive_write_cost: write: %s\n", n < 0 ? strerror(errno) : "short");
      unlink(path);
      return 1;
    }
    if (behind) write_behind__wrote(&wb, fd, piece);
    if (keep && done + piece - handed >= WRITE_BEHIND_BYTES) {
      sync_file_range(fd, (off_t)handed, (off_t)(done + piece - handed), SYNC_FILE_RANGE_WRITE);
      handed = done + piece;
    }
  }
  if (!direct) fdatasync(fd);
  double cpu = cpu_seconds() - cpu0, wall = now_seconds() - t0;
  close(fd);
  unlink(path);
  printf(
      "result mode=%s piece=%zu bytes=%llu cpu_s=%.3f ns_per_byte=%.3f ns_per_record=%.1f "
      "wall_s=%.2f mb_per_s=%.0f\n",
      mode, piece, (unsigned long long)total, cpu, cpu * 1e9 / (double)total,
      cpu * 1e9 / (double)total * RECORD_BYTES, wall, (double)total / wall / 1e6);
  return 0;
}
