/* `trace summary`'s accumulation of figures, one record at a time (see
 * summary.h and docs/summary.md). */
#include "trace/summary.h"

#include <stdlib.h>
#include <string.h>
#include <trace-engine/types.h>

#include "anchor/clock_anchor.h"
#include "ordered/ordered.h"
#include "trace/timestamp.h"

enum { EV_INSTANT = 0, EV_COUNTER = 1, EV_BEGIN = 2, EV_END = 3, EV_COMPLETE = 4 };
enum { EV_ASYNC_BEGIN = 5, EV_ASYNC_END = 7 };
enum { STATE_RUNNING = 1 };

typedef struct async_open {
  uint64_t begin_ns, pid, tid;
} async_open_t;

bool summary__init(summary_t* s, const time_range_t* range) {
  memset(s, 0, sizeof(*s));
  if (range) s->range = *range;
  summary_table__init(&s->durations, sizeof(summary_duration_t));
  summary_table__init(&s->counters, sizeof(summary_counter_t));
  summary_table__init(&s->threads, sizeof(summary_thread_t));
  summary_table__init(&s->providers, sizeof(summary_provider_t));
  summary_table__init(&s->async, sizeof(async_open_t));
  s->key_capacity = 1024;
  s->key = malloc(s->key_capacity);
  return s->key != NULL;
}

/* ---- keys ---- */

static bool key_reserve(summary_t* s, size_t n) {
  if (n <= s->key_capacity) return true;
  size_t cap = s->key_capacity;
  while (cap < n) cap *= 2;
  char* k = realloc(s->key, cap);
  if (!k) {
    s->out_of_memory = true;
    return false;
  }
  s->key = k;
  s->key_capacity = cap;
  return true;
}

static size_t key_put(char* k, size_t at, const void* data, size_t n) {
  memcpy(k + at, data, n);
  return at + n;
}

static size_t key_put_string(char* k, size_t at, const trace_reader_string_t* str) {
  uint32_t len = (uint32_t)str->length;
  at = key_put(k, at, &len, sizeof(len));
  return key_put(k, at, str->data, str->length);
}

/* ---- entries ---- */

static summary_entry_t* get(summary_t* s, summary_table_t* t, const void* key, size_t n,
                            bool* added) {
  summary_entry_t* e = summary_table__get(t, key, n, added);
  if (!e) s->out_of_memory = true;
  return e;
}

static summary_duration_t* duration_of(summary_t* s, const trace_reader_string_t* cat,
                                       const trace_reader_string_t* name) {
  if (!key_reserve(s, 8 + cat->length + name->length)) return NULL;
  size_t n = key_put_string(s->key, 0, cat);
  n = key_put_string(s->key, n, name);
  bool added;
  summary_entry_t* e = get(s, &s->durations, s->key, n, &added);
  if (!e) return NULL;
  summary_duration_t* d = ((summary_duration_t*)summary_entry__value(e));
  if (added) {
    d->category_length = (uint32_t)cat->length;
    d->category = e->key + 4;
    d->name_length = (uint32_t)name->length;
    d->name = e->key + 8 + cat->length;
  }
  return d;
}

static summary_thread_t* thread_of(summary_t* s, uint64_t pid, uint64_t tid) {
  bool added;
  summary_entry_t* e = get(s, &s->threads, &tid, sizeof(tid), &added);
  if (!e) return NULL;
  summary_thread_t* t = ((summary_thread_t*)summary_entry__value(e));
  t->tid = tid;
  if (pid) t->pid = pid; /* scheduling records may not know the process */
  return t;
}

static summary_provider_t* provider_of(summary_t* s, uint32_t id) {
  bool added;
  summary_entry_t* e = get(s, &s->providers, &id, sizeof(id), &added);
  if (!e) return NULL;
  summary_provider_t* p = ((summary_provider_t*)summary_entry__value(e));
  p->id = id;
  return p;
}

