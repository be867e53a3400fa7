/* Converted ftrace events -> FXT records through the engine (see kwrite.h). */
#include "kernel/kwrite.h"

#include <ctype.h>
#include <dirent.h>
#include <event-parse.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/clock.h"
#include "engine/engine_internal.h"
#include "fxt/fxt_encode.h"

static const char kSched[] = "kernel:sched";
static const char kIrq[] = "kernel:irq";

int kwriter__init(kwriter_t* w, kev_table_t* table, bool tsc, uint32_t cpus) {
  memset(w, 0, sizeof(*w));
  w->table = table;
  w->tsc = tsc;
  w->cpus = cpus ? cpus : 1;
  return kbirths__init(&w->births);
}

void kwcats__free(kwcats_t* c) {
  for (size_t i = 0; i < c->generic_count; i++) free(c->generic[i]);
  free(c->generic);
  memset(c, 0, sizeof(*c));
}

kwsession_t* kwsession__create(unsigned session, kwcats_t* cats, uint32_t cpus) {
  kwsession_t* s = calloc(1, sizeof(*s));
  if (!cpus) cpus = 1;
  if (s) {
    s->irq = calloc(cpus, sizeof(*s->irq));
    s->lane = malloc(cpus * sizeof(*s->lane));
  }
  if (!s || !s->irq || !s->lane) {
    if (s) {
      free(s->irq);
      free(s->lane);
    }
    free(s);
    return NULL;
  }
  for (uint32_t i = 0; i < cpus; i++) s->lane[i] = -1;
  s->session = session;
  s->cats = *cats; /* moved in */
  memset(cats, 0, sizeof(*cats));
  return s;
}

void kwsession__free(kwsession_t* s) {
  if (!s) return;
  kthreads__free(&s->threads);
  kwcats__free(&s->cats);
  free(s->irq);
  free(s->lane);
  free(s->descs);
  free(s);
}

void kwriter__free(kwriter_t* w) {
  for (unsigned i = 0; i < TRACE_ENGINE_MAX_SESSIONS; i++) kwsession__free(w->sessions[i]);
  kbirths__free(&w->births);
  memset(w, 0, sizeof(*w));
}

kwsession_t* kwriter__remove_session(kwriter_t* w, unsigned session) {
  if (session >= TRACE_ENGINE_MAX_SESSIONS) return NULL;
  kwsession_t* s = w->sessions[session];
  w->sessions[session] = NULL;
  if (s) s->threads.births = NULL;
  return s;
}

bool kwriter__begin(kwriter_t* w) {
  bool any = false;
  for (unsigned i = 0; i < TRACE_ENGINE_MAX_SESSIONS; i++) {
    kwsession_t* s = w->sessions[i];
    if (!s) continue;
    /* one context per session: its own string and thread tables */
    s->ctx = trace_engine_session_acquire_context_for_category(s->session, NULL, NULL);
    any |= s->ctx != NULL;
  }
  return any;
}

void kwriter__end(kwriter_t* w) {
  for (unsigned i = 0; i < TRACE_ENGINE_MAX_SESSIONS; i++) {
    kwsession_t* s = w->sessions[i];
    if (s && s->ctx) trace_release_context(s->ctx);
    if (s) s->ctx = NULL;
  }
}

/* ---- which session records what ---- */

static bool names_generic(const kwcats_t* c, const kev_desc_t* d) {
  char name[256];
  snprintf(name, sizeof(name), "%s/%s", d->event->system, d->event->name);
  for (size_t i = 0; i < c->generic_count; i++)
    if (strcmp(c->generic[i], name) == 0) return true;
  return false;
}

/* A session records an event in its kind's form when it enables the kind's
 * category, else as a generic instant when it names the event, else not. */
uint8_t kwcats__mode(const kwcats_t* c, const kev_desc_t* d) {
  bool native = false;
  switch (d->kind) {
    case KEV_NEWTASK:
      /* kept for the processes of short-lived threads (kbirths.h) by both
       * categories that name threads; it writes a record only when named */
      if (names_generic(c, d)) return KWMODE_GENERIC;
      return c->sched || c->task ? KWMODE_NATIVE : KWMODE_NONE;
    case KEV_SWITCH:
    case KEV_WAKEUP:
      native = c->sched;
      break;
    case KEV_FORK:
    case KEV_EXEC:
    case KEV_EXIT:
    case KEV_RENAME:
      native = c->task;
      break;
    case KEV_IRQ_ENTRY:
    case KEV_IRQ_EXIT:
    case KEV_SOFTIRQ_ENTRY:
    case KEV_SOFTIRQ_EXIT:
      native = c->irq;
      break;
    case KEV_GENERIC:
      break;
  }
  if (native) return KWMODE_NATIVE;
  return names_generic(c, d) ? KWMODE_GENERIC : KWMODE_NONE;
}

