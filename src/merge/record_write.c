/* An ordered record re-encoded for the merged archive (docs/merge.md).
 *
 * The ordered view hands records resolved: their strings and threads are
 * values, not indexes into tables of their input. They are written so:
 * every string and thread inline, which needs no table and so no state
 * shared between hosts; string, thread, initialization and the inputs' own
 * provider records are not copied. Each (input, provider version) becomes
 * one output provider, named "HOST: NAME", with 1 tick = 1 ns; a provider
 * section record selects it again when the next record is another's.
 * Timestamps are the view's (ns, the input's clock map applied); koids and CPU
 * numbers are the host's (identity.c). */
#include <stdlib.h>
#include <string.h>

#include "engine/explicit_name.h"
#include "engine/stop_names.h"
#include "fxt/fxt_blob_chain.h"
#include "fxt/fxt_encode.h"
#include "merge/merge.h"
#include "trace/timestamp.h"

enum { NAME_BYTES = TRACE_ENCODED_STRING_REF_MAX_LENGTH + 512 };

typedef struct out_provider {
  size_t input;
  const trace_reader_provider_t* version; /* stable once the view loaded */
  uint32_t id;
} out_provider_t;

struct merge_writer {
  const merge_host_t* hosts;
  size_t host_count;
  merge_sink_fn sink;
  void* context;
  out_provider_t* providers;
  size_t provider_count, provider_capacity;
  size_t last; /* the entry found last: consecutive records mostly share it */
  bool have_current;
  uint32_t current; /* the output provider selected in the archive */
  merge_counts_t counts;
  char* name; /* NAME_BYTES: a "HOST: NAME" */
  trace_arg_t args[TRACE_READER_MAX_ARGS];
  uint64_t words[FXT_MAX_RECORD_WORDS + 8];
};

merge_writer_t* merge__writer_open(const merge_host_t* hosts, size_t count, merge_sink_fn sink,
                                   void* context) {
  merge_writer_t* w = calloc(1, sizeof(*w));
  if (!w) return NULL;
  w->name = malloc(NAME_BYTES);
  if (!w->name) {
    free(w);
    return NULL;
  }
  w->hosts = hosts;
  w->host_count = count;
  w->sink = sink;
  w->context = context;
  return w;
}

void merge__writer_close(merge_writer_t* w) {
  if (!w) return;
  free(w->providers);
  free(w->name);
  free(w);
}

merge_counts_t merge__writer_counts(const merge_writer_t* w) { return w->counts; }

static bool emit(merge_writer_t* w, const uint64_t* end) {
  size_t bytes = (size_t)(end - w->words) * 8;
  if (!w->sink(w->context, w->words, bytes)) return false;
  w->counts.written++;
  return true;
}

bool merge__writer_start(merge_writer_t* w) {
  if (!emit(w, fxt_write_magic_record(w->words))) return false;
  w->counts.written = 0; /* records of the inputs only */
  return true;
}

static trace_string_ref_t str(merge_writer_t* w, const trace_reader_string_t* s) {
  if (s->length > TRACE_ENCODED_STRING_REF_MAX_LENGTH) w->counts.truncated++;
  return trace_make_inline_string_ref(s->data, s->length);
}

/* "HOST: TEXT" in w->name. */
static trace_reader_string_t prefixed(merge_writer_t* w, const merge_host_t* h,
                                      const trace_reader_string_t* text) {
  size_t host = strlen(h->name);
  if (host > 256) host = 256;
  size_t n = text->length;
  if (n > NAME_BYTES - host - 3) n = NAME_BYTES - host - 3;
  memcpy(w->name, h->name, host);
  memcpy(w->name + host, ": ", 2);
  memcpy(w->name + host + 2, text->data, n);
  w->name[host + 2 + n] = '\0';
  trace_reader_string_t s = {w->name, host + 2 + n};
  return s;
}

/* Selects the record's output provider, declaring it the first time. */
static bool select_provider(merge_writer_t* w, const ordered_record_t* r) {
  static const trace_reader_provider_t kNone = {0, {"", 0}, 1000000000u};
  const trace_reader_provider_t* v = r->record.provider ? r->record.provider : &kNone;
  out_provider_t* p = NULL;
  if (w->provider_count && w->providers[w->last].input == r->input &&
      w->providers[w->last].version == v)
    p = &w->providers[w->last];
  for (size_t i = 0; !p && i < w->provider_count; i++)
    if (w->providers[i].input == r->input && w->providers[i].version == v) {
      p = &w->providers[i];
      w->last = i;
    }
  if (!p) {
    if (w->provider_count == w->provider_capacity) {
      size_t cap = w->provider_capacity ? 2 * w->provider_capacity : 16;
      out_provider_t* grown = realloc(w->providers, cap * sizeof(*grown));
      if (!grown) return false;
      w->providers = grown;
      w->provider_capacity = cap;
    }
    w->last = w->provider_count++;
    p = &w->providers[w->last];
    p->input = r->input;
    p->version = v;
    p->id = (uint32_t)w->last + 1;
    trace_reader_string_t name = prefixed(w, &w->hosts[r->input], &v->name);
    uint64_t* end = fxt_write_provider_info_record(w->words, p->id, name.data, name.length);
    end = fxt_write_initialization_record(end, 1000000000u);
    if (!emit(w, end)) return false;
    w->have_current = true;
    w->current = p->id;
    return true;
  }
  if (w->have_current && w->current == p->id) return true;
  w->have_current = true;
  w->current = p->id;
  return emit(w, fxt_write_provider_section_record(w->words, p->id));
}

