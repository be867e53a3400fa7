/* Not part of the public API: reading a trace buffer (docs/buffer-layout.md)
 * back into FXT records, for whoever builds archives from it: the file-mode
 * provider at exit, the reader when it opens a buffer left by a crashed
 * process, and the trace manager.
 *
 * The buffer is untrusted: it may come from a process that crashed mid-write
 * or that misbehaves. The scan checks the header's geometry against the
 * engine's own formula, clamps every offset to its region, and emits only
 * whole records whose size fits; it never reads outside [buffer, buffer +
 * size). It does not look inside records (PROTOCOL.md §10.4). `buffer` must be
 * 8-byte aligned (the header is read with atomic 8-byte loads). */
#ifndef FXTRACE_ENGINE_BUFFER_SCAN_H_
#define FXTRACE_ENGINE_BUFFER_SCAN_H_

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "engine/buffer_header.h"
#include "fxt/fxt_format.h"

/* The header a writer puts at the start of a multi-chunk record until its
 * commit: a large record (type 15) of the reserved large type 15, `words`
 * long. Scans skip it without emitting it. */
#define TRACE_BUFFER_PROVISIONAL_LARGE_TYPE 15u
static inline uint64_t buffer__provisional_header(uint64_t words) {
  return UINT64_C(15) | (words & 0xffffffffu) << 4 |
         (uint64_t)TRACE_BUFFER_PROVISIONAL_LARGE_TYPE << 36;
}

/* A streaming writer's drop counter (docs/buffer-layout.md, "The drop
 * counter"): a 16-word record in the durable buffer whose header is a
 * provisional header (so that every scan skips it, never emitting it) with
 * TRACE_BUFFER_DROP_COUNTER_TAG in bits 40..63, and whose word
 * TRACE_BUFFER_DROP_COUNTER_WORD is the number of records that writer
 * dropped while its next rolling segment waited for a save, this trace.
 * That word's cache line lies inside the record (word 8 of 16), so no other
 * record shares it: its owner's plain stores contend with nobody. */
#define TRACE_BUFFER_DROP_COUNTER_TAG UINT64_C(0xd4c0c7)
enum { TRACE_BUFFER_DROP_COUNTER_WORDS = 16, TRACE_BUFFER_DROP_COUNTER_WORD = 8 };
static inline uint64_t buffer__drop_counter_header(void) {
  return buffer__provisional_header(TRACE_BUFFER_DROP_COUNTER_WORDS) | TRACE_BUFFER_DROP_COUNTER_TAG
                                                                           << 40;
}

/* Receives consecutive whole records; non-zero stops the scan. */
typedef int (*buffer_emit_fn)(void* arg, const void* data, size_t bytes);

/* Optional, for recovery (reader/recover.c): the length of the record at
 * `record`, of which `bytes` are in its region (its declared size, or less
 * if that runs past the region): its contents' length when they end before
 * (a size field too large, or cut), or 0 to go by the size field. The scan
 * then emits that many bytes and goes on after them; the record's header
 * still declares its own size, which the emitter may correct. */
typedef uint64_t (*buffer_measure_fn)(void* arg, const void* record, uint64_t bytes);

typedef struct buffer_scan_stats {
  uint64_t records;          /* records emitted */
  uint64_t bytes;            /* bytes emitted */
  uint64_t bad_records;      /* headers whose size did not fit (skipped) */
  uint64_t first_bad_offset; /* the first of those, from the buffer's start */
  bool stopped_cleanly;      /* the header's stopped flag */
  /* With a measure: zeroed record headers followed by whole records in
   * their chunk (damage), emitted as they are up to that record */
  uint64_t zeroed_runs, zeroed_bytes, first_zeroed_offset;
} buffer_scan_stats_t;

/* Copies and checks the header of a buffer of `size` bytes (size may exceed
 * total_size: file mode appends streamed data after the buffer). NULL if
 * usable, else why not. */
const char* buffer_scan__header(const void* buffer, size_t size, trace_buffer_header_t* out);

/* Emits the buffer's committed records in archive order: the durable buffer
 * from durable_from (a record boundary, e.g. what earlier saves sent), the
 * full rolling segments it still holds, oldest first (streaming: those the
 * header's saves_done does not count as saved), then the current one.
 * Returns 0, the emitter's non-zero result, or -1 if the header is unusable. */
int buffer_scan__records(const void* buffer, size_t size, uint64_t durable_from,
                         buffer_emit_fn emit, void* arg, buffer_scan_stats_t* stats);