/* The session's view of d (NULL when out of memory): the table only grows,
 * so the view is grown on first sight of a new index. */
static kwdesc_t* view_of(const kwriter_t* w, kwsession_t* s, const kev_desc_t* d) {
  size_t index = (size_t)(d - w->table->descs);
  if (index >= s->desc_count) {
    size_t count = w->table->count > index ? w->table->count : index + 1;
    kwdesc_t* grown = realloc(s->descs, count * sizeof(*grown));
    if (!grown) return NULL;
    memset(grown + s->desc_count, 0, (count - s->desc_count) * sizeof(*grown));
    s->descs = grown;
    s->desc_count = count;
  }
  kwdesc_t* v = &s->descs[index];
  if (v->mode == KWMODE_UNKNOWN) v->mode = kwcats__mode(&s->cats, d);
  return v;
}

static trace_ticks_t ticks_of(const kwriter_t* w, uint64_t ts) {
  return w->tsc ? trace_clock__tsc_to_ns(ts) : ts;
}

static trace_string_ref_t literal(kwsession_t* s, const char* text) {
  trace_string_ref_t ref;
  trace_context_register_string_literal(s->ctx, text, &ref);
  return ref;
}

/* ---- names ---- */

static void write_process(kwsession_t* s, uint32_t pid, const char* name, size_t length) {
  trace_string_ref_t ref = trace_make_inline_string_ref(name, length);
  trace_context_write_process_info_record(s->ctx, pid, &ref);
}

/* A thread record naming tid, from an event at ftrace time ts (0: /proc). */
static void write_thread(kwsession_t* s, uint32_t pid, uint32_t tid, const char* name,
                         size_t length, uint64_t ts) {
  trace_string_ref_t ref = trace_make_inline_string_ref(name, length);
  trace_context_write_thread_info_record(s->ctx, pid, tid, &ref);
  kthread_entry_t* t = kthreads__get(&s->threads, tid);
  if (t) kthreads__set_name(t, name, length, ts);
}

/* Names tid (and its process) once per session, with comm (from an event at
 * ts) when nothing better was written; returns its process. */
static uint32_t ensure_named(kwsession_t* s, uint32_t tid, const char* comm, size_t comm_length,
                             uint64_t ts) {
  uint32_t tgid = kthreads__tgid(&s->threads, tid);
  kthread_entry_t* t = kthreads__get(&s->threads, tid);
  if (!t || (t->flags & KTHREAD_NAMED)) return tgid;
  t->flags |= KTHREAD_NAMED;
  kthread_entry_t* p = tgid == tid ? t : kthreads__get(&s->threads, tgid);
  if (p && !(p->flags & KPROCESS_NAMED)) {
    p->flags |= KPROCESS_NAMED;
    char name[64];
    if (tgid != tid && kthreads__read_comm(tgid, 0, name, sizeof(name)))
      write_process(s, tgid, name, strlen(name));
    else
      write_process(s, tgid, comm, comm_length);
  }
  write_thread(s, tgid, tid, comm, comm_length, ts);
  return tgid;
}

static trace_thread_ref_t thread_ref(kwsession_t* s, uint32_t tid, const char* comm, size_t length,
                                     uint64_t ts) {
  if (tid == 0) return trace_make_inline_thread_ref(0, 0); /* idle: pid 0 (READERS.md) */
  return trace_make_inline_thread_ref(ensure_named(s, tid, comm, length, ts), tid);
}

/* thread_ref() for a thread whose comm is the field `comm` of e. A thread
 * named already is named again when e reports another comm than the name
 * its last thread record gave it: each CPU's pages are converted in turn, so
 * the record of a rename (task_rename, on the CPU the thread renamed itself
 * on) can reach the archive after this CPU's events of the thread under its
 * new name, or before those under its old one; a reader applying names in
 * file order (trace dump) then names the thread in each switch as the kernel
 * did. Only an event newer than the one the last name came from names it:
 * an older one (converted later, from another CPU) reports the name before
 * a rename, and would leave the thread's last record stale. A known thread
 * whose comm did not change costs one table lookup and a comparison. */
