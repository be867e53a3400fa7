/* libtrace-reader: the record loop. It frames records by their header's size
 * field, keeps exactly one record in memory at a time, and hands each to the
 * decoder. Framing problems (size 0, input ending inside a record, a first
 * record that is not the magic number) are fatal, and name the offset of
 * the record at fault; problems inside a record skip just that record. A
 * raw trace buffer is read as the segments of its archive (recover.h), each
 * framed in turn. */
#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "engine/live_placeholder.h"
#include "fxt/fxt_format.h"
#include "reader/reader_internal.h"
#include "reader/recover.h"
#include "trace-engine/types.h"

/* The largest record decoded: the engine's largest large record, which is
 * also above any normal record. Larger records are skipped by their size. */
#define MAX_DECODED_BYTES TRACE_ENCODED_INLINE_LARGE_RECORD_MAX_SIZE
_Static_assert(MAX_DECODED_BYTES >= FXT_MAX_RECORD_WORDS * 8, "every normal record is decoded");

int reader__fail(trace_reader_t* r, int result, uint64_t offset, const char* fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(r->error_text, sizeof(r->error_text), fmt, ap);
  va_end(ap);
  r->error.offset = offset;
  r->error.message = r->error_text;
  return result;
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
  free(r);
}

static int finish(trace_reader_t* r, int result) {
  r->final_result = result;
  return result;
}

#define FATAL(r, offset, ...) \
  (reader__fail((r), TRACE_READ_ERROR, (offset), __VA_ARGS__), finish((r), TRACE_READ_ERROR))

/* Every string a record holds is a copy of bytes inside it plus a NUL: at
 * most the record's size plus one byte per string (fewer than 64). */
static bool reserve_scratch(trace_reader_t* r, size_t record_bytes) {
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
  r->in = recover__next_segment(r->raw, in, 0);
  return 1;
}

/* The input ended (or failed) with `have` of `need` bytes of the record at
 * `offset`: fatal, naming that record; except at the end of a raw image's
 * streamed saves, whose whole records are read (recover.h). */
static int cut_short(trace_reader_t* r, trace_record_t* record, uint64_t offset, uint64_t header,
                     size_t have, uint64_t need) {
  input_t* in = r->in;
  bool at_limit = in->limit != UINT64_MAX && in->offset + have >= in->limit;
  if (!at_limit && in->read_errno)
    return FATAL(r, offset, "read error: %s", strerror(in->read_errno));
  if (!at_limit && in->damage) { /* compressed input: offsets are in the decompressed archive */
    r->truncated = in->damage_truncated;
    return FATAL(r, offset + (uint64_t)have, "%s", in->damage);
  }
  if (r->raw && recover__in_saves(r->raw)) { /* whole records only, as at the end of a save */
    input__consume(in, (size_t)(offset + have - in->offset)); /* a skipped record: consumed */
    r->stats.bytes_read += have;
    recover__note_cut_save(r->raw, offset, have);
    return trace_reader_next(r, record);
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

int trace_reader_next(trace_reader_t* r, trace_record_t* record) {
  if (r->final_result != 1) return r->final_result;
  r->last_size = 0;
  input_t* in;
  ptrdiff_t have;
  for (;;) {
    in = r->in;
    have = input__ensure(in, 8);
    if (have < 0) return FATAL(r, in->offset, "out of memory");
    if (have > 0 || !ended_cleanly(in)) break;
    if (!r->raw) {
      if (!r->seen_first && r->options.require_magic)
        return FATAL(r, 0, "empty input: not an FXT archive");
      return finish(r, TRACE_READ_END);
    }
    input_t* next = recover__next_segment(r->raw, &r->input, in->offset);
    if (!next) return finish(r, TRACE_READ_END);
    r->in = next;
  }
  uint64_t offset = in->offset;
  if (have < 8) return cut_short(r, record, offset, 0, (size_t)have, 8);
  uint64_t header;
  memcpy(&header, in->buf + in->start, sizeof(header));
  uint64_t words = fxt_record_words(header);
  if (!r->seen_first && live_placeholder__is(in->buf + in->start, 8))
    return FATAL(r, 0,
                 "the placeholder of an unfinished file-mode trace: its records are in the live "
                 "buffer it names ('trace recover FILE -o OUT.fxt' rebuilds the archive)");
  if (!r->seen_first && !r->recovered && recover__is_raw_buffer(in->buf + in->start, 8)) {
    r->raw_seen = true;
    if (recover(r) != 1) return r->final_result;
    return trace_reader_next(r, record);
  }
  if (!r->seen_first) {
    r->seen_first = true;
    if (r->options.require_magic && header != FXT_MAGIC_RECORD)
      return FATAL(r, 0,
                   "not an FXT archive: the first word is 0x%016llx, not the magic-number "
                   "record 0x%016llx",
                   (unsigned long long)header, (unsigned long long)FXT_MAGIC_RECORD);
  }
  if (words == 0)
    return FATAL(r, offset, "corrupt record header 0x%016llx: size 0", (unsigned long long)header);
  uint64_t bytes = words * 8u;
  if (bytes > MAX_DECODED_BYTES) {
    if (!input__skip(in, bytes))
      return cut_short(r, record, offset, header, (size_t)(in->offset - offset), bytes);
    r->stats.bytes_read += bytes;
    r->stats.records_skipped++;
    return reader__fail(r, TRACE_READ_SKIPPED, offset,
                        "%s record of %llu bytes is larger than the %zu bytes the reader "
                        "decodes; skipped",
                        trace_record_type_name((uint32_t)FXT_GET(header, 0, 3)),
                        (unsigned long long)bytes, (size_t)MAX_DECODED_BYTES);
  }
  have = input__ensure(in, (size_t)bytes);
  if (have < 0) return FATAL(r, offset, "out of memory");
  if ((uint64_t)have < bytes) return cut_short(r, record, offset, header, (size_t)have, bytes);
  if (!reserve_scratch(r, (size_t)bytes)) return FATAL(r, offset, "out of memory");
  const unsigned char* data = in->buf + in->start;
  int rc = decode__record(r, data, (size_t)words, offset, record);
  input__consume(in, (size_t)bytes);
  r->last_bytes = data;
  r->last_size = (size_t)bytes;
  r->stats.bytes_read += bytes;
  if (rc == TRACE_READ_ERROR) return finish(r, rc);
  if (rc == TRACE_READ_RECORD)
    r->stats.records++;
  else
    r->stats.records_skipped++;
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
