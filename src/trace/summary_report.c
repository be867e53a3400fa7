/* `trace summary`'s output: text tables or JSON (docs/summary.md). */
#include "trace/summary_report.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "trace/json_writer.h"
#include "trace/timestamp.h"

const char summary_report__sort_names[] =
    "count, total, mean, max, p50, p90, p99, name (durations); busy, cpu, wait, switches, tid "
    "(threads)";

static const char* const kSortNames[] = {
    [SORT_COUNT] = "count", [SORT_TOTAL] = "total", [SORT_MEAN] = "mean",
    [SORT_MAX] = "max",     [SORT_P50] = "p50",     [SORT_P90] = "p90",
    [SORT_P99] = "p99",     [SORT_NAME] = "name",   [SORT_BUSY] = "busy",
    [SORT_CPU] = "cpu",     [SORT_WAIT] = "wait",   [SORT_SWITCHES] = "switches",
    [SORT_TID] = "tid",
};

summary_sort_t summary_report__parse_sort(const char* name) {
  for (size_t i = 1; i < sizeof(kSortNames) / sizeof(kSortNames[0]); i++)
    if (strcmp(name, kSortNames[i]) == 0) return (summary_sort_t)i;
  return SORT_DEFAULT;
}

/* ---- rows: what the tables sort and print ---- */

typedef struct duration_row {
  const summary_duration_t* d;
  uint64_t count, mean, p50, p90, p99, max, min;
} duration_row_t;

typedef struct thread_row {
  const summary_thread_t* t;
  uint64_t wait_p50, wait_p99, wait_max;
} thread_row_t;

static int compare_bytes(const char* a, size_t an, const char* b, size_t bn) {
  int c = memcmp(a, b, an < bn ? an : bn);
  return c ? c : (an > bn) - (an < bn);
}

static int compare_names(const summary_duration_t* a, const summary_duration_t* b) {
  int c = compare_bytes(a->category, a->category_length, b->category, b->category_length);
  return c ? c : compare_bytes(a->name, a->name_length, b->name, b->name_length);
}

static summary_sort_t g_duration_sort, g_thread_sort; /* for qsort's comparators */

static int desc(uint64_t a, uint64_t b) { return (a < b) - (a > b); }

static int compare_durations(const void* pa, const void* pb) {
  const duration_row_t *a = pa, *b = pb;
  int c = 0;
  switch (g_duration_sort) {
    case SORT_COUNT:
      c = desc(a->count, b->count);
      break;
    case SORT_MEAN:
      c = desc(a->mean, b->mean);
      break;
    case SORT_MAX:
      c = desc(a->max, b->max);
      break;
    case SORT_P50:
      c = desc(a->p50, b->p50);
      break;
    case SORT_P90:
      c = desc(a->p90, b->p90);
      break;
    case SORT_P99:
      c = desc(a->p99, b->p99);
      break;
    case SORT_NAME:
      break;
    default:
      c = desc(a->d->total_ns, b->d->total_ns);
      break;
  }
  return c ? c : compare_names(a->d, b->d);
}

static int compare_threads(const void* pa, const void* pb) {
  const thread_row_t *a = pa, *b = pb;
  int c = 0;
  switch (g_thread_sort) {
    case SORT_CPU:
      c = desc(a->t->cpu_ns, b->t->cpu_ns);
      break;
    case SORT_WAIT:
      c = desc(a->wait_max, b->wait_max);
      break;
    case SORT_SWITCHES:
      c = desc(a->t->switches, b->t->switches);
      break;
    case SORT_TID:
      break;
    default:
      c = desc(a->t->busy_ns, b->t->busy_ns);
      break;
  }
  return c ? c : (a->t->tid > b->t->tid) - (a->t->tid < b->t->tid);
}

static int compare_counters(const void* pa, const void* pb) {
  const summary_counter_t *a = *(summary_counter_t*const*)pa, *b = *(summary_counter_t*const*)pb;
  int c = compare_bytes(a->category, a->category_length, b->category, b->category_length);
  if (!c) c = compare_bytes(a->name, a->name_length, b->name, b->name_length);
  if (!c) c = (a->id > b->id) - (a->id < b->id);
  return c ? c : compare_bytes(a->series, a->series_length, b->series, b->series_length);
}

