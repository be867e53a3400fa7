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

int kwriter__init(kwriter_t* w, kev_table_t* table, bool tsc, bool legacy_sched, uint32_t cpus) {
  memset(w, 0, sizeof(*w));
  w->table = table;
  w->tsc = tsc;
  w->legacy_sched = legacy_sched;
  w->cpus = cpus;
  w->irq = calloc(cpus ? cpus : 1, sizeof(*w->irq));
  w->lane = malloc((cpus ? cpus : 1) * sizeof(*w->lane));
  if (!w->irq || !w->lane) return -1;
  for (uint32_t i = 0; i < (cpus ? cpus : 1); i++) w->lane[i] = -1;
  return 0;
}

void kwriter__free(kwriter_t* w) {
  kthreads__free(&w->threads);
  free(w->irq);
  free(w->lane);
  memset(w, 0, sizeof(*w));
}

bool kwriter__begin(kwriter_t* w) {
  w->ctx = trace_acquire_context();
  return w->ctx != NULL;
}

void kwriter__end(kwriter_t* w) {
  if (w->ctx) trace_release_context(w->ctx);
  w->ctx = NULL;
}

static trace_ticks_t ticks_of(const kwriter_t* w, uint64_t ts) {
  return w->tsc ? trace_clock__tsc_to_ns(ts) : ts;
}

static trace_string_ref_t literal(kwriter_t* w, const char* s) {
  trace_string_ref_t ref;
  trace_context_register_string_literal(w->ctx, s, &ref);
  return ref;
}

/* ---- names ---- */

static void write_process(kwriter_t* w, uint32_t pid, const char* name, size_t length) {
  trace_string_ref_t ref = trace_make_inline_string_ref(name, length);
  trace_context_write_process_info_record(w->ctx, pid, &ref);
}

static void write_thread(kwriter_t* w, uint32_t pid, uint32_t tid, const char* name,
                         size_t length) {
  trace_string_ref_t ref = trace_make_inline_string_ref(name, length);
  trace_context_write_thread_info_record(w->ctx, pid, tid, &ref);
}

/* Names tid (and its process) once per trace, with comm when nothing better
 * was written; returns its process. */
static uint32_t ensure_named(kwriter_t* w, uint32_t tid, const char* comm, size_t comm_length) {
  uint32_t tgid = kthreads__tgid(&w->threads, tid);
  kthread_entry_t* t = kthreads__get(&w->threads, tid);
  if (!t || (t->flags & KTHREAD_NAMED)) return tgid;
  t->flags |= KTHREAD_NAMED;
  kthread_entry_t* p = tgid == tid ? t : kthreads__get(&w->threads, tgid);
  if (p && !(p->flags & KPROCESS_NAMED)) {
    p->flags |= KPROCESS_NAMED;
    char name[64];
    if (tgid != tid && kthreads__read_comm(tgid, 0, name, sizeof(name)))
      write_process(w, tgid, name, strlen(name));
    else
      write_process(w, tgid, comm, comm_length);
  }
  write_thread(w, tgid, tid, comm, comm_length);
  return tgid;
}

static trace_thread_ref_t thread_ref(kwriter_t* w, uint32_t tid, const char* comm, size_t length) {
  if (tid == 0) return trace_make_inline_thread_ref(0, 0); /* idle: pid 0 (READERS.md) */
  return trace_make_inline_thread_ref(ensure_named(w, tid, comm, length), tid);
}

/* thread_ref() for a thread whose comm is the field `comm` of e: read only
 * when the thread is not named yet (once per thread and trace), so a known
 * thread costs one table lookup. */
static trace_thread_ref_t thread_ref_of(kwriter_t* w, uint32_t tid, const kconv_event_t* e,
                                        const struct tep_format_field* comm) {
  if (tid == 0) return trace_make_inline_thread_ref(0, 0);
  kthread_entry_t* t = kthreads__get(&w->threads, tid);
  if (t && (t->flags & KTHREAD_NAMED) && t->tgid) return trace_make_inline_thread_ref(t->tgid, tid);
  const char* name = "";
  size_t length = 0;
  kev__bytes(comm, e->data, e->size, &name, &length);
  return thread_ref(w, tid, name, length);
}

