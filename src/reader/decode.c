/* Decodes one FXT record (FXT.md §8) into a trace_record_t, resolving string
 * and thread references against the current provider's tables.
 *
 * Every read goes through a cursor bounded by the record's (or argument's)
 * size, so no field can make the decoder read outside the record; a failed
 * bound or an unresolvable reference fails the record, which the caller then
 * skips by its size.
 *
 * It also measures the record against its size field: the cursor ends where
 * what the header describes ends (arguments, inline strings, the words of
 * the record type), and the words after that up to the size, or inside an
 * argument past its own contents, are the record's extra words (decode.h's
 * extent). Under the strict policies a record that fails, or whose extra
 * words they do not allow, changes no reader state: the tables, the current
 * provider and its tick rate are updated only once the record is taken. */
#include <stdlib.h>
#include <string.h>

#include "fxt/fxt_format.h"
#include "reader/reader_internal.h"

typedef struct cursor {
  trace_reader_t* r;
  const unsigned char* base; /* the record's first byte */
  size_t limit;              /* words readable: the record or argument end */
  size_t pos;                /* next word */
  uint64_t offset;           /* the record's archive offset, for messages */
  decode_policy_t policy;
  size_t arg_extra; /* words inside arguments past their contents */
} cursor_t;

#define FAIL(c, ...) (reader__fail((c)->r, TRACE_READ_SKIPPED, (c)->offset, __VA_ARGS__), false)

/* Called once a record's contents are read, before it changes any reader
 * state (and for every record at the end): under the strict policies its
 * extra words must be ones they allow, or the record is not taken. */
static bool settle(cursor_t* c) {
  if (c->policy == DECODE_LENIENT) return true;
  if (c->arg_extra)
    return FAIL(c, "its arguments hold %zu words past their contents", c->arg_extra);
  if (c->policy == DECODE_STRICT && c->pos < c->limit)
    return FAIL(c, "its size covers %zu words past its contents", c->limit - c->pos);
  return true;
}

/* Raw images only (DECODE_TRIM, DECODE_STRICT, DECODE_MEASURE): fxtrace's
 * engine writes every reserved bit as 0, pads streams with zero bytes and
 * writes only the types it knows, and it never writes metadata records (the
 * prologue is the file provider's) or empty strings into its buffer; so
 * anything else there is damage, and checking it makes damaged words much
 * less likely to pass for a record (and change the reader's state: a
 * provider-info record would empty the tables). An archive may come from
 * another writer: there none of this is checked, as FXT readers do not. */
static bool raw_policy(const cursor_t* c) { return c->policy != DECODE_LENIENT; }

/* DECODE_MEASURE: only where the contents end; nothing resolved or changed. */
static bool measuring(const cursor_t* c) { return c->policy == DECODE_MEASURE; }

static bool reserved_zero(cursor_t* c, uint64_t word, unsigned lo, unsigned hi, const char* what) {
  if (!raw_policy(c) || FXT_GET(word, lo, hi) == 0) return true;
  return FAIL(c, "reserved bits [%u..%u] of its %s are not 0", lo, hi, what);
}

static uint64_t word_at(const unsigned char* base, size_t index) {
  uint64_t w;
  memcpy(&w, base + index * 8u, sizeof(w));
  return w;
}

static bool take_word(cursor_t* c, uint64_t* out, const char* what) {
  if (c->pos >= c->limit) return FAIL(c, "record too short for its %s", what);
  *out = word_at(c->base, c->pos++);
  return true;
}

static bool take_bytes(cursor_t* c, size_t length, const unsigned char** out, const char* what) {
  size_t words = fxt_words_for_bytes(length);
  if (words > c->limit - c->pos)
    return FAIL(c, "%s of %zu bytes runs past the end of its record", what, length);
  *out = c->base + c->pos * 8u;
  if (raw_policy(c))
    for (size_t i = length; i < words * 8u; i++)
      if ((*out)[i] != 0) return FAIL(c, "%s: its padding is not zero", what);
  c->pos += words;
  return true;
}

/* A NUL-terminated copy in the reader's scratch, which reader__next sized
 * for every string a record of this size can hold. */