static int compare_providers(const void* pa, const void* pb) {
  const summary_provider_t *a = *(summary_provider_t*const*)pa, *b = *(summary_provider_t*const*)pb;
  return (a->id > b->id) - (a->id < b->id);
}

typedef struct rows {
  duration_row_t* durations;
  size_t duration_count;
  thread_row_t* threads;
  size_t thread_count;
  const summary_counter_t** counters;
  size_t counter_count;
  const summary_provider_t** providers;
  size_t provider_count;
} rows_t;

static void free_rows(rows_t* r) {
  free(r->durations);
  free(r->threads);
  free(r->counters);
  free(r->providers);
}

/* Values of a table's entries, in a new array (NULL when empty). */
static bool values_of(const summary_table_t* t, const void*** out) {
  *out = NULL;
  if (t->count == 0) return true;
  summary_entry_t** list = summary_table__list(t);
  if (!list) return false;
  const void** values = (const void**)list;
  for (size_t i = 0; i < t->count; i++) values[i] = summary_entry__value(list[i]);
  *out = values;
  return true;
}

static bool build_rows(const summary_t* s, const summary_report_options_t* o, rows_t* r) {
  memset(r, 0, sizeof(*r));
  const void** values;
  if (!values_of(&s->durations, &values)) return false;
  /* names seen only on begins never ended (or outside the range) have no row */
  r->durations = calloc(s->durations.count + 1, sizeof(*r->durations));
  if (!r->durations) {
    free(values);
    return false;
  }
  for (size_t i = 0; i < s->durations.count; i++) {
    const summary_duration_t* d = values[i];
    const summary_hist_t* h = &d->hist;
    if (h->count == 0) continue;
    r->durations[r->duration_count++] = (duration_row_t){
        d,
        h->count,
        d->total_ns / h->count,
        summary_hist__percentile(h, 50),
        summary_hist__percentile(h, 90),
        summary_hist__percentile(h, 99),
        h->max,
        h->min,
    };
  }
  free(values);
  g_duration_sort = o->sort >= SORT_COUNT && o->sort <= SORT_NAME ? o->sort : SORT_TOTAL;
  qsort(r->durations, r->duration_count, sizeof(*r->durations), compare_durations);

  if (!values_of(&s->threads, &values)) return false;
  r->threads = calloc(s->threads.count + 1, sizeof(*r->threads));
  if (!r->threads) {
    free(values);
    return false;
  }
  for (size_t i = 0; i < s->threads.count; i++) {
    const summary_thread_t* t = values[i];
    if (t->durations == 0 && t->cpu_ns == 0 && t->switches == 0 && t->wait.count == 0) continue;
    r->threads[r->thread_count++] =
        (thread_row_t){t, summary_hist__percentile(&t->wait, 50),
                       summary_hist__percentile(&t->wait, 99), t->wait.count ? t->wait.max : 0};
  }
  free(values);
  g_thread_sort = o->sort >= SORT_BUSY ? o->sort : s->sched ? SORT_CPU : SORT_BUSY;
  qsort(r->threads, r->thread_count, sizeof(*r->threads), compare_threads);

  if (!values_of(&s->counters, &values)) return false;
  r->counters = (const summary_counter_t**)values;
  r->counter_count = s->counters.count;
  if (r->counter_count)
    qsort(r->counters, r->counter_count, sizeof(*r->counters), compare_counters);

  if (!values_of(&s->providers, &values)) return false;
  r->providers = (const summary_provider_t**)values;
  r->provider_count = s->providers.count;
  if (r->provider_count)
    qsort(r->providers, r->provider_count, sizeof(*r->providers), compare_providers);
  return true;
}

static size_t shown(size_t count, size_t top) { return top && top < count ? top : count; }

/* ---- text ---- */

/* A duration for people: 950ns, 12.35us, 4.20ms, 1.250s. */
static const char* human(char* buf, uint64_t ns) {
  if (ns < 1000)
    snprintf(buf, 24, "%" PRIu64 "ns", ns);
  else if (ns < 1000000)
    snprintf(buf, 24, "%.2fus", (double)ns / 1e3);
  else if (ns < 1000000000)
    snprintf(buf, 24, "%.2fms", (double)ns / 1e6);
  else
    snprintf(buf, 24, "%.3fs", (double)ns / 1e9);
  return buf;
}