static summary_cpu_t* cpu_of(summary_t* s, uint32_t cpu) {
  if (cpu >= s->cpu_count) {
    uint32_t count = cpu + 1 > 2 * s->cpu_count ? cpu + 1 : 2 * s->cpu_count;
    summary_cpu_t* cpus = realloc(s->cpus, count * sizeof(*cpus));
    if (!cpus) {
      s->out_of_memory = true;
      return NULL;
    }
    memset(cpus + s->cpu_count, 0, (count - s->cpu_count) * sizeof(*cpus));
    s->cpus = cpus;
    s->cpu_count = count;
  }
  return &s->cpus[cpu];
}

/* ---- durations ---- */

/* Merges [b, e] into the thread's disjoint, sorted intervals; busy_ns stays
 * the measure of their union (plus the pieces pushed out of the window). */
static void add_interval(summary_t* s, summary_thread_t* t, uint64_t b, uint64_t e) {
  uint32_t n = t->interval_count, i = n, j;
  summary_interval_t* iv = t->intervals;
  while (i > 0 && iv[i - 1].end_ns >= b) i--;
  for (j = i; j < n && iv[j].begin_ns <= e; j++) {
    t->busy_ns -= iv[j].end_ns - iv[j].begin_ns;
    if (iv[j].begin_ns < b) b = iv[j].begin_ns;
    if (iv[j].end_ns > e) e = iv[j].end_ns;
  }
  t->busy_ns += e - b;
  if (j == i) { /* nothing merged: one more piece */
    if (n == t->interval_capacity) {
      if (n == SUMMARY_MAX_INTERVALS) {
        /* the oldest half is final: an enclosing duration arriving later
         * would count their time twice (reported as merged_away) */
        uint32_t drop = n / 2;
        memmove(iv, iv + drop, (n - drop) * sizeof(*iv));
        n -= drop;
        i -= i >= drop ? drop : i;
        s->merged_away += drop;
      } else {
        uint32_t cap = n ? 2 * n : 8;
        iv = realloc(iv, cap * sizeof(*iv));
        if (!iv) {
          s->out_of_memory = true;
          return;
        }
        t->intervals = iv;
        t->interval_capacity = cap;
      }
    }
    memmove(iv + i + 1, iv + i, (n - i) * sizeof(*iv));
    n++;
  } else { /* iv[i..j) become one */
    memmove(iv + i + 1, iv + j, (n - j) * sizeof(*iv));
    n -= j - i - 1;
  }
  iv[i] = (summary_interval_t){b, e};
  t->interval_count = n;
}

/* One finished duration of d, from begin_ns to end_ns, begun on `thread`
 * (NULL for async spans, which belong to no thread's busy time). */
static void add_duration(summary_t* s, summary_duration_t* d, uint64_t begin_ns, uint64_t end_ns,
                         uint64_t pid, uint64_t tid, summary_thread_t* thread) {
  if (!time_range__contains(&s->range, begin_ns)) return;
  uint64_t length = end_ns >= begin_ns ? end_ns - begin_ns : 0;
  if (d->hist.count == 0 || length > d->hist.max) {
    d->slowest_ts_ns = begin_ns;
    d->slowest_pid = pid;
    d->slowest_tid = tid;
  }
  if (!summary_hist__add(&d->hist, length)) {
    s->out_of_memory = true;
    return;
  }
  d->total_ns += length;
  if (thread) {
    thread->durations++;
    if (end_ns >= begin_ns) add_interval(s, thread, begin_ns, end_ns);
  }
}