static trace_thread_ref_t thread_ref_of(kwsession_t* s, uint32_t tid, const kconv_event_t* e,
                                        const struct tep_format_field* comm) {
  if (tid == 0) return trace_make_inline_thread_ref(0, 0);
  const char* name = "";
  size_t length = 0;
  kev__bytes(comm, e->data, e->size, &name, &length);
  kthread_entry_t* t = kthreads__get(&s->threads, tid);
  if (t && (t->flags & KTHREAD_NAMED) && t->tgid) {
    uint32_t tgid = t->tgid;
    if (length > 0 && e->ts >= t->name_ts && !kthreads__has_name(t, name, length))
      write_thread(s, tgid, tid, name, length, e->ts);
    return trace_make_inline_thread_ref(tgid, tid);
  }
  return thread_ref(s, tid, name, length, e->ts);
}

/* ---- sched ---- */

/* Linux prev_state -> FXT thread state (docs/kernel-provider.md). Preempted
 * (runnable) is FXT "new", which readers show as runnable: "running" is not
 * allowed for the outgoing thread. */
static uint32_t fxt_state(int64_t state) {
  uint64_t v = (uint64_t)state & 0xff;
  if (v == 0) return 0;                    /* R, R+: preempted */
  if (v & 0x30) return (v & 0x10) ? 5 : 4; /* X dead, Z zombie (dying) */
  if (v & 0x0c) return 2;                  /* T, t: stopped, traced */
  return 3;                                /* S, D, P, I: blocked */
}

static uint32_t prio_of(int64_t prio) { return prio < 0 ? 0 : prio > 255 ? 255 : (uint32_t)prio; }

/* The weight of a thread in the scheduling records (docs/kernel-provider.md):
 * idle is INT32_MIN (the convention Perfetto reads), any other thread its
 * kernel prio as ftrace reports it (0..139, lower runs first), which is what
 * Perfetto's own ftrace importer keeps as a sched slice's priority. */
#define KWEIGHT_IDLE INT32_MIN
static int32_t weight_of(int64_t tid, int64_t prio) {
  if (tid == 0) return KWEIGHT_IDLE;
  return prio < 0 ? 0 : prio > INT32_MAX ? INT32_MAX : (int32_t)prio;
}

static void sched_refs(kwsession_t* s) {
  if (s->sched_refs) return;
  s->sched_refs = true;
  s->outgoing_weight_ref = literal(s, "outgoing_weight");
  s->incoming_weight_ref = literal(s, "incoming_weight");
  s->waker_ref = literal(s, "waker");
}

/* The kernel recorded no switch out of `expected` (the thread the CPU's last
 * switch brought in) before this switch out of `found`: an instant
 * `sched_switch_missing` on `expected` at this switch's time (the latest the
 * missing switch can have happened), args `cpu` and `switched_out` (found).
 * ftrace counts no loss for these (docs/kernel-provider.md, Loss). */
static void write_lane_gap(const kwriter_t* w, kwsession_t* s, const kconv_event_t* e,
                           int64_t expected, int64_t found) {
  s->lane_gaps++;
  trace_thread_ref_t thread =
      expected == 0 ? trace_make_inline_thread_ref(0, 0)
                    : trace_make_inline_thread_ref(kthreads__tgid(&s->threads, (uint32_t)expected),
                                                   (trace_koid_t)expected);
  trace_arg_t args[2];
  args[0].name_ref = literal(s, "cpu");
  args[0].value.type = TRACE_ARG_UINT32;
  args[0].value.uint32_value = e->cpu;
  args[1].name_ref = literal(s, "switched_out");
  args[1].value.type = TRACE_ARG_KOID;
  args[1].value.koid_value = (trace_koid_t)found;
  trace_string_ref_t category = literal(s, kSched);
  trace_string_ref_t name = literal(s, "sched_switch_missing");
  trace_context_write_instant_event_record(s->ctx, ticks_of(w, e->ts), &thread, &category, &name,
                                           TRACE_SCOPE_THREAD, args, 2);
  s->written++;
}

