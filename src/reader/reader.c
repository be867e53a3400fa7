/* libtrace-reader: the record loop. It frames records by their header's size
 * field, keeps exactly one record in memory at a time, and hands each to the
 * decoder. Framing problems (size 0, input ending inside a record, a first
 * record that is not the magic number) are fatal, and name the offset of
 * the record at fault; problems inside a record skip just that record; a
 * record whose size field covers words its header does not describe is
 * returned with a warning, and those words are skipped (FXT lets a reader
 * skip what it does not understand). A raw trace buffer is read as the
 * segments of its archive (recover.h): the prologue as an archive, the
 * streamed saves and the buffer's records, which fxtrace's engine wrote, by
 * raw_frame.c, which reads on after a record's contents and skips damage. */
#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "engine/live_placeholder.h"
#include "fxt/fxt_format.h"
#include "reader/reader_internal.h"
#include "reader/recover.h"

#define MAX_DECODED_BYTES READER_MAX_DECODED_BYTES
_Static_assert(MAX_DECODED_BYTES >= FXT_MAX_RECORD_WORDS * 8, "every normal record is decoded");

static void set_error(trace_reader_t* r, uint64_t offset, const char* fmt, va_list ap) {
  vsnprintf(r->error_text, sizeof(r->error_text), fmt, ap);
  r->error.offset = offset;
  r->error.message = r->error_text;
}

int reader__fail(trace_reader_t* r, int result, uint64_t offset, const char* fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  set_error(r, offset, fmt, ap);
  va_end(ap);
  return result;
}

static int finish(trace_reader_t* r, int result) {
  r->final_result = result;
  return result;
}

int reader__fatal(trace_reader_t* r, uint64_t offset, const char* fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  set_error(r, offset, fmt, ap);
  va_end(ap);
  return finish(r, TRACE_READ_ERROR);
}

void reader__warn(trace_reader_t* r, uint64_t offset, const char* fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(r->warning_text, sizeof(r->warning_text), fmt, ap);
  va_end(ap);
  r->warned = true;
  r->warning.offset = offset;
  r->warning.message = r->warning_text;
}

static trace_reader_t* open_common(const trace_reader_options_t* options) {
  trace_reader_t* r = calloc(1, sizeof(*r));
  if (!r) return NULL;
  if (!providers__init(&r->providers, options ? options->table_memory_limit : 0)) {
    free(r);
    return NULL;
  }
  r->options.require_magic = options ? options->require_magic : true;
  r->in = &r->input;
  r->final_result = 1;
  r->error.message = "";
  return r;
}

trace_reader_t* trace_reader_open_fd(int fd, const trace_reader_options_t* options) {
  trace_reader_t* r = open_common(options);
  if (r) input__init_fd(&r->input, fd);
  return r;
}

trace_reader_t* trace_reader_open_file(FILE* file, const trace_reader_options_t* options) {
  trace_reader_t* r = open_common(options);
  if (r) input__init_file(&r->input, file);
  return r;
}

trace_reader_t* trace_reader_open_memory(const void* data, size_t size,
                                         const trace_reader_options_t* options) {
  trace_reader_t* r = open_common(options);
  if (r) input__init_memory(&r->input, data, size);
  return r;
}

void trace_reader_close(trace_reader_t* r) {
  if (!r) return;
  input__free(&r->input);
  recover__free(r->raw);
  providers__free(&r->providers);
  free(r->scratch);
  free(r->chain_raw);
  free(r->chain_data);
  free(r);
}

#define FATAL reader__fatal

/* Every string a record holds is a copy of bytes inside it plus a NUL: at
 * most the record's size plus one byte per string (fewer than 64). */
bool reader__reserve_scratch(trace_reader_t* r, size_t record_bytes) {
  size_t need = record_bytes + 64;
  if (r->scratch_capacity >= need) return true;
  char* grown = realloc(r->scratch, need);
  if (!grown) return false;
  r->scratch = grown;
  r->scratch_capacity = need;
  return true;
}

/* The input starts with a raw trace buffer: check its header, read the
 * buffer, and go on with the segments of the archive it stands for
 * (recover.h). 1, or the fatal result. */
static int recover(trace_reader_t* r) {
  input_t* in = &r->input;
  bool truncated;
  const char* why = recover__open(in, &r->raw, &truncated);
  if (why) {
    if (in->read_errno) return FATAL(r, in->offset, "read error: %s", strerror(in->read_errno));
    if (in->damage) {
      r->truncated = in->damage_truncated;
      return FATAL(r, in->offset, "%s", in->damage);
    }
    r->truncated = truncated;
    return FATAL(r, 0,
                 "a raw trace buffer (the file of a traced program that did not finish) that "
                 "cannot be recovered: %s",
                 why);
  }
  r->recovered = true;
  r->seen_first = false;
  r->in = recover__next_segment(r->raw, in, 0, r->stats.records);
  return 1;
}