/* ---- sched ---- */

/* Linux prev_state -> FXT thread state (docs/kernel-provider.md). Preempted
 * (runnable) is FXT "new", which readers show as runnable: "running" is not
 * allowed for the outgoing thread. */
static uint32_t fxt_state(int64_t state) {
  uint64_t s = (uint64_t)state & 0xff;
  if (s == 0) return 0;                    /* R, R+: preempted */
  if (s & 0x30) return (s & 0x10) ? 5 : 4; /* X dead, Z zombie (dying) */
  if (s & 0x0c) return 2;                  /* T, t: stopped, traced */
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

static void sched_refs(kwriter_t* w) {
  if (w->sched_refs) return;
  w->sched_refs = true;
  w->outgoing_weight_ref = literal(w, "outgoing_weight");
  w->incoming_weight_ref = literal(w, "incoming_weight");
  w->waker_ref = literal(w, "waker");
}

/* The kernel recorded no switch out of `expected` (the thread the CPU's last
 * switch brought in) before this switch out of `found`: an instant
 * `sched_switch_missing` on `expected` at this switch's time (the latest the
 * missing switch can have happened), args `cpu` and `switched_out` (found).
 * ftrace counts no loss for these (docs/kernel-provider.md, Loss). */
static void write_lane_gap(kwriter_t* w, const kconv_event_t* e, int64_t expected, int64_t found) {
  w->lane_gaps++;
  trace_thread_ref_t thread =
      expected == 0 ? trace_make_inline_thread_ref(0, 0)
                    : trace_make_inline_thread_ref(kthreads__tgid(&w->threads, (uint32_t)expected),
                                                   (trace_koid_t)expected);
  trace_arg_t args[2];
  args[0].name_ref = literal(w, "cpu");
  args[0].value.type = TRACE_ARG_UINT32;
  args[0].value.uint32_value = e->cpu;
  args[1].name_ref = literal(w, "switched_out");
  args[1].value.type = TRACE_ARG_KOID;
  args[1].value.koid_value = (trace_koid_t)found;
  trace_string_ref_t category = literal(w, kSched);
  trace_string_ref_t name = literal(w, "sched_switch_missing");
  trace_context_write_instant_event_record(w->ctx, ticks_of(w, e->ts), &thread, &category, &name,
                                           TRACE_SCOPE_THREAD, args, 2);
  w->written++;
}

static void write_switch(kwriter_t* w, const kconv_event_t* e) {
  const kev_desc_t* d = e->desc;
  int64_t prev_pid, next_pid, prev_prio = 0, next_prio = 0, state = 0;
  if (!kev__int(d->f[KF_SWITCH_PREV_PID], e->data, e->size, &prev_pid) ||
      !kev__int(d->f[KF_SWITCH_NEXT_PID], e->data, e->size, &next_pid) || prev_pid < 0 ||
      next_pid < 0 || prev_pid > UINT32_MAX || next_pid > UINT32_MAX)
    return;
  kev__int(d->f[KF_SWITCH_PREV_PRIO], e->data, e->size, &prev_prio);
  kev__int(d->f[KF_SWITCH_NEXT_PRIO], e->data, e->size, &next_prio);
  kev__int(d->f[KF_SWITCH_PREV_STATE], e->data, e->size, &state);
  trace_thread_ref_t out = thread_ref_of(w, (uint32_t)prev_pid, e, d->f[KF_SWITCH_PREV_COMM]);
  trace_thread_ref_t in = thread_ref_of(w, (uint32_t)next_pid, e, d->f[KF_SWITCH_NEXT_COMM]);
  if (e->cpu < w->cpus) {
    int64_t expected = w->lane[e->cpu];
    if (expected >= 0 && expected != prev_pid) write_lane_gap(w, e, expected, prev_pid);
    w->lane[e->cpu] = next_pid;
  }
  if (w->legacy_sched) {
    trace_context_write_context_switch_record(w->ctx, ticks_of(w, e->ts), e->cpu, fxt_state(state),
                                              &out, &in, prev_pid == 0 ? 0 : prio_of(prev_prio),
                                              next_pid == 0 ? 0 : prio_of(next_prio));
    w->written++;
    return;
  }
  /* sub-type 1: the threads by koid (their process comes from the thread
   * records ensure_named wrote), the weights as int32 arguments (Perfetto
   * drops a switch whose weight has another type) */
  sched_refs(w);
  trace_arg_t args[2];
  args[0].name_ref = w->outgoing_weight_ref;
  args[0].value.type = TRACE_ARG_INT32;
  args[0].value.int32_value = weight_of(prev_pid, prev_prio);
  args[1].name_ref = w->incoming_weight_ref;
  args[1].value.type = TRACE_ARG_INT32;
  args[1].value.int32_value = weight_of(next_pid, next_prio);
  size_t words = fxt_context_switch_record_words(args, 2);
  uint64_t* p = writer__reserve(w->ctx, words);
  if (!p) return;
  fxt_write_context_switch_record(p, words, ticks_of(w, e->ts), e->cpu, fxt_state(state),
                                  (trace_koid_t)prev_pid, (trace_koid_t)next_pid, args, 2);
  writer__count_written(w->ctx);
  w->written++;
}

static void ensure_refs(kwriter_t* w, kev_desc_t* d) {
  if (d->refs_generation) return;
  d->refs_generation = 1;
  /* one string record per category, shared by its events */
  const kev_desc_t* same = NULL;
  for (size_t i = 0; i < w->table->count && !same; i++) {
    const kev_desc_t* o = &w->table->descs[i];
    if (o != d && o->refs_generation && strcmp(o->category, d->category) == 0) same = o;
  }
  if (same)
    d->category_ref = same->category_ref;
  else
    trace_context_register_string_copy(w->ctx, d->category, strlen(d->category), &d->category_ref);
  trace_context_register_string_copy(w->ctx, d->event->name, strlen(d->event->name), &d->name_ref);
  for (unsigned i = 0; i < d->field_count; i++)
    trace_context_register_string_copy(w->ctx, d->fields[i]->name, strlen(d->fields[i]->name),
                                       &d->field_refs[i]);
}

/* Legacy form: an instant event on the woken thread (every reader knows it). */
static void write_wakeup_instant(kwriter_t* w, const kconv_event_t* e,
                                 const trace_thread_ref_t* thread) {
  kev_desc_t* d = (kev_desc_t*)e->desc;
  int64_t prio, cpu;
  ensure_refs(w, d);
  trace_arg_t args[3];
  size_t n = 0;
  if (kev__int(d->f[KF_WAKE_CPU], e->data, e->size, &cpu)) {
    args[n].name_ref = literal(w, "cpu");
    args[n].value.type = TRACE_ARG_UINT32;
    args[n++].value.uint32_value = (uint32_t)cpu;
  }
  if (kev__int(d->f[KF_WAKE_PRIO], e->data, e->size, &prio)) {
    args[n].name_ref = literal(w, "prio");
    args[n].value.type = TRACE_ARG_INT32;
    args[n++].value.int32_value = (int32_t)prio;
  }
  int64_t waker = kev__common_pid(w->table, e->data, e->size);
  if (waker > 0) {
    args[n].name_ref = literal(w, "waker_tid");
    args[n].value.type = TRACE_ARG_KOID;
    args[n++].value.koid_value = (trace_koid_t)waker;
  }
  trace_string_ref_t category = literal(w, kSched);
  trace_context_write_instant_event_record(w->ctx, ticks_of(w, e->ts), thread, &category,
                                           &d->name_ref, TRACE_SCOPE_THREAD, args, n);
  w->written++;
}

static void write_wakeup(kwriter_t* w, const kconv_event_t* e) {
  const kev_desc_t* d = e->desc;
  int64_t pid, cpu = e->cpu;
  if (!kev__int(d->f[KF_WAKE_PID], e->data, e->size, &pid) || pid <= 0 || pid > UINT32_MAX) return;
  trace_thread_ref_t thread = thread_ref_of(w, (uint32_t)pid, e, d->f[KF_WAKE_COMM]);
  if (w->legacy_sched) {
    write_wakeup_instant(w, e, &thread);
    return;
  }
  /* sub-type 2 on the CPU the thread will run on (ftrace's target_cpu), the
   * task that woke it as `waker` (absent when woken from interrupt context
   * on an idle CPU: common_pid 0) */
  kev__int(d->f[KF_WAKE_CPU], e->data, e->size, &cpu);
  sched_refs(w);
  trace_arg_t arg;
  size_t n = 0;
  int64_t waker = kev__common_pid(w->table, e->data, e->size);
  if (waker > 0) {
    arg.name_ref = w->waker_ref;
    arg.value.type = TRACE_ARG_KOID;
    arg.value.koid_value = (trace_koid_t)waker;
    n = 1;
  }
  size_t words = fxt_thread_wakeup_record_words(&arg, n);
  uint64_t* p = writer__reserve(w->ctx, words);
  if (!p) return;
  fxt_write_thread_wakeup_record(p, words, ticks_of(w, e->ts),
                                 (trace_cpu_number_t)(cpu < 0 || cpu > 0xffff ? 0 : cpu),
                                 (trace_koid_t)pid, &arg, n);
  writer__count_written(w->ctx);
  w->written++;
}

/* ---- generic events (and kernel:task's instants) ---- */

static void write_generic(kwriter_t* w, const kconv_event_t* e) {
  kev_desc_t* d = (kev_desc_t*)e->desc;
  ensure_refs(w, d);
  int64_t pid = kev__common_pid(w->table, e->data, e->size);
  /* the thread that hit the tracepoint (not named here: no comm at hand) */
  trace_thread_ref_t thread =
      pid > 0 && pid <= UINT32_MAX
          ? trace_make_inline_thread_ref(kthreads__tgid(&w->threads, (uint32_t)pid), (uint64_t)pid)
          : trace_make_inline_thread_ref(0, 0);
  trace_arg_t args[KEV_MAX_FIELDS];
  size_t n = kev__args(d, e->data, e->size, args);
  trace_context_write_instant_event_record(w->ctx, ticks_of(w, e->ts), &thread, &d->category_ref,
                                           &d->name_ref, TRACE_SCOPE_THREAD, args, n);
  w->written++;
  if (d->truncated) w->truncated++;
}

/* ---- task: names from fork / exec / rename ---- */

static void rename_thread(kwriter_t* w, uint32_t tid, uint32_t tgid, const char* name,
                          size_t length) {
  kthread_entry_t* t = kthreads__get(&w->threads, tid);
  if (t) {
    t->tgid = tgid;
    t->flags |= KTHREAD_NAMED;
    if (tid == tgid) t->flags |= KPROCESS_NAMED;
  }
  if (tid == tgid) {
    write_process(w, tgid, name, length);
  } else {
    /* a thread record names its process: that process gets a record too */
    kthread_entry_t* p = kthreads__get(&w->threads, tgid);
    if (p && !(p->flags & KPROCESS_NAMED)) {
      p->flags |= KPROCESS_NAMED;
      char comm[64];
      if (kthreads__read_comm(tgid, 0, comm, sizeof(comm)))
        write_process(w, tgid, comm, strlen(comm));
      else
        write_process(w, tgid, name, length);
    }
  }
  write_thread(w, tgid, tid, name, length);
}

static void write_task(kwriter_t* w, const kconv_event_t* e) {
  const kev_desc_t* d = e->desc;
  int64_t pid = 0;
  const char* name = "";
  size_t length = 0;
  switch (d->kind) {
    case KEV_FORK:
      if (kev__int(d->f[KF_FORK_CHILD_PID], e->data, e->size, &pid) && pid > 0 &&
          pid <= UINT32_MAX) {
        kev__bytes(d->f[KF_FORK_CHILD_COMM], e->data, e->size, &name, &length);
        uint32_t tgid = kthreads__tgid(&w->threads, (uint32_t)pid);
        rename_thread(w, (uint32_t)pid, tgid, name, length);
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
        rename_thread(w, (uint32_t)pid, (uint32_t)pid, name, length);
      }
      break;
    case KEV_RENAME:
      if (kev__int(d->f[KF_RENAME_PID], e->data, e->size, &pid) && pid > 0 && pid <= UINT32_MAX &&
          kev__bytes(d->f[KF_RENAME_NEWCOMM], e->data, e->size, &name, &length))
        rename_thread(w, (uint32_t)pid, kthreads__tgid(&w->threads, (uint32_t)pid), name, length);
      break;
    default:
      break;
  }
  write_generic(w, e);
}

/* ---- irq ---- */

static const char* const kSoftirqNames[] = {
    "softirq:HI",       "softirq:TIMER",   "softirq:NET_TX", "softirq:NET_RX",  "softirq:BLOCK",
    "softirq:IRQ_POLL", "softirq:TASKLET", "softirq:SCHED",  "softirq:HRTIMER", "softirq:RCU"};

static trace_thread_ref_t irq_track(kwriter_t* w, uint32_t cpu) {
  trace_koid_t tid = KIRQ_PROCESS_KOID + 1 + cpu;
  if (cpu < w->cpus && !w->irq[cpu].named) {
    w->irq[cpu].named = true;
    static const char kProcess[] = "kernel irq";
    bool any = false;
    for (uint32_t i = 0; i < w->cpus; i++) any |= i != cpu && w->irq[i].named;
    if (!any) {
      trace_string_ref_t ref = trace_make_inline_string_ref(kProcess, sizeof(kProcess) - 1);
      trace_context_write_process_info_record(w->ctx, KIRQ_PROCESS_KOID, &ref);
    }
    char name[32];
    int n = snprintf(name, sizeof(name), "irq/cpu%u", cpu);
    trace_string_ref_t ref = trace_make_inline_string_ref(name, (size_t)n);
    trace_context_write_thread_info_record(w->ctx, KIRQ_PROCESS_KOID, tid, &ref);
  }
  return trace_make_inline_thread_ref(KIRQ_PROCESS_KOID, tid);
}

static void write_irq(kwriter_t* w, const kconv_event_t* e) {
  const kev_desc_t* d = e->desc;
  if (e->cpu >= w->cpus) return;
  kirq_cpu_t* c = &w->irq[e->cpu];
  bool entry = d->kind == KEV_IRQ_ENTRY || d->kind == KEV_SOFTIRQ_ENTRY;
  if (!entry && c->depth == 0) return; /* began before the trace */
  int64_t number = 0;
  const char* name = NULL;
  size_t length = 0;
  trace_arg_t arg;
  if (d->kind == KEV_IRQ_ENTRY || d->kind == KEV_IRQ_EXIT) {
    kev__int(d->f[KF_IRQ_IRQ], e->data, e->size, &number);
    arg.name_ref = literal(w, "irq");
    arg.value.type = TRACE_ARG_INT32;
    arg.value.int32_value = (int32_t)number;
    if (d->kind == KEV_IRQ_ENTRY &&
        !kev__bytes(d->f[KF_IRQ_NAME], e->data, e->size, &name, &length))
      name = NULL;
  } else {
    kev__int(d->f[KF_SOFTIRQ_VEC], e->data, e->size, &number);
    arg.name_ref = literal(w, "vec");
    arg.value.type = TRACE_ARG_UINT32;
    arg.value.uint32_value = (uint32_t)number;
    if (number >= 0 && number < (int64_t)(sizeof(kSoftirqNames) / sizeof(kSoftirqNames[0]))) {
      name = kSoftirqNames[number];
      length = strlen(name);
    }
  }
  trace_thread_ref_t track = irq_track(w, e->cpu);
  trace_string_ref_t category = literal(w, kIrq);
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
    trace_context_write_duration_begin_event_record(w->ctx, ticks, &track, &category, &ref, &arg,
                                                    1);
  } else {
    c->depth--;
    unsigned slot = c->depth < KIRQ_DEPTH ? c->depth : KIRQ_DEPTH - 1;
    trace_string_ref_t ref = trace_make_inline_string_ref(c->names[slot], c->name_lengths[slot]);
    trace_context_write_duration_end_event_record(w->ctx, ticks, &track, &category, &ref, &arg, 1);
  }
  w->written++;
}