static trace_reader_string_t scratch_string(trace_reader_t* r, const void* data, size_t length) {
  char* s = r->scratch + r->scratch_used;
  memcpy(s, data, length);
  s[length] = '\0';
  r->scratch_used += length + 1;
  return (trace_reader_string_t){s, length};
}

static bool take_stream(cursor_t* c, size_t length, trace_reader_string_t* out, const char* what) {
  const unsigned char* bytes;
  if (!take_bytes(c, length, &bytes, what)) return false;
  *out = scratch_string(c->r, bytes, length);
  return true;
}

static provider_state_t* current(const cursor_t* c) { return c->r->providers.current; }

static bool take_string_ref(cursor_t* c, uint32_t ref, trace_reader_string_t* out,
                            const char* what) {
  if (ref == 0) {
    *out = (trace_reader_string_t){"", 0};
    return true;
  }
  if (ref & 0x8000u) return take_stream(c, ref & 0x7fffu, out, what);
  if (measuring(c)) {
    *out = (trace_reader_string_t){"", 0};
    return true;
  }
  const string_entry_t* e = strings__get(current(c), ref);
  if (!e)
    return FAIL(c, "%s refers to string index %u, which provider %u has not defined", what, ref,
                current(c)->pub.id);
  *out = (trace_reader_string_t){e->data, e->length};
  return true;
}

static bool take_thread_ref(cursor_t* c, uint32_t ref, uint64_t* pid, uint64_t* tid,
                            const char* what) {
  if (ref == 0) return take_word(c, pid, what) && take_word(c, tid, what);
  if (measuring(c)) {
    *pid = *tid = 0;
    return true;
  }
  const thread_entry_t* t = threads__get(current(c), ref);
  if (!t)
    return FAIL(c, "%s refers to thread index %u, which provider %u has not defined", what, ref,
                current(c)->pub.id);
  *pid = t->process_koid;
  *tid = t->thread_koid;
  return true;
}

static bool take_arg_value(cursor_t* a, uint64_t h, uint32_t type, trace_reader_args_t* out);

/* One argument (FXT.md §10). Unknown types are skipped by their size. */
static bool take_arg(cursor_t* c, trace_reader_args_t* out) {
  uint64_t h;
  if (!take_word(c, &h, "argument header")) return false;
  uint32_t type = (uint32_t)FXT_GET(h, 0, 3);
  size_t size = (size_t)FXT_GET(h, 4, 15);
  if (size == 0) return FAIL(c, "argument of size 0");
  if (size - 1 > c->limit - c->pos) return FAIL(c, "argument runs past the end of its record");
  cursor_t a = *c;
  a.limit = c->pos + size - 1;
  c->pos = a.limit; /* trailing words of an extended argument are skipped */
  if (type > 10) {  /* unknown type: skipped by size, name unresolved */
    if (raw_policy(c)) return FAIL(c, "an argument of unknown type %u", type);
    return true;
  }
  if (!take_arg_value(&a, h, type, out)) return false;
  c->arg_extra += a.limit - a.pos; /* counted (reader warning), then skipped */
  return true;
}

/* The name and value of an argument of known type, through its own cursor. */
static bool take_arg_value(cursor_t* a, uint64_t h, uint32_t type, trace_reader_args_t* out) {
  trace_reader_arg_t* arg = &out->items[out->count];
  memset(arg, 0, sizeof(*arg));
  arg->type = type;
  if (!take_string_ref(a, (uint32_t)FXT_GET(h, 16, 31), &arg->name, "argument name")) return false;
  uint64_t w = 0;
  const unsigned char* bytes;
  static const unsigned kFirstReserved[11] = {32, 64, 64, 32, 32, 32, 48, 32, 32, 33, 64};
  if (kFirstReserved[type] < 64 &&
      !reserved_zero(a, h, kFirstReserved[type], 63, "argument header"))
    return false;
  switch (type) {
    case 0:
      break;
    case 1:
      arg->int32_value = (int32_t)(uint32_t)FXT_GET(h, 32, 63);
      break;
    case 2:
      arg->uint32_value = (uint32_t)FXT_GET(h, 32, 63);
      break;
    case 3:
    case 4:
    case 5:
    case 7:
    case 8:
      if (!take_word(a, &w, "argument value")) return false;
      memcpy(&arg->uint64_value, &w, sizeof(w)); /* same bits for all five */
      break;
    case 6:
      if (!take_string_ref(a, (uint32_t)FXT_GET(h, 32, 47), &arg->string_value, "string argument"))
        return false;
      break;
    case 9:
      arg->bool_value = FXT_GET(h, 32, 32) != 0;
      break;
    case 10:
      arg->blob_value.size = (uint32_t)FXT_GET(h, 32, 63);
      if (!take_bytes(a, arg->blob_value.size, &bytes, "blob argument")) return false;
      arg->blob_value.data = bytes;
      break;
    default:
      return true;
  }
  out->count++;
  return true;
}

