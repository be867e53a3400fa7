/* A resolved record's stored form (see record_codec.h). One walk over the
 * fields describes the layout for all three uses (measure, write, read), so
 * the writer and the reader cannot disagree. */
#include "ordered/record_codec.h"

#include <string.h>

enum { MEASURE, WRITE, READ };

#define INLINE static inline __attribute__((always_inline))

typedef struct codec {
  int mode;
  unsigned char* body; /* WRITE, READ: the bytes after the header */
  size_t at;           /* bytes of the body walked */
  size_t limit;        /* READ: the body's size; a walk past it is damage */
  bool bad;
} codec_t;

/* 8-byte alignment of blob bytes, relative to the 8-aligned record start
 * (the header is 32 bytes), so a consumer may read words from a blob as it
 * can from the reader's. */
INLINE void align8(codec_t* c) {
  size_t pad = (8 - c->at % 8) % 8;
  if (c->mode == WRITE) memset(c->body + c->at, 0, pad);
  c->at += pad;
}

INLINE bool room(codec_t* c, size_t n) {
  if (c->mode != READ) return true;
  if (c->bad || c->at > c->limit || n > c->limit - c->at) c->bad = true;
  return !c->bad;
}

INLINE void raw(codec_t* c, void* v, size_t n) {
  if (!room(c, n)) return;
  if (c->mode == WRITE) memcpy(c->body + c->at, v, n);
  if (c->mode == READ) memcpy(v, c->body + c->at, n);
  c->at += n;
}

#define FIELD(c, x) raw((c), &(x), sizeof(x))

/* Length, bytes, NUL: read back in place, NUL-terminated as the reader's. */
INLINE void str(codec_t* c, trace_reader_string_t* s) {
  uint32_t n = (uint32_t)s->length; /* FXT strings are at most 32 KiB */
  FIELD(c, n);
  if (!room(c, (size_t)n + 1)) return;
  if (c->mode == WRITE) {
    if (n) memcpy(c->body + c->at, s->data, n);
    c->body[c->at + n] = '\0';
  } else if (c->mode == READ) {
    if (c->body[c->at + n] != '\0') c->bad = true;
    s->data = (const char*)c->body + c->at;
    s->length = n;
  }
  c->at += (size_t)n + 1;
}

INLINE void blob(codec_t* c, const void** data, size_t* size) {
  uint64_t n = *size;
  FIELD(c, n);
  align8(c);
  if (!room(c, (size_t)n)) return;
  if (c->mode == WRITE && n) memcpy(c->body + c->at, *data, (size_t)n);
  if (c->mode == READ) {
    *data = c->body + c->at;
    *size = (size_t)n;
  }
  c->at += (size_t)n;
}

INLINE void args(codec_t* c, trace_reader_args_t* a) {
  uint32_t n = (uint32_t)a->count;
  FIELD(c, n);
  if (c->mode == READ) {
    if (n > TRACE_READER_MAX_ARGS) c->bad = true;
    if (c->bad) return;
    a->count = n;
  }
  for (uint32_t i = 0; i < n && !c->bad; i++) {
    trace_reader_arg_t* arg = &a->items[i];
    if (c->mode == READ) memset(arg, 0, sizeof(*arg));
    FIELD(c, arg->type);
    str(c, &arg->name);
    switch (arg->type) {
      case 0: /* null: no value */
        break;
      case 6:
        str(c, &arg->string_value);
        break;
      case 10: {
        const void* data = arg->blob_value.data;
        size_t size = arg->blob_value.size;
        blob(c, &data, &size);
        arg->blob_value.data = data;
        arg->blob_value.size = (uint32_t)size;
        break;
      }
      default:
        /* the other eight types are at most 8 bytes at the union's start;
         * the reader zeroes the rest, so the copy is exact */
        FIELD(c, arg->uint64_value);
        break;
    }
  }
}