static void write_switch(const kwriter_t* w, kwsession_t* s, const kconv_event_t* e) {
  const kev_desc_t* d = e->desc;
  int64_t prev_pid, next_pid, prev_prio = 0, next_prio = 0, state = 0;
  if (!kev__int(d->f[KF_SWITCH_PREV_PID], e->data, e->size, &prev_pid) ||
      !kev__int(d->f[KF_SWITCH_NEXT_PID], e->data, e->size, &next_pid) || prev_pid < 0 ||
      next_pid < 0 || prev_pid > UINT32_MAX || next_pid > UINT32_MAX)
    return;
  kev__int(d->f[KF_SWITCH_PREV_PRIO], e->data, e->size, &prev_prio);
  kev__int(d->f[KF_SWITCH_NEXT_PRIO], e->data, e->size, &next_prio);
  kev__int(d->f[KF_SWITCH_PREV_STATE], e->data, e->size, &state);
  trace_thread_ref_t out = thread_ref_of(s, (uint32_t)prev_pid, e, d->f[KF_SWITCH_PREV_COMM]);
  trace_thread_ref_t in = thread_ref_of(s, (uint32_t)next_pid, e, d->f[KF_SWITCH_NEXT_COMM]);
  if (e->cpu < w->cpus) {
    int64_t expected = s->lane[e->cpu];
    if (expected >= 0 && expected != prev_pid) write_lane_gap(w, s, e, expected, prev_pid);
    s->lane[e->cpu] = next_pid;
  }
  if (s->cats.legacy_sched) {
    trace_context_write_context_switch_record(s->ctx, ticks_of(w, e->ts), e->cpu, fxt_state(state),
                                              &out, &in, prev_pid == 0 ? 0 : prio_of(prev_prio),
                                              next_pid == 0 ? 0 : prio_of(next_prio));
    s->written++;
    return;
  }
  /* sub-type 1: the threads by koid (their process comes from the thread
   * records ensure_named wrote), the weights as int32 arguments (Perfetto
   * drops a switch whose weight has another type) */
  sched_refs(s);
  trace_arg_t args[2];
  args[0].name_ref = s->outgoing_weight_ref;
  args[0].value.type = TRACE_ARG_INT32;
  args[0].value.int32_value = weight_of(prev_pid, prev_prio);
  args[1].name_ref = s->incoming_weight_ref;
  args[1].value.type = TRACE_ARG_INT32;
  args[1].value.int32_value = weight_of(next_pid, next_prio);
  size_t words = fxt_context_switch_record_words(args, 2);
  uint64_t* p = writer__reserve(s->ctx, words);
  if (!p) return;
  fxt_write_context_switch_record(p, words, ticks_of(w, e->ts), e->cpu, fxt_state(state),
                                  (trace_koid_t)prev_pid, (trace_koid_t)next_pid, args, 2);
  writer__count_written(s->ctx);
  s->written++;
}

/* The category of d's instants in this session: its kind's, or kernel:SYSTEM
 * for the generic form. */
static const char* category_of(const kev_desc_t* d, const kwdesc_t* v) {
  return v->mode == KWMODE_GENERIC ? d->system_category : d->category;
}

static void ensure_refs(const kwriter_t* w, kwsession_t* s, const kev_desc_t* d, kwdesc_t* v) {
  if (v->refs) return;
  v->refs = true;
  const char* category = category_of(d, v);
  /* one string record per category and session, shared by its events */
  const kwdesc_t* same = NULL;
  for (size_t i = 0; i < s->desc_count && i < w->table->count && !same; i++) {
    const kwdesc_t* o = &s->descs[i];
    if (o != v && o->refs && strcmp(category_of(&w->table->descs[i], o), category) == 0) same = o;
  }
  if (same)
    v->category_ref = same->category_ref;
  else
    trace_context_register_string_copy(s->ctx, category, strlen(category), &v->category_ref);
  trace_context_register_string_copy(s->ctx, d->event->name, strlen(d->event->name), &v->name_ref);
  for (unsigned i = 0; i < d->field_count; i++)
    trace_context_register_string_copy(s->ctx, d->fields[i]->name, strlen(d->fields[i]->name),
                                       &v->field_refs[i]);
}