void kwriter__event(void* arg, const kconv_event_t* e) {
  kwriter_t* w = arg;
  if (!w->ctx) return;
  /* after an overrun (counted as dropped) the CPU's lane starts again */
  if (e->after_loss && e->cpu < w->cpus) w->lane[e->cpu] = -1;
  switch (e->desc->kind) {
    case KEV_SWITCH:
      write_switch(w, e);
      break;
    case KEV_WAKEUP:
      write_wakeup(w, e);
      break;
    case KEV_FORK:
    case KEV_EXEC:
    case KEV_EXIT:
    case KEV_RENAME:
      write_task(w, e);
      break;
    case KEV_IRQ_ENTRY:
    case KEV_IRQ_EXIT:
    case KEV_SOFTIRQ_ENTRY:
    case KEV_SOFTIRQ_EXIT:
      write_irq(w, e);
      break;
    case KEV_GENERIC:
      write_generic(w, e);
      break;
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

void kwriter__snapshot(kwriter_t* w) {
  if (!w->ctx) return;
  DIR* proc = opendir("/proc");
  if (!proc) return;
  struct dirent* pe;
  while ((pe = readdir(proc)) != NULL) {
    uint32_t pid;
    if (!numeric(pe->d_name, &pid)) continue;
    char name[64];
    if (!kthreads__read_comm(pid, 0, name, sizeof(name))) continue;
    kthread_entry_t* p = kthreads__get(&w->threads, pid);
    if (p) {
      p->tgid = pid;
      p->flags |= KPROCESS_NAMED;
    }
    write_process(w, pid, name, strlen(name));
    char path[64];
    snprintf(path, sizeof(path), "/proc/%u/task", pid);
    DIR* tasks = opendir(path);
    if (!tasks) continue;
    struct dirent* te;
    while ((te = readdir(tasks)) != NULL) {
      uint32_t tid;
      if (!numeric(te->d_name, &tid)) continue;
      if (!kthreads__read_comm(pid, tid, name, sizeof(name))) continue;
      kthread_entry_t* t = kthreads__get(&w->threads, tid);
      if (t) {
        t->tgid = pid;
        t->flags |= KTHREAD_NAMED;
      }
      write_thread(w, pid, tid, name, strlen(name));
    }
    closedir(tasks);
  }
  closedir(proc);
}

/* ---- format records ---- */

static const char kFormatBlob[] = "trace_event_format";

void kwriter__formats(kwriter_t* w, const char* tracing_dir) {
  if (!w->ctx || !tracing_dir) return;
  char* text = malloc(TRACE_MAX_BLOB_SIZE + 1);
  if (!text) return;
  for (size_t i = 0; i < w->table->count; i++) {
    const kev_desc_t* d = &w->table->descs[i];
    if (d->kind != KEV_GENERIC && d->kind != KEV_FORK && d->kind != KEV_EXEC &&
        d->kind != KEV_EXIT && d->kind != KEV_RENAME)
      continue;
    int n = snprintf(text, TRACE_MAX_BLOB_SIZE, "category: %s\n", d->category);
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
    trace_string_ref_t name = literal(w, kFormatBlob);
    size_t words = fxt_blob_record_words(&name, length);
    uint64_t* p = writer__reserve_metadata(w->ctx, words); /* durable: never wrapped away */
    if (!p) continue;
    fxt_write_blob_record(p, words, TRACE_BLOB_TYPE_DATA, &name, text, length);
    writer__count_written(w->ctx);
  }
  free(text);
}
