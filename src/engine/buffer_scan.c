/* Buffer → FXT records (see buffer_scan.h). */
#include "engine/buffer_scan.h"

#include <stdbool.h>
#include <string.h>

#include "fxt/fxt_encode.h"

/* The header is shared with writers that keep allocating while a streaming
 * save reads it (and, for the manager, with another process): read it word
 * by word with atomic loads, each field once. */
static void load_header(const void* buffer, trace_buffer_header_t* out) {
  const uint64_t* in = buffer;
  uint64_t words[sizeof(*out) / 8];
  for (size_t i = 0; i < sizeof(*out) / 8; i++)
    words[i] = __atomic_load_n(&in[i], __ATOMIC_ACQUIRE);
  memcpy(out, words, sizeof(*out));
}

const char* buffer_scan__header(const void* buffer, size_t size, trace_buffer_header_t* out) {
  if (size < sizeof(*out)) return "shorter than a buffer header";
  load_header(buffer, out);
  /* the drop counter is a live atomic the provider adds to (another process,
   * untrusted): clamped so that no reader meets a negative signed count */
  if (out->num_records_dropped > TRACE_BUFFER_MAX_DROPPED)
    out->num_records_dropped = TRACE_BUFFER_MAX_DROPPED;
  const trace_buffer_header_t* h = out;
  if (h->magic != TRACE_BUFFER_HEADER_MAGIC) return "not an fxtrace buffer (bad magic)";
  if (h->version != TRACE_BUFFER_HEADER_VERSION) return "unknown buffer version";
  if (h->total_size > size) return "buffer is shorter than its header says (truncated file?)";
  trace_buffer_geometry_t g;
  if (buffer__compute_geometry(h->buffering_mode, h->total_size, &g) != 0 ||
      g.durable_size != h->durable_buffer_size || g.rolling_size != h->rolling_buffer_size ||
      g.chunk_size != h->chunk_size)
    return "buffer geometry does not match its size and mode";
  if (h->segment_count != g.segments)
    return "buffer segment count does not match its size and mode";
  return NULL;
}

/* What scan_region reports to. */
typedef struct scan_sink {
  buffer_measure_fn measure; /* may be NULL */
  buffer_emit_fn emit;
  void* arg;
  buffer_scan_stats_t* stats;
  bool runs;               /* emit runs of whole consecutive records, not one at a time */
  buffer_prefix_fn prefix; /* may be NULL; only with runs */
} scan_sink_t;

/* With a measure, after a zero header at `pos` in a chunk ending at
 * `chunk_end`: the first word after it that starts a record the measure
 * takes whole (every word described), or 0 if none. A chunk is cleared
 * before it is reused and its owner commits records in order, so after the
 * legitimate end of its data (a zero header) come only zeros and at most
 * the body of the one record its writer died writing: a whole record after
 * it means the zero header is damage, not an end. */
static uint64_t resync(const uint8_t* base, uint64_t pos, uint64_t chunk_end,
                       const scan_sink_t* sink) {
  for (uint64_t p = pos + 8; p + 8 <= chunk_end; p += 8) {
    uint64_t header;
    memcpy(&header, base + p, 8);
    uint64_t bytes = fxt_record_words(header) * 8;
    if (header == 0 || bytes == 0 || bytes > chunk_end - p || (header & 0xf) == 15) continue;
    if (sink->measure(sink->arg, base + p, bytes) == bytes) return p;
  }
  return 0;
}

/* Scans [base, base + extent), `base_offset` bytes into the buffer. chunk ==
 * 0: one linear run that ends at the first zero header (the durable
 * buffer). Otherwise chunk by chunk: a zero header or a record that does not
 * fit ends that chunk's data; with a measure, a zero header followed by a
 * whole record in its chunk (resync) is damage instead: the bytes from it up
 * to that record are emitted as they are, starting with the zero word, so
 * that the reader frames them as a stretch of damaged data and reports it
 * (they count in stats->zeroed_runs, zeroed_bytes, not in records), and the
 * scan goes on at that record. */