static size_t convert_args(merge_writer_t* w, const merge_host_t* h,
                           const trace_reader_args_t* in) {
  size_t n = in->count < TRACE_READER_MAX_ARGS ? in->count : TRACE_READER_MAX_ARGS;
  for (size_t i = 0; i < n; i++) {
    const trace_reader_arg_t* a = &in->items[i];
    trace_arg_value_t v;
    switch (a->type) {
      case TRACE_ARG_INT32:
        v = trace_make_int32_arg_value(a->int32_value);
        break;
      case TRACE_ARG_UINT32:
        v = trace_make_uint32_arg_value(a->uint32_value);
        break;
      case TRACE_ARG_INT64:
        v = trace_make_int64_arg_value(a->int64_value);
        break;
      case TRACE_ARG_UINT64:
        v = trace_make_uint64_arg_value(a->uint64_value);
        break;
      case TRACE_ARG_DOUBLE:
        v = trace_make_double_arg_value(a->double_value);
        break;
      case TRACE_ARG_STRING:
        v = trace_make_string_arg_value(str(w, &a->string_value));
        break;
      case TRACE_ARG_POINTER:
        v = trace_make_pointer_arg_value((uintptr_t)a->pointer_value);
        break;
      case TRACE_ARG_KOID:
        v = trace_make_koid_arg_value(merge__koid(h, a->koid_value, &w->counts));
        break;
      case TRACE_ARG_BOOL:
        v = trace_make_bool_arg_value(a->bool_value);
        break;
      case TRACE_ARG_BLOB:
        v = trace_make_blob_arg_value(a->blob_value.data, a->blob_value.size);
        break;
      default:
        v = trace_make_null_arg_value();
        break;
    }
    w->args[i] = trace_make_arg(str(w, &a->name), v);
  }
  return n;
}

static trace_thread_ref_t thread(merge_writer_t* w, const merge_host_t* h, uint64_t process,
                                 uint64_t thread_koid) {
  return trace_make_inline_thread_ref(merge__koid(h, process, &w->counts),
                                      merge__koid(h, thread_koid, &w->counts));
}

/* words over the 12-bit size field: left out, counted. */
static bool fits(merge_writer_t* w, size_t words) {
  if (words <= FXT_MAX_RECORD_WORDS) return true;
  w->counts.too_large++;
  return false;
}

static bool write_event(merge_writer_t* w, const merge_host_t* h, const ordered_record_t* r) {
  const trace_record_t* rec = &r->record;
  trace_thread_ref_t th = thread(w, h, rec->event.process_koid, rec->event.thread_koid);
  trace_string_ref_t cat = str(w, &rec->event.category);
  trace_string_ref_t name = str(w, &rec->event.name);
  size_t n = convert_args(w, h, &rec->event.args);
  uint64_t payload = rec->event.payload;
  if (rec->event.event_type == FXT_EVENT_INSTANT)
    payload = rec->event.has_scope ? rec->event.scope : TRACE_SCOPE_THREAD;
  else if (rec->event.event_type == FXT_EVENT_DURATION_COMPLETE)
    payload = ordered__clock_map(
        &h->clock,
        timestamp__ticks_to_ns(payload, rec->provider ? rec->provider->ticks_per_second : 0));
  size_t words = fxt_event_record_words(rec->event.event_type, &th, &cat, &name, w->args, n);
  if (!fits(w, words)) return true;
  return emit(w, fxt_write_event_record(w->words, words, rec->event.event_type, r->ns, &th, &cat,
                                        &name, w->args, n, payload));
}