static void on_begin(summary_t* s, const trace_record_t* r, uint64_t ns) {
  summary_thread_t* t = thread_of(s, r->event.process_koid, r->event.thread_koid);
  summary_duration_t* d = duration_of(s, &r->event.category, &r->event.name);
  if (!t || !d) return;
  if (t->depth == SUMMARY_MAX_DEPTH) { /* not counted; its end must not close another */
    s->too_deep++;
    t->depth_overflow++;
    return;
  }
  if (t->depth == t->stack_capacity) {
    uint32_t cap = t->stack_capacity ? 2 * t->stack_capacity : 8;
    summary_open_t* stack = realloc(t->stack, cap * sizeof(*stack));
    if (!stack) {
      s->out_of_memory = true;
      return;
    }
    t->stack = stack;
    t->stack_capacity = cap;
  }
  t->stack[t->depth++] = (summary_open_t){d, ns};
}

/* An end closes the innermost open begin of its thread (as Chrome's and
 * Perfetto's importers pair them), whatever name it carries. */
static void on_end(summary_t* s, const trace_record_t* r, uint64_t ns) {
  summary_thread_t* t = thread_of(s, r->event.process_koid, r->event.thread_koid);
  if (!t) return;
  if (t->depth_overflow) {
    t->depth_overflow--;
    return;
  }
  if (t->depth == 0) {
    s->unmatched_ends++;
    return;
  }
  summary_open_t o = t->stack[--t->depth];
  o.duration->pairs++;
  add_duration(s, o.duration, o.begin_ns, ns, r->event.process_koid, r->event.thread_koid, t);
}

static void on_complete(summary_t* s, const trace_record_t* r, uint64_t ns) {
  summary_thread_t* t = thread_of(s, r->event.process_koid, r->event.thread_koid);
  summary_duration_t* d = duration_of(s, &r->event.category, &r->event.name);
  if (!t || !d) return;
  d->complete++;
  uint64_t end = timestamp__ticks_to_ns(r->event.payload, r->provider->ticks_per_second);
  add_duration(s, d, ns, end, r->event.process_koid, r->event.thread_koid, t);
}

/* Async spans pair by (category, name, id) within a process. */
static void on_async(summary_t* s, const trace_record_t* r, uint64_t ns) {
  summary_duration_t* d = duration_of(s, &r->event.category, &r->event.name);
  if (!d) return;
  uint64_t key[3] = {(uint64_t)(uintptr_t)d, r->event.payload, r->event.process_koid};
  if (r->event.event_type == EV_ASYNC_BEGIN) {
    bool added;
    summary_entry_t* e = get(s, &s->async, key, sizeof(key), &added);
    if (!e) return;
    /* a second begin with the same id restarts the span */
    *((async_open_t*)summary_entry__value(e)) =
        (async_open_t){ns, r->event.process_koid, r->event.thread_koid};
    return;
  }
  summary_entry_t* e = summary_table__find(&s->async, key, sizeof(key));
  if (!e) {
    s->unmatched_async_ends++;
    return;
  }
  async_open_t o = *((async_open_t*)summary_entry__value(e));
  summary_table__remove(&s->async, e);
  d->async++;
  add_duration(s, d, o.begin_ns, ns, o.pid, o.tid, NULL);
}

/* ---- counters ---- */

static bool is_numeric(const trace_reader_arg_t* a, double* v) {
  switch (a->type) {
    case 1:
      *v = a->int32_value;
      return true;
    case 2:
      *v = a->uint32_value;
      return true;
    case 3:
      *v = (double)a->int64_value;
      return true;
    case 4:
      *v = (double)a->uint64_value;
      return true;
    case 5:
      *v = a->double_value;
      return true;
    default:
      return false;
  }
}

