/* TRACE_EVENT(): registration of the generated descriptors, the format
 * records (docs/event-formats.md) and the record path of the generated
 * functions (include/trace/internal/tracepoint_types.h).
 *
 * Per trace, each event is "prepared" once, under `lock`, by the first
 * thread that needs it (the engine thread at start, or a writer that got
 * there first): its format record goes into the durable buffer before any
 * of its events can be written. Oneshot mode has no durable buffer: a
 * format goes into the chunk of the writer that writes it, and the buffer
 * is read in chunk order, so a format written once could follow the events
 * another writer put in a chunk it took earlier. There each writer writes
 * the format of an event before its own first record of it (the ids in
 * w->formats_written; an id past them falls back to once per trace, the
 * order then not guaranteed). Each thread then registers the event's
 * category, name and field names itself on its first record of the event
 * and caches the record's header and argument names (record_path.h); the
 * generated code builds every later record from that cache, inline. */
#include "engine/tracepoints.h"

#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "engine/engine_internal.h"
#include "trace/internal/tracepoint_types.h"

/* `list_lock` guards the registered list (taken first); `lock` guards
 * preparation and the format text buffer. */
static pthread_mutex_t list_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static trace_tracepoint_t* registered; /* list_lock */
static uint32_t next_id = 1;           /* list_lock */

static const char format_blob_name[] = "trace_event_format";

enum { FORMAT_MAX = 32000 };

static bool is_variable(uint32_t kind) {
  return kind == TRACE_TP_FIELD_STRING || kind == TRACE_TP_FIELD_DYN_ARRAY;
}

/* Appends to out[*len..cap); false once it does not fit. */
static bool append(char* out, size_t cap, size_t* len, const char* fmt, ...)
    __attribute__((format(printf, 4, 5)));
static bool append(char* out, size_t cap, size_t* len, const char* fmt, ...) {
  if (*len >= cap) return false;
  va_list ap;
  va_start(ap, fmt);
  int n = vsnprintf(out + *len, cap - *len, fmt, ap);
  va_end(ap);
  if (n < 0 || (size_t)n >= cap - *len) {
    *len = cap;
    return false;
  }
  *len += (size_t)n;
  return true;
}

/* The tracefs format text with the category line; 0 if it does not fit. */
static size_t format_text(const trace_tracepoint_t* tp, char* out, size_t cap) {
  const trace_tp_class_t* c = tp->event_class;
  size_t len = 0;
  append(out, cap, &len,
         "category: %s\nname: %s\nID: %u\nformat:\n"
         "\tfield:unsigned short common_type;\toffset:0;\tsize:2;\tsigned:0;\n"
         "\tfield:unsigned char common_flags;\toffset:2;\tsize:1;\tsigned:0;\n"
         "\tfield:unsigned char common_preempt_count;\toffset:3;\tsize:1;\tsigned:0;\n"
         "\tfield:int common_pid;\toffset:4;\tsize:4;\tsigned:1;\n\n",
         tp->system, tp->name, tp->id);
  /* in argument order: fixed fields, then variable ones (each keeps its
   * offset in the binary entry) */
  for (uint32_t k = 0; k < 2 * c->num_fields; k++) {
    const trace_tp_field_t* f = &c->fields[k % c->num_fields];
    if (is_variable(f->kind) != (k >= c->num_fields)) continue;
    switch (f->kind) {
      case TRACE_TP_FIELD_ARRAY:
      case TRACE_TP_FIELD_CHAR_ARRAY:
        append(out, cap, &len, "\tfield:%s %s[%u];", f->type, f->name, f->count);
        break;
      case TRACE_TP_FIELD_STRING:
        append(out, cap, &len, "\tfield:__data_loc char[] %s;", f->name);
        break;
      case TRACE_TP_FIELD_DYN_ARRAY:
        append(out, cap, &len, "\tfield:__data_loc %s[] %s;", f->type, f->name);
        break;
      default:
        append(out, cap, &len, "\tfield:%s %s;", f->type, f->name);
        break;
    }
    append(out, cap, &len, "\toffset:%u;\tsize:%u;\tsigned:%u;\n", f->offset, f->size,
           f->is_signed);
  }
  if (!append(out, cap, &len, "\nprint fmt: %s\n", c->print_fmt)) return 0;
  return len;
}