static bool write_scheduling(merge_writer_t* w, const merge_host_t* h, const ordered_record_t* r) {
  const trace_record_t* rec = &r->record;
  uint64_t cpu = (uint64_t)rec->scheduling.cpu + h->cpu_base;
  if (cpu > 0xffff) {
    w->counts.lanes_lost++;
    return true;
  }
  size_t n = convert_args(w, h, &rec->scheduling.args);
  uint64_t out_tid = merge__koid(h, rec->scheduling.outgoing_thread_koid, &w->counts);
  uint64_t in_tid = merge__koid(h, rec->scheduling.incoming_thread_koid, &w->counts);
  uint64_t* end;
  switch (rec->scheduling.sched_type) {
    case FXT_SCHED_LEGACY_CONTEXT_SWITCH:
      if (cpu <= 0xff) {
        trace_thread_ref_t out = thread(w, h, rec->scheduling.outgoing_process_koid,
                                        rec->scheduling.outgoing_thread_koid);
        trace_thread_ref_t in = thread(w, h, rec->scheduling.incoming_process_koid,
                                       rec->scheduling.incoming_thread_koid);
        size_t words = fxt_legacy_context_switch_record_words(&out, &in);
        end = fxt_write_legacy_context_switch_record(
            w->words, words, r->ns, (trace_cpu_number_t)cpu, rec->scheduling.outgoing_state, &out,
            &in, rec->scheduling.outgoing_priority, rec->scheduling.incoming_priority);
        return emit(w, end);
      }
      /* past lane 255: the 8-bit CPU field cannot hold it, the 16-bit one
       * of a context switch record can (without the process koids and
       * priorities) */
      w->counts.lanes_widened++;
      n = 0;
      /* fall through */
    case FXT_SCHED_CONTEXT_SWITCH: {
      size_t words = fxt_context_switch_record_words(w->args, n);
      if (!fits(w, words)) return true;
      end = fxt_write_context_switch_record(w->words, words, r->ns, (trace_cpu_number_t)cpu,
                                            rec->scheduling.outgoing_state, out_tid, in_tid,
                                            w->args, n);
      return emit(w, end);
    }
    case FXT_SCHED_THREAD_WAKEUP: {
      size_t words = fxt_thread_wakeup_record_words(w->args, n);
      if (!fits(w, words)) return true;
      end = fxt_write_thread_wakeup_record(w->words, words, r->ns, (trace_cpu_number_t)cpu, in_tid,
                                           w->args, n);
      return emit(w, end);
    }
    default:
      return true;
  }
}

static bool arg_is(const trace_reader_arg_t* a, const char* name) {
  return a->name.length == strlen(name) && memcmp(a->name.data, name, a->name.length) == 0;
}

static bool write_kernel_object(merge_writer_t* w, const merge_host_t* h,
                                const trace_record_t* rec) {
  uint32_t type = rec->kernel_object.object_type;
  bool task = type == 1 || type == 2; /* process, thread: koids are pids, tids */
  uint64_t koid =
      task ? merge__koid(h, rec->kernel_object.koid, &w->counts) : rec->kernel_object.koid;
  trace_reader_string_t text = rec->kernel_object.name;
  if (type == 1) text = prefixed(w, h, &text); /* a process carries its host's name */
  trace_string_ref_t name = str(w, &text);
  size_t n = convert_args(w, h, &rec->kernel_object.args);
  /* a thread's name at a stop (src/engine/stop_names.h: `name_at`) and a
   * name a program gave (src/engine/explicit_name.h: `explicit_name`) carry
   * a time on the host's clock, mapped onto the output's as timestamps are */
  for (size_t i = 0; task && i < n; i++) {
    const trace_reader_arg_t* a = &rec->kernel_object.args.items[i];
    if (a->type == TRACE_ARG_UINT64 && (arg_is(a, STOP_NAMES_ARG) || arg_is(a, EXPLICIT_NAME_ARG)))
      w->args[i].value =
          trace_make_uint64_arg_value(ordered__clock_map(&h->clock, a->uint64_value));
  }
  size_t words = fxt_kernel_object_record_words(&name, w->args, n);
  if (!fits(w, words)) return true;
  return emit(w, fxt_write_kernel_object_record(w->words, words, koid, type, &name, w->args, n));
}

/* The continuations of a planned chain (fxt/fxt_blob_chain.h), after its
 * head: one record each, from `rest`, the payload past the head's bytes. */
static bool emit_continuations(merge_writer_t* w, const fxt_blob_chain_t* c,
                               const trace_string_ref_t* name, const uint8_t* rest,
                               size_t rest_size) {
  for (size_t i = 0; i < c->pieces; i++) {
    size_t n = rest_size < FXT_BLOB_CHAIN_PIECE ? rest_size : FXT_BLOB_CHAIN_PIECE;
    if (!emit(w, fxt_write_blob_record(w->words, fxt_blob_record_words(name, n),
                                       TRACE_BLOB_TYPE_DATA, name, rest, n)))
      return false;
    rest += n;
    rest_size -= n;
  }
  return true;
}

/* A large blob, whole as the reader reassembled it, written again as a
 * chain where it no longer fits one record: its strings are inline here, so
 * a chain's head of 4095 words grows past the size field. */