static int scan_region(const uint8_t* base, uint64_t base_offset, uint64_t from, uint64_t extent,
                       uint64_t chunk, const scan_sink_t* sink) {
  buffer_scan_stats_t* stats = sink->stats;
  uint64_t pos = from;
  /* sink->runs: [run, pos) holds whole records not emitted yet; anything
   * that breaks the sequence (a skipped record, a gap) emits it first */
  uint64_t run = pos;
#define FLUSH_RUN()                                                            \
  do {                                                                         \
    if (pos > run) {                                                           \
      int run_status = sink->emit(sink->arg, base + run, (size_t)(pos - run)); \
      if (run_status != 0) return run_status;                                  \
    }                                                                          \
  } while (0)
  while (pos + 8 <= extent) {
    if (sink->prefix && chunk != 0 && pos % chunk == 0) {
      /* a chunk's records in one copy, framed there (buffer_scan__save_prefixes);
       * a run that reached the chunk's end goes first */
      FLUSH_RUN();
      run = pos;
      uint64_t chunk_end = pos + chunk < extent ? pos + chunk : extent;
      uint64_t records = 0;
      int64_t kept = sink->prefix(sink->arg, base + pos, (size_t)(chunk_end - pos), &records);
      /* what a prefix kept is in the output: one that claims more than it
       * was given, or a ragged length, cannot be gone over again */
      if (kept < 0 || (uint64_t)kept > chunk_end - pos || kept % 8 != 0) return -1;
      if (kept > 0) {
        stats->records += records;
        stats->bytes += (uint64_t)kept;
        pos += (uint64_t)kept;
        run = pos;
        continue;
      }
    }
    uint64_t header;
    memcpy(&header, base + pos, 8);
    uint64_t bytes = fxt_record_words(header) * 8;
    bool provisional =
        (header & 0xf) == 15 && ((header >> 36) & 0xf) == TRACE_BUFFER_PROVISIONAL_LARGE_TYPE;
    if (sink->measure && header != 0 && bytes != 0 && !provisional) {
      uint64_t room = extent - pos;
      uint64_t measured = sink->measure(sink->arg, base + pos, bytes < room ? bytes : room);
      if (measured != 0 && measured <= bytes && measured <= room) bytes = measured;
    }
    uint64_t next;
    if (header == 0 && chunk != 0 && sink->measure &&
        (next = resync(base, pos,
                       (pos / chunk + 1) * chunk < extent ? (pos / chunk + 1) * chunk : extent,
                       sink)) != 0) {
      if (sink->runs) FLUSH_RUN(); /* in order (no caller combines the two today) */
      int status = sink->emit(sink->arg, base + pos, (size_t)(next - pos));
      if (status != 0) return status;
      if (stats->zeroed_runs++ == 0) stats->first_zeroed_offset = base_offset + pos;
      stats->zeroed_bytes += next - pos;
      pos = next;
      run = pos;
      continue;
    }
    if (header == 0 || bytes == 0 || bytes > extent - pos) {
      if (header != 0 && stats->bad_records++ == 0) stats->first_bad_offset = base_offset + pos;
      if (sink->runs) FLUSH_RUN();
      if (chunk == 0) {
        run = pos;
        break;
      }
      pos = (pos / chunk + 1) * chunk; /* on to the next chunk */
      run = pos;
      continue;
    }
    if (provisional) { /* a record never committed: skip its whole run */
      if (sink->runs) FLUSH_RUN();
      pos += bytes;
      run = pos;
      continue;
    }
    if (!sink->runs) {
      int status = sink->emit(sink->arg, base + pos, (size_t)bytes);
      if (status != 0) return status;
    }
    stats->records++;
    stats->bytes += bytes;
    pos += bytes;
  }
  if (sink->runs) FLUSH_RUN();
#undef FLUSH_RUN
  return 0;
}

