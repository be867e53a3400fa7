/* Framing a raw image's streamed saves and buffer records (recover.h), which
 * fxtrace's own engine wrote: it writes every record with its exact size
 * and only records the reader knows, so anything else there is damage (a
 * crash, a disk, a bit flip), and the archive's rule of trusting the size
 * field would let one damaged word swallow or garble what follows it:
 *
 *  - a record whose size field covers words past its contents is taken with
 *    a warning, and the next record is framed right after its contents
 *    (where, since the engine wrote it, the record it swallowed starts);
 *  - a zero word, a size of 0, a record that does not fit in the segment or
 *    is larger than the engine writes, or one the decoder cannot take
 *    (DECODE_TRIM: it changes no state then) starts a stretch of damaged
 *    data, skipped one word at a time until a record checks in full
 *    (DECODE_STRICT: every word described, none past) or the segment ends;
 *    the stretch is reported once, as one skipped record, with its offset,
 *    its length and what its first word was.
 *
 * So every record returned here decodes cleanly, with the same reader state,
 * from the archive made of the records returned (trace recover writes it). */
#include <stdio.h>
#include <string.h>

#include "fxt/fxt_format.h"
#include "reader/reader_internal.h"

/* The stretch of damage being skipped ends at `end` (where a record checks,
 * or the segment ends): one skipped result. */
static int end_run(trace_reader_t* r, uint64_t end, bool at_segment_end) {
  r->in_run = false;
  uint64_t n = end - r->run_offset;
  r->damaged_runs++;
  r->damaged_bytes += n;
  r->stats.records_skipped++;
  if (at_segment_end && r->run_past_end) /* how a file cut inside a save looks */
    return reader__fail(r, TRACE_READ_SKIPPED, r->run_offset,
                        "the %s end inside a record (cut short, or damaged): its %llu bytes "
                        "skipped (%s)",
                        recover__segment_name(r->raw), (unsigned long long)n, r->run_reason);
  return reader__fail(r, TRACE_READ_SKIPPED, r->run_offset,
                      "damaged data in the %s: %llu bytes skipped up to %s (the first word: %s)",
                      recover__segment_name(r->raw), (unsigned long long)n,
                      at_segment_end ? "their end" : "the next record that checks", r->run_reason);
}

/* The segment has fewer bytes than a record needs: true (and *rc the fatal
 * result) when the input failed before its limit (a read error, damaged
 * compressed data); false when the segment simply ends there. */
static bool input_failed(trace_reader_t* r, uint64_t offset, size_t have, int* rc) {
  input_t* in = r->in;
  bool at_limit = in->limit != UINT64_MAX && in->offset + have >= in->limit;
  if (at_limit || (!in->read_errno && !in->damage)) return false;
  if (in->read_errno) {
    *rc = reader__fatal(r, offset, "read error in the %s: %s", recover__segment_name(r->raw),
                        strerror(in->read_errno));
  } else {
    r->truncated = in->damage_truncated;
    *rc = reader__fatal(r, offset + have, "%s", in->damage);
  }
  return true;
}

int raw_frame__next(trace_reader_t* r, trace_record_t* record) {
  input_t* in = r->in;
  char why[sizeof(r->run_reason)];
  for (;;) {
    uint64_t offset = in->offset;
    ptrdiff_t have = input__ensure(in, 8);
    if (have < 0) return reader__fatal(r, offset, "out of memory");
    int rc;
    if (have < 8) { /* the segment ends, maybe inside a word */
      if (input_failed(r, offset, (size_t)have, &rc)) return rc;
      if (have > 0) {
        if (!r->in_run) {
          r->in_run = true;
          r->run_offset = offset;
          r->run_past_end = true;
          snprintf(r->run_reason, sizeof(r->run_reason), "%zu bytes, less than a word", have);
        }
        input__consume(in, (size_t)have);
        r->stats.bytes_read += (uint64_t)have;
      }
      return r->in_run ? end_run(r, in->offset, true) : 0;
    }
    uint64_t header;
    memcpy(&header, in->buf + in->start, sizeof(header));
    uint64_t words = fxt_record_words(header);
    uint64_t bytes = words * 8;
    why[0] = '\0';
    const char* type = trace_record_type_name((uint32_t)FXT_GET(header, 0, 3));
    bool past_end = false;
    if (header == 0)
      snprintf(why, sizeof(why), "zero");
    else if (words == 0)
      snprintf(why, sizeof(why), "a record header of size 0 (0x%016llx)",
               (unsigned long long)header);
    else if (bytes > READER_MAX_DECODED_BYTES)
      snprintf(why, sizeof(why), "a record header (%s, %llu bytes) larger than the engine writes",
               type, (unsigned long long)bytes);
    if (!why[0]) {
      have = input__ensure(in, (size_t)bytes);
      if (have < 0) return reader__fatal(r, offset, "out of memory");
      if ((uint64_t)have < bytes) {
        if (input_failed(r, offset, (size_t)have, &rc)) return rc;
        snprintf(why, sizeof(why), "a record header (%s, %llu bytes) past the end of the %s", type,
                 (unsigned long long)bytes, recover__segment_name(r->raw));
        past_end = true;
      }
    }
    if (!why[0]) {
      if (!reader__reserve_scratch(r, (size_t)bytes))
        return reader__fatal(r, offset, "out of memory");
      const unsigned char* data = in->buf + in->start;
      decode_extent_t extent;
      rc = decode__record(r, data, (size_t)words, offset, r->in_run ? DECODE_STRICT : DECODE_TRIM,
                          record, &extent);
      if (rc == TRACE_READ_ERROR) { /* out of memory: the decoder said so */
        r->final_result = TRACE_READ_ERROR;
        return rc;
      }
      if (rc == TRACE_READ_RECORD) {
        size_t used = extent.content_words * 8;
        if (r->in_run) { /* reported after the stretch before it */
          r->pending = true;
          r->pending_record = *record;
          r->pending_bytes = data;
          r->pending_size = used;
          return end_run(r, offset, false);
        }
        if (used < bytes) {
          r->trimmed_records++;
          reader__warn(r, offset,
                       "the %s record's size field says %llu words but its contents end after "
                       "%zu: a damaged size field; read on after its contents",
                       trace_record_type_name(record->type), (unsigned long long)words,
                       extent.content_words);
        }
        input__consume(in, used);
        r->last_bytes = data;
        r->last_size = used;
        r->stats.bytes_read += used;
        r->stats.records++;
        return TRACE_READ_RECORD;
      }
      snprintf(why, sizeof(why), "a record that does not check (%s): %.120s", type, r->error_text);
    }
    if (!r->in_run) {
      r->in_run = true;
      r->run_offset = offset;
      r->run_past_end = past_end;
      memcpy(r->run_reason, why, sizeof(why));
    }
    input__consume(in, 8);
    r->stats.bytes_read += 8;
  }
}