static void on_counter(summary_t* s, const trace_record_t* r, uint64_t ns) {
  if (!time_range__contains(&s->range, ns)) return;
  const __typeof__(r->event)* e = &r->event;
  for (size_t i = 0; i < e->args.count; i++) {
    double v;
    const trace_reader_arg_t* a = &e->args.items[i];
    if (!is_numeric(a, &v)) continue;
    if (!key_reserve(s, 20 + e->category.length + e->name.length + a->name.length)) return;
    size_t n = key_put_string(s->key, 0, &e->category);
    n = key_put_string(s->key, n, &e->name);
    n = key_put(s->key, n, &e->payload, sizeof(e->payload));
    n = key_put(s->key, n, a->name.data, a->name.length);
    bool added;
    summary_entry_t* entry = get(s, &s->counters, s->key, n, &added);
    if (!entry) return;
    summary_counter_t* c = ((summary_counter_t*)summary_entry__value(entry));
    if (added) {
      c->category = entry->key + 4;
      c->category_length = (uint32_t)e->category.length;
      c->name = entry->key + 8 + e->category.length;
      c->name_length = (uint32_t)e->name.length;
      c->id = e->payload;
      c->series = c->name + e->name.length + sizeof(uint64_t);
      c->series_length = (uint32_t)a->name.length;
      c->min = c->max = v;
    }
    if (v < c->min) c->min = v;
    if (v > c->max) c->max = v;
    c->sum += v;
    c->samples++;
  }
}

/* ---- scheduling ---- */

/* CPU time of [from, to] that lies inside the range. */
static uint64_t clipped(const summary_t* s, uint64_t from, uint64_t to) {
  if (to <= from) return 0;
  if (!s->range.active) return to - from;
  /* as time_range__contains(): before the origin counts as offset 0 */
  uint64_t lo = s->range.start_ns == 0 ? 0
                : s->range.start_ns > UINT64_MAX - s->range.origin_ns
                    ? UINT64_MAX
                    : s->range.origin_ns + s->range.start_ns;
  uint64_t hi = s->range.end_ns > UINT64_MAX - s->range.origin_ns
                    ? UINT64_MAX
                    : s->range.origin_ns + s->range.end_ns;
  if (from < lo) from = lo;
  if (to > hi) to = hi;
  return to > from ? to - from : 0;
}

static void make_runnable(summary_thread_t* t, uint64_t ns) {
  if (t->on_cpu || t->runnable) return; /* keep the first wakeup of a series */
  t->runnable = true;
  t->runnable_since_ns = ns;
}

static void on_switch(summary_t* s, const trace_record_t* r, uint64_t ns) {
  const __typeof__(r->scheduling)* c = &r->scheduling;
  summary_cpu_t* cpu = cpu_of(s, c->cpu);
  if (!cpu) return;
  s->sched = true;
  if (cpu->known && cpu->current) {
    cpu->current->cpu_ns += clipped(s, cpu->since_ns, ns);
    cpu->current->on_cpu = false;
  }
  if (c->outgoing_thread_koid != 0) {
    summary_thread_t* out = thread_of(s, c->outgoing_process_koid, c->outgoing_thread_koid);
    if (!out) return;
    out->on_cpu = false;
    /* switched out while still running: preempted, so runnable from now */
    if (c->outgoing_state == STATE_RUNNING) make_runnable(out, ns);
  }
  summary_thread_t* in = NULL;
  if (c->incoming_thread_koid != 0) {
    in = thread_of(s, c->incoming_process_koid, c->incoming_thread_koid);
    if (!in) return;
    bool counted = time_range__contains(&s->range, ns);
    if (in->runnable && counted && !summary_hist__add(&in->wait, ns - in->runnable_since_ns))
      s->out_of_memory = true;
    if (counted) in->switches++;
    in->runnable = false;
    in->on_cpu = true;
  }
  cpu->known = true;
  cpu->current = in;
  cpu->since_ns = ns;
}

static void on_wakeup(summary_t* s, uint64_t pid, uint64_t tid, uint64_t ns) {
  if (tid == 0) return;
  summary_thread_t* t = thread_of(s, pid, tid);
  if (t) make_runnable(t, ns);
}

