/* Raw trace buffer → FXT archive (see recover.h). */
#include "reader/recover.h"

#include <stdlib.h>
#include <string.h>

#include "engine/buffer_scan.h"
#include "fxt/fxt_format.h"

bool recover__is_raw_buffer(const void* data, size_t size) {
  uint64_t word;
  if (size < sizeof(word)) return false;
  memcpy(&word, data, sizeof(word));
  return word == TRACE_BUFFER_HEADER_MAGIC;
}

/* Appends to data[used..cap); with data NULL it only counts. */
typedef struct sink {
  unsigned char* data;
  size_t used, cap;
} sink_t;

static int sink_emit(void* arg, const void* bytes, size_t n) {
  sink_t* s = arg;
  if (s->data) {
    if (n > s->cap - s->used) return -1; /* cannot happen: sizes were counted */
    memcpy(s->data + s->used, bytes, n);
  }
  s->used += n;
  return 0;
}

/* The length of the whole records at the start of [p, p + n). */
static size_t whole_records(const unsigned char* p, size_t n) {
  size_t pos = 0;
  while (n - pos >= 8) {
    uint64_t header;
    memcpy(&header, p + pos, sizeof(header));
    uint64_t bytes = fxt_record_words(header) * 8;
    if (bytes == 0 || bytes > n - pos) break;
    pos += (size_t)bytes;
  }
  return pos;
}

const char* recover__archive(const unsigned char* raw, size_t size, unsigned char* owned,
                             unsigned char** out, size_t* out_size) {
  static const char kName[] = "recovered";
  /* The scan loads the header with 8-byte atomic loads: it needs an aligned
   * buffer, which memory given to trace_reader_open_memory() need not be. */
  if (((uintptr_t)raw & 7) != 0) {
    unsigned char* copy = malloc(size);
    if (!copy) {
      free(owned);
      return "out of memory";
    }
    memcpy(copy, raw, size);
    free(owned);
    raw = owned = copy;
  }
  trace_buffer_header_t h;
  const char* why = buffer_scan__header(raw, size, &h);
  if (why) {
    free(owned);
    return why;
  }
  /* Streamed saves: as the header says, or, if the file ends first, the
   * whole records it holds (a save the crash cut short). */
  size_t available = size - (size_t)h.total_size;
  size_t streamed = h.streamed_bytes <= available ? (size_t)h.streamed_bytes
                                                  : whole_records(raw + h.total_size, available);
  /* Count first, so that every block is allocated once, exactly. */
  sink_t prologue = {NULL, 0, 0}, records = {NULL, 0, 0};
  buffer__emit_prologue(1, kName, h.num_records_dropped, sink_emit, &prologue);
  buffer_scan__records(raw, size, h.saved_durable_end, sink_emit, &records, NULL);
  size_t total = prologue.used + streamed + records.used;

  unsigned char* archive;
  if (owned && total <= size) {
    /* In place: [prologue][streamed][records] over the file's bytes. The
     * scan reads the buffer, so the records go to a side block first. */
    records.cap = records.used;
    records.used = 0;
    records.data = malloc(records.cap ? records.cap : 1);
    if (!records.data) {
      free(owned);
      return "out of memory";
    }
    buffer_scan__records(raw, size, h.saved_durable_end, sink_emit, &records, NULL);
    archive = owned;
    memmove(archive + prologue.used, raw + h.total_size, streamed);
    memcpy(archive + prologue.used + streamed, records.data, records.used);
    free(records.data);
    prologue.data = archive;
    prologue.cap = prologue.used;
    prologue.used = 0;
    buffer__emit_prologue(1, kName, h.num_records_dropped, sink_emit, &prologue);
    unsigned char* shrunk = realloc(archive, total ? total : 1);
    if (shrunk) archive = shrunk;
  } else {
    archive = malloc(total ? total : 1);
    if (!archive) {
      free(owned);
      return "out of memory";
    }
    sink_t s = {archive, 0, total};
    buffer__emit_prologue(1, kName, h.num_records_dropped, sink_emit, &s);
    memcpy(archive + s.used, raw + h.total_size, streamed);
    s.used += streamed;
    buffer_scan__records(raw, size, h.saved_durable_end, sink_emit, &s, NULL);
    free(owned);
  }
  *out = archive;
  *out_size = total;
  return NULL;
}
