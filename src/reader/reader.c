/* libtrace-reader: the record loop. It frames records by their header's size
 * field, keeps exactly one record in memory at a time, and hands each to the
 * decoder. Framing problems (size 0, input ending inside a record, a first
 * record that is not the magic number) are fatal; problems inside a record
 * skip just that record. */
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

/* The input starts with a raw trace buffer: read all of it, rebuild the
 * archive its program would have written (recover.h) and read that. */
static int recover(trace_reader_t* r) {
  input_t* in = &r->input;
  ptrdiff_t size = input__read_all(in);
  if (size < 0) return FATAL(r, 0, "out of memory reading a raw trace buffer");
  if (in->read_errno)
    return FATAL(r, in->offset + (uint64_t)size, "read error: %s", strerror(in->read_errno));
  if (in->damage) return FATAL(r, in->offset + (uint64_t)size, "%s", in->damage);
  unsigned char* owned = NULL;
  if (in->kind != INPUT_MEMORY) { /* take the block over from the input */
    if (in->start > 0) memmove(in->owned, in->owned + in->start, (size_t)size);
    owned = in->owned;
    in->owned = NULL;
    in->buf = NULL;
    in->start = in->end = in->capacity = 0;
  }
  unsigned char* archive;
  size_t archive_size;
  const char* why = recover__archive(in->kind == INPUT_MEMORY ? in->buf + in->start : owned,
                                     (size_t)size, owned, &archive, &archive_size);
  if (why) {
    r->truncated = strstr(why, "truncated") != NULL;
    return FATAL(r, 0,
                 "a raw trace buffer (the file of a traced program that did not finish) that "
                 "cannot be recovered: %s",
                 why);
  }
  input__replace_owned(in, archive, archive_size);
  r->recovered = true;
  r->seen_first = false;
  return 1;
}

/* The input ended (or failed) with `have` of `need` bytes of a record. */
static int cut_short(trace_reader_t* r, uint64_t header, size_t have, uint64_t need) {
  input_t* in = &r->input;
  if (in->read_errno) return FATAL(r, in->offset, "read error: %s", strerror(in->read_errno));
  if (in->damage) { /* compressed input: offsets are in the decompressed archive */
    r->truncated = in->damage_truncated;
    return FATAL(r, in->offset + (uint64_t)have, "%s", in->damage);
  }
  r->truncated = true;
  if (have < 8)
    return FATAL(r, in->offset,
                 "truncated archive: the input ends inside a record header (%zu trailing bytes)",
                 have);
  return FATAL(r, in->offset,
               "truncated archive: the %s record here needs %llu bytes but the input ends "
               "after %zu",
               trace_record_type_name((uint32_t)FXT_GET(header, 0, 3)), (unsigned long long)need,
               have);
}

int trace_reader_next(trace_reader_t* r, trace_record_t* record) {
  if (r->final_result != 1) return r->final_result;
  input_t* in = &r->input;
  ptrdiff_t have = input__ensure(in, 8);
  if (have < 0) return FATAL(r, in->offset, "out of memory");
  if (have == 0 && !in->read_errno && !in->damage) {
    if (!r->seen_first && r->options.require_magic)
      return FATAL(r, 0, "empty input: not an FXT archive");
    return finish(r, TRACE_READ_END);
  }
  if (have < 8) return cut_short(r, 0, (size_t)have, 8);
  uint64_t header;
  memcpy(&header, in->buf + in->start, sizeof(header));
  uint64_t words = fxt_record_words(header);
  if (!r->seen_first && live_placeholder__is(in->buf + in->start, 8))
    return FATAL(r, 0,
                 "the placeholder of an unfinished file-mode trace: its records are in the live "
                 "buffer it names ('trace recover FILE -o OUT.fxt' rebuilds the archive)");
  if (!r->seen_first && !r->recovered && recover__is_raw_buffer(in->buf + in->start, 8)) {
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
    return FATAL(r, in->offset, "corrupt record header 0x%016llx: size 0",
                 (unsigned long long)header);
  uint64_t bytes = words * 8u;
  uint64_t offset = in->offset;
  if (bytes > MAX_DECODED_BYTES) {
    if (!input__skip(in, bytes)) return cut_short(r, header, (size_t)(in->offset - offset), bytes);
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
  if ((uint64_t)have < bytes) return cut_short(r, header, (size_t)have, bytes);
  if (!reserve_scratch(r, (size_t)bytes)) return FATAL(r, offset, "out of memory");
  int rc = decode__record(r, in->buf + in->start, (size_t)words, record);
  input__consume(in, (size_t)bytes);
  r->stats.bytes_read += bytes;
  if (rc == TRACE_READ_ERROR) return finish(r, rc);
  if (rc == TRACE_READ_RECORD)
    r->stats.records++;
  else
    r->stats.records_skipped++;
  return rc;
}

trace_reader_error_t trace_reader_error(const trace_reader_t* r) { return r->error; }

trace_reader_stats_t trace_reader_stats(const trace_reader_t* r) { return r->stats; }

bool trace_reader_truncated(const trace_reader_t* r) { return r->truncated; }

bool trace_reader_recovered(const trace_reader_t* r) { return r->recovered; }