int buffer_scan__records(const void* buffer, size_t size, uint64_t durable_from,
                         buffer_emit_fn emit, void* arg, buffer_scan_stats_t* stats) {
  return buffer_scan__records_measured(buffer, size, durable_from, NULL, emit, arg, stats);
}

/* Where the segment of switch count `sw` starts. */
static const uint8_t* segment_base(const uint8_t* base, const trace_buffer_header_t* h,
                                   uint64_t sw) {
  return base + sizeof(*h) + h->durable_buffer_size +
         (sw % h->segment_count) * h->rolling_buffer_size;
}

/* saved_from: the first switch count whose segment is not saved yet, or
 * UINT64_MAX to take the header's saves_done. */
static int scan_records(const void* buffer, size_t size, uint64_t durable_from, uint64_t saved_from,
                        buffer_measure_fn measure, buffer_emit_fn emit, void* arg,
                        buffer_scan_stats_t* stats) {
  trace_buffer_header_t h;
  buffer_scan_stats_t local = {0};
  if (!stats) stats = &local;
  memset(stats, 0, sizeof(*stats));
  scan_sink_t sink = {measure, emit, arg, stats, false, NULL};
  if (buffer_scan__header(buffer, size, &h) != NULL) return -1;
  stats->stopped_cleanly = (h.flags & TRACE_BUFFER_FLAG_STOPPED) != 0;
  const uint8_t* base = buffer;
  const uint8_t* durable = base + sizeof(h);
  uint64_t sw = h.rolling_alloc >> TRACE_BUFFER_ALLOC_OFFSET_BITS;
  uint64_t offset = h.rolling_alloc & TRACE_BUFFER_ALLOC_OFFSET_MASK;
  if (offset > h.rolling_buffer_size) offset = h.rolling_buffer_size;
  int status;
  if (h.buffering_mode == TRACE_BUFFERING_MODE_ONESHOT) {
    const uint8_t* r = segment_base(base, &h, 0);
    return scan_region(r, (uint64_t)(r - base), 0, offset, h.chunk_size, &sink);
  }
  uint64_t durable_end = h.durable_alloc;
  if (stats->stopped_cleanly || durable_end == 0) durable_end = h.durable_data_end;
  if (durable_end > h.durable_buffer_size) durable_end = h.durable_buffer_size;
  if (durable_from % 8 == 0 && durable_from < durable_end) {
    status = scan_region(durable, sizeof(h), durable_from, durable_end, 0, &sink);
    if (status) return status;
  }
  /* The full segments the buffer still holds, oldest first: the last
   * segment_count - 1 switch counts before the current one. Circular: all of
   * them (overwriting is the mode's point; their marks may lag, written by
   * switch winners preempted on the way). Streaming: those not saved yet. */
  uint64_t first = sw >= h.segment_count - 1u ? sw - (h.segment_count - 1u) : 0;
  if (h.buffering_mode == TRACE_BUFFERING_MODE_STREAMING) {
    uint64_t saved = saved_from == UINT64_MAX ? h.saves_done : saved_from;
    if (saved > first) first = saved;
  }
  for (uint64_t k = first; k < sw; k++) {
    const uint8_t* r = segment_base(base, &h, k);
    status = scan_region(r, (uint64_t)(r - base), 0, h.rolling_buffer_size, h.chunk_size, &sink);
    if (status) return status;
  }
  const uint8_t* r = segment_base(base, &h, sw);
  return scan_region(r, (uint64_t)(r - base), 0, offset, h.chunk_size, &sink);
}

int buffer_scan__records_measured(const void* buffer, size_t size, uint64_t durable_from,
                                  buffer_measure_fn measure, buffer_emit_fn emit, void* arg,
                                  buffer_scan_stats_t* stats) {
  return scan_records(buffer, size, durable_from, UINT64_MAX, measure, emit, arg, stats);
}

int buffer_scan__records_unsaved(const void* buffer, size_t size, uint64_t durable_from,
                                 uint64_t saved_switches, buffer_emit_fn emit, void* arg,
                                 buffer_scan_stats_t* stats) {
  if (saved_switches == UINT64_MAX) saved_switches--; /* never the header's */
  return scan_records(buffer, size, durable_from, saved_switches, NULL, emit, arg, stats);
}