/* Legacy form: an instant event on the woken thread (every reader knows it). */
static void write_wakeup_instant(const kwriter_t* w, kwsession_t* s, const kconv_event_t* e,
                                 kwdesc_t* v, const trace_thread_ref_t* thread) {
  const kev_desc_t* d = e->desc;
  int64_t prio, cpu;
  ensure_refs(w, s, d, v);
  trace_arg_t args[3];
  size_t n = 0;
  if (kev__int(d->f[KF_WAKE_CPU], e->data, e->size, &cpu)) {
    args[n].name_ref = literal(s, "cpu");
    args[n].value.type = TRACE_ARG_UINT32;
    args[n++].value.uint32_value = (uint32_t)cpu;
  }
  if (kev__int(d->f[KF_WAKE_PRIO], e->data, e->size, &prio)) {
    args[n].name_ref = literal(s, "prio");
    args[n].value.type = TRACE_ARG_INT32;
    args[n++].value.int32_value = (int32_t)prio;
  }
  int64_t waker = kev__common_pid(w->table, e->data, e->size);
  if (waker > 0) {
    args[n].name_ref = literal(s, "waker_tid");
    args[n].value.type = TRACE_ARG_KOID;
    args[n++].value.koid_value = (trace_koid_t)waker;
  }
  trace_string_ref_t category = literal(s, kSched);
  trace_context_write_instant_event_record(s->ctx, ticks_of(w, e->ts), thread, &category,
                                           &v->name_ref, TRACE_SCOPE_THREAD, args, n);
  s->written++;
}

static void write_wakeup(const kwriter_t* w, kwsession_t* s, const kconv_event_t* e, kwdesc_t* v) {
  const kev_desc_t* d = e->desc;
  int64_t pid, cpu = e->cpu;
  if (!kev__int(d->f[KF_WAKE_PID], e->data, e->size, &pid) || pid <= 0 || pid > UINT32_MAX) return;
  trace_thread_ref_t thread = thread_ref_of(s, (uint32_t)pid, e, d->f[KF_WAKE_COMM]);
  if (s->cats.legacy_sched) {
    write_wakeup_instant(w, s, e, v, &thread);
    return;
  }
  /* sub-type 2 on the CPU the thread will run on (ftrace's target_cpu), the
   * task that woke it as `waker` (absent when woken from interrupt context
   * on an idle CPU: common_pid 0) */
  kev__int(d->f[KF_WAKE_CPU], e->data, e->size, &cpu);
  sched_refs(s);
  trace_arg_t arg;
  size_t n = 0;
  int64_t waker = kev__common_pid(w->table, e->data, e->size);
  if (waker > 0) {
    arg.name_ref = s->waker_ref;
    arg.value.type = TRACE_ARG_KOID;
    arg.value.koid_value = (trace_koid_t)waker;
    n = 1;
  }
  size_t words = fxt_thread_wakeup_record_words(&arg, n);
  uint64_t* p = writer__reserve(s->ctx, words);
  if (!p) return;
  fxt_write_thread_wakeup_record(p, words, ticks_of(w, e->ts),
                                 (trace_cpu_number_t)(cpu < 0 || cpu > 0xffff ? 0 : cpu),
                                 (trace_koid_t)pid, &arg, n);
  writer__count_written(s->ctx);
  s->written++;
}

/* ---- generic events (and kernel:task's instants) ---- */

static void write_generic(const kwriter_t* w, kwsession_t* s, const kconv_event_t* e, kwdesc_t* v) {
  const kev_desc_t* d = e->desc;
  ensure_refs(w, s, d, v);
  int64_t pid = kev__common_pid(w->table, e->data, e->size);
  /* the thread that hit the tracepoint (not named here: no comm at hand) */
  trace_thread_ref_t thread =
      pid > 0 && pid <= UINT32_MAX
          ? trace_make_inline_thread_ref(kthreads__tgid(&s->threads, (uint32_t)pid), (uint64_t)pid)
          : trace_make_inline_thread_ref(0, 0);
  trace_arg_t args[KEV_MAX_FIELDS];
  size_t n = kev__args(d, v->field_refs, e->data, e->size, args);
  trace_context_write_instant_event_record(s->ctx, ticks_of(w, e->ts), &thread, &v->category_ref,
                                           &v->name_ref, TRACE_SCOPE_THREAD, args, n);
  s->written++;
  if (d->truncated) s->truncated++;
}

/* ---- task: names from fork / exec / rename ---- */

/* The names a task event at ftrace time ts gives; the thread's record is
 * left out when a newer event named it already (converted first, from
 * another CPU). */
static void rename_thread(kwsession_t* s, uint32_t tid, uint32_t tgid, const char* name,
                          size_t length, uint64_t ts) {
  kthread_entry_t* t = kthreads__get(&s->threads, tid);
  bool newer_known = t && ts < t->name_ts;
  if (t) {
    t->tgid = tgid;
    t->flags |= KTHREAD_NAMED;
    if (tid == tgid) t->flags |= KPROCESS_NAMED;
  }
  if (tid == tgid) {
    write_process(s, tgid, name, length);
  } else {
    /* a thread record names its process: that process gets a record too */
    kthread_entry_t* p = kthreads__get(&s->threads, tgid);
    if (p && !(p->flags & KPROCESS_NAMED)) {
      p->flags |= KPROCESS_NAMED;
      char comm[64];
      if (kthreads__read_comm(tgid, 0, comm, sizeof(comm)))
        write_process(s, tgid, comm, strlen(comm));
      else
        write_process(s, tgid, name, length);
    }
  }
  if (!newer_known) write_thread(s, tgid, tid, name, length, ts);
}

