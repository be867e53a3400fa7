/* `trace record`'s snapshots (see record_snapshot.h). */
#include "trace/record_snapshot.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "snapshot/snapshot_name.h"
#include "trace/archive_scan.h"
#include "trace/archive_writer.h"
#include "trace/fxt_writer.h"
#include "trace/output.h"
#include "trace/text_escape.h"

enum { READ_SIZE = 1 << 20 };

const char* record_snapshot__unsupported(unsigned buffering_mode, const char* output, bool json) {
  if (buffering_mode == 2)
    return "snapshots need circular or oneshot mode (in streaming mode the buffers are saved "
           "as they fill)";
  if (strcmp(output, "-") == 0)
    return "snapshots need an output file (-o FILE): they are written beside it, not to "
           "standard output";
  if (json) return "snapshots are FXT archives: they cannot be taken with --format=json";
  return NULL;
}

void record_snapshot__init(record_snapshot_t* s, controller_t* controller, const char* output,
                           compress_codec_t codec, unsigned max_kept) {
  memset(s, 0, sizeof(*s));
  s->controller = controller;
  s->output = output;
  s->codec = codec;
  s->max_kept = max_kept;
}

void record_snapshot__free(record_snapshot_t* s) {
  for (size_t i = 0; i < s->kept_count; i++) free(s->kept[i]);
  free(s->kept);
  s->kept = NULL;
  s->kept_count = 0;
}

/* The records of each provider of the snapshot, in the order of their
 * provider-info records, which is the order of the manager's stats (one
 * provider-info record each). */
typedef struct counts {
  uint64_t records[ARCHIVE_SCAN_MAX_NAMED_PROVIDERS];
} counts_t;

/* Reads the snapshot from `fd` to its end into the file `name`; true if the
 * file holds all of it, well-framed. */
static bool write_file(record_snapshot_t* s, int fd, const char* name, counts_t* counts,
                       uint64_t* bytes) {
  output_t out;
  if (!output__open(&out, "record", name)) return false; /* said why */
  archive_writer_t w;
  archive_scan_t* scan = malloc(sizeof(*scan));
  uint8_t* buf = malloc(READ_SIZE);
  bool writer = archive_writer__init(&w, &out, s->codec);
  bool ok = scan && buf && writer;
  if (!ok) fprintf(stderr, "trace record: snapshot: out of memory\n");
  if (scan) archive_scan__init(scan);
  int read_error = 0;
  for (;;) {
    ssize_t n = buf ? read(fd, buf, READ_SIZE) : -1;
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) read_error = buf ? errno : ENOMEM;
    if (n <= 0) break;
    if (ok && !fxt_writer__write(&w, scan, buf, (size_t)n)) {
      fprintf(stderr, "trace record: writing %s failed: %s\n", name, strerror(w.error));
      ok = false;
    }
  }
  if (ok && read_error) {
    fprintf(stderr, "trace record: reading the snapshot from the trace manager failed: %s\n",
            strerror(read_error));
    ok = false;
  }
  if (ok && !archive_scan__finish(scan)) {
    fprintf(stderr, "trace record: the snapshot from the trace manager is damaged %s\n",
            scan->damage);
    ok = false;
  }
  if (ok && !archive_writer__finish(&w)) {
    fprintf(stderr, "trace record: writing %s failed: %s\n", name, strerror(w.error));
    ok = false;
  }
  *bytes = out.offset;
  if (output__close(&out) != 0 && ok) {
    fprintf(stderr, "trace record: writing %s failed: %s\n", name, strerror(out.error));
    ok = false;
  }
  if (!ok && output__remove(&out)) fprintf(stderr, "trace record: removed %s\n", name);
  if (writer) archive_writer__free(&w);
  for (size_t i = 0; scan && i < scan->provider_count; i++)
    counts->records[i] = scan->providers[i].records;
  free(buf);
  free(scan);
  return ok;
}