static bool write_large(merge_writer_t* w, const merge_host_t* h, const ordered_record_t* r) {
  const trace_record_t* rec = &r->record;
  if (rec->large.large_type != 0) return true;
  trace_string_ref_t cat = str(w, &rec->large.category);
  trace_string_ref_t name = str(w, &rec->large.name);
  const uint8_t* data = rec->large.data;
  fxt_blob_chain_t chain;
  const uint64_t* end;
  if (rec->large.blob_format == TRACE_BLOB_FORMAT_EVENT) {
    trace_thread_ref_t th = thread(w, h, rec->large.process_koid, rec->large.thread_koid);
    size_t n = convert_args(w, h, &rec->large.args);
    size_t meta = fxt_large_blob_event_record_words(&cat, &name, &th, w->args, n, 0);
    if (!fxt_blob_chain_plan(&chain, meta, &name, rec->large.size)) {
      w->counts.too_large++;
      return true;
    }
    end = fxt_write_large_blob_event_record(w->words, chain.head_words, &cat, &name, r->ns, &th,
                                            w->args, n, data, chain.head_bytes);
  } else {
    size_t meta = fxt_large_blob_attachment_record_words(&cat, &name, 0);
    if (!fxt_blob_chain_plan(&chain, meta, &name, rec->large.size)) {
      w->counts.too_large++;
      return true;
    }
    end = fxt_write_large_blob_attachment_record(w->words, chain.head_words, &cat, &name, data,
                                                 chain.head_bytes);
  }
  return emit(w, end) && emit_continuations(w, &chain, &name, data + chain.head_bytes,
                                            rec->large.size - chain.head_bytes);
}

bool merge__write_record(merge_writer_t* w, const ordered_record_t* r) {
  const trace_record_t* rec = &r->record;
  const merge_host_t* h = &w->hosts[r->input];
  w->counts.records++;
  switch (rec->type) {
    case FXT_RECORD_METADATA:
      if (rec->metadata.type != FXT_METADATA_PROVIDER_EVENT) return true;
      if (!select_provider(w, r)) return false;
      return emit(w, fxt_write_provider_event_record(w->words, w->current, rec->metadata.event_id));
    case FXT_RECORD_INITIALIZATION:
    case FXT_RECORD_STRING:
    case FXT_RECORD_THREAD:
      return true; /* resolved into the records */
    default:
      break;
  }
  if (!select_provider(w, r)) return false;
  switch (rec->type) {
    case FXT_RECORD_EVENT:
      return write_event(w, h, r);
    case FXT_RECORD_BLOB: {
      if (rec->blob.size > FXT_MAX_SMALL_BLOB_SIZE) {
        w->counts.too_large++;
        return true;
      }
      trace_string_ref_t name = str(w, &rec->blob.name);
      size_t words = fxt_blob_record_words(&name, rec->blob.size);
      if (!fits(w, words)) return true;
      return emit(w, fxt_write_blob_record(w->words, words, rec->blob.blob_type, &name,
                                           rec->blob.data, rec->blob.size));
    }
    case FXT_RECORD_USERSPACE_OBJECT: {
      trace_thread_ref_t process = trace_make_inline_thread_ref(
          merge__koid(h, rec->userspace_object.process_koid, &w->counts), 0);
      trace_string_ref_t name = str(w, &rec->userspace_object.name);
      size_t n = convert_args(w, h, &rec->userspace_object.args);
      size_t words = fxt_userspace_object_record_words(&process, &name, w->args, n);
      if (!fits(w, words)) return true;
      return emit(w, fxt_write_userspace_object_record(w->words, words,
                                                       (uintptr_t)rec->userspace_object.pointer,
                                                       &process, &name, w->args, n));
    }
    case FXT_RECORD_KERNEL_OBJECT:
      return write_kernel_object(w, h, rec);
    case FXT_RECORD_SCHEDULING:
      return write_scheduling(w, h, r);
    case FXT_RECORD_LOG: {
      trace_thread_ref_t th = thread(w, h, rec->log.process_koid, rec->log.thread_koid);
      /* what one record holds beside an inline thread (the source's may
       * have been indexed: 16 bytes more room) */
      size_t room = (FXT_MAX_RECORD_WORDS - fxt_log_record_words(&th, 0)) * 8;
      size_t len = rec->log.message.length;
      if (len > room) {
        len = room;
        for (int back = 0;
             back < 3 && len > 0 && ((uint8_t)rec->log.message.data[len] & 0xc0) == 0x80; back++)
          len--;
        w->counts.truncated++;
      }
      size_t words = fxt_log_record_words(&th, len);
      if (!fits(w, words)) return true;
      return emit(w, fxt_write_log_record(w->words, words, r->ns, &th, rec->log.message.data, len));
    }
    case FXT_RECORD_LARGE:
      return write_large(w, h, r);
    default:
      return true;
  }
}