static void write_task(const kwriter_t* w, kwsession_t* s, const kconv_event_t* e, kwdesc_t* v) {
  const kev_desc_t* d = e->desc;
  int64_t pid = 0;
  const char* name = "";
  size_t length = 0;
  switch (d->kind) {
    case KEV_FORK:
      if (kev__int(d->f[KF_FORK_CHILD_PID], e->data, e->size, &pid) && pid > 0 &&
          pid <= UINT32_MAX) {
        kev__bytes(d->f[KF_FORK_CHILD_COMM], e->data, e->size, &name, &length);
        uint32_t tgid = kthreads__tgid(&s->threads, (uint32_t)pid);
        rename_thread(s, (uint32_t)pid, tgid, name, length, e->ts);
      }
      break;
    case KEV_EXEC:
      if (kev__int(d->f[KF_EXEC_PID], e->data, e->size, &pid) && pid > 0 && pid <= UINT32_MAX &&
          kev__bytes(d->f[KF_EXEC_FILENAME], e->data, e->size, &name, &length)) {
        /* the new comm: the file's base name, cut to 15 bytes as the kernel does */
        const char* slash = memrchr(name, '/', length);
        if (slash) {
          length -= (size_t)(slash + 1 - name);
          name = slash + 1;
        }
        if (length > 15) length = 15;
        rename_thread(s, (uint32_t)pid, (uint32_t)pid, name, length, e->ts);
      }
      break;
    case KEV_RENAME:
      if (kev__int(d->f[KF_RENAME_PID], e->data, e->size, &pid) && pid > 0 && pid <= UINT32_MAX &&
          kev__bytes(d->f[KF_RENAME_NEWCOMM], e->data, e->size, &name, &length))
        rename_thread(s, (uint32_t)pid, kthreads__tgid(&s->threads, (uint32_t)pid), name, length,
                      e->ts);
      break;
    default:
      break;
  }
  write_generic(w, s, e, v);
}

/* ---- irq ---- */

static const char* const kSoftirqNames[] = {
    "softirq:HI",       "softirq:TIMER",   "softirq:NET_TX", "softirq:NET_RX",  "softirq:BLOCK",
    "softirq:IRQ_POLL", "softirq:TASKLET", "softirq:SCHED",  "softirq:HRTIMER", "softirq:RCU"};

static trace_thread_ref_t irq_track(const kwriter_t* w, kwsession_t* s, uint32_t cpu) {
  trace_koid_t tid = KIRQ_PROCESS_KOID + 1 + cpu;
  if (cpu < w->cpus && !s->irq[cpu].named) {
    s->irq[cpu].named = true;
    static const char kProcess[] = "kernel irq";
    bool any = false;
    for (uint32_t i = 0; i < w->cpus; i++) any |= i != cpu && s->irq[i].named;
    if (!any) {
      trace_string_ref_t ref = trace_make_inline_string_ref(kProcess, sizeof(kProcess) - 1);
      trace_context_write_process_info_record(s->ctx, KIRQ_PROCESS_KOID, &ref);
    }
    char name[32];
    int n = snprintf(name, sizeof(name), "irq/cpu%u", cpu);
    trace_string_ref_t ref = trace_make_inline_string_ref(name, (size_t)n);
    trace_context_write_thread_info_record(s->ctx, KIRQ_PROCESS_KOID, tid, &ref);
  }
  return trace_make_inline_thread_ref(KIRQ_PROCESS_KOID, tid);
}