/* Seconds from the trace's start (the time-range origin), signed. */
static const char* offset_s(char* buf, const summary_t* s, uint64_t ns) {
  uint64_t origin = s->range.origin_ns;
  buf[0] = '-';
  timestamp__format_seconds(buf + (ns < origin), ns < origin ? origin - ns : ns - origin);
  return buf;
}

/* Names from the archive: no control character reaches the terminal. */
static void put_bytes(FILE* f, const char* data, size_t n) {
  for (size_t i = 0; i < n; i++) {
    unsigned char c = (unsigned char)data[i];
    fputc(c < 0x20 || c == 0x7f ? '?' : c, f);
  }
}

static void text_providers(FILE* f, const summary_t* s, const rows_t* r) {
  char a[40], b[40], h[24];
  fprintf(f, "\nProviders (%zu)\n  %5s %10s %8s %14s %14s %10s  %s\n", r->provider_count, "id",
          "records", "dropped", "start (s)", "end (s)", "span", "name");
  for (size_t i = 0; i < r->provider_count; i++) {
    const summary_provider_t* p = r->providers[i];
    fprintf(f, "  %5" PRIu32 " %10" PRIu64 " %8s %14s %14s %10s  %s", p->id, p->records,
            p->overflows ? "yes" : "no", p->have_time ? offset_s(a, s, p->start_ns) : "-",
            p->have_time ? offset_s(b, s, p->end_ns) : "-",
            p->have_time ? human(h, p->end_ns - p->start_ns) : "-", "");
    put_bytes(f, p->name, strlen(p->name));
    fputc('\n', f);
  }
}

static void text_durations(FILE* f, const summary_t* s, const rows_t* r, size_t top) {
  size_t n = shown(r->duration_count, top);
  fprintf(f, "\nDurations (%zu of %zu, by %s)\n", n, r->duration_count,
          kSortNames[g_duration_sort]);
  if (!n) return;
  fprintf(f, "  %8s %10s %10s %10s %10s %10s %10s %14s %8s  %s\n", "count", "total", "mean", "p50",
          "p90", "p99", "max", "slowest at", "tid", "category:name");
  for (size_t i = 0; i < n; i++) {
    const duration_row_t* d = &r->durations[i];
    char t[6][24], at[40];
    fprintf(f, "  %8" PRIu64 " %10s %10s %10s %10s %10s %10s %14s %8" PRIu64 "  ", d->count,
            human(t[0], d->d->total_ns), human(t[1], d->mean), human(t[2], d->p50),
            human(t[3], d->p90), human(t[4], d->p99), human(t[5], d->max),
            offset_s(at, s, d->d->slowest_ts_ns), d->d->slowest_tid);
    put_bytes(f, d->d->category, d->d->category_length);
    fputc(':', f);
    put_bytes(f, d->d->name, d->d->name_length);
    fputc('\n', f);
  }
}

static void text_counters(FILE* f, const rows_t* r, size_t top) {
  size_t n = shown(r->counter_count, top);
  fprintf(f, "\nCounters (%zu of %zu)\n", n, r->counter_count);
  if (!n) return;
  fprintf(f, "  %8s %14s %14s %14s  %s\n", "samples", "min", "mean", "max",
          "category:name[series]");
  for (size_t i = 0; i < n; i++) {
    const summary_counter_t* c = r->counters[i];
    fprintf(f, "  %8" PRIu64 " %14.6g %14.6g %14.6g  ", c->samples, c->min,
            c->sum / (double)c->samples, c->max);
    put_bytes(f, c->category, c->category_length);
    fputc(':', f);
    put_bytes(f, c->name, c->name_length);
    if (c->id) fprintf(f, "#0x%" PRIx64, c->id);
    fputc('[', f);
    put_bytes(f, c->series, c->series_length);
    fputs("]\n", f);
  }
}

