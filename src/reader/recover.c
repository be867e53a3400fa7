/* Raw trace buffer → the segments of its FXT archive (see recover.h). */
#include "reader/recover.h"

#include <stdlib.h>
#include <string.h>

#include "fxt/fxt_format.h"

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
  unsigned next;  /* the segment recover__next_segment hands out next */
  input_t memory; /* the prologue or the records, as an input */
  buffer_scan_stats_t scan;
  uint64_t cut_offset; /* recover__note_cut_save */
  size_t cut_bytes;
};

enum { SEGMENT_PROLOGUE, SEGMENT_SAVES, SEGMENT_RECORDS, SEGMENT_NONE };

bool recover__is_raw_buffer(const void* data, size_t size) {
  uint64_t word;
  if (size < sizeof(word)) return false;
  memcpy(&word, data, sizeof(word));
  return word == TRACE_BUFFER_HEADER_MAGIC;
}

/* Appends to the growing records block. */
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
  memcpy(image->records + image->records_size, bytes, n);
  image->records_size += n;
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
  if (!image) return "out of memory";
  unsigned char* buffer = read_buffer(in, h.total_size, &why, truncated);
  if (!buffer) {
    free(image);
    return why;
  }
  int status = buffer_scan__records(buffer, (size_t)h.total_size, h.saved_durable_end, collect,
                                    image, &image->scan);
  free(buffer);
  if (status != 0) {
    recover__free(image);
    return "out of memory";
  }
  buffer__emit_prologue(1, kName, h.num_records_dropped, collect_prologue, image);
  image->streamed_bytes = h.streamed_bytes;
  *out = image;
  return NULL;
}

input_t* recover__next_segment(recover_t* image, input_t* source, uint64_t offset) {
  switch (image->next++) {
    case SEGMENT_PROLOGUE:
      input__init_plain_memory(&image->memory, image->prologue, image->prologue_size, offset);
      return &image->memory;
    case SEGMENT_SAVES:
      source->offset = offset; /* offsets in the archive from here on */
      source->limit =
          image->streamed_bytes > UINT64_MAX - offset ? UINT64_MAX : offset + image->streamed_bytes;
      return source;
    case SEGMENT_RECORDS:
      source->limit = source->offset; /* nothing more from the file */
      input__init_plain_memory(&image->memory, image->records, image->records_size, offset);
      return &image->memory;
    default:
      image->next = SEGMENT_NONE;
      return NULL;
  }
}

bool recover__in_saves(const recover_t* image) { return image->next == SEGMENT_SAVES + 1; }

void recover__note_cut_save(recover_t* image, uint64_t offset, size_t have) {
  image->cut_offset = offset;
  image->cut_bytes = have;
}

buffer_scan_stats_t recover__scan_stats(const recover_t* image) { return image->scan; }

void recover__free(recover_t* image) {
  if (!image) return;
  free(image->records);
  free(image);
}