static void write_irq(const kwriter_t* w, kwsession_t* s, const kconv_event_t* e) {
  const kev_desc_t* d = e->desc;
  if (e->cpu >= w->cpus) return;
  kirq_cpu_t* c = &s->irq[e->cpu];
  bool entry = d->kind == KEV_IRQ_ENTRY || d->kind == KEV_SOFTIRQ_ENTRY;
  if (!entry && c->depth == 0) return; /* began before this session's trace */
  int64_t number = 0;
  const char* name = NULL;
  size_t length = 0;
  trace_arg_t arg;
  if (d->kind == KEV_IRQ_ENTRY || d->kind == KEV_IRQ_EXIT) {
    kev__int(d->f[KF_IRQ_IRQ], e->data, e->size, &number);
    arg.name_ref = literal(s, "irq");
    arg.value.type = TRACE_ARG_INT32;
    arg.value.int32_value = (int32_t)number;
    if (d->kind == KEV_IRQ_ENTRY &&
        !kev__bytes(d->f[KF_IRQ_NAME], e->data, e->size, &name, &length))
      name = NULL;
  } else {
    kev__int(d->f[KF_SOFTIRQ_VEC], e->data, e->size, &number);
    arg.name_ref = literal(s, "vec");
    arg.value.type = TRACE_ARG_UINT32;
    arg.value.uint32_value = (uint32_t)number;
    if (number >= 0 && number < (int64_t)(sizeof(kSoftirqNames) / sizeof(kSoftirqNames[0]))) {
      name = kSoftirqNames[number];
      length = strlen(name);
    }
  }
  trace_thread_ref_t track = irq_track(w, s, e->cpu);
  trace_string_ref_t category = literal(s, kIrq);
  trace_ticks_t ticks = ticks_of(w, e->ts);
  if (entry) {
    if (!name || length == 0) {
      name = d->kind == KEV_IRQ_ENTRY ? "irq" : "softirq";
      length = strlen(name);
    }
    if (length > sizeof(c->names[0])) length = sizeof(c->names[0]);
    unsigned slot = c->depth < KIRQ_DEPTH ? c->depth : KIRQ_DEPTH - 1;
    memcpy(c->names[slot], name, length);
    c->name_lengths[slot] = length;
    c->depth++;
    trace_string_ref_t ref = trace_make_inline_string_ref(c->names[slot], length);
    trace_context_write_duration_begin_event_record(s->ctx, ticks, &track, &category, &ref, &arg,
                                                    1);
  } else {
    c->depth--;
    unsigned slot = c->depth < KIRQ_DEPTH ? c->depth : KIRQ_DEPTH - 1;
    trace_string_ref_t ref = trace_make_inline_string_ref(c->names[slot], c->name_lengths[slot]);
    trace_context_write_duration_end_event_record(s->ctx, ticks, &track, &category, &ref, &arg, 1);
  }
  s->written++;
}

/* One event into one session, in the form that session records it in. */
static void write_event(const kwriter_t* w, kwsession_t* s, const kconv_event_t* e) {
  kwdesc_t* v = view_of(w, s, e->desc);
  if (!v || v->mode == KWMODE_NONE) return;
  if (v->mode == KWMODE_GENERIC) {
    write_generic(w, s, e, v);
    return;
  }
  switch (e->desc->kind) {
    case KEV_SWITCH:
      write_switch(w, s, e);
      break;
    case KEV_WAKEUP:
      write_wakeup(w, s, e, v);
      break;
    case KEV_FORK:
    case KEV_EXEC:
    case KEV_EXIT:
    case KEV_RENAME:
      write_task(w, s, e, v);
      break;
    case KEV_IRQ_ENTRY:
    case KEV_IRQ_EXIT:
    case KEV_SOFTIRQ_ENTRY:
    case KEV_SOFTIRQ_EXIT:
      write_irq(w, s, e);
      break;
    case KEV_GENERIC:
      write_generic(w, s, e, v);
      break;
    case KEV_NEWTASK: /* noted for every session (kwriter__event), no record */
      break;
  }
}

void kwriter__event(void* arg, const kconv_event_t* e) {
  kwriter_t* w = arg;
  if (e->desc->kind == KEV_NEWTASK && !w->births_scanned)
    kbirths__note(&w->births, w->table, e->desc, e->data, e->size);
  /* each session that takes part and holds its context: one write each */
  for (unsigned i = 0; i < TRACE_ENGINE_MAX_SESSIONS; i++) {
    kwsession_t* s = w->sessions[i];
    if (!s || !s->ctx) continue;
    /* after an overrun (counted as dropped) the CPU's lane starts again */
    if (e->after_loss && e->cpu < w->cpus) s->lane[e->cpu] = -1;
    uint64_t written = s->written, truncated = s->truncated, gaps = s->lane_gaps;
    write_event(w, s, e);
    w->written += s->written - written;
    w->truncated += s->truncated - truncated;
    w->lane_gaps += s->lane_gaps - gaps;
  }
}

/* ---- the /proc snapshot ---- */