static void text_threads(FILE* f, const summary_t* s, const rows_t* r, size_t top) {
  size_t n = shown(r->thread_count, top);
  fprintf(f, "\nThreads (%zu of %zu, by %s)\n", n, r->thread_count, kSortNames[g_thread_sort]);
  if (!n) return;
  fprintf(f, "  %8s %8s %10s %12s", "pid", "tid", "durations", "busy");
  if (s->sched)
    fprintf(f, " %12s %9s %10s %10s %10s", "cpu", "switches", "wait p50", "wait p99", "wait max");
  fputs("  name\n", f);
  for (size_t i = 0; i < n; i++) {
    const thread_row_t* t = &r->threads[i];
    char b[5][24];
    fprintf(f, "  %8" PRIu64 " %8" PRIu64 " %10" PRIu64 " %12s", t->t->pid, t->t->tid,
            t->t->durations, human(b[0], t->t->busy_ns));
    if (s->sched) {
      bool w = t->t->wait.count > 0;
      fprintf(f, " %12s %9" PRIu64 " %10s %10s %10s", human(b[1], t->t->cpu_ns), t->t->switches,
              w ? human(b[2], t->wait_p50) : "-", w ? human(b[3], t->wait_p99) : "-",
              w ? human(b[4], t->wait_max) : "-");
    }
    fputs("  ", f);
    put_bytes(f, t->t->name, strlen(t->t->name));
    fputc('\n', f);
  }
}

/* The hosts of a `trace record --host` archive and their measured clocks. */
static void text_hosts(FILE* f, const summary_t* s) {
  if (s->host_count == 0) return;
  if (s->hosts_omitted > 0)
    fprintf(f,
            "\nHosts (%zu listed and %" PRIu64 " more, clocks measured by trace record --host)\n",
            s->host_count, s->hosts_omitted);
  else
    fprintf(f, "\nHosts (%zu, clocks measured by trace record --host)\n", s->host_count);
  fprintf(f, "  %-24s %22s  %14s  %12s\n", "host", "offset", "uncertainty", "rate");
  for (size_t i = 0; i < s->host_count; i++) {
    const summary_host_t* h = &s->hosts[i];
    char u[24], off[40];
    snprintf(off, sizeof(off), "%+.9f s", (double)h->offset_ns / 1e9);
    fprintf(f, "  %-24s %22s  +- %11s  %+9" PRId64 " ppb", h->name, off,
            human(u, h->uncertainty_ns), h->drift_ppb);
    if (h->rate_applied == 0)
      fprintf(f, "  (measured %+" PRId64 " ppb, not significant: not applied)", h->measured_ppb);
    else if (h->rate_applied < 0)
      fprintf(f, "  (no end exchange: not applied)");
    fputc('\n', f);
  }
}

static void write_text(FILE* f, const summary_t* s, const rows_t* r, size_t top,
                       const trace_reader_stats_t* stats) {
  char a[40], b[40], h[24];
  fprintf(f, "Trace: %" PRIu64 " records", s->records);
  if (s->have_time)
    fprintf(f, ", %s to %s s (%s)", offset_s(a, s, s->start_ns), offset_s(b, s, s->end_ns),
            human(h, s->end_ns - s->start_ns));
  if (s->range.active) {
    timestamp__format_seconds(a, s->range.start_ns);
    if (s->range.end_ns == UINT64_MAX)
      snprintf(b, sizeof(b), "end");
    else
      timestamp__format_seconds(b, s->range.end_ns);
    fprintf(f, ", time range %s to %s s", a, b);
  }
  if (stats->records_skipped) fprintf(f, ", %" PRIu64 " skipped", stats->records_skipped);
  fputc('\n', f);
  text_providers(f, s, r);
  text_hosts(f, s);
  text_durations(f, s, r, top);
  text_counters(f, r, top);
  text_threads(f, s, r, top);
  uint64_t open = summary__open_durations(s);
  if (open || s->unmatched_ends || s->unmatched_async_ends || s->too_deep)
    fprintf(f,
            "\nNot counted: %" PRIu64 " duration(s) still open at the end, %" PRIu64
            " end(s) without a begin, %" PRIu64 " async end(s) without a begin, %" PRIu64
            " begin(s) nested deeper than %d\n",
            open, s->unmatched_ends, s->unmatched_async_ends, s->too_deep, SUMMARY_MAX_DEPTH);
}

/* ---- JSON ---- */

static void jkey(json_writer_t* j, const char* k) {
  json__raw(j, "\"", 1);
  json__text(j, k);
  json__raw(j, "\":", 2);
}

static void ju64(json_writer_t* j, const char* k, uint64_t v, bool comma) {
  jkey(j, k);
  json__u64(j, v);
  if (comma) json__raw(j, ",", 1);
}

