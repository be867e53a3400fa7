/* Raw trace buffer → the segments of its FXT archive (see recover.h). */
#include "reader/recover.h"

#include <stdlib.h>
#include <string.h>

#include "fxt/fxt_format.h"
#include "reader/reader_internal.h"

enum {
  COPY_STEP = 64 * 1024,       /* bytes of the buffer taken from the input at a time */
  PROLOGUE_WORDS = 2 + 32 + 1, /* magic, provider info with its name, overflow */
};

struct recover {
  uint64_t prologue[PROLOGUE_WORDS];
  size_t prologue_size;
  unsigned char* records; /* the buffer's committed records, in archive order */
  size_t records_size, records_capacity;
  uint64_t streamed_bytes;
  uint64_t max_save;     /* the most one save appends: the durable buffer and one segment */
  uint64_t saves_start;  /* the archive offset of the saves (a multiple of 8) */
  uint64_t past_start;   /* where the saves past streamed_bytes began (SEGMENT_PAST) */
  uint64_t past_bytes;   /* their length, once read; 0: none (or a legitimate cut save) */
  uint64_t past_records; /* records read from them */
  uint64_t records_before_past;
  unsigned next;  /* the segment recover__next_segment hands out next (so next - 1 is read) */
  input_t memory; /* the prologue or the records, as an input */
  buffer_scan_stats_t scan;
  trace_reader_t* measurer;  /* decodes records for measure() */
  uint64_t trimmed;          /* records collected cut to their contents */
  const char* inconsistency; /* buffer_scan__inconsistency() of the header */
};

/* SEGMENT_PAST: the file's bytes after the streamed_bytes the header
 * declares. The provider publishes streamed_bytes after each save's data,
 * so a crash may leave at most one save (max_save bytes) past it, cut or
 * whole, whose records the buffer still holds: those are not read. More
 * than that can only be a damaged streamed_bytes (smaller than the saves in
 * the file): then everything after it is read as saves, checked as they are,
 * and counted (recover__past). */
enum { SEGMENT_PROLOGUE, SEGMENT_SAVES, SEGMENT_PAST, SEGMENT_RECORDS, SEGMENT_NONE };

bool recover__is_raw_buffer(const void* data, size_t size) {
  uint64_t word;
  if (size < sizeof(word)) return false;
  memcpy(&word, data, sizeof(word));
  return word == TRACE_BUFFER_HEADER_MAGIC;
}

/* The scan's measure (buffer_scan.h): where a record's contents end, as the
 * decoder finds them (DECODE_MEASURE), so that a size field too large (a
 * damaged one: the engine writes exact sizes) does not make the scan frame
 * the rest of its chunk from inside the records it covers; 0 when the
 * record does not decode (the reader reports it when it reads it). */
static uint64_t measure(void* arg, const void* record, uint64_t bytes) {
  recover_t* image = arg;
  if (bytes % 8 != 0 || bytes > READER_MAX_DECODED_BYTES ||
      !reader__reserve_scratch(image->measurer, (size_t)bytes))
    return 0;
  trace_record_t rec;
  decode_extent_t extent;
  int rc = decode__record(image->measurer, record, (size_t)(bytes / 8), 0, DECODE_MEASURE, &rec,
                          &extent);
  return rc == TRACE_READ_RECORD ? (uint64_t)extent.content_words * 8 : 0;
}

/* Appends to the growing records block; a record measured shorter than its
 * size field gets a size field that says so. */
static int collect(void* arg, const void* bytes, size_t n) {
  recover_t* image = arg;
  if (n > image->records_capacity - image->records_size) {
    size_t capacity = image->records_capacity ? image->records_capacity : 64 * 1024;
    while (n > capacity - image->records_size) {
      if (capacity > SIZE_MAX / 2) return -1;
      capacity *= 2;
    }
    unsigned char* grown = realloc(image->records, capacity);
    if (!grown) return -1;
    image->records = grown;
    image->records_capacity = capacity;
  }
  unsigned char* copy = image->records + image->records_size;
  memcpy(copy, bytes, n);
  image->records_size += n;
  uint64_t header;
  memcpy(&header, copy, sizeof(header));
  if (header != 0 && fxt_record_words(header) * 8 !=
                         n) { /* 0: damage, framed as such */ /* measured: cut to its contents */
    unsigned bits = FXT_GET(header, 0, 3) == FXT_RECORD_LARGE ? 32 : 12;
    uint64_t mask = ((UINT64_C(1) << bits) - 1) << 4;
    header = (header & ~mask) | ((uint64_t)(n / 8) << 4);
    memcpy(copy, &header, sizeof(header));
    image->trimmed++;
  }
  return 0;
}

static int collect_prologue(void* arg, const void* bytes, size_t n) {
  recover_t* image = arg;
  if (n > sizeof(image->prologue) - image->prologue_size) return -1; /* cannot happen */
  memcpy((unsigned char*)image->prologue + image->prologue_size, bytes, n);
  image->prologue_size += n;
  return 0;
}

static bool all_zero(const unsigned char* p, size_t n) {
  for (size_t i = 0; i < n; i++)
    if (p[i]) return false;
  return true;
}

/* Reads the buffer's `total` bytes into a block from calloc, which is zero
 * already: all-zero stretches (an unused buffer, mostly) are not copied, so
 * their pages are never touched. NULL with *why set on failure. */