/* The input ended (or failed) with `have` of `need` bytes of the record at
 * `offset`: fatal, naming that record. */
static int cut_short(trace_reader_t* r, uint64_t offset, uint64_t header, size_t have,
                     uint64_t need) {
  input_t* in = r->in;
  if (in->read_errno) return FATAL(r, offset, "read error: %s", strerror(in->read_errno));
  if (in->damage) { /* compressed input: offsets are in the decompressed archive */
    r->truncated = in->damage_truncated;
    return FATAL(r, offset + (uint64_t)have, "%s", in->damage);
  }
  r->truncated = true;
  if (have < 8)
    return FATAL(r, offset,
                 "truncated archive: the input ends inside a record header (%zu trailing bytes)",
                 have);
  return FATAL(r, offset,
               "truncated archive: the %s record here needs %llu bytes but the input ends "
               "after %zu",
               trace_record_type_name((uint32_t)FXT_GET(header, 0, 3)), (unsigned long long)need,
               have);
}

/* The current segment has no more bytes: true when it ended cleanly (at its
 * limit, or at the end of the input with no read error or damage). */
static bool ended_cleanly(const input_t* in) {
  return (in->limit != UINT64_MAX && in->offset >= in->limit) || (!in->read_errno && !in->damage);
}

/* The next record of an archive (or of a raw image's prologue), framed by
 * its size field as FXT says; `have` (>= 8) bytes are at hand. */
static int next_in_archive(trace_reader_t* r, trace_record_t* record, uint64_t header) {
  input_t* in = r->in;
  uint64_t offset = in->offset;
  uint64_t words = fxt_record_words(header);
  if (words == 0)
    return FATAL(r, offset, "corrupt record header 0x%016llx: size 0", (unsigned long long)header);
  uint64_t bytes = words * 8u;
  if (bytes > MAX_DECODED_BYTES) {
    if (!input__skip(in, bytes))
      return cut_short(r, offset, header, (size_t)(in->offset - offset), bytes);
    r->stats.bytes_read += bytes;
    r->stats.records_skipped++;
    return reader__fail(r, TRACE_READ_SKIPPED, offset,
                        "%s record of %llu bytes is larger than the %zu bytes the reader "
                        "decodes; skipped",
                        trace_record_type_name((uint32_t)FXT_GET(header, 0, 3)),
                        (unsigned long long)bytes, (size_t)MAX_DECODED_BYTES);
  }
  ptrdiff_t have = input__ensure(in, (size_t)bytes);
  if (have < 0) return FATAL(r, offset, "out of memory");
  if ((uint64_t)have < bytes) return cut_short(r, offset, header, (size_t)have, bytes);
  if (!reader__reserve_scratch(r, (size_t)bytes)) return FATAL(r, offset, "out of memory");
  const unsigned char* data = in->buf + in->start;
  decode_extent_t extent;
  int rc = decode__record(r, data, (size_t)words, offset, DECODE_LENIENT, record, &extent);
  input__consume(in, (size_t)bytes);
  r->last_bytes = data;
  r->last_size = (size_t)bytes;
  r->stats.bytes_read += bytes;
  if (rc == TRACE_READ_ERROR) return finish(r, rc);
  if (rc != TRACE_READ_RECORD) {
    r->stats.records_skipped++;
    return rc;
  }
  r->stats.records++;
  uint64_t past = words - extent.content_words;
  if (past + extent.arg_extra_words > 0) {
    const char* type = trace_record_type_name(record->type);
    if (extent.arg_extra_words == 0)
      reader__warn(r, offset,
                   "the %s record's size field says %llu words but its contents end after "
                   "%zu: %llu words skipped (a damaged size field, or fields this reader does "
                   "not know)",
                   type, (unsigned long long)words, extent.content_words, (unsigned long long)past);
    else
      reader__warn(r, offset,
                   "the %s record holds %llu words past what its header describes (%zu of "
                   "them inside its arguments): skipped (damaged size fields, or fields this "
                   "reader does not know)",
                   type, (unsigned long long)(past + extent.arg_extra_words),
                   extent.arg_extra_words);
    if (past > 0) {
      r->after_oversized = true;
      r->oversized_offset = offset;
      r->oversized_extra = past;
      r->oversized_type = record->type;
    }
  }
  return rc;
}