static bool is_wakeup_event(const trace_record_t* r) {
  const trace_reader_string_t* c = &r->event.category;
  const trace_reader_string_t* n = &r->event.name;
  if (c->length != 12 || memcmp(c->data, "kernel:sched", 12) != 0) return false;
  return (n->length == 12 && memcmp(n->data, "sched_wakeup", 12) == 0) ||
         (n->length == 12 && memcmp(n->data, "sched_waking", 12) == 0) ||
         (n->length == 16 && memcmp(n->data, "sched_wakeup_new", 16) == 0);
}

/* ---- records ---- */

static bool string_is(const trace_reader_string_t* s, const char* text) {
  return s->length == strlen(text) && memcmp(s->data, text, s->length) == 0;
}

/* An fxtrace:clock "host" instant: one host's measured clock. */
static void on_host_clock(summary_t* s, const trace_record_t* r) {
  if (s->host_count == SUMMARY_MAX_HOSTS) {
    s->hosts_omitted++;
    return;
  }
  summary_host_t h;
  memset(&h, 0, sizeof(h));
  h.rate_applied = -1;
  for (size_t i = 0; i < r->event.args.count; i++) {
    const trace_reader_arg_t* a = &r->event.args.items[i];
    if (string_is(&a->name, "host") && a->type == TRACE_ARG_STRING) {
      size_t n =
          a->string_value.length < sizeof(h.name) - 1 ? a->string_value.length : sizeof(h.name) - 1;
      memcpy(h.name, a->string_value.data, n);
    } else if (string_is(&a->name, "offset_ns") && a->type == TRACE_ARG_INT64) {
      h.offset_ns = a->int64_value;
    } else if (string_is(&a->name, "uncertainty_ns") && a->type == TRACE_ARG_UINT64) {
      h.uncertainty_ns = a->uint64_value;
    } else if (string_is(&a->name, "drift_ppb") && a->type == TRACE_ARG_INT64) {
      h.drift_ppb = a->int64_value;
    } else if (string_is(&a->name, "measured_ppb") && a->type == TRACE_ARG_INT64) {
      h.measured_ppb = a->int64_value;
    } else if (string_is(&a->name, "rate_applied") && a->type == TRACE_ARG_BOOL) {
      h.rate_applied = a->bool_value ? 1 : 0;
    }
  }
  s->hosts[s->host_count++] = h;
}

static void on_kernel_object(summary_t* s, const trace_record_t* r) {
  const __typeof__(r->kernel_object)* k = &r->kernel_object;
  if (k->object_type != 2 || k->name.length == 0) return;
  uint64_t pid = 0;
  for (size_t i = 0; i < k->args.count; i++)
    if (k->args.items[i].type == 8 && strcmp(k->args.items[i].name.data, "process") == 0)
      pid = k->args.items[i].koid_value;
  summary_thread_t* t = thread_of(s, pid, k->koid);
  if (!t) return;
  size_t n = k->name.length < SUMMARY_NAME_MAX - 1 ? k->name.length : SUMMARY_NAME_MAX - 1;
  memcpy(t->name, k->name.data, n);
  t->name[n] = '\0';
}

static void on_event(summary_t* s, const trace_record_t* r, uint64_t ns) {
  switch (r->event.event_type) {
    case EV_INSTANT:
      if (is_wakeup_event(r))
        on_wakeup(s, r->event.process_koid, r->event.thread_koid, ns);
      else if (r->provider && r->provider->id == CLOCK_ANCHOR_PROVIDER_ID &&
               string_is(&r->event.category, CLOCK_ANCHOR_CATEGORY) &&
               string_is(&r->event.name, "host"))
        on_host_clock(s, r); /* only the reserved provider: no other can fake a host */
      break;
    case EV_COUNTER:
      on_counter(s, r, ns);
      break;
    case EV_BEGIN:
      on_begin(s, r, ns);
      break;
    case EV_END:
      on_end(s, r, ns);
      break;
    case EV_COMPLETE:
      on_complete(s, r, ns);
      break;
    case EV_ASYNC_BEGIN:
    case EV_ASYNC_END:
      on_async(s, r, ns);
      break;
    default:
      break;
  }
}

