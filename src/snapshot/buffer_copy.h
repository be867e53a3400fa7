/* Not part of the public API: a consistent copy of a trace buffer that its
 * providers keep writing (docs/snapshots.md), for snapshots of a running
 * trace in circular and oneshot modes. Nobody pauses: the reader copies,
 * then checks what it copied against the live buffer.
 *
 *   1. The header is loaded once (atomic loads): its allocation words bound
 *      what is scanned, so chunks taken after the request are not.
 *   2. The whole buffer is copied into private memory with one memcpy.
 *   3. The durable buffer is complete up to the allocation point read in 1
 *      (a string or thread record a copied event refers to was committed
 *      before that event): its uncommitted tail is copied again until it
 *      is, for at most DURABLE_WAIT (a writer preempted mid-record), after
 *      which what is missing is reported (durable_missing).
 *   4. The copy is scanned with the ordinary scan rule (buffer_scan.h), and
 *      every record it yields is compared with the live bytes at its place.
 *      A chunk is only ever rewritten after it is cleared, and a clear zeroes
 *      the chunk's first word before anything else, so a chunk reused (or
 *      half cleared) since it was copied does not compare equal, and from
 *      the first record that differs to the end of its chunk nothing can be
 *      trusted. Chunks are reused in scan order (the older rolling buffer
 *      from its start, then the current one), so everything up to the last
 *      such record is being overwritten: only the records after it are
 *      emitted (a second scan of the same copy), which keeps the snapshot a
 *      run of the newest records without a hole, and the others are counted
 *      as `discarded`. Records a writer appends after the copy are not in it
 *      (a zero header ends a chunk's data in the copy) and records already
 *      in it never change, so ordinary writing discards nothing; only a
 *      rolling buffer switch during the snapshot does. A false match needs a
 *      reused chunk whose new records repeat the old ones byte for byte,
 *      timestamps included. A chunk reused before it was even copied
 *      compares equal, though: so a switch since step 1 (the allocation
 *      word read again after the copy) makes every chunk of the reused
 *      buffer below the new allocation offset fail too; two switches (a
 *      writer faster than the copy) take the copy again, up to
 *      BUFFER_COPY_ATTEMPTS times.
 * The result: every record committed before step 1 that the buffer still
 * holds after step 4, and some committed during the copy. */
#ifndef FXTRACE_SNAPSHOT_BUFFER_COPY_H_
#define FXTRACE_SNAPSHOT_BUFFER_COPY_H_

#include <stddef.h>
#include <stdint.h>

#include "engine/buffer_scan.h"

typedef struct buffer_copy_stats {
  uint64_t records, bytes;   /* emitted */
  uint64_t discarded;        /* copied, but rewritten before the check (step 4) */
  uint64_t bad_records;      /* headers whose size did not fit (damage) */
  uint64_t records_dropped;  /* the buffer's drop counter (step 1) */
  uint64_t durable_missing;  /* durable bytes allocated but not committed in time */
  uint64_t copied_bytes;     /* the buffer's total size */
  uint64_t copy_ns, scan_ns; /* steps 2-3, step 4 */
} buffer_copy_stats_t;

/* How many times steps 1-3 are done when the writers switched rolling
 * buffers twice meanwhile (see buffer_copy.c); after the last, no rolling
 * record is trusted (all are discarded). */
#define BUFFER_COPY_ATTEMPTS 4

/* How long step 3 waits for a durable record being written, at most. */
#define BUFFER_COPY_DURABLE_WAIT_MS 100

/* Copies the live buffer `live` of `size` bytes (8-byte aligned, a oneshot or
 * circular buffer) into `scratch` (`size` bytes, 8-byte aligned) and emits
 * the checked records. Returns 0, the emitter's non-zero result, or -1 with
 * *why set if the buffer is unusable (header, mode). */
int buffer_copy__snapshot(const void* live, size_t size, void* scratch, buffer_emit_fn emit,
                          void* arg, buffer_copy_stats_t* stats, const char** why);

#endif /* FXTRACE_SNAPSHOT_BUFFER_COPY_H_ */