static bool take_args(cursor_t* c, unsigned count, trace_reader_args_t* out) {
  out->count = 0;
  for (unsigned i = 0; i < count; i++)
    if (!take_arg(c, out)) return false;
  return true;
}

static int decode_metadata(cursor_t* c, uint64_t h, trace_record_t* rec) {
  trace_reader_t* r = c->r;
  rec->metadata.type = (uint32_t)FXT_GET(h, 16, 19);
  rec->metadata.provider_id = (uint32_t)FXT_GET(h, 20, 51);
  rec->metadata.provider_name = (trace_reader_string_t){"", 0};
  provider_state_t* p;
  bool created;
  switch (rec->metadata.type) {
    case FXT_METADATA_PROVIDER_INFO:
      if (!reserved_zero(c, h, 60, 63, "header")) return TRACE_READ_SKIPPED;
      if (!take_stream(c, (size_t)FXT_GET(h, 52, 59), &rec->metadata.provider_name,
                       "provider name") ||
          !settle(c))
        return TRACE_READ_SKIPPED;
      if (measuring(c)) return TRACE_READ_RECORD;
      p = providers__begin(&r->providers, rec->metadata.provider_id,
                           rec->metadata.provider_name.data, rec->metadata.provider_name.length);
      if (!p)
        return reader__fail(r, TRACE_READ_ERROR, c->offset,
                            "provider table memory limit reached or out of memory");
      rec->provider = &p->pub;
      return TRACE_READ_RECORD;
    case FXT_METADATA_PROVIDER_SECTION:
      if (!reserved_zero(c, h, 52, 63, "header")) return TRACE_READ_SKIPPED;
      if (measuring(c)) return settle(c) ? TRACE_READ_RECORD : TRACE_READ_SKIPPED;
      if (c->policy != DECODE_LENIENT && !providers__find(&r->providers, rec->metadata.provider_id))
        return reader__fail(r, TRACE_READ_SKIPPED, c->offset,
                            "provider section for provider %u, which no provider-info record "
                            "announced",
                            rec->metadata.provider_id);
      if (!settle(c)) return TRACE_READ_SKIPPED;
      p = providers__switch(&r->providers, rec->metadata.provider_id, &created);
      if (!p)
        return reader__fail(r, TRACE_READ_ERROR, c->offset,
                            "provider table memory limit reached or out of memory");
      rec->provider = &p->pub;
      rec->metadata.provider_name = p->pub.name;
      if (created)
        return reader__fail(r, TRACE_READ_SKIPPED, c->offset,
                            "provider section for provider %u, which no provider-info record "
                            "announced; its state starts empty",
                            rec->metadata.provider_id);
      return TRACE_READ_RECORD;
    case FXT_METADATA_PROVIDER_EVENT:
      rec->metadata.event_id = (uint32_t)FXT_GET(h, 52, 55);
      if (!reserved_zero(c, h, 56, 63, "header")) return TRACE_READ_SKIPPED;
      if (raw_policy(c) && rec->metadata.event_id != 0)
        return reader__fail(r, TRACE_READ_SKIPPED, c->offset, "unknown provider event %u",
                            rec->metadata.event_id);
      /* It may stand in another provider's section: name the one it is about. */
      p = providers__find(&r->providers, rec->metadata.provider_id);
      if (p) rec->metadata.provider_name = p->pub.name;
      return TRACE_READ_RECORD;
    case FXT_METADATA_TRACE_INFO:
      rec->metadata.provider_id = 0;
      rec->metadata.trace_info_type = (uint32_t)FXT_GET(h, 20, 23);
      if (raw_policy(c) && h != FXT_MAGIC_RECORD) /* the only trace info fxtrace writes */
        return reader__fail(r, TRACE_READ_SKIPPED, c->offset,
                            "a trace-info record that is not the magic number");
      if (rec->metadata.trace_info_type == FXT_TRACE_INFO_MAGIC_NUMBER) {
        rec->metadata.magic = FXT_GET(h, 24, 55);
        if (rec->metadata.magic != FXT_MAGIC_VALUE)
          return reader__fail(r, TRACE_READ_SKIPPED, c->offset,
                              "magic-number record with the wrong value 0x%llx",
                              (unsigned long long)rec->metadata.magic);
      }
      return TRACE_READ_RECORD;
    default:
      return reader__fail(r, TRACE_READ_SKIPPED, c->offset, "unknown metadata type %u",
                          rec->metadata.type);
  }
}