/* A record that could not be used right after one whose size field covers
 * words past its contents: say so, since a size field too large makes the
 * next frame start inside the records it swallowed. */
static void add_oversized_hint(trace_reader_t* r) {
  size_t n = strlen(r->error_text);
  snprintf(r->error_text + n, sizeof(r->error_text) - n,
           "; the %s record at offset %llu before it has a size field %llu words past its "
           "contents (damaged?)",
           trace_record_type_name(r->oversized_type), (unsigned long long)r->oversized_offset,
           (unsigned long long)r->oversized_extra);
}

int reader__next_record(trace_reader_t* r, trace_record_t* record) {
  if (r->final_result != 1) return r->final_result;
  r->last_size = 0;
  r->warned = false;
  if (r->pending) { /* found after a stretch of damage, which was reported first */
    r->pending = false;
    *record = r->pending_record;
    input__consume(r->in, r->pending_size);
    r->last_bytes = r->pending_bytes;
    r->last_size = r->pending_size;
    r->stats.bytes_read += r->pending_size;
    r->stats.records++;
    return TRACE_READ_RECORD;
  }
  for (;;) {
    input_t* in = r->in;
    if (r->raw && recover__segment_name(r->raw)) { /* the saves, the buffer's records */
      int rc = raw_frame__next(r, record);
      if (rc != 0) return rc;
    } else {
      ptrdiff_t have = input__ensure(in, 8);
      if (have < 0) return FATAL(r, in->offset, "out of memory");
      if (have > 0 || !ended_cleanly(in)) {
        if (have < 8) return cut_short(r, in->offset, 0, (size_t)have, 8);
        uint64_t header;
        memcpy(&header, in->buf + in->start, sizeof(header));
        if (!r->seen_first && live_placeholder__is(in->buf + in->start, 8))
          return FATAL(r, 0,
                       "the placeholder of an unfinished file-mode trace: its records are in the "
                       "live buffer it names ('trace recover FILE -o OUT.fxt' rebuilds the "
                       "archive)");
        if (!r->seen_first && !r->recovered && recover__is_raw_buffer(in->buf + in->start, 8)) {
          r->raw_seen = true;
          if (recover(r) != 1) return r->final_result;
          continue;
        }
        if (!r->seen_first) {
          r->seen_first = true;
          if (r->options.require_magic && header != FXT_MAGIC_RECORD)
            return FATAL(r, 0,
                         "not an FXT archive: the first word is 0x%016llx, not the magic-number "
                         "record 0x%016llx",
                         (unsigned long long)header, (unsigned long long)FXT_MAGIC_RECORD);
        }
        bool after_oversized = r->after_oversized;
        r->after_oversized = false;
        int rc = next_in_archive(r, record, header);
        if (rc != TRACE_READ_RECORD && after_oversized) add_oversized_hint(r);
        return rc;
      }
      if (!r->raw) {
        if (!r->seen_first && r->options.require_magic)
          return FATAL(r, 0, "empty input: not an FXT archive");
        return finish(r, TRACE_READ_END);
      }
    }
    input_t* next = recover__next_segment(r->raw, &r->input, r->in->offset, r->stats.records);
    if (!next) return finish(r, TRACE_READ_END);
    r->in = next;
  }
}

/* A large blob cut into a chain of records (fxt/fxt_blob_chain.h) comes
 * back as one record holding the whole blob. */
int trace_reader_next(trace_reader_t* r, trace_record_t* record) {
  int rc = reader__next_record(r, record);
  if (rc == TRACE_READ_RECORD && blob_chain__is_head(record)) rc = blob_chain__assemble(r, record);
  return rc;
}

bool reader__record_bytes(const trace_reader_t* r, const unsigned char** bytes, size_t* size) {
  if (r->last_size == 0) return false;
  *bytes = r->last_bytes;
  *size = r->last_size;
  return true;
}

trace_reader_error_t trace_reader_error(const trace_reader_t* r) { return r->error; }

trace_reader_stats_t trace_reader_stats(const trace_reader_t* r) { return r->stats; }

bool trace_reader_truncated(const trace_reader_t* r) { return r->truncated; }

bool trace_reader_recovered(const trace_reader_t* r) { return r->recovered; }

bool trace_reader_warning(const trace_reader_t* r, trace_reader_error_t* warning) {
  if (!r->warned) return false;
  if (warning) *warning = r->warning;
  return true;
}