/* What became of an event's format record. */
typedef enum format_outcome {
  FORMAT_WRITTEN,
  /* not written, and it will not be in this trace: the event is recorded
   * without it, and the format counts as a dropped record (give_up) */
  FORMAT_TOO_LONG,     /* its text is over FORMAT_MAX */
  FORMAT_DURABLE_HALF, /* the durable buffer is half full */
  /* no room for it now (the buffer is full, and its trace stopping): the
   * event's record must not be written either (it is dropped and counted);
   * the next one tries again */
  FORMAT_NO_ROOM,
} format_outcome_t;

static format_outcome_t write_format(trace_context_t* w, const trace_tracepoint_t* tp) {
  engine_t* e = engine__of(w);
  /* nothing more is written in this trace (stopping, or oneshot or the
   * durable buffer full): no text to make, every record of tp comes here */
  if (ATOMIC_LOAD(&e->hot->epoch) == 0) return FORMAT_NO_ROOM;
  static char text[FORMAT_MAX + 1]; /* lock */
  size_t size = format_text(tp, text, sizeof(text));
  if (size == 0 || size > FORMAT_MAX) return FORMAT_TOO_LONG;
  trace_string_ref_t name = writer__register_literal(w, format_blob_name);
  size_t words = fxt_blob_record_words(&name, size);
  /* A format is written only while the durable buffer is under half full
   * (formats, strings, threads and drop counters together): a full durable
   * buffer stops the trace, and strings and threads need it too. Past that,
   * events are still recorded (tools show their arguments without the
   * format). */
  if (e->mode != TRACE_BUFFERING_MODE_ONESHOT &&
      ATOMIC_LOAD(&e->header->durable_alloc) + words * 8 > e->durable_size / 2)
    return FORMAT_DURABLE_HALF;
  uint64_t* p = writer__reserve_metadata(w, words);
  if (p == NULL) return FORMAT_NO_ROOM;
  fxt_write_blob_record(p, words, TRACE_BLOB_TYPE_DATA, &name, text, size);
  writer__count_written(w);
  return FORMAT_WRITTEN;
}

/* Writes the concatenation of parts[0..n) and a newline to stderr, cut at
 * 511 bytes. With write(2), not stdio: a signal handler's record may be
 * what has something to say (prepare() with the lock tried and taken). */
static void tell(const char* const* parts, size_t n) {
  char text[512];
  size_t at = 0;
  for (size_t i = 0; i < n; i++) {
    size_t k = strlen(parts[i]);
    if (k > sizeof(text) - 1 - at) k = sizeof(text) - 1 - at;
    memcpy(text + at, parts[i], k);
    at += k;
  }
  text[at++] = '\n';
  ssize_t written = write(STDERR_FILENO, text, at);
  (void)written; /* a message only */
}

/* Whether w tracks tp's format itself (see the top of the file). */
static bool per_writer_format(const trace_tracepoint_t* tp, trace_context_t* w) {
  return engine__of(w)->mode == TRACE_BUFFERING_MODE_ONESHOT &&
         tp->id < TRACE_ENGINE_WRITER_FORMAT_IDS;
}

/* tp->prepared[session] is the trace (generation) whose format is settled
 * for tp: written, or given up; a give-up not yet counted also carries
 * this flag (no generation has bit 63: they are shifted left once in a
 * site's state word). The first record of tp written in that trace clears
 * it and counts one dropped record, the format's: so a format is counted
 * once per trace, and only if its event is recorded without it (a format
 * given up for an event never recorded is no loss). Tied to the
 * generation, a writer still finishing an older trace cannot touch it. In
 * oneshot mode a writer settles the format itself just before its first
 * record of tp (per_writer_format) and counts a give-up there. */
#define GIVEN_UP_UNCOUNTED (UINT64_C(1) << 63)

/* A format given up on in trace `generation`: to be counted (see above),
 * and said once per process on stderr. */
