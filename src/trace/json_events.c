/* FXT records → Chrome Trace Event JSON objects (docs/convert-json.md). */
#include "trace/json_events.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "trace/json_typed.h"
#include "trace/thread_names.h"
#include "trace/timestamp.h"

enum {
  ARG_NULL,
  ARG_INT32,
  ARG_UINT32,
  ARG_INT64,
  ARG_UINT64,
  ARG_DOUBLE,
  ARG_STRING,
  ARG_POINTER,
  ARG_KOID,
  ARG_BOOL,
  ARG_BLOB
};

static const char* const kEventPhases[] = {"i", "C", "B", "E", "X", "b", "n", "e", "s", "t", "f"};

static void key(json_writer_t* j, const char* name) {
  json__raw(j, ",\"", 2);
  json__text(j, name);
  json__raw(j, "\":", 2);
}

static void string_value(json_writer_t* j, const trace_reader_string_t* s) {
  json__string(j, s->data, s->length);
}

static void ts_value(json_writer_t* j, uint64_t ns) {
  char buf[32];
  json__raw(j, buf, timestamp__format_us(buf, false, ns));
}

/* end − begin, negative if the archive says so. */
static void dur_value(json_writer_t* j, uint64_t begin_ns, uint64_t end_ns) {
  char buf[32];
  bool negative = end_ns < begin_ns;
  json__raw(j, buf,
            timestamp__format_us(buf, negative, negative ? begin_ns - end_ns : end_ns - begin_ns));
}

/* `{"cat":…,"name":…,"ph":…,"ts":…,"pid":…,"tid":…` — the caller adds the
 * phase-specific keys and the closing brace. */
static void open_event(json_converter_t* c, const char* cat, size_t cat_len, const char* name,
                       size_t name_len, const char* ph, uint64_t ts_ns, uint64_t pid,
                       uint64_t tid) {
  json_writer_t* j = c->out;
  json__text(j, c->events++ ? ",\n{\"cat\":" : "\n{\"cat\":");
  json__string(j, cat, cat_len);
  json__text(j, ",\"name\":");
  json__string(j, name, name_len);
  json__text(j, ",\"ph\":\"");
  json__text(j, ph);
  json__text(j, "\",\"ts\":");
  ts_value(j, ts_ns);
  key(j, "pid");
  json__u64(j, json_koids__id(&c->koids, pid));
  key(j, "tid");
  json__u64(j, json_koids__id(&c->koids, tid));
}

/* A counter's series value: an integer or a finite double (JSON has no NaN). */
static bool is_counter_value(const trace_reader_arg_t* a) {
  return a->type >= ARG_INT32 && a->type <= ARG_DOUBLE &&
         (a->type != ARG_DOUBLE || isfinite(a->double_value));
}

static bool has_counter_value(const trace_reader_args_t* args) {
  for (size_t i = 0; i < args->count; i++)
    if (is_counter_value(&args->items[i])) return true;
  return false;
}

static void arg_value(json_writer_t* j, const trace_reader_arg_t* a) {
  char buf[32];
  switch (a->type) {
    case ARG_NULL:
      json__text(j, "null");
      break;
    case ARG_INT32:
      json__i64(j, a->int32_value);
      break;
    case ARG_UINT32:
      json__u64(j, a->uint32_value);
      break;
    case ARG_INT64:
      json__i64(j, a->int64_value);
      break;
    case ARG_UINT64:
      json__u64(j, a->uint64_value);
      break;
    case ARG_DOUBLE:
      json__double(j, a->double_value);
      break;
    case ARG_STRING:
      string_value(j, &a->string_value);
      break;
    case ARG_POINTER:
      json__hex_string(j, a->pointer_value);
      break;
    case ARG_KOID:
      json__raw(j, buf,
                (size_t)snprintf(buf, sizeof(buf), "\"#%llu\"", (unsigned long long)a->koid_value));
      break;
    case ARG_BOOL:
      json__text(j, a->bool_value ? "true" : "false");
      break;
    case ARG_BLOB:
      json__base64_string(j, a->blob_value.data, a->blob_value.size);
      break;
    default:
      json__text(j, "null");
      break;
  }
}

