/* Not part of the public API: `trace record`'s snapshots (docs/snapshots.md).
 * A snapshot writes what the manager's buffers hold now (circular and oneshot
 * modes) to a numbered file beside the output (snapshot/snapshot_name.h:
 * out.fxt → out.1.fxt, out.2.fxt, ...; compressed as the output is), and
 * tracing goes on. Requests come from SIGUSR1 (record_signals.h) and from
 * --trigger=ALERT:snapshot; both call record_snapshot__take() on trace
 * record's main thread, which blocks until the file is written. */
#ifndef FXTRACE_TRACE_RECORD_SNAPSHOT_H_
#define FXTRACE_TRACE_RECORD_SNAPSHOT_H_

#include <stdbool.h>
#include <stddef.h>

#include "trace/compress_writer.h"
#include "trace/controller.h"

typedef struct record_snapshot {
  controller_t* controller; /* borrowed: the recording's connection to the manager */
  const char* output;       /* the trace's output path: snapshots go beside it */
  compress_codec_t codec;   /* the output's */
  unsigned max_kept;        /* --max-snapshots; 0: every snapshot is kept */
  unsigned taken;           /* snapshots written so far (the last one's number) */
  char** kept;              /* the files this recording wrote and kept, oldest first */
  size_t kept_count;
} record_snapshot_t;

/* Why snapshots cannot be taken with these options ("streaming mode", ...),
 * or NULL if they can: a usage error for --max-snapshots and
 * --trigger=ALERT:snapshot, a warning for SIGUSR1. */
const char* record_snapshot__unsupported(unsigned buffering_mode, const char* output, bool json);

void record_snapshot__init(record_snapshot_t* s, controller_t* controller, const char* output,
                           compress_codec_t codec, unsigned max_kept);

/* Takes a snapshot now: asks the manager for it, writes the next numbered
 * file and removes the oldest this recording wrote beyond max_kept. Says on
 * stderr what it wrote, per provider (records, dropped, discarded), with
 * `reason` ("SIGUSR1", "alert 'NAME'"). 0, or -1 after saying why (the
 * trace goes on either way; a file that could not be written whole is
 * removed). */
int record_snapshot__take(record_snapshot_t* s, const char* reason);

void record_snapshot__free(record_snapshot_t* s);

#endif /* FXTRACE_TRACE_RECORD_SNAPSHOT_H_ */