static void give_up(trace_context_t* w, trace_tracepoint_t* tp, uint64_t generation,
                    format_outcome_t outcome) {
  static bool told[2];
  bool too_long = outcome == FORMAT_TOO_LONG;
  if (!__atomic_exchange_n(&told[too_long], true, __ATOMIC_RELAXED)) {
    const char* parts[] = {
        "fxtrace: TRACE_EVENT() formats not written (",
        tp->system,
        ":",
        tp->name,
        too_long ? "): its format text is over 32000 bytes"
                 : "): the durable buffer is half full (a larger trace buffer holds more)",
        "; the events are recorded without them, each missing format counted as a dropped "
        "record"};
    tell(parts, sizeof(parts) / sizeof(parts[0]));
  }
  if (per_writer_format(tp, w))
    writer__count_dropped(w);
  else
    ATOMIC_RELEASE(&tp->prepared[TRACE_GENERATION_SESSION(generation)],
                   generation | GIVEN_UP_UNCOUNTED);
}

/* Before a record of tp is written in trace `generation`: its format's
 * drop, counted once (see GIVEN_UP_UNCOUNTED). */
static void count_if_given_up(trace_context_t* w, trace_tracepoint_t* tp, uint64_t generation) {
  uint64_t* settled = &tp->prepared[TRACE_GENERATION_SESSION(generation)];
  uint64_t uncounted = generation | GIVEN_UP_UNCOUNTED;
  if (ATOMIC_LOAD(settled) == uncounted &&
      __atomic_compare_exchange_n(settled, &uncounted, generation, false, __ATOMIC_RELAXED,
                                  __ATOMIC_RELAXED))
    writer__count_dropped(w);
}

/* Whether tp's format precedes, in the buffer's scan order, any record of
 * tp that w writes now in trace `generation`. */
static bool format_written(const trace_tracepoint_t* tp, trace_context_t* w, uint64_t generation) {
  if (per_writer_format(tp, w)) return (w->formats_written[tp->id / 64] >> (tp->id % 64)) & 1;
  return (ATOMIC_ACQUIRE(&tp->prepared[TRACE_GENERATION_SESSION(generation)]) &
          ~GIVEN_UP_UNCOUNTED) == generation;
}

/* Writes tp's format record once in trace `generation`, or once per writer
 * in oneshot mode (see the top of the file), or gives up on it for good
 * (FORMAT_TOO_LONG, FORMAT_DURABLE_HALF: counted). false: not written, tp's record must not be
 * either (the caller drops and counts it; the format is tried again). A record nested on this
 * thread's (a signal handler) may have interrupted this very function holding `lock`, so it never
 * waits for it: taken by anyone, its record is dropped (and counted). */
static bool prepare(trace_tracepoint_t* tp, trace_context_t* w, uint64_t generation) {
  if (w->nesting > 1) {
    if (pthread_mutex_trylock(&lock) != 0) return false;
  } else {
    pthread_mutex_lock(&lock);
  }
  bool ready = true;
  if (!format_written(tp, w, generation)) {
    const trace_tp_class_t* c = tp->event_class;
    /* more fields: no record of it is ever written (thread_record), so
     * there is no format to write or miss */
    format_outcome_t outcome = FORMAT_WRITTEN;
    if (c != NULL && c->num_fields <= TRACE_MAX_ARGS) outcome = write_format(w, tp);
    bool given_up = outcome == FORMAT_TOO_LONG || outcome == FORMAT_DURABLE_HALF;
    ready = outcome != FORMAT_NO_ROOM;
    if (!ready) {
      /* not marked: the next record of tp tries again */
    } else if (per_writer_format(tp, w)) {
      w->formats_written[tp->id / 64] |= UINT64_C(1) << (tp->id % 64);
      if (given_up) give_up(w, tp, generation, outcome);
    } else if (given_up) {
      give_up(w, tp, generation, outcome);
    } else {
      ATOMIC_RELEASE(&tp->prepared[TRACE_GENERATION_SESSION(generation)], generation);
    }
  }
  pthread_mutex_unlock(&lock);
  return ready;
}

/* The record of tp as this thread writes it: the header (without the size)
 * and the argument names, fixed fields first, then variable ones, each
 * registered by this thread (so in oneshot mode, where string records go to
 * the thread's own chunks, every definition precedes its uses). false: a
 * string has no index (indexes ran out), the record cannot be written. */