static void report(unsigned n, const char* reason, const char* name, uint64_t bytes,
                   const controller_snapshot_stats_t* stats, size_t count, const counts_t* counts) {
  fprintf(stderr, "trace record: snapshot %u (%s): wrote %s (%llu bytes)\n", n, reason, name,
          (unsigned long long)bytes);
  for (size_t i = 0; i < count; i++) {
    const controller_snapshot_stats_t* st = &stats[i];
    char who[TEXT_ESCAPED_SIZE(WIRE_MAX_NAME)], damage[TEXT_ESCAPED_SIZE(WIRE_MAX_DAMAGE)];
    text__escaped(st->name, who, sizeof(who));
    uint64_t in_file = i < ARCHIVE_SCAN_MAX_NAMED_PROVIDERS ? counts->records[i] : 0;
    fprintf(stderr,
            "trace record:   provider '%s' (pid %llu): %llu records, %llu dropped, %llu "
            "discarded (copy %.2f ms, check %.2f ms)\n",
            who, (unsigned long long)st->pid, (unsigned long long)st->records,
            (unsigned long long)st->records_dropped, (unsigned long long)st->discarded,
            (double)st->copy_ns / 1e6, (double)st->check_ns / 1e6);
    if (i < ARCHIVE_SCAN_MAX_NAMED_PROVIDERS && in_file != st->records)
      fprintf(stderr,
              "trace record: warning: snapshot %u: provider '%s': the file holds %llu records, "
              "the manager wrote %llu\n",
              n, who, (unsigned long long)in_file, (unsigned long long)st->records);
    if (st->durable_missing > 0)
      fprintf(stderr,
              "trace record: warning: snapshot %u: provider '%s': %llu bytes of string and "
              "thread records were still being written and are missing: some names may be "
              "unknown in it\n",
              n, who, (unsigned long long)st->durable_missing);
    if (st->damage[0])
      fprintf(stderr, "trace record: warning: snapshot %u: provider '%s': %s\n", n, who,
              text__escaped(st->damage, damage, sizeof(damage)));
  }
}

/* Keeps `name` as the newest snapshot, removing the oldest beyond max_kept. */
static void keep(record_snapshot_t* s, const char* name) {
  char* copy = strdup(name);
  char** grown = copy ? realloc(s->kept, (s->kept_count + 1) * sizeof(char*)) : NULL;
  if (!grown) { /* it stays on disk, out of the rotation */
    free(copy);
    return;
  }
  s->kept = grown;
  s->kept[s->kept_count++] = copy;
  while (s->max_kept > 0 && s->kept_count > s->max_kept) {
    if (unlink(s->kept[0]) == 0)
      fprintf(stderr, "trace record: removed %s (--max-snapshots=%u)\n", s->kept[0], s->max_kept);
    else if (errno != ENOENT)
      fprintf(stderr, "trace record: warning: cannot remove %s: %s\n", s->kept[0], strerror(errno));
    free(s->kept[0]);
    memmove(s->kept, s->kept + 1, (s->kept_count - 1) * sizeof(char*));
    s->kept_count--;
  }
}

int record_snapshot__take(record_snapshot_t* s, const char* reason) {
  unsigned n = s->taken + 1;
  char name[PATH_MAX];
  if (!snapshot_name__format(s->output, n, name, sizeof(name))) {
    fprintf(stderr, "trace record: snapshot %u (%s): its file name would be too long\n", n, reason);
    return -1;
  }
  int p[2];
  if (pipe2(p, O_CLOEXEC) != 0) {
    fprintf(stderr, "trace record: snapshot %u (%s): cannot create a pipe: %s\n", n, reason,
            strerror(errno));
    return -1;
  }
  controller_snapshot_stats_t* stats = NULL;
  size_t count = 0;
  /* The manager replies once the snapshot is queued (it never waits for
   * this end), then delivers it and closes its copy of p[1]. */
  int status = controller__snapshot(s->controller, p[1], &stats, &count);
  close(p[1]);
  if (status != 0) {
    fprintf(stderr, "trace record: snapshot %u (%s) failed: %s\n", n, reason, s->controller->error);
    close(p[0]);
    return -1;
  }
  counts_t* counts = calloc(1, sizeof(*counts));
  uint64_t bytes = 0;
  bool ok = counts && write_file(s, p[0], name, counts, &bytes);
  close(p[0]);
  if (ok) {
    s->taken = n;
    report(n, reason, name, bytes, stats, count, counts);
    keep(s, name);
  } else {
    fprintf(stderr, "trace record: snapshot %u (%s) failed\n", n, reason);
  }
  free(counts);
  free(stats);
  return ok ? 0 : -1;
}