static void json_providers(json_writer_t* j, const rows_t* r) {
  json__text(j, "\"providers\":[");
  for (size_t i = 0; i < r->provider_count; i++) {
    const summary_provider_t* p = r->providers[i];
    json__text(j, i ? ",\n{" : "\n{");
    ju64(j, "id", p->id, true);
    jkey(j, "name");
    json__string(j, p->name, strlen(p->name));
    json__raw(j, ",", 1);
    ju64(j, "records", p->records, true);
    ju64(j, "overflows", p->overflows, true);
    jkey(j, "dropped");
    json__text(j, p->overflows ? "true," : "false,");
    if (p->have_time) {
      ju64(j, "start_ns", p->start_ns, true);
      ju64(j, "end_ns", p->end_ns, true);
      ju64(j, "span_ns", p->end_ns - p->start_ns, false);
    } else {
      json__text(j, "\"start_ns\":null,\"end_ns\":null,\"span_ns\":null");
    }
    json__raw(j, "}", 1);
  }
  json__text(j, "],\n");
}

static void json_durations(json_writer_t* j, const rows_t* r, size_t top) {
  json__text(j, "\"durations\":[");
  for (size_t i = 0, n = shown(r->duration_count, top); i < n; i++) {
    const duration_row_t* d = &r->durations[i];
    json__text(j, i ? ",\n{" : "\n{");
    jkey(j, "category");
    json__string(j, d->d->category, d->d->category_length);
    json__raw(j, ",", 1);
    jkey(j, "name");
    json__string(j, d->d->name, d->d->name_length);
    json__raw(j, ",", 1);
    ju64(j, "count", d->count, true);
    ju64(j, "complete", d->d->complete, true);
    ju64(j, "pairs", d->d->pairs, true);
    ju64(j, "async", d->d->async, true);
    ju64(j, "total_ns", d->d->total_ns, true);
    ju64(j, "mean_ns", d->mean, true);
    ju64(j, "min_ns", d->min, true);
    ju64(j, "p50_ns", d->p50, true);
    ju64(j, "p90_ns", d->p90, true);
    ju64(j, "p99_ns", d->p99, true);
    ju64(j, "max_ns", d->max, true);
    json__text(j, "\"slowest\":{");
    ju64(j, "ts_ns", d->d->slowest_ts_ns, true);
    ju64(j, "pid", d->d->slowest_pid, true);
    ju64(j, "tid", d->d->slowest_tid, false);
    json__text(j, "}}");
  }
  json__text(j, "],\n");
}

static void json_counters(json_writer_t* j, const rows_t* r, size_t top) {
  json__text(j, "\"counters\":[");
  for (size_t i = 0, n = shown(r->counter_count, top); i < n; i++) {
    const summary_counter_t* c = r->counters[i];
    json__text(j, i ? ",\n{" : "\n{");
    jkey(j, "category");
    json__string(j, c->category, c->category_length);
    json__raw(j, ",", 1);
    jkey(j, "name");
    json__string(j, c->name, c->name_length);
    json__raw(j, ",", 1);
    ju64(j, "id", c->id, true);
    jkey(j, "series");
    json__string(j, c->series, c->series_length);
    json__raw(j, ",", 1);
    ju64(j, "samples", c->samples, true);
    jkey(j, "min");
    json__double(j, c->min);
    json__text(j, ",\"mean\":");
    json__double(j, c->sum / (double)c->samples);
    json__text(j, ",\"max\":");
    json__double(j, c->max);
    json__raw(j, "}", 1);
  }
  json__text(j, "],\n");
}

static void json_threads(json_writer_t* j, const summary_t* s, const rows_t* r, size_t top) {
  json__text(j, "\"threads\":[");
  for (size_t i = 0, n = shown(r->thread_count, top); i < n; i++) {
    const thread_row_t* t = &r->threads[i];
    json__text(j, i ? ",\n{" : "\n{");
    ju64(j, "pid", t->t->pid, true);
    ju64(j, "tid", t->t->tid, true);
    jkey(j, "name");
    json__string(j, t->t->name, strlen(t->t->name));
    json__raw(j, ",", 1);
    ju64(j, "durations", t->t->durations, true);
    ju64(j, "busy_ns", t->t->busy_ns, s->sched);
    if (s->sched) {
      ju64(j, "cpu_ns", t->t->cpu_ns, true);
      ju64(j, "switches", t->t->switches, true);
      json__text(j, "\"wait\":{");
      ju64(j, "count", t->t->wait.count, t->t->wait.count > 0);
      if (t->t->wait.count) {
        ju64(j, "p50_ns", t->wait_p50, true);
        ju64(j, "p99_ns", t->wait_p99, true);
        ju64(j, "max_ns", t->wait_max, false);
      }
      json__raw(j, "}", 1);
    }
    json__raw(j, "}", 1);
  }
  json__text(j, "],\n");
}