static bool decode_event(cursor_t* c, uint64_t h, trace_record_t* rec) {
  __typeof__(rec->event)* e = &rec->event;
  e->event_type = (uint32_t)FXT_GET(h, 16, 19);
  if (e->event_type > 10) return FAIL(c, "unknown event type %u", e->event_type);
  if (!take_word(c, &e->ticks, "timestamp") ||
      !take_thread_ref(c, (uint32_t)FXT_GET(h, 24, 31), &e->process_koid, &e->thread_koid,
                       "event thread") ||
      !take_string_ref(c, (uint32_t)FXT_GET(h, 32, 47), &e->category, "event category") ||
      !take_string_ref(c, (uint32_t)FXT_GET(h, 48, 63), &e->name, "event name") ||
      !take_args(c, (unsigned)FXT_GET(h, 20, 23), &e->args))
    return false;
  e->has_scope = false;
  e->scope = 0;
  e->payload = 0;
  switch (e->event_type) {
    case 0: /* the scope word is optional (FXT.md §8.5); it is 0, 1 or 2: a
             * word with another value there is no scope but an extra word */
      if (c->pos < c->limit && word_at(c->base, c->pos) <= 2) {
        e->has_scope = true;
        e->payload = word_at(c->base, c->pos++);
        e->scope = (uint32_t)e->payload;
      }
      return true;
    case 2:
    case 3:
      return true;
    default:
      return take_word(c, &e->payload, "event payload (id or end time)");
  }
}

static bool decode_scheduling(cursor_t* c, uint64_t h, trace_record_t* rec) {
  __typeof__(rec->scheduling)* s = &rec->scheduling;
  memset(s, 0, sizeof(*s));
  s->sched_type = (uint32_t)FXT_GET(h, 60, 63);
  if (!take_word(c, &s->ticks, "timestamp")) return false;
  switch (s->sched_type) {
    case 0:
      s->cpu = (uint32_t)FXT_GET(h, 16, 23);
      s->outgoing_state = (uint32_t)FXT_GET(h, 24, 27);
      s->outgoing_priority = (uint32_t)FXT_GET(h, 44, 51);
      s->incoming_priority = (uint32_t)FXT_GET(h, 52, 59);
      return take_thread_ref(c, (uint32_t)FXT_GET(h, 28, 35), &s->outgoing_process_koid,
                             &s->outgoing_thread_koid, "outgoing thread") &&
             take_thread_ref(c, (uint32_t)FXT_GET(h, 36, 43), &s->incoming_process_koid,
                             &s->incoming_thread_koid, "incoming thread");
    case 1:
      s->cpu = (uint32_t)FXT_GET(h, 20, 35);
      s->outgoing_state = (uint32_t)FXT_GET(h, 36, 39);
      return reserved_zero(c, h, 40, 59, "header") &&
             take_word(c, &s->outgoing_thread_koid, "outgoing thread") &&
             take_word(c, &s->incoming_thread_koid, "incoming thread") &&
             take_args(c, (unsigned)FXT_GET(h, 16, 19), &s->args);
    case 2:
      s->cpu = (uint32_t)FXT_GET(h, 20, 35);
      return reserved_zero(c, h, 36, 59, "header") &&
             take_word(c, &s->incoming_thread_koid, "woken thread") &&
             take_args(c, (unsigned)FXT_GET(h, 16, 19), &s->args);
    default:
      return FAIL(c, "unknown scheduling record type %u", s->sched_type);
  }
}