static bool thread_record(trace_tracepoint_t* tp, trace_context_t* w,
                          const trace_thread_ref_t* thread, uint64_t* header, uint16_t* names) {
  const trace_tp_class_t* c = tp->event_class;
  if (c == NULL || c->num_fields > TRACE_MAX_ARGS) return false;
  trace_string_ref_t category = writer__register_literal(w, tp->system);
  trace_string_ref_t name = writer__register_literal(w, tp->name);
  bool usable = trace_is_indexed_string_ref(&category) && trace_is_indexed_string_ref(&name);
  uint32_t n = 0;
  for (int pass = 0; pass < 2; pass++)
    for (uint32_t i = 0; i < c->num_fields; i++)
      if (is_variable(c->fields[i].kind) == (pass == 1)) {
        trace_string_ref_t ref = writer__register_literal(w, c->fields[i].name);
        usable &= trace_is_indexed_string_ref(&ref);
        names[n++] = ref.encoded_value;
      }
  *header = FXT_FIELD(FXT_RECORD_EVENT, 0, 3) | FXT_FIELD(FXT_EVENT_INSTANT, 16, 19) |
            FXT_FIELD(n, 20, 23) | FXT_FIELD(thread->encoded_value, 24, 31) |
            FXT_FIELD(category.encoded_value, 32, 47) | FXT_FIELD(name.encoded_value, 48, 63);
  return usable;
}

/* ---- the generated code's entry points ---- */

void trace_engine__tp_register(trace_tracepoint_t* tp) {
  pthread_mutex_lock(&list_lock);
  bool fresh = !tp->registered;
  if (fresh) {
    tp->registered = 1;
    tp->id = next_id++;
    tp->next = registered;
    registered = tp;
  }
  pthread_mutex_unlock(&list_lock);
  /* registered while tracing (dlopen): its format now, if it is enabled
   * (not asked otherwise: a start pending would count the question as an
   * event, pending.c) */
  if (fresh && trace_is_enabled() && trace_engine__tp_enabled(tp)) {
    trace_string_ref_t category;
    trace_context_t* w = trace_engine__acquire_context_for_site(tp->system, &tp->site, &category,
                                                                ATOMIC_LOAD(&tp->site.state));
    /* (in oneshot mode each writer writes it before its own first record) */
    if (w && !per_writer_format(tp, w)) prepare(tp, w, ATOMIC_LOAD(&w->generation));
    if (w) writer__release(w);
  }
}

void trace_engine__tp_unregister(trace_tracepoint_t* tp) {
  /* its site is on the engine's list once it was asked (sites.c): the
   * library holding it is going away */
  pthread_mutex_lock(&engine__sessions_lock);
  sites__unlink(&tp->site);
  pthread_mutex_unlock(&engine__sessions_lock);
  pthread_mutex_lock(&list_lock);
  for (trace_tracepoint_t** it = &registered; *it; it = &(*it)->next)
    if (*it == tp) {
      *it = tp->next;
      tp->registered = 0;
      break;
    }
  pthread_mutex_unlock(&list_lock);
}

bool trace_engine__tp_enabled(trace_tracepoint_t* tp) {
  /* The site word as every category site keeps it (sites.c): DISABLED is
   * reset by the engine at each start, so it is the answer; an ENABLED word
   * of the current generation too; anything else is decided afresh. */
  uint64_t state = ATOMIC_LOAD(&tp->site.state);
  if (state == TRACE_SITE_DISABLED) return false;
  uint64_t generation = ATOMIC_ACQUIRE(&trace_engine__generation[TRACE_SITE_SESSION(state)]);
  if (generation != 0 && state == TRACE_SITE_ENABLED(generation)) return true;
  return trace_engine__resolve_site(tp->system, &tp->site) != TRACE_SITE_DISABLED;
}