static void count_provider(summary_t* s, const trace_record_t* r, bool timed, uint64_t ns) {
  const trace_reader_provider_t* p = r->provider;
  /* id 0: before any provider (the magic record), or the manager's own
   * records (the names section, docs/manager.md), which no provider wrote */
  if (p->id == 0) return;
  summary_provider_t* sp = provider_of(s, p->id);
  if (!sp) return;
  if (sp->name[0] == '\0' && p->name.length) {
    size_t n = p->name.length < sizeof(sp->name) - 1 ? p->name.length : sizeof(sp->name) - 1;
    memcpy(sp->name, p->name.data, n);
    sp->name[n] = '\0';
  }
  sp->records++;
  if (!timed) return;
  if (!sp->have_time || ns < sp->start_ns) sp->start_ns = ns;
  if (!sp->have_time || ns > sp->end_ns) sp->end_ns = ns;
  sp->have_time = true;
}

void summary__set_origin(summary_t* s, uint64_t origin_ns) {
  s->range.have_origin = true;
  s->range.origin_ns = origin_ns;
}

void summary__record(summary_t* s, const trace_record_t* r) {
  uint64_t ns = 0;
  bool timed = ordered__record_ns(r, &ns);
  bool kept = time_range__keep(&s->range, r);
  if (timed && ns > s->last_ns) s->last_ns = ns;
  if (kept) {
    s->records++;
    count_provider(s, r, timed, ns);
    if (timed) {
      if (!s->have_time || ns < s->start_ns) s->start_ns = ns;
      if (!s->have_time || ns > s->end_ns) s->end_ns = ns;
      s->have_time = true;
    }
  }
  /* Pairing and scheduling state follow every record; each figure checks
   * the range itself (a duration by its beginning). */
  switch (r->type) {
    case 0:
      if (r->metadata.type == 3 && r->metadata.event_id == 0) {
        summary_provider_t* p = provider_of(s, r->metadata.provider_id);
        if (p) p->overflows++;
      }
      break;
    case 4:
      on_event(s, r, ns);
      break;
    case 7:
      on_kernel_object(s, r);
      break;
    case 8:
      if (r->scheduling.sched_type == 2)
        on_wakeup(s, 0, r->scheduling.incoming_thread_koid, ns);
      else
        on_switch(s, r, ns);
      break;
    default:
      break;
  }
}

void summary__finish(summary_t* s) {
  for (uint32_t i = 0; i < s->cpu_count; i++) {
    summary_cpu_t* c = &s->cpus[i];
    if (c->known && c->current) c->current->cpu_ns += clipped(s, c->since_ns, s->last_ns);
    c->current = NULL;
  }
}

uint64_t summary__open_durations(const summary_t* s) {
  uint64_t open = s->async.count;
  summary_entry_t** list = summary_table__list(&s->threads);
  for (size_t i = 0; list && i < s->threads.count; i++)
    open += (((summary_thread_t*)summary_entry__value(list[i])))->depth;
  free(list);
  return open;
}

void summary__free(summary_t* s) {
  summary_entry_t** list = summary_table__list(&s->durations);
  for (size_t i = 0; list && i < s->durations.count; i++)
    summary_hist__free(&(((summary_duration_t*)summary_entry__value(list[i])))->hist);
  free(list);
  list = summary_table__list(&s->threads);
  for (size_t i = 0; list && i < s->threads.count; i++) {
    summary_thread_t* t = ((summary_thread_t*)summary_entry__value(list[i]));
    free(t->stack);
    free(t->intervals);
    summary_hist__free(&t->wait);
  }
  free(list);
  summary_table__free(&s->durations);
  summary_table__free(&s->counters);
  summary_table__free(&s->threads);
  summary_table__free(&s->providers);
  summary_table__free(&s->async);
  free(s->cpus);
  free(s->key);
  memset(s, 0, sizeof(*s));
}