static bool decode_large(cursor_t* c, uint64_t h, trace_record_t* rec) {
  __typeof__(rec->large)* l = &rec->large;
  memset(l, 0, sizeof(*l));
  l->large_type = (uint32_t)FXT_GET(h, 36, 39);
  l->blob_format = (uint32_t)FXT_GET(h, 40, 43);
  if (l->large_type != FXT_LARGE_BLOB)
    return FAIL(c, "unknown large record type %u", l->large_type);
  if (l->blob_format > 1) return FAIL(c, "unknown large blob format %u", l->blob_format);
  uint64_t f, size;
  if (!reserved_zero(c, h, 44, 63, "header") || !take_word(c, &f, "blob format header") ||
      !reserved_zero(c, f, l->blob_format == 0 ? 44 : 32, 63, "blob format header") ||
      !take_string_ref(c, (uint32_t)FXT_GET(f, 0, 15), &l->category, "blob category") ||
      !take_string_ref(c, (uint32_t)FXT_GET(f, 16, 31), &l->name, "blob name"))
    return false;
  if (l->blob_format == 0 && (!take_word(c, &l->ticks, "timestamp") ||
                              !take_thread_ref(c, (uint32_t)FXT_GET(f, 36, 43), &l->process_koid,
                                               &l->thread_koid, "blob thread") ||
                              !take_args(c, (unsigned)FXT_GET(f, 32, 35), &l->args)))
    return false;
  if (!take_word(c, &size, "blob size")) return false;
  if (size > (c->limit - c->pos) * 8u) return FAIL(c, "large blob payload runs past its record");
  const unsigned char* bytes;
  if (!take_bytes(c, (size_t)size, &bytes, "large blob payload")) return false;
  l->data = bytes;
  l->size = (size_t)size;
  return true;
}