/* The record of tp reserved in `session` (NULL: nothing held). */
static uint64_t* begin_in_session(trace_tracepoint_t* tp, unsigned session, size_t arg_words,
                                  trace_tp_record_t* r) {
  /* the generation this context is entered for: stays while it is held */
  uint64_t generation = ATOMIC_ACQUIRE(&trace_engine__generation[session]);
  if (generation == 0) return NULL; /* stopped meanwhile */
  trace_context_t* w = writer__enter(generation);
  if (w == NULL) return NULL;
  if (UNLIKELY(!format_written(tp, w, generation)) && !prepare(tp, w, generation)) {
    writer__count_dropped(w);
    writer__release(w);
    return NULL;
  }
  count_if_given_up(w, tp, generation);
  const trace_thread_ref_t* thread = writer__current_thread(w);
  size_t head = 2 + fxt_thread_ref_words(thread);
  size_t words = head + arg_words + 1; /* + the instant's scope word */
  bool usable = thread_record(tp, w, thread, &r->header, r->names);
  if (UNLIKELY(!usable || words > FXT_MAX_RECORD_WORDS)) {
    static bool told; /* once per process: the drops themselves are counted */
    if (!usable && !__atomic_exchange_n(&told, true, __ATOMIC_RELAXED)) {
      const char* parts[] = {
          "fxtrace: TRACE_EVENT() records dropped: a thread's string table is full or the "
          "trace's string indexes ran out (",
          tp->name, ")"};
      tell(parts, sizeof(parts) / sizeof(parts[0]));
    }
    writer__count_dropped(w);
    writer__release(w);
    return NULL;
  }
  /* the inline path takes it from here on this thread (an indexed thread) */
  if (head == 2) trace_engine__fill_record(w, tp, r->header, r->names, tp->event_class->num_fields);
  uint64_t* p = writer__reserve(w, words);
  if (UNLIKELY(p == NULL)) {
    writer__release(w);
    return NULL;
  }
  p[1] = trace_clock__now_ns();
  fxt_put_thread_ref(p + 2, thread);
  r->record = p;
  r->context = w;
  r->head_words = head;
  r->arg_words = arg_words;
  return p + head;
}

/* Each session's record is written as if it were the only one (its own
 * format, strings and cached record): several sessions cost one
 * out-of-line record each, the assignment run again for each. */
uint64_t* trace_engine__tp_begin(trace_tracepoint_t* tp, size_t arg_words, trace_tp_record_t* r) {
  unsigned left = r->sessions;
  if (left == 0)
    left = engine__site_sessions(&tp->site, ATOMIC_LOAD(&tp->site.state), tp->system, NULL);
  for (; left != 0; left &= left - 1) {
    uint64_t* args = begin_in_session(tp, (unsigned)__builtin_ctz(left), arg_words, r);
    if (args != NULL) {
      r->sessions = left & (left - 1);
      return args;
    }
  }
  r->sessions = 0;
  return NULL;
}

void trace_engine__tp_give_back(trace_context_t* w, uint64_t* from, size_t k) {
  memset(from, 0, k * 8);
  bool returned = false;
  w->reserving = 1;
  __atomic_signal_fence(__ATOMIC_SEQ_CST);
  if (w->pos == from + k) {
    w->pos = from;
    returned = true;
  }
  __atomic_signal_fence(__ATOMIC_SEQ_CST);
  w->reserving = 0;
  if (!returned) /* something was reserved after them (a signal handler): a blob
                  * record of type 1, skipped by every reader, keeps the chunk a
                  * sequence of records */
    fxt_commit(from, fxt_header(FXT_RECORD_BLOB, k) | FXT_FIELD((k - 1) * 8, 32, 46) |
                         FXT_FIELD(TRACE_BLOB_TYPE_DATA, 48, 55));
}

/* ---- engine side ---- */

void tracepoints__on_start(unsigned session) {
  pthread_mutex_lock(&list_lock);
  bool any = registered != NULL;
  pthread_mutex_unlock(&list_lock);
  if (!any) return; /* the engine thread attaches as a writer only when needed */
  trace_context_t* w = trace_engine_session_acquire_context_for_category(session, NULL, NULL);
  if (w == NULL) return;
  uint64_t generation = ATOMIC_LOAD(&w->generation);
  engine_t* e = engine__of(w);
  pthread_mutex_lock(&list_lock); /* an unloading library waits */
  for (trace_tracepoint_t* tp = registered; tp; tp = tp->next)
    if (writer__session_enables(e, tp->system)) prepare(tp, w, generation);
  pthread_mutex_unlock(&list_lock);
  writer__release(w);
}

void tracepoints__for_each_system(void (*fn)(const char* system, void* arg), void* arg) {
  pthread_mutex_lock(&list_lock);
  for (trace_tracepoint_t* tp = registered; tp; tp = tp->next) {
    bool seen = false;
    for (trace_tracepoint_t* q = registered; q != tp; q = q->next)
      if (strcmp(q->system, tp->system) == 0) seen = true;
    if (!seen) fn(tp->system, arg);
  }
  pthread_mutex_unlock(&list_lock);
}