/* `,"args":{…}` when at least one argument passes the filter; with `open`,
 * the object is already open (and not empty): only `,…`. Returns the number
 * of arguments written. */
/* `format`: the typed event's (NULL for others): its raw-byte fields become
 * JSON arrays or hex strings (json_typed.h). */
static size_t write_args(json_converter_t* c, const trace_reader_args_t* args, bool numeric_only,
                         const trace_event_format_t* format, bool open) {
  json_writer_t* j = c->out;
  size_t written = 0;
  for (size_t i = 0; i < args->count; i++) {
    const trace_reader_arg_t* a = &args->items[i];
    if (numeric_only && !is_counter_value(a)) {
      c->omitted_counter_args++;
      continue;
    }
    json__text(j, written++ || open ? "," : ",\"args\":{");
    string_value(j, &a->name);
    json__raw(j, ":", 1);
    if (!json_typed__field_value(j, format, a)) arg_value(j, a);
  }
  if (written && !open) json__raw(j, "}", 1);
  return written;
}

static void write_overflow(json_converter_t* c, const pending_overflow_t* p, uint64_t ts_ns) {
  json_writer_t* j = c->out;
  open_event(c, "fxtrace", 7, "buffer overflow", 15, "i", ts_ns, 0, 0);
  json__text(j, ",\"s\":\"g\",\"args\":{\"provider_id\":");
  json__u64(j, p->provider_id);
  json__text(j, ",\"provider_name\":");
  json__string(j, p->provider_name, strlen(p->provider_name));
  json__text(j, "}}");
}

/* The overflow record precedes its provider's data, so it is placed at the
 * provider's next timestamp. */
static void flush_overflow_for(json_converter_t* c, uint32_t provider_id, uint64_t ts_ns) {
  for (unsigned i = 0; i < c->num_pending; i++) {
    if (c->pending[i].provider_id != provider_id) continue;
    write_overflow(c, &c->pending[i], ts_ns);
    c->pending[i] = c->pending[--c->num_pending];
    return;
  }
}

static void note_overflow(json_converter_t* c, const trace_record_t* r) {
  c->overflows++;
  fprintf(stderr,
          "trace convert: warning: provider %u (%s) overflowed its buffer: records were dropped\n",
          r->metadata.provider_id, r->metadata.provider_name.data);
  for (unsigned i = 0; i < c->num_pending; i++)
    if (c->pending[i].provider_id == r->metadata.provider_id) return;
  if (c->num_pending == MAX_PENDING_OVERFLOWS) {
    write_overflow(c, &c->pending[0], c->last_ts_ns); /* make room: emit the oldest now */
    c->pending[0] = c->pending[--c->num_pending];
  }
  pending_overflow_t* p = &c->pending[c->num_pending++];
  p->provider_id = r->metadata.provider_id;
  snprintf(p->provider_name, sizeof(p->provider_name), "%s", r->metadata.provider_name.data);
}

/* --- a duration begin held back ---------------------------------------------
 * Perfetto's sorter may put an end before its begin at the same timestamp (a
 * slice that never ends), as TRACE_INSTAFLOW_* writes them: begin, flow, end.
 * So a begin's text goes to memory, and the flows after it on its thread at
 * its timestamp too; an end that then matches it (same thread, timestamp,
 * category and name) turns the begin into a complete event of duration 0 with
 * the arguments of both, written before the flows, which both importers bind
 * to it. Anything else writes the held text as it is. */

typedef struct json_held json_held_t;

struct json_held {
  bool active;
  FILE* memory; /* open_memstream: text, size */
  char* text;
  size_t size;
  json_writer_t writer; /* to `memory` */
  uint32_t provider_id;
  uint64_t pid, tid, ts_ns;
  char* category; /* copies, to compare with the end */
  size_t category_length;
  char* name;
  size_t name_length;
  size_t begin_end; /* the begin's text is text[0, begin_end) */
  bool begin_args;  /* it has "args" */
};