/* Only in archives with host clock records (trace record --host): the keys
 * of every other archive stay those version 1 always had. */
static void json_hosts(json_writer_t* j, const summary_t* s) {
  if (s->host_count == 0) return;
  jkey(j, "hosts");
  json__raw(j, "[", 1);
  for (size_t i = 0; i < s->host_count; i++) {
    const summary_host_t* h = &s->hosts[i];
    json__text(j, i ? ",\n{" : "{");
    jkey(j, "name");
    json__string(j, h->name, strlen(h->name));
    json__text(j, ",\"offset_ns\":");
    json__i64(j, h->offset_ns);
    json__raw(j, ",", 1);
    ju64(j, "uncertainty_ns", h->uncertainty_ns, true);
    json__text(j, "\"drift_ppb\":");
    json__i64(j, h->drift_ppb);
    json__text(j, h->rate_applied > 0    ? ",\"rate_applied\":true"
                  : h->rate_applied == 0 ? ",\"rate_applied\":false"
                                         : ",\"rate_applied\":null");
    json__raw(j, "}", 1);
  }
  json__text(j, "],\n");
  if (s->hosts_omitted > 0) {
    json__text(j, "\"hosts_omitted\":");
    json__i64(j, (int64_t)s->hosts_omitted);
    json__text(j, ",\n");
  }
}

static bool write_json(FILE* f, const summary_t* s, const rows_t* r, size_t top,
                       const trace_reader_stats_t* stats) {
  static json_writer_t j; /* 64 KiB buffer: not on the stack */
  json_writer__init(&j, f);
  json__text(&j, "{\"schema\":\"fxtrace-summary\",\"version\":1,\n\"trace\":{");
  ju64(&j, "records", s->records, true);
  ju64(&j, "skipped", stats->records_skipped, true);
  if (s->range.have_origin)
    ju64(&j, "origin_ns", s->range.origin_ns, true);
  else
    json__text(&j, "\"origin_ns\":null,");
  if (s->have_time) {
    ju64(&j, "start_ns", s->start_ns, true);
    ju64(&j, "end_ns", s->end_ns, true);
  } else {
    json__text(&j, "\"start_ns\":null,\"end_ns\":null,");
  }
  jkey(&j, "time_range");
  if (s->range.active) {
    json__raw(&j, "{", 1);
    ju64(&j, "start_ns", s->range.start_ns, true);
    jkey(&j, "end_ns");
    if (s->range.end_ns == UINT64_MAX)
      json__text(&j, "null");
    else
      json__u64(&j, s->range.end_ns);
    json__text(&j, "},");
  } else {
    json__text(&j, "null,");
  }
  jkey(&j, "scheduling");
  json__text(&j, s->sched ? "true," : "false,");
  ju64(&j, "open_durations", summary__open_durations(s), true);
  ju64(&j, "unmatched_ends", s->unmatched_ends, true);
  ju64(&j, "unmatched_async_ends", s->unmatched_async_ends, true);
  ju64(&j, "too_deep", s->too_deep, false);
  json__text(&j, "},\n");
  json_providers(&j, r);
  json_hosts(&j, s);
  json_durations(&j, r, top);
  json_counters(&j, r, top);
  json_threads(&j, s, r, top);
  json__text(&j, "\"top\":");
  json__u64(&j, top);
  json__text(&j, "}\n");
  return json__flush(&j);
}

bool summary_report__write(FILE* out, const summary_t* s, const summary_report_options_t* o,
                           const trace_reader_stats_t* stats) {
  rows_t r;
  if (!build_rows(s, o, &r)) {
    free_rows(&r);
    return false;
  }
  bool ok = true;
  if (o->json)
    ok = write_json(out, s, &r, o->top, stats);
  else
    write_text(out, s, &r, o->top, stats);
  free_rows(&r);
  return ok && fflush(out) == 0 && !ferror(out);
}