const char* buffer_scan__inconsistency(const trace_buffer_header_t* h) {
  if (h->buffering_mode != TRACE_BUFFERING_MODE_STREAMING) return NULL;
  uint64_t sw = h->rolling_alloc >> TRACE_BUFFER_ALLOC_OFFSET_BITS;
  uint64_t offset = h->rolling_alloc & TRACE_BUFFER_ALLOC_OFFSET_MASK;
  /* allocation goes on while any room is left, by whole chunks: it stops
   * at most one large record's run past the end */
  if (offset > h->rolling_buffer_size + (UINT64_C(1) << 32) * 8 || offset % h->chunk_size)
    return "rolling_alloc's offset is impossible";
  /* switched() stores wrapped_count right after the switch's CAS */
  uint64_t wrapped = h->wrapped_count & 0xffffff;
  if (wrapped != sw && wrapped + 1 != sw)
    return "rolling_alloc's switches differ from wrapped_count";
  /* saves go in switch order, each after its switch, and a writer never
   * switches into a segment not saved yet */
  if (h->saves_done > sw) return "saves_done is past the switch count";
  if (sw - h->saves_done > h->segment_count - 1u)
    return "more unsaved segments than the buffer has (saves_done too small)";
  for (int i = 0; i < 2; i++)
    if (h->rolling_data_end[i] > h->rolling_buffer_size || h->rolling_data_end[i] % 8)
      return "a rolling_data_end is out of range";
  /* With more than two segments the switch winners' marks are not ordered
   * among themselves (a switch need not wait for the previous save), and
   * no scan goes by them: only their range is checked. With two, a switch
   * waits for the previous save, so: a switch marks the previous segment
   * full and the new one 0; a save sets the previous one back to 0. */
  if (h->segment_count != 2) return NULL;
  uint64_t older = sw > 0 ? h->rolling_data_end[(sw - 1) & 1] : 0;
  if (older != 0 && older != h->rolling_buffer_size)
    return "the older rolling buffer's rolling_data_end is neither 0 nor full";
  if (sw > 0 && h->rolling_data_end[sw & 1] != 0 && !(h->flags & TRACE_BUFFER_FLAG_STOPPED))
    return "the current rolling buffer's rolling_data_end is not 0";
  return NULL;
}

/* Adds `v` to `*total`, saturating at TRACE_BUFFER_MAX_DROPPED. */
static void add_dropped(uint64_t* total, uint64_t v) {
  *total = v > TRACE_BUFFER_MAX_DROPPED - *total ? TRACE_BUFFER_MAX_DROPPED : *total + v;
}

uint64_t buffer_scan__dropped(const void* buffer, size_t size, const trace_buffer_header_t* h) {
  uint64_t total = h->num_records_dropped;
  if (total > TRACE_BUFFER_MAX_DROPPED) total = TRACE_BUFFER_MAX_DROPPED;
  /* counters are in the durable buffer, which only streaming and circular
   * buffers have (writers take them in streaming only) */
  if (h->buffering_mode == TRACE_BUFFERING_MODE_ONESHOT || h->durable_buffer_size == 0 ||
      sizeof(*h) + h->durable_buffer_size > size)
    return total;
  const uint8_t* durable = (const uint8_t*)buffer + sizeof(*h);
  /* counters are reserved below durable_alloc (never past the durable
   * buffer's end) and committed at once */
  uint64_t end = h->durable_alloc;
  if (end > h->durable_buffer_size) end = h->durable_buffer_size;
  const uint64_t tag = buffer__drop_counter_header();
  const uint64_t counter_bytes = TRACE_BUFFER_DROP_COUNTER_WORDS * 8;
  uint64_t pos = 0;
  bool framed = true; /* pos is a record boundary */
  while (pos + 8 <= end) {
    uint64_t header = __atomic_load_n((const uint64_t*)(durable + pos), __ATOMIC_ACQUIRE);
    if (header == tag && counter_bytes <= end - pos) {
      add_dropped(&total,
                  __atomic_load_n((const uint64_t*)(durable + pos) + TRACE_BUFFER_DROP_COUNTER_WORD,
                                  __ATOMIC_RELAXED));
      pos += counter_bytes;
      continue;
    }
    uint64_t bytes = fxt_record_words(header) * 8;
    if (framed && header != 0 && bytes != 0 && bytes <= end - pos) {
      pos += bytes;
      continue;
    }
    /* a record reserved but never committed (its header is 0), or damage:
     * the framing is lost from here; counters are still found by their
     * header word (a record's body could hold that word only by design) */
    framed = false;
    pos += 8;
  }
  return total;
}