static bool same(const char* data, size_t length, const trace_reader_string_t* s) {
  return s->length == length && (length == 0 || memcmp(s->data, data, length) == 0);
}

static char* copy(const trace_reader_string_t* s) {
  char* p = malloc(s->length + 1);
  if (p) {
    memcpy(p, s->data, s->length);
    p[s->length] = '\0';
  }
  return p;
}

/* The held text so far (flushed to memory); false if memory ran out. */
static bool held_text(json_held_t* h) {
  return json__flush(&h->writer) && fflush(h->memory) == 0 && h->size >= h->begin_end;
}

static void held_reset(json_held_t* h) {
  free(h->category);
  free(h->name);
  h->category = h->name = NULL;
  h->active = false;
  rewind(h->memory);
  json_writer__init(&h->writer, h->memory);
}

/* Text that could not be kept: the conversion fails as on a failed write. */
static void held_lost(json_converter_t* c) {
  if (c->out->failed) return;
  c->out->failed = true;
  c->out->error = ENOMEM;
}

/* Writes the held text as it is. */
static void release_held(json_converter_t* c) {
  json_held_t* h = c->held;
  if (!h || !h->active) return;
  if (held_text(h))
    json__raw(c->out, h->text, h->size);
  else
    held_lost(c);
  held_reset(h);
}

/* Starts holding the begin `r`; false (nothing held) without memory. */
static bool hold_begin(json_converter_t* c, const trace_record_t* r, uint64_t ts) {
  const __typeof__(r->event)* e = &r->event;
  json_held_t* h = c->held;
  if (!h) {
    h = c->held = calloc(1, sizeof(*h));
    if (!h) return false;
    h->memory = open_memstream(&h->text, &h->size);
    if (!h->memory) return false;
    json_writer__init(&h->writer, h->memory);
  }
  if (!h->memory) return false;
  h->category = copy(&e->category);
  h->name = copy(&e->name);
  if (!h->category || !h->name) {
    held_reset(h);
    return false;
  }
  h->active = true;
  h->category_length = e->category.length;
  h->name_length = e->name.length;
  h->provider_id = r->provider->id;
  h->pid = e->process_koid;
  h->tid = e->thread_koid;
  h->ts_ns = ts;
  h->begin_end = 0;
  return true;
}

/* Whether event `r` at `ts` is on the held begin's thread at its timestamp. */
static bool with_held(const json_held_t* h, const trace_record_t* r, uint64_t ts) {
  return h && h->active && h->provider_id == r->provider->id && h->pid == r->event.process_koid &&
         h->tid == r->event.thread_koid && h->ts_ns == ts;
}

/* Where a key ("ph", "tid") of the held begin's text is: its first occurrence
 * (a string's own quotes are escaped, so `,"key":` cannot be inside one). */
static size_t key_at(const json_held_t* h, const char* k) {
  const char* at = memmem(h->text, h->begin_end, k, strlen(k));
  return at ? (size_t)(at - h->text) + strlen(k) : h->begin_end;
}

/* The end `r` closes the held begin: one complete event of duration 0, with
 * the arguments of both, then the flows. */
static void write_complete(json_converter_t* c, const trace_record_t* r) {
  json_held_t* h = c->held;
  json_writer_t* j = c->out;
  if (!held_text(h)) {
    held_lost(c);
    held_reset(h);
    return;
  }
  size_t ph = key_at(h, ",\"ph\":\"");
  size_t tid = key_at(h, ",\"tid\":");
  while (tid < h->begin_end && h->text[tid] >= '0' && h->text[tid] <= '9') tid++;
  json__raw(j, h->text, ph);
  json__raw(j, "X", 1);
  json__raw(j, h->text + ph + 1, tid - ph - 1);
  key(j, "dur");
  dur_value(j, h->ts_ns, h->ts_ns);
  if (r->event.args.count == 0) {
    json__raw(j, h->text + tid, h->begin_end - tid);
  } else { /* reopen the arguments (or the event) and add the end's */
    size_t cut = h->begin_args ? 2 : 1;
    json__raw(j, h->text + tid, h->begin_end - cut - tid);
    write_args(c, &r->event.args, false, trace_format_set_find_event(c->formats, r), h->begin_args);
    json__text(j, h->begin_args ? "}}" : "}");
  }
  json__raw(j, h->text + h->begin_end, h->size - h->begin_end);
  held_reset(h);
}