INLINE void walk(codec_t* c, trace_record_t* r) {
  FIELD(c, r->offset);
  FIELD(c, r->type);
  FIELD(c, r->size_words);
  switch (r->type) {
    case 0:
      FIELD(c, r->metadata.type);
      FIELD(c, r->metadata.provider_id);
      str(c, &r->metadata.provider_name);
      FIELD(c, r->metadata.event_id);
      FIELD(c, r->metadata.trace_info_type);
      FIELD(c, r->metadata.magic);
      break;
    case 1:
      FIELD(c, r->initialization.ticks_per_second);
      break;
    case 2:
      FIELD(c, r->string.index);
      str(c, &r->string.value);
      break;
    case 3:
      FIELD(c, r->thread.index);
      FIELD(c, r->thread.process_koid);
      FIELD(c, r->thread.thread_koid);
      break;
    case 4:
      FIELD(c, r->event.event_type);
      FIELD(c, r->event.ticks);
      FIELD(c, r->event.process_koid);
      FIELD(c, r->event.thread_koid);
      str(c, &r->event.category);
      str(c, &r->event.name);
      args(c, &r->event.args);
      FIELD(c, r->event.has_scope);
      FIELD(c, r->event.scope);
      FIELD(c, r->event.payload);
      break;
    case 5:
      FIELD(c, r->blob.blob_type);
      str(c, &r->blob.name);
      blob(c, &r->blob.data, &r->blob.size);
      break;
    case 6:
      FIELD(c, r->userspace_object.pointer);
      FIELD(c, r->userspace_object.process_koid);
      str(c, &r->userspace_object.name);
      args(c, &r->userspace_object.args);
      break;
    case 7:
      FIELD(c, r->kernel_object.koid);
      FIELD(c, r->kernel_object.object_type);
      str(c, &r->kernel_object.name);
      args(c, &r->kernel_object.args);
      break;
    case 8:
      FIELD(c, r->scheduling.sched_type);
      FIELD(c, r->scheduling.ticks);
      FIELD(c, r->scheduling.cpu);
      FIELD(c, r->scheduling.outgoing_state);
      FIELD(c, r->scheduling.outgoing_process_koid);
      FIELD(c, r->scheduling.outgoing_thread_koid);
      FIELD(c, r->scheduling.incoming_process_koid);
      FIELD(c, r->scheduling.incoming_thread_koid);
      FIELD(c, r->scheduling.outgoing_priority);
      FIELD(c, r->scheduling.incoming_priority);
      args(c, &r->scheduling.args);
      break;
    case 9:
      FIELD(c, r->log.ticks);
      FIELD(c, r->log.process_koid);
      FIELD(c, r->log.thread_koid);
      str(c, &r->log.message);
      break;
    case 15:
      FIELD(c, r->large.large_type);
      FIELD(c, r->large.blob_format);
      str(c, &r->large.category);
      str(c, &r->large.name);
      FIELD(c, r->large.ticks);
      FIELD(c, r->large.process_koid);
      FIELD(c, r->large.thread_koid);
      args(c, &r->large.args);
      blob(c, &r->large.data, &r->large.size);
      break;
    default: /* the reader returns no other type as a record */
      break;
  }
}

static uint64_t ticks_to_ns(uint64_t ticks, uint64_t ticks_per_second) {
  if (ticks_per_second == 0 || ticks_per_second == 1000000000u) return ticks;
  unsigned __int128 ns = (unsigned __int128)ticks * 1000000000u / ticks_per_second;
  return ns > UINT64_MAX ? UINT64_MAX : (uint64_t)ns;
}

bool ordered__record_ns(const trace_record_t* r, uint64_t* ns) {
  uint64_t ticks;
  switch (r->type) {
    case 4:
      ticks = r->event.ticks; /* a complete duration's beginning */
      break;
    case 8:
      ticks = r->scheduling.ticks;
      break;
    case 9:
      ticks = r->log.ticks;
      break;
    case 15:
      if (r->large.blob_format != 0) return false; /* an attachment has no time */
      ticks = r->large.ticks;
      break;
    default:
      return false;
  }
  *ns = ticks_to_ns(ticks, r->provider ? r->provider->ticks_per_second : 0);
  return true;
}

size_t ordered__rec_size(const trace_record_t* record) {
  codec_t c = {MEASURE, NULL, 0, 0, false};
  walk(&c, (trace_record_t*)record); /* MEASURE writes nothing */
  size_t n = sizeof(ordered_rec_t) + c.at;
  return (n + 7) & ~(size_t)7;
}

void ordered__rec_write(void* dst, const ordered_rec_t* header, const trace_record_t* record) {
  memcpy(dst, header, sizeof(*header));
  codec_t c = {WRITE, (unsigned char*)dst + sizeof(*header), 0, 0, false};
  walk(&c, (trace_record_t*)record); /* WRITE only reads the record */
  size_t end = sizeof(*header) + c.at;
  memset((unsigned char*)dst + end, 0, header->size - end); /* padding: no stale bytes on disk */
}

bool ordered__rec_read(const ordered_rec_t* rec, trace_record_t* out) {
  memset(out, 0, sizeof(*out));
  if (rec->size < sizeof(*rec)) return false;
  codec_t c = {READ, (unsigned char*)(rec + 1), 0, rec->size - sizeof(*rec), false};
  walk(&c, out);
  return !c.bad;
}