int buffer__emit_prologue(uint32_t provider_id, const char* name, uint64_t records_dropped,
                          buffer_emit_fn emit, void* arg) {
  uint64_t words[2 + 32 + 1];
  size_t length = name ? strnlen(name, FXT_MAX_PROVIDER_NAME_LENGTH) : 0;
  uint64_t* p = fxt_write_magic_record(words);
  p = fxt_write_provider_info_record(p, provider_id, name, length);
  if (records_dropped > 0)
    p = fxt_write_provider_event_record(p, provider_id, FXT_PROVIDER_EVENT_BUFFER_OVERFLOW);
  return emit(arg, words, (size_t)(p - words) * 8);
}

static int save(const void* buffer, size_t size, uint32_t wrapped_count, uint64_t durable_from,
                uint64_t durable_end, buffer_emit_fn emit, buffer_prefix_fn prefix, void* arg,
                buffer_scan_stats_t* stats, bool runs) {
  trace_buffer_header_t h;
  buffer_scan_stats_t local = {0};
  if (!stats) stats = &local;
  memset(stats, 0, sizeof(*stats));
  if (buffer_scan__header(buffer, size, &h) != NULL ||
      h.buffering_mode != TRACE_BUFFERING_MODE_STREAMING)
    return -1;
  scan_sink_t sink = {NULL, emit, arg, stats, runs, prefix};
  const uint8_t* base = buffer;
  const uint8_t* durable = base + sizeof(h);
  const uint8_t* rolling = segment_base(base, &h, wrapped_count);
  if (durable_end > h.durable_buffer_size) durable_end = h.durable_buffer_size;
  if (durable_from % 8 == 0 && durable_from < durable_end) {
    int status = scan_region(durable, sizeof(h), durable_from, durable_end, 0, &sink);
    if (status) return status;
  }
  /* a saved segment is full: the engine hands it over only after the
   * switch away from it (its data-end mark may be the next one's by now) */
  return scan_region(rolling, (uint64_t)(rolling - base), 0, h.rolling_buffer_size, h.chunk_size,
                     &sink);
}

int buffer_scan__save(const void* buffer, size_t size, uint32_t wrapped_count,
                      uint64_t durable_from, uint64_t durable_end, buffer_emit_fn emit, void* arg,
                      buffer_scan_stats_t* stats) {
  return save(buffer, size, wrapped_count, durable_from, durable_end, emit, NULL, arg, stats,
              false);
}

int buffer_scan__save_runs(const void* buffer, size_t size, uint32_t wrapped_count,
                           uint64_t durable_from, uint64_t durable_end, buffer_emit_fn emit,
                           void* arg, buffer_scan_stats_t* stats) {
  return save(buffer, size, wrapped_count, durable_from, durable_end, emit, NULL, arg, stats, true);
}

int buffer_scan__save_prefixes(const void* buffer, size_t size, uint32_t wrapped_count,
                               uint64_t durable_from, uint64_t durable_end, buffer_emit_fn emit,
                               buffer_prefix_fn prefix, void* arg, buffer_scan_stats_t* stats) {
  return save(buffer, size, wrapped_count, durable_from, durable_end, emit, prefix, arg, stats,
              true);
}