static void write_event(json_converter_t* c, const trace_record_t* r) {
  const __typeof__(r->event)* e = &r->event;
  uint64_t tps = r->provider->ticks_per_second;
  uint64_t ts = timestamp__ticks_to_ns(e->ticks, tps);
  if (e->event_type >= sizeof(kEventPhases) / sizeof(kEventPhases[0])) return;
  bool hold = false; /* the text goes to the held one */
  if (c->held && c->held->active) {
    json_held_t* h = c->held;
    if (with_held(h, r, ts) && e->event_type >= 8) {
      hold = true;
    } else if (with_held(h, r, ts) && e->event_type == 3 &&
               same(h->category, h->category_length, &e->category) &&
               same(h->name, h->name_length, &e->name)) {
      c->last_ts_ns = ts;
      write_complete(c, r);
      return;
    } else {
      release_held(c);
    }
  }
  if (!hold) flush_overflow_for(c, r->provider->id, ts);
  c->last_ts_ns = ts;
  if (e->event_type == 1 && !has_counter_value(&e->args)) { /* importers reject it */
    c->omitted_counters++;
    c->omitted_counter_args += e->args.count;
    return;
  }
  if (!hold && e->event_type == 2) hold = hold_begin(c, r, ts);
  json_writer_t* out = c->out;
  if (hold) c->out = &c->held->writer;
  json_writer_t* j = c->out;
  open_event(c, e->category.data, e->category.length, e->name.data, e->name.length,
             kEventPhases[e->event_type], ts, e->process_koid, e->thread_koid);
  switch (e->event_type) {
    case 0:
      json__text(j, e->scope == 2   ? ",\"s\":\"g\""
                    : e->scope == 1 ? ",\"s\":\"p\""
                                    : ",\"s\":\"t\"");
      break;
    case 1:
      if (e->payload) {
        key(j, "id");
        json__hex_string(j, e->payload);
      }
      break;
    case 4:
      key(j, "dur");
      dur_value(j, ts, timestamp__ticks_to_ns(e->payload, tps));
      break;
    case 2:
    case 3:
      break;
    case 5:
    case 6:
    case 7: /* FXT matches async events within their process: a process-local id */
      json__text(j, ",\"id2\":{\"local\":");
      json__hex_string(j, e->payload);
      json__raw(j, "}", 1);
      break;
    default: /* flow ids: global in FXT too */
      key(j, "id");
      json__hex_string(j, e->payload);
      if (e->event_type == 10) json__text(j, ",\"bp\":\"e\"");
      break;
  }
  size_t args = write_args(c, &e->args, e->event_type == 1,
                           trace_format_set_find_event(c->formats, r), false);
  json__raw(j, "}", 1);
  c->out = out;
  if (hold && c->held->begin_end == 0) { /* the begin itself */
    c->held->begin_args = args > 0;
    if (held_text(c->held))
      c->held->begin_end = c->held->size;
    else
      release_held(c); /* lost: fails the conversion */
  }
}

static void write_log(json_converter_t* c, const trace_record_t* r) {
  uint64_t ts = timestamp__ticks_to_ns(r->log.ticks, r->provider->ticks_per_second);
  flush_overflow_for(c, r->provider->id, ts);
  c->last_ts_ns = ts;
  open_event(c, "log", 3, "log", 3, "i", ts, r->log.process_koid, r->log.thread_koid);
  json__text(c->out, ",\"s\":\"g\",\"args\":{\"message\":");
  string_value(c->out, &r->log.message);
  json__text(c->out, "}}");
}

static const trace_reader_arg_t* find_koid_arg(const trace_reader_args_t* args, const char* name) {
  for (size_t i = 0; i < args->count; i++)
    if (args->items[i].type == ARG_KOID && strcmp(args->items[i].name.data, name) == 0)
      return &args->items[i];
  return NULL;
}