/* The same, measuring every record with `measure` (may be NULL; same arg). */
int buffer_scan__records_measured(const void* buffer, size_t size, uint64_t durable_from,
                                  buffer_measure_fn measure, buffer_emit_fn emit, void* arg,
                                  buffer_scan_stats_t* stats);

/* The same without a measure, for a reader that knows which saves it took
 * (the manager): streaming segments of switch counts below saved_switches
 * are left out, whatever the header's saves_done says. */
int buffer_scan__records_unsaved(const void* buffer, size_t size, uint64_t durable_from,
                                 uint64_t saved_switches, buffer_emit_fn emit, void* arg,
                                 buffer_scan_stats_t* stats);

/* Streaming: what one save sends (PROTOCOL.md §9): the durable records in
 * [durable_from, durable_end), then the whole segment of switch count
 * wrapped_count (wrapped_count % segment_count). */
int buffer_scan__save(const void* buffer, size_t size, uint32_t wrapped_count,
                      uint64_t durable_from, uint64_t durable_end, buffer_emit_fn emit, void* arg,
                      buffer_scan_stats_t* stats);

/* The same, emitting runs instead of single records: each call covers one
 * or more whole records that follow each other in the buffer, as the scan
 * framed them (the emitter frames them again from its own copy: the
 * provider may write the buffer meanwhile). stats count records as above. */
int buffer_scan__save_runs(const void* buffer, size_t size, uint32_t wrapped_count,
                           uint64_t durable_from, uint64_t durable_end, buffer_emit_fn emit,
                           void* arg, buffer_scan_stats_t* stats);

/* For buffer_scan__save_prefixes: takes a copy of up to `max_bytes` at
 * `data` (the rest of a chunk), frames it and keeps the whole records it
 * finds there, in order, up to the first header that is zero, does not fit
 * or is one it does not take (buffer_scan__is_plain_record() says which it
 * may). Returns the bytes kept, with their number of records in *records
 * (0: nothing kept; the scan then goes record by record from `data`), or
 * a negative status, which stops the scan (-1 is also the scan's answer to
 * a count that is more than max_bytes or not a multiple of 8). */
typedef int64_t (*buffer_prefix_fn)(void* arg, const void* data, size_t max_bytes,
                                    uint64_t* records);

/* The same save, for an emitter that copies before it looks (the manager: a
 * provider may write its buffer meanwhile): at the start of each chunk of
 * the segment, `prefix` takes the chunk's records in one copy, framed only
 * there; the scan goes on record by record (emit, in runs, as above) from
 * where the prefix stopped, so what the prefix does not take is treated as
 * buffer_scan__save_runs treats it. One pass over the records instead of
 * the scan's and the emitter's. stats count records as above. */
int buffer_scan__save_prefixes(const void* buffer, size_t size, uint32_t wrapped_count,
                               uint64_t durable_from, uint64_t durable_end, buffer_emit_fn emit,
                               buffer_prefix_fn prefix, void* arg, buffer_scan_stats_t* stats);

/* Whether a prefix may take the record with this header whole: not zero,
 * not a provisional header (a record being written, skipped by scans), not
 * a metadata record (those go one by one, so that the emitter's checks see
 * them). `bytes` is the room left where it starts. */
static inline bool buffer_scan__is_plain_record(uint64_t header, uint64_t bytes) {
  uint64_t size = fxt_record_words(header) * 8;
  return header != 0 && size != 0 && size <= bytes && (header & 0xf) != 15 && (header & 0xf) != 0;
}

/* Streaming: why the header's allocation and streaming fields contradict
 * each other (damage: the scan then may read a rolling buffer the saves
 * already hold, or skip one they do not), or NULL. */
const char* buffer_scan__inconsistency(const trace_buffer_header_t* h);

/* The buffer's whole dropped-records count: the header's
 * num_records_dropped (h, from buffer_scan__header) plus every writer's drop
 * counter in the durable buffer, found by walking its records up to the
 * allocation point and, past a record never committed (a writer killed
 * mid-write), by their distinct header word. Saturates at
 * TRACE_BUFFER_MAX_DROPPED (the buffer is untrusted). */
uint64_t buffer_scan__dropped(const void* buffer, size_t size, const trace_buffer_header_t* h);

/* The archive prologue: magic record, provider-info record (id, name) and,
 * if records_dropped > 0, a buffer-overflow provider event. */
int buffer__emit_prologue(uint32_t provider_id, const char* name, uint64_t records_dropped,
                          buffer_emit_fn emit, void* arg);

#endif /* FXTRACE_ENGINE_BUFFER_SCAN_H_ */