static unsigned char* read_buffer(input_t* in, uint64_t total, const char** why, bool* truncated) {
  if (total > SIZE_MAX) {
    *why = "out of memory";
    return NULL;
  }
  unsigned char* buffer = calloc(1, (size_t)total);
  if (!buffer) {
    *why = "out of memory";
    return NULL;
  }
  for (uint64_t pos = 0; pos < total;) {
    size_t want = total - pos < COPY_STEP ? (size_t)(total - pos) : COPY_STEP;
    ptrdiff_t got = input__ensure(in, want);
    if (got < 0 || (size_t)got < want) {
      *why = got < 0 ? "out of memory" : "buffer is shorter than its header says (truncated file?)";
      *truncated = got >= 0;
      free(buffer);
      return NULL;
    }
    if (!all_zero(in->buf + in->start, want)) memcpy(buffer + pos, in->buf + in->start, want);
    input__consume(in, want);
    pos += want;
  }
  return buffer;
}

const char* recover__open(input_t* in, recover_t** out, bool* truncated) {
  static const char kName[] = "recovered";
  *out = NULL;
  *truncated = false;
  /* The header first, on its own: an unusable one fails before anything
   * else is read (a small compressed file can claim gigabytes of buffer). */
  trace_buffer_header_t h;
  ptrdiff_t have = input__ensure(in, sizeof(h));
  if (have < 0) return "out of memory";
  if ((size_t)have < sizeof(h)) {
    *truncated = true;
    return "shorter than a buffer header";
  }
  trace_buffer_header_t raw;
  memcpy(&raw, in->buf + in->start, sizeof(raw));            /* aligned, for the scan's loads */
  const char* why = buffer_scan__header(&raw, SIZE_MAX, &h); /* the size is checked below */
  if (why) return why;
  recover_t* image = calloc(1, sizeof(*image));
  if (image) image->measurer = trace_reader_open_memory("", 0, NULL);
  if (!image || !image->measurer) {
    free(image);
    return "out of memory";
  }
  unsigned char* buffer = read_buffer(in, h.total_size, &why, truncated);
  if (!buffer) {
    recover__free(image);
    return why;
  }
  int status = buffer_scan__records_measured(buffer, (size_t)h.total_size, h.saved_durable_end,
                                             measure, collect, image, &image->scan);
  /* the header's count and the writers' drop counters (buffer_scan.h) */
  uint64_t dropped = buffer_scan__dropped(buffer, (size_t)h.total_size, &h);
  free(buffer);
  trace_reader_close(image->measurer);
  image->measurer = NULL;
  if (status != 0) {
    recover__free(image);
    return "out of memory";
  }
  buffer__emit_prologue(1, kName, dropped, collect_prologue, image);
  image->streamed_bytes = h.streamed_bytes;
  image->max_save = h.durable_buffer_size + h.rolling_buffer_size;
  image->inconsistency = buffer_scan__inconsistency(&h);
  *out = image;
  return NULL;
}

input_t* recover__next_segment(recover_t* image, input_t* source, uint64_t offset,
                               uint64_t records) {
  switch (image->next++) {
    case SEGMENT_PROLOGUE:
      input__init_plain_memory(&image->memory, image->prologue, image->prologue_size, offset);
      return &image->memory;
    case SEGMENT_SAVES:
      source->offset = offset; /* offsets in the archive from here on */
      image->saves_start = offset;
      source->limit =
          image->streamed_bytes > UINT64_MAX - offset ? UINT64_MAX : offset + image->streamed_bytes;
      return source;
    case SEGMENT_PAST: {
      /* source is at its limit: the saves ended there, or the input did */
      source->limit = UINT64_MAX;
      uint64_t look = image->max_save + 1;
      ptrdiff_t got = input__ensure(source, look > SIZE_MAX ? SIZE_MAX : (size_t)look);
      if (got >= 0 && (uint64_t)got > image->max_save) {
        image->past_start = source->offset;
        image->records_before_past = records;
        /* saves are whole words: a streamed_bytes off a word boundary ended
         * the saves inside one (reported with them); frame from the next */
        size_t misaligned = (size_t)((source->offset - image->saves_start) % 8);
        if (misaligned) input__consume(source, 8 - misaligned);
        return source;
      }
      source->limit = source->offset; /* at most a save cut by the crash: the buffer has it */
      return recover__next_segment(image, source, offset, records);
    }
    case SEGMENT_RECORDS:
      if (image->past_start) {
        image->past_bytes = source->offset - image->past_start;
        image->past_records = records - image->records_before_past;
      }
      source->limit = source->offset; /* nothing more from the file */
      input__init_plain_memory(&image->memory, image->records, image->records_size, offset);
      return &image->memory;
    default:
      image->next = SEGMENT_NONE + 1; /* stays past the records */
      return NULL;
  }
}

const char* recover__segment_name(const recover_t* image) {
  return image->next == SEGMENT_SAVES + 1     ? "streamed saves"
         : image->next == SEGMENT_PAST + 1    ? "saves past the header's streamed_bytes"
         : image->next == SEGMENT_RECORDS + 1 ? "buffer's records"
                                              : NULL;
}

buffer_scan_stats_t recover__scan_stats(const recover_t* image) { return image->scan; }

uint64_t recover__trimmed(const recover_t* image) { return image->trimmed; }

const char* recover__inconsistency(const recover_t* image) { return image->inconsistency; }

uint64_t recover__past(const recover_t* image, uint64_t* streamed_bytes, uint64_t* records) {
  *streamed_bytes = image->streamed_bytes;
  *records = image->past_records;
  return image->past_bytes;
}

void recover__free(recover_t* image) {
  if (!image) return;
  trace_reader_close(image->measurer);
  free(image->records);
  free(image);
}