/* `koid`: the object named, shown as an argument when its pid or tid is a
 * synthetic id (json_koids.h). */
static void write_metadata_event(json_converter_t* c, const char* what, uint64_t pid, uint64_t tid,
                                 uint64_t koid, const trace_reader_string_t* name) {
  json_writer_t* j = c->out;
  json__text(j, c->events++ ? ",\n{\"cat\":\"__metadata\",\"name\":\""
                            : "\n{\"cat\":\"__metadata\",\"name\":\"");
  json__text(j, what);
  json__text(j, "\",\"ph\":\"M\",\"pid\":");
  json__u64(j, json_koids__id(&c->koids, pid));
  key(j, "tid");
  json__u64(j, json_koids__id(&c->koids, tid));
  json__text(j, ",\"args\":{\"name\":");
  string_value(j, name);
  if (json_koids__is_mapped(koid)) {
    char buf[32];
    json__raw(j, buf,
              (size_t)snprintf(buf, sizeof(buf), ",\"koid\":\"#%llu\"", (unsigned long long)koid));
  }
  json__text(j, "}}");
}

static void write_kernel_object(json_converter_t* c, const trace_record_t* r) {
  const __typeof__(r->kernel_object)* k = &r->kernel_object;
  if (k->name.length == 0) return;
  if (k->object_type == 1) {
    write_metadata_event(c, "process_name", k->koid, 0, k->koid, &k->name);
  } else if (k->object_type == 2) {
    const trace_reader_arg_t* process = find_koid_arg(&k->args, "process");
    if (process)
      write_metadata_event(c, "thread_name", process->koid_value, k->koid, k->koid, &k->name);
    else
      c->unplaced_threads++;
  }
}

void json_converter__begin(json_converter_t* c, json_writer_t* out) {
  memset(c, 0, sizeof(*c));
  c->out = out;
  c->systrace.koids = &c->koids;
  c->formats = trace_format_set_new(); /* NULL (out of memory): arrays stay strings */
  json__text(out, "{\"displayTimeUnit\":\"ns\",\"traceEvents\":[");
  json__boundary(out); /* JSON_CLOSING_AFTER_CUT closes the text there */
}

void json_converter__record(json_converter_t* c, const trace_record_t* r) {
  switch (r->type) {
    case 0:
      if (r->metadata.type == 3 && r->metadata.event_id == 0) {
        release_held(c);
        note_overflow(c, r);
      }
      break;
    case 4:
      write_event(c, r);
      json_systrace__instant(&c->systrace, r);
      break;
    case 5:
      if (trace_format_set_add_record(c->formats, r, NULL) == 0) c->omitted_blobs++;
      break;
    case 6:
      c->omitted_objects++;
      break;
    case 7:
      thread_names__note(r); /* the systrace lines name their tasks */
      release_held(c);
      write_kernel_object(c, r);
      break;
    case 8:
      if (r->scheduling.sched_type > 2)
        c->omitted_scheduling++;
      else
        json_systrace__scheduling(&c->systrace, r);
      break;
    case 9:
      release_held(c);
      write_log(c, r);
      break;
    case 15:
      c->omitted_blobs++;
      break;
    default:
      break; /* string, thread, initialization: no event of their own */
  }
  json__boundary(c->out); /* after whole events only */
}

void json_converter__end(json_converter_t* c) {
  release_held(c);
  if (c->held) {
    if (c->held->memory) fclose(c->held->memory);
    free(c->held->text);
    free(c->held);
    c->held = NULL;
  }
  while (c->num_pending) {
    write_overflow(c, &c->pending[0], c->last_ts_ns);
    c->pending[0] = c->pending[--c->num_pending];
  }
  json__text(c->out, "\n");
  json_systrace__finish(&c->systrace, c->out);
  json__text(c->out, "}\n");
  trace_format_set_free(c->formats);
  c->formats = NULL;
  json_koids__free(&c->koids);
}