static bool decode_body(cursor_t* c, uint64_t h, trace_record_t* rec) {
  const unsigned char* bytes;
  uint64_t index;
  switch (rec->type) {
    case FXT_RECORD_INITIALIZATION:
      if (!reserved_zero(c, h, 16, 63, "header")) return false;
      if (!take_word(c, &rec->initialization.ticks_per_second, "tick rate")) return false;
      if (rec->initialization.ticks_per_second == 0)
        return FAIL(c, "tick rate of 0 ticks per second");
      if (!settle(c)) return false;
      if (!measuring(c)) current(c)->pub.ticks_per_second = rec->initialization.ticks_per_second;
      return true;
    case FXT_RECORD_STRING:
      if (!reserved_zero(c, h, 31, 31, "header") || !reserved_zero(c, h, 47, 63, "header"))
        return false;
      index = FXT_GET(h, 16, 30);
      rec->string.index = (uint32_t)index;
      if (!take_stream(c, (size_t)FXT_GET(h, 32, 46), &rec->string.value, "string")) return false;
      if (index == 0) return FAIL(c, "string record for index 0, which is reserved");
      if (raw_policy(c) && rec->string.value.length == 0) /* the engine uses ref 0 for "" */
        return FAIL(c, "an empty string record, which fxtrace's engine never writes");
      if (!settle(c)) return false;
      if (!measuring(c) && !strings__set(&c->r->providers, current(c), (uint32_t)index,
                                         rec->string.value.data, rec->string.value.length))
        return FAIL(c, "string table memory limit (%zu bytes) reached or out of memory",
                    c->r->providers.table_budget);
      return true;
    case FXT_RECORD_THREAD:
      if (!reserved_zero(c, h, 24, 63, "header")) return false;
      index = FXT_GET(h, 16, 23);
      rec->thread.index = (uint32_t)index;
      if (!take_word(c, &rec->thread.process_koid, "process koid") ||
          !take_word(c, &rec->thread.thread_koid, "thread koid"))
        return false;
      if (index == 0) return FAIL(c, "thread record for index 0, which is reserved");
      if (!settle(c)) return false;
      if (!measuring(c) && !threads__set(&c->r->providers, current(c), (uint32_t)index,
                                         rec->thread.process_koid, rec->thread.thread_koid))
        return FAIL(c, "thread table memory limit (%zu bytes) reached or out of memory",
                    c->r->providers.table_budget);
      return true;
    case FXT_RECORD_EVENT:
      return decode_event(c, h, rec);
    case FXT_RECORD_BLOB:
      rec->blob.blob_type = (uint32_t)FXT_GET(h, 48, 55);
      if (!reserved_zero(c, h, 47, 47, "header") || !reserved_zero(c, h, 56, 63, "header"))
        return false;
      if (raw_policy(c) && (rec->blob.blob_type < 1 || rec->blob.blob_type > 3))
        return FAIL(c, "unknown blob type %u", rec->blob.blob_type);
      rec->blob.size = (size_t)FXT_GET(h, 32, 46);
      if (!take_string_ref(c, (uint32_t)FXT_GET(h, 16, 31), &rec->blob.name, "blob name") ||
          !take_bytes(c, rec->blob.size, &bytes, "blob payload"))
        return false;
      rec->blob.data = bytes;
      return true;
    case FXT_RECORD_USERSPACE_OBJECT: {
      uint32_t ref = (uint32_t)FXT_GET(h, 16, 23);
      uint64_t unused;
      if (!reserved_zero(c, h, 44, 63, "header")) return false;
      if (!take_word(c, &rec->userspace_object.pointer, "pointer")) return false;
      if (ref == 0 ? !take_word(c, &rec->userspace_object.process_koid, "process koid")
                   : !take_thread_ref(c, ref, &rec->userspace_object.process_koid, &unused,
                                      "object process"))
        return false;
      return take_string_ref(c, (uint32_t)FXT_GET(h, 24, 39), &rec->userspace_object.name,
                             "object name") &&
             take_args(c, (unsigned)FXT_GET(h, 40, 43), &rec->userspace_object.args);
    }
    case FXT_RECORD_KERNEL_OBJECT:
      rec->kernel_object.object_type = (uint32_t)FXT_GET(h, 16, 23);
      return reserved_zero(c, h, 44, 63, "header") &&
             take_word(c, &rec->kernel_object.koid, "koid") &&
             take_string_ref(c, (uint32_t)FXT_GET(h, 24, 39), &rec->kernel_object.name,
                             "object name") &&
             take_args(c, (unsigned)FXT_GET(h, 40, 43), &rec->kernel_object.args);
    case FXT_RECORD_SCHEDULING:
      return decode_scheduling(c, h, rec);
    case FXT_RECORD_LOG: {
      __typeof__(rec->log)* l = &rec->log;
      return reserved_zero(c, h, 31, 31, "header") && reserved_zero(c, h, 40, 63, "header") &&
             take_word(c, &l->ticks, "timestamp") &&
             take_thread_ref(c, (uint32_t)FXT_GET(h, 32, 39), &l->process_koid, &l->thread_koid,
                             "log thread") &&
             take_stream(c, (size_t)FXT_GET(h, 16, 30), &l->message, "log message");
    }
    case FXT_RECORD_LARGE:
      return decode_large(c, h, rec);
    default:
      return FAIL(c, "unknown record type %u (%llu words), skipped", rec->type,
                  (unsigned long long)rec->size_words);
  }
}

int decode__record(trace_reader_t* r, const unsigned char* bytes, size_t words, uint64_t offset,
                   decode_policy_t policy, trace_record_t* rec, decode_extent_t* extent) {
  uint64_t h = word_at(bytes, 0);
  cursor_t c = {r, bytes, words, 1, offset, policy, 0};
  rec->offset = c.offset;
  rec->type = (uint32_t)FXT_GET(h, 0, 3);
  rec->size_words = words;
  rec->provider = &r->providers.current->pub;
  r->scratch_used = 0;
  int rc;
  if (rec->type == FXT_RECORD_METADATA && raw_policy(&c)) /* see raw_policy() */
    rc = reader__fail(r, TRACE_READ_SKIPPED, offset,
                      "a metadata record, which fxtrace's engine never writes into its buffer");
  else if (rec->type == FXT_RECORD_METADATA)
    rc = decode_metadata(&c, h, rec);
  else
    rc = decode_body(&c, h, rec) ? TRACE_READ_RECORD : TRACE_READ_SKIPPED;
  if (rc == TRACE_READ_RECORD && !settle(&c)) rc = TRACE_READ_SKIPPED;
  extent->content_words = c.pos;
  extent->arg_extra_words = c.arg_extra;
  return rc;
}