static bool numeric(const char* s, uint32_t* out) {
  if (!*s) return false;
  for (const char* p = s; *p; p++)
    if (!isdigit((unsigned char)*p)) return false;
  unsigned long v = strtoul(s, NULL, 10);
  if (v == 0 || v > UINT32_MAX) return false;
  *out = (uint32_t)v;
  return true;
}

/* One process and one thread kernel-object record per live thread in
 * /proc, into session s: its own snapshot, taken when it joins. */
static void write_snapshot(kwsession_t* s) {
  DIR* proc = opendir("/proc");
  if (!proc) return;
  struct dirent* pe;
  while ((pe = readdir(proc)) != NULL) {
    uint32_t pid;
    if (!numeric(pe->d_name, &pid)) continue;
    char name[64];
    if (!kthreads__read_comm(pid, 0, name, sizeof(name))) continue;
    kthread_entry_t* p = kthreads__get(&s->threads, pid);
    if (p) {
      p->tgid = pid;
      p->flags |= KPROCESS_NAMED;
    }
    write_process(s, pid, name, strlen(name));
    char path[64];
    snprintf(path, sizeof(path), "/proc/%u/task", pid);
    DIR* tasks = opendir(path);
    if (!tasks) continue;
    struct dirent* te;
    while ((te = readdir(tasks)) != NULL) {
      uint32_t tid;
      if (!numeric(te->d_name, &tid)) continue;
      if (!kthreads__read_comm(pid, tid, name, sizeof(name))) continue;
      kthread_entry_t* t = kthreads__get(&s->threads, tid);
      if (t) {
        t->tgid = pid;
        t->flags |= KTHREAD_NAMED;
      }
      write_thread(s, pid, tid, name, strlen(name), 0);
    }
    closedir(tasks);
  }
  closedir(proc);
}

/* ---- format records ---- */

static const char kFormatBlob[] = "trace_event_format";

/* The format record of each event session s records as an instant (its
 * generic events, and kernel:task's) (docs/event-formats.md), in the
 * durable buffer. */
static void write_formats(const kwriter_t* w, kwsession_t* s, const char* tracing_dir) {
  if (!tracing_dir) return;
  char* text = malloc(TRACE_MAX_BLOB_SIZE + 1);
  if (!text) return;
  for (size_t i = 0; i < w->table->count; i++) {
    const kev_desc_t* d = &w->table->descs[i];
    kwdesc_t* v = view_of(w, s, d);
    if (!v || v->mode == KWMODE_NONE) continue;
    bool task =
        d->kind == KEV_FORK || d->kind == KEV_EXEC || d->kind == KEV_EXIT || d->kind == KEV_RENAME;
    if (v->mode != KWMODE_GENERIC && !task) continue;
    int n = snprintf(text, TRACE_MAX_BLOB_SIZE, "category: %s\n", category_of(d, v));
    char path[512];
    snprintf(path, sizeof(path), "%s/events/%s/%s/format", tracing_dir, d->event->system,
             d->event->name);
    FILE* f = fopen(path, "re");
    if (!f || n <= 0) {
      if (f) fclose(f);
      continue;
    }
    size_t length = (size_t)n + fread(text + n, 1, TRACE_MAX_BLOB_SIZE - (size_t)n, f);
    bool too_long = !feof(f);
    fclose(f);
    if (too_long) continue; /* over one small blob: the events stay plain instants */
    trace_string_ref_t name = literal(s, kFormatBlob);
    size_t words = fxt_blob_record_words(&name, length);
    uint64_t* p = writer__reserve_metadata(s->ctx, words); /* durable: never wrapped away */
    if (!p) continue;
    fxt_write_blob_record(p, words, TRACE_BLOB_TYPE_DATA, &name, text, length);
    writer__count_written(s->ctx);
  }
  free(text);
}

bool kwriter__add_session(kwriter_t* w, kwsession_t* s, const char* tracing_dir) {
  if (s->session >= TRACE_ENGINE_MAX_SESSIONS || w->sessions[s->session]) return false;
  /* names and formats first, from the thread that writes its records
   * (oneshot keeps a thread's definitions before its uses) */
  s->ctx = trace_engine_session_acquire_context_for_category(s->session, NULL, NULL);
  if (!s->ctx) return false;
  write_snapshot(s);
  write_formats(w, s, tracing_dir);
  trace_release_context(s->ctx);
  s->ctx = NULL;
  s->threads.births = &w->births;
  w->sessions[s->session] = s;
  return true;
}
