/* The kernel provider's ftrace instance, shared by every session it takes
 * part in (see kprovider.h, docs/kernel-provider.md "Sessions").
 *
 * Threads: the engine threads run the observer (a session starts: its
 * categories, the instance created or its events extended, the session
 * joined; no session left: teardown); the reader thread reads every CPU's
 * trace_pipe_raw and writes each record into every session that records
 * it, and it alone writes (joins: the session's snapshot and formats; the
 * drain of a stopping session); trace_engine_session_stop()'s caller runs
 * the stop hook, which has the reader drain what the kernel holds into the
 * stopping session (and the others) and takes the session out, then counts
 * the kernel's losses of its time. `lock` orders the observer and the hook;
 * the instance's `mu` is the reader's while it reads, taken by the others
 * (`wanted`) to change the table or the sessions. */
#include "kernel/kprovider.h"

#include <dirent.h>
#include <errno.h>
#include <event-parse.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <tracefs.h>
#include <unistd.h>

#include "engine/engine_internal.h"
#include "kernel/kahead.h"
#include "kernel/kcleanup.h"
#include "kernel/kconvert.h"
#include "kernel/kcpu.h"
#include "kernel/kevents.h"
#include "kernel/ktracefs.h"
#include "kernel/kwrite.h"
#include "trace-engine/context.h"
#include "trace-engine/instrumentation.h"

enum { READ_INTERVAL_MS = 5, PAGES_PER_ROUND = 64, SAVE_WAIT_MS = 2000 };
#define DEFAULT_BUFFER_KB 4096 /* per CPU; FXTRACE_KERNEL_BUFFER_KB overrides */

static size_t buffer_kb(void) {
  const char* text = getenv("FXTRACE_KERNEL_BUFFER_KB");
  char* end = NULL;
  unsigned long long v = text && *text ? strtoull(text, &end, 10) : 0;
  if (!text || !*text || *end != '\0' || v < 4 || v > (1ull << 22)) return DEFAULT_BUFFER_KB;
  return (size_t)v;
}

/* One engine session's part in the instance. */
typedef struct kslot {
  uint64_t generation;  /* the engine generation it joined (control side); 0: out */
  kwsession_t* joining; /* handed to the reader with join_mask (under mu) */
  bool joined;          /* the reader's answer (under mu) */
  uint64_t lost_base;   /* the instance's loss count when it joined (under mu) */
  uint64_t lane_gaps;   /* its sched_switch_missing count, when it left (under mu) */
} kslot_t;

typedef struct kinstance {
  struct tracefs_instance* instance;
  kev_table_t table; /* the union of the sessions' events: only grows */
  kconv_t conv;
  kahead_t ahead;     /* pages read ahead of their turn for a thread's birth */
  int converting_cpu; /* whose page conv holds now; -1: none */
  /* pages read from the kernel so far (each numbered), the number of the
   * page being converted, and the count when the last read-ahead of whole
   * pages [0] and of partial ones too [1] began: a read-ahead that began
   * after a page was read already holds every birth its events can need
   * (a task's birth is recorded before it first runs) */
  uint64_t read_seq, converting_seq, ahead_seq[2];
  kwriter_t writer;
  int cpus;
  size_t drain_pages;   /* a drain's bound per CPU (read_cpus) */
  kcpu_t* cpu;          /* one per CPU; fd -1 where it could not be opened */
  bool on;              /* tracing_on (control side) */
  bool* kernel_enabled; /* by table index: enabled in the instance (control side, under mu) */
  size_t kernel_enabled_count;
  const char* clock;
  pthread_t thread;
  bool thread_running;
  int wake_fd;
  atomic_int command; /* 0 run, 2 exit */
  atomic_int wanted;  /* threads waiting for mu: the reader lets go */
  pthread_mutex_t mu;
  pthread_cond_t done; /* the reader served join_mask / leave_mask */
  unsigned join_mask, leave_mask;
  kslot_t slots[TRACE_ENGINE_MAX_SESSIONS];
} kinstance_t;

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static kinstance_t* current;
static bool installed;
/* per session: a generation not to join again (no kernel category, or the
 * join failed and said so) */
static uint64_t skipped[TRACE_ENGINE_MAX_SESSIONS];

bool kprovider__is_kernel_category(const char* category) {
  return category && strncmp(category, "kernel:", 7) == 0 && category[7] != '\0';
}

/* The one table of the kernel provider's categories: what it declares to the
 * manager, and what `trace list-categories` shows for the provider `trace
 * record` starts on demand (src/trace/record_kernel.c). kernel:SYSTEM/EVENT
 * comes last, so a declaration that shows it is complete. */
static const kprovider_category_t kCategories[] = {
    {"kernel:sched",
     "Linux scheduler (ftrace sched_switch, sched_waking, sched_wakeup_new): context switches "
     "on every CPU as scheduling records (context switches with weights, wakeups with the "
     "waker), which Perfetto shows as sched slices and runnable time"},
    {KPROVIDER_SCHED_LEGACY,
     "kernel:sched in the legacy-only form, for readers that know only the legacy layout: "
     "legacy context switches, wakeups as instant events (trace record --kernel-sched=legacy); "
     "only when named as such, never through a pattern"},
    {"kernel:task",
     "Linux task life cycle (sched_process_fork/exec/exit, task_rename): process and thread "
     "names (it and kernel:sched also record task_newtask, unwritten: the process of a thread "
     "that ends before its events are read)"},
    {"kernel:irq",
     "Linux hard IRQs and softirqs (irq_handler_entry/exit, softirq_entry/exit) as slices, one "
     "track per CPU"},
    {"kernel:SYSTEM/EVENT",
     "any tracefs event (e.g. kernel:block/block_rq_issue, kernel:syscalls/sys_enter_openat, "
     "kernel:block/*), its fields as typed arguments"},
};

const kprovider_category_t* kprovider__known_categories(size_t* count) {
  *count = sizeof(kCategories) / sizeof(kCategories[0]);
  return kCategories;
}

void kprovider__add_known_categories(trace_provider_t* provider) {
  for (size_t i = 0; i < sizeof(kCategories) / sizeof(kCategories[0]); i++)
    trace_provider_add_known_category(provider, kCategories[i].name, kCategories[i].description);
}

/* ---- building the event table ---- */

typedef struct wanted {
  const char* system;
  const char* event;
  kev_kind_t kind;
} wanted_t;

static const wanted_t kSchedEvents[] = {
    {"sched", "sched_switch", KEV_SWITCH},
    {"sched", "sched_waking", KEV_WAKEUP},
    {"sched", "sched_wakeup_new", KEV_WAKEUP},
};
static const wanted_t kTaskEvents[] = {
    {"sched", "sched_process_fork", KEV_FORK},
    {"sched", "sched_process_exec", KEV_EXEC},
    {"sched", "sched_process_exit", KEV_EXIT},
    {"task", "task_rename", KEV_RENAME},
};
/* With kernel:sched or kernel:task: the births that give short-lived
 * threads their process (kbirths.h); no record unless named generically */
static const wanted_t kBirthEvents[] = {
    {"task", "task_newtask", KEV_NEWTASK},
};
static const wanted_t kIrqEvents[] = {
    {"irq", "irq_handler_entry", KEV_IRQ_ENTRY},
    {"irq", "irq_handler_exit", KEV_IRQ_EXIT},
    {"irq", "softirq_entry", KEV_SOFTIRQ_ENTRY},
    {"irq", "softirq_exit", KEV_SOFTIRQ_EXIT},
};

typedef struct name_list {
  char** items;
  size_t count;
} name_list_t;

static void list_add(name_list_t* l, const char* a, const char* b) {
  char* s = NULL;
  if (asprintf(&s, "%s%s%s", a, b ? "/" : "", b ? b : "") < 0) return;
  for (size_t i = 0; i < l->count; i++)
    if (strcmp(l->items[i], s) == 0) {
      free(s);
      return;
    }
  char** grown = realloc(l->items, (l->count + 1) * sizeof(*grown));
  if (!grown) {
    free(s);
    return;
  }
  l->items = grown;
  l->items[l->count++] = s;
}

static void list_free(name_list_t* l) {
  for (size_t i = 0; i < l->count; i++) free(l->items[i]);
  free(l->items);
  memset(l, 0, sizeof(*l));
}

/* Whether session `session` (started) enables the category. */
static bool enabled(unsigned session, const char* category) {
  return writer__session_enables(&engine__sessions[session], category);
}

/* The generic events the session's category set names: kernel:SYSTEM/EVENT,
 * or a pattern covering a whole system (kernel:SYSTEM/ *). A pattern that
 * covers every kernel event ("*", "kernel:*", an empty set) enables none of
 * them: thousands of events are never what such a set means. */
static void generic_events(unsigned session, const char* tracing_dir, name_list_t* out) {
  if (enabled(session, "kernel:\x01/\x01")) return;
  char path[1024];
  snprintf(path, sizeof(path), "%s/events", tracing_dir);
  DIR* d = opendir(path);
  if (!d) return;
  struct dirent* se;
  while ((se = readdir(d)) != NULL) {
    if (se->d_name[0] == '.' || se->d_type != DT_DIR) continue;
    char category[600];
    snprintf(category, sizeof(category), "kernel:%s/\x01", se->d_name);
    bool whole = enabled(session, category);
    snprintf(path, sizeof(path), "%s/events/%s", tracing_dir, se->d_name);
    DIR* sd = opendir(path);
    if (!sd) continue;
    struct dirent* ee;
    while ((ee = readdir(sd)) != NULL) {
      if (ee->d_name[0] == '.' || ee->d_type != DT_DIR) continue;
      snprintf(category, sizeof(category), "kernel:%s/%s", se->d_name, ee->d_name);
      if (whole || enabled(session, category)) list_add(out, se->d_name, ee->d_name);
    }
    closedir(sd);
  }
  closedir(d);
}

/* The kernel categories of session `session` (started); false when it has
 * none (or it stopped meanwhile). */
static bool cats_of(unsigned session, const char* tracing_dir, kwcats_t* c) {
  memset(c, 0, sizeof(*c));
  /* kernel:sched-legacy counts only when named as such: a pattern that
   * covers it ("*", "kernel:*", "kernel:sched*") also covers the probe
   * below, and means the default form */
  c->legacy_sched =
      enabled(session, KPROVIDER_SCHED_LEGACY) && !enabled(session, KPROVIDER_SCHED_LEGACY "\x01");
  c->sched = enabled(session, "kernel:sched") || c->legacy_sched;
  c->task = enabled(session, "kernel:task");
  c->irq = enabled(session, "kernel:irq");
  name_list_t generic = {0};
  generic_events(session, tracing_dir, &generic);
  c->generic = generic.items;
  c->generic_count = generic.count;
  return c->sched || c->task || c->irq || c->generic_count > 0;
}

/* Parses events/SYSTEM/EVENT/format ("SYSTEM/EVENT") into tep, unless tep
 * has it already; an event the kernel lacks is left out (kev_table__add
 * then reports it). */
static void parse_format(struct tep_handle* tep, const char* tracing_dir, const char* name) {
  char system[256], path[1024];
  snprintf(system, sizeof(system), "%s", name);
  char* slash = strchr(system, '/');
  if (!slash) return;
  *slash = '\0';
  if (tep_find_event_by_name(tep, system, slash + 1)) return;
  snprintf(path, sizeof(path), "%s/events/%s/%s/format", tracing_dir, system, slash + 1);
  FILE* f = fopen(path, "re");
  if (!f) return;
  char* text = malloc(65536);
  size_t n = text ? fread(text, 1, 65535, f) : 0;
  fclose(f);
  if (n > 0) tep_parse_event(tep, text, n, system);
  free(text);
}

/* Adds the events of one session's categories to the table (which only
 * grows: the descriptors' indexes stay valid for the writer). Run before
 * the reader starts, or with mu held. False with a message when nothing
 * could be set up. */
static bool extend_table(kinstance_t* k, const kwcats_t* c, const char* tracing_dir, char* error,
                         size_t error_size) {
  name_list_t events = {0};
  /* The formats of exactly the events used, parsed from their tracefs
   * files (tracefs_local_events() would also parse /proc/kallsyms: half a
   * second of CPU per trace start, seconds under sanitizers). */
  for (size_t i = 0; c->sched && i < sizeof(kSchedEvents) / sizeof(kSchedEvents[0]); i++)
    list_add(&events, kSchedEvents[i].system, kSchedEvents[i].event);
  for (size_t i = 0; c->task && i < sizeof(kTaskEvents) / sizeof(kTaskEvents[0]); i++)
    list_add(&events, kTaskEvents[i].system, kTaskEvents[i].event);
  for (size_t i = 0; (c->sched || c->task) && i < sizeof(kBirthEvents) / sizeof(kBirthEvents[0]);
       i++)
    list_add(&events, kBirthEvents[i].system, kBirthEvents[i].event);
  for (size_t i = 0; c->irq && i < sizeof(kIrqEvents) / sizeof(kIrqEvents[0]); i++)
    list_add(&events, kIrqEvents[i].system, kIrqEvents[i].event);
  for (size_t i = 0; i < c->generic_count; i++) list_add(&events, c->generic[i], NULL);
  bool ok = true;
  if (!k->table.tep && events.count > 0) {
    struct tep_handle* tep = tep_alloc();
    if (!tep) {
      snprintf(error, error_size, "out of memory");
      ok = false;
    }
    k->table.tep = tep;
  }
  for (size_t i = 0; ok && i < events.count; i++)
    parse_format(k->table.tep, tracing_dir, events.items[i]);
  /* kernel:sched wins over the generic form of its own events */
  for (size_t i = 0; ok && c->sched && i < sizeof(kSchedEvents) / sizeof(kSchedEvents[0]); i++)
    kev_table__add(&k->table, kSchedEvents[i].system, kSchedEvents[i].event, kSchedEvents[i].kind,
                   "kernel:sched");
  for (size_t i = 0; ok && c->task && i < sizeof(kTaskEvents) / sizeof(kTaskEvents[0]); i++)
    kev_table__add(&k->table, kTaskEvents[i].system, kTaskEvents[i].event, kTaskEvents[i].kind,
                   "kernel:task");
  for (size_t i = 0;
       ok && (c->sched || c->task) && i < sizeof(kBirthEvents) / sizeof(kBirthEvents[0]); i++)
    kev_table__add(&k->table, kBirthEvents[i].system, kBirthEvents[i].event, kBirthEvents[i].kind,
                   "kernel:task");
  for (size_t i = 0; ok && c->irq && i < sizeof(kIrqEvents) / sizeof(kIrqEvents[0]); i++)
    kev_table__add(&k->table, kIrqEvents[i].system, kIrqEvents[i].event, kIrqEvents[i].kind,
                   "kernel:irq");
  for (size_t i = 0; ok && i < c->generic_count; i++) {
    char sys[256];
    snprintf(sys, sizeof(sys), "%s", c->generic[i]);
    char* slash = strchr(sys, '/');
    if (!slash) continue;
    *slash = '\0';
    if (!kev_table__add(&k->table, sys, slash + 1, KEV_GENERIC, NULL))
      fprintf(stderr, "fxtrace: kernel provider: no format for kernel:%s/%s, not recorded\n", sys,
              slash + 1);
  }
  if (ok && kev_table__finish(&k->table) != 0) {
    snprintf(error, error_size, "unusable kernel event formats");
    ok = false;
  }
  list_free(&events);
  return ok;
}

/* Turns on the table's events that session cats `extra` or a session
 * taking part records, and (when `prune`) off those none of them records
 * any more. With mu held, or before the reader starts. */
static void apply_events(kinstance_t* k, const kwcats_t* extra, bool prune) {
  if (k->kernel_enabled_count < k->table.count) {
    bool* grown = realloc(k->kernel_enabled, k->table.count * sizeof(*grown));
    if (!grown) return;
    memset(grown + k->kernel_enabled_count, 0,
           (k->table.count - k->kernel_enabled_count) * sizeof(*grown));
    k->kernel_enabled = grown;
    k->kernel_enabled_count = k->table.count;
  }
  for (size_t i = 0; i < k->table.count; i++) {
    const kev_desc_t* d = &k->table.descs[i];
    bool needed = extra && kwcats__mode(extra, d) != KWMODE_NONE;
    for (unsigned j = 0; j < TRACE_ENGINE_MAX_SESSIONS && !needed; j++)
      needed =
          k->writer.sessions[j] && kwcats__mode(&k->writer.sessions[j]->cats, d) != KWMODE_NONE;
    if (needed && !k->kernel_enabled[i]) {
      if (ktracefs__enable(k->instance, d->event->system, d->event->name) != 0)
        fprintf(stderr, "fxtrace: kernel provider: cannot enable %s/%s\n", d->event->system,
                d->event->name);
      else
        k->kernel_enabled[i] = true;
    } else if (!needed && prune && k->kernel_enabled[i]) {
      /* no session records it any more: the kernel stops recording it (its
       * events still in the buffer are converted and written nowhere) */
      ktracefs__disable(k->instance, d->event->system, d->event->name);
      k->kernel_enabled[i] = false;
    }
    /* a read-ahead can find a birth only while the kernel records them */
    if (d->kind == KEV_NEWTASK) k->writer.births.recording = k->kernel_enabled[i];
  }
}

/* ---- reading ---- */

static bool save_pending(kinstance_t* k) {
  for (unsigned i = 0; i < TRACE_ENGINE_MAX_SESSIONS; i++) {
    kwsession_t* s = k->writer.sessions[i];
    if (s && trace_engine_session_save_pending(s->session)) return true;
  }
  return false;
}

/* Streaming: while a full rolling buffer of a session waits for its save,
 * converting a page could fill the other one and drop records; the pages
 * can wait in ftrace's buffer instead (its overruns are counted).
 * *waited_ms counts the wait of one read_cpus() call: past SAVE_WAIT_MS it
 * converts anyway (a drop is counted either way). False when the reader is
 * told to end or to let another thread in. */
static bool wait_for_save(kinstance_t* k, int* waited_ms) {
  while (*waited_ms < SAVE_WAIT_MS && save_pending(k)) {
    if (atomic_load(&k->command) != 0 || atomic_load(&k->wanted) != 0) return false;
    struct pollfd p = {k->wake_fd, POLLIN, 0};
    poll(&p, 1, 1);
    ++*waited_ms;
  }
  return true;
}

/* Reads and converts what each CPU has, at most `rounds` pages per CPU;
 * flush (a drain): also the partial page, once per CPU (the kernel copies
 * out what a page holds so far, also while tracing is on). A drain reads at
 * most a CPU's whole buffer and one page: all the CPU held when the drain
 * began, but never chasing events that keep coming while tracing is on
 * (another session's join or stop; a high-rate event, or one the reader's
 * own system calls raise, would never let it end). Returns pages read. */
static size_t read_cpus(kinstance_t* k, size_t rounds, bool flush) {
  size_t pages = 0;
  int waited_ms = 0;
  for (int cpu = 0; cpu < k->cpus; cpu++) {
    if (k->cpu[cpu].fd < 0) continue;
    bool flushed = false;
    for (size_t i = 0; i < rounds;) {
      /* another thread waits for mu: let it in between two pages */
      if (!flush && (atomic_load(&k->wanted) != 0 || !wait_for_save(k, &waited_ms))) return pages;
      /* read straight into the converter's padded buffer: no copy of the
       * page. Pages read ahead come first, in order, outside the bound (a
       * read-ahead reads at most a CPU's buffer, once per page converted) */
      void* page = kconv__page_buffer(&k->conv);
      uint64_t seq;
      int n = kahead__take(&k->ahead, cpu, page, &seq);
      bool scanned = n > 0; /* its births are noted */
      if (n <= 0) {
        /* Whole pages only between drains (spliced through a pipe, as
         * trace-cmd does): fewer reads. The partial last page of each
         * CPU comes with a drain. */
        n = kcpu__read(&k->cpu[cpu], page);
        if (n <= 0 && flush && !flushed) {
          n = kcpu__flush(&k->cpu[cpu], page);
          flushed = true;
        }
        if (n <= 0) break;
        seq = ++k->read_seq;
        i++;
      }
      if (kwriter__begin(&k->writer)) {
        k->converting_cpu = cpu;
        k->converting_seq = seq;
        k->writer.births_scanned = scanned;
        kconv__page(&k->conv, &k->table, (uint32_t)cpu, page, (size_t)n, kwriter__event,
                    &k->writer);
        k->writer.births_scanned = false;
        k->converting_cpu = -1;
      }
      kwriter__end(&k->writer);
      pages++;
    }
  }
  return pages;
}

/* kconv_sink_t of a read-ahead: notes the births, writes nothing. */
static void note_birth(void* arg, const kconv_event_t* e) {
  kwriter_t* w = arg;
  if (e->desc->kind == KEV_NEWTASK) kbirths__note(&w->births, w->table, e->desc, e->data, e->size);
}

/* kbirths_ahead_fn, on the reader thread while it converts a page of
 * converting_cpu: the other CPUs' pages, scanned for births and queued for
 * their turn; none when a read-ahead as deep began after that page was
 * read. */
static bool read_ahead(void* arg, bool partial) {
  kinstance_t* k = arg;
  if (k->ahead_seq[partial] >= k->converting_seq) return false;
  k->ahead_seq[partial] = k->read_seq;
  if (partial) k->ahead_seq[0] = k->read_seq; /* (it reads the whole pages first) */
  for (int cpu = 0; cpu < k->cpus; cpu++)
    if (cpu != k->converting_cpu)
      kahead__read(&k->ahead, &k->cpu[cpu], cpu, partial, &k->read_seq, &k->table, note_birth,
                   &k->writer);
  return true;
}

/* Under mu, on the reader thread: the sessions that leave and join. What
 * the kernel holds up to now goes first into the sessions taking part (a
 * leaving one's archive holds the kernel's events up to its stop; a joining
 * one gets none from before its start), then the leaving ones go out and
 * the joining ones write their snapshot and formats. */
static void serve_requests(kinstance_t* k) {
  bool any = false;
  for (unsigned i = 0; i < TRACE_ENGINE_MAX_SESSIONS; i++) any |= k->writer.sessions[i] != NULL;
  /* none taking part: the buffers are empty (a new instance, or drained
   * when the last session left, with tracing off since) */
  if (any) {
    size_t pages = read_cpus(k, k->drain_pages, true);
    if (getenv("FXTRACE_KERNEL_DEBUG"))
      fprintf(stderr, "fxtrace: kernel provider: drain: %zu pages (at most %zu per CPU, %d CPUs)\n",
              pages, k->drain_pages, k->cpus);
  }
  for (unsigned i = 0; i < TRACE_ENGINE_MAX_SESSIONS; i++) {
    if (!(k->leave_mask & (1u << i))) continue;
    kwsession_t* s = kwriter__remove_session(&k->writer, i);
    k->slots[i].lane_gaps = s ? s->lane_gaps : 0;
    kwsession__free(s);
  }
  const char* dir = tracefs_tracing_dir();
  for (unsigned i = 0; i < TRACE_ENGINE_MAX_SESSIONS; i++) {
    if (!(k->join_mask & (1u << i))) continue;
    kslot_t* slot = &k->slots[i];
    /* losses from here on are of events of its time (the buffer was just
     * drained) */
    slot->lost_base = ktracefs__lost_events(k->instance, k->cpus);
    slot->joined = kwriter__add_session(&k->writer, slot->joining, dir);
    if (!slot->joined) kwsession__free(slot->joining);
    slot->joining = NULL;
  }
  k->join_mask = k->leave_mask = 0;
  pthread_cond_broadcast(&k->done);
}

static void* reader_main(void* arg) {
  kinstance_t* k = arg;
  pthread_mutex_lock(&k->mu);
  for (;;) {
    if (atomic_load(&k->command) == 2) break;
    if (k->join_mask | k->leave_mask) {
      serve_requests(k);
      continue;
    }
    size_t pages = atomic_load(&k->wanted) == 0 ? read_cpus(k, PAGES_PER_ROUND, false) : 0;
    pthread_mutex_unlock(&k->mu);
    if (atomic_load(&k->wanted) != 0) {
      sched_yield(); /* another thread takes mu */
    } else if (pages == 0) {
      struct pollfd p = {k->wake_fd, POLLIN, 0};
      if (poll(&p, 1, READ_INTERVAL_MS) > 0) {
        uint64_t count;
        if (read(k->wake_fd, &count, sizeof(count)) < 0) { /* EAGAIN: already read */
        }
      }
    }
    pthread_mutex_lock(&k->mu);
  }
  pthread_mutex_unlock(&k->mu);
  return NULL;
}

static void wake_reader(kinstance_t* k) {
  uint64_t one = 1;
  if (write(k->wake_fd, &one, sizeof(one)) < 0) { /* the poll times out anyway */
  }
}

/* Takes mu from the reader (between two of its rounds). */
static void pause_reader(kinstance_t* k) {
  atomic_fetch_add(&k->wanted, 1);
  wake_reader(k);
  pthread_mutex_lock(&k->mu);
  atomic_fetch_sub(&k->wanted, 1);
}

/* With mu held: has the reader serve a join and/or a leave, and waits for it. */
static void serve(kinstance_t* k, unsigned join, unsigned leave) {
  k->join_mask |= join;
  k->leave_mask |= leave;
  wake_reader(k);
  while ((k->join_mask & join) || (k->leave_mask & leave)) pthread_cond_wait(&k->done, &k->mu);
}

/* ---- the instance's life cycle ---- */

/* For a process that dies of a signal (kcleanup.h): the instance and the
 * trace_pipe_raw files open on it (the pipes hold no tracefs file). */
/* 0, or kcleanup__publish()'s failure (-2: a signal handler is removing the
 * instance, the process dies). */
static int publish_for_cleanup(kinstance_t* k) {
  char* dir = tracefs_instance_get_dir(k->instance);
  int* fds = k->cpu ? malloc((size_t)k->cpus * sizeof(int)) : NULL;
  size_t count = 0;
  for (int cpu = 0; fds && cpu < k->cpus; cpu++)
    if (k->cpu[cpu].fd >= 0) fds[count++] = k->cpu[cpu].fd;
  int status = dir ? kcleanup__publish(dir, fds, count) : -1;
  tracefs_put_tracing_file(dir);
  free(fds);
  return status;
}

static void instance_free(kinstance_t* k) {
  if (!k) return;
  /* published until removed below: a process that dies of a signal
   * meanwhile (during the reader's last drain) still removes the instance */
  if (k->thread_running) {
    atomic_store(&k->command, 2);
    wake_reader(k);
    pthread_join(k->thread, NULL);
  }
  if (k->instance) ktracefs__set_on(k->instance, false);
  if (getenv("FXTRACE_KERNEL_DEBUG") && k->instance)
    for (int cpu = 0; cpu < k->cpus; cpu++) {
      char file[64];
      snprintf(file, sizeof(file), "per_cpu/cpu%d/stats", cpu);
      char* text = tracefs_instance_file_read(k->instance, file, NULL);
      if (text) fprintf(stderr, "cpu%d: %s", cpu, text);
      free(text);
    }
  if (getenv("FXTRACE_KERNEL_DEBUG"))
    fprintf(stderr,
            "fxtrace: kernel provider: %llu pages, %llu events, %llu unknown, %llu damaged "
            "pages, %llu missed, %llu records written, %llu context switches missing (both "
            "summed over the sessions)\n",
            (unsigned long long)k->conv.pages, (unsigned long long)k->conv.events,
            (unsigned long long)k->conv.unknown, (unsigned long long)k->conv.damaged_pages,
            (unsigned long long)k->conv.missed, (unsigned long long)k->writer.written,
            (unsigned long long)k->writer.lane_gaps);
  if (getenv("FXTRACE_KERNEL_DEBUG"))
    fprintf(stderr,
            "fxtrace: kernel provider: %llu task births noted, %llu read-aheads (%llu pages)\n",
            (unsigned long long)k->writer.births.noted,
            (unsigned long long)k->writer.births.read_aheads, (unsigned long long)k->ahead.pages);
  /* no handler on this thread between the two: it would wait for closes
   * that come after it */
  sigset_t all, old;
  sigfillset(&all);
  pthread_sigmask(SIG_SETMASK, &all, &old);
  /* false: a handler on another thread closes the trace_pipe_raw files
   * and removes the instance (the process is dying): a second close could
   * hit a file reusing a number, so they are only forgotten here */
  bool ours = kcleanup__closing();
  for (int cpu = 0; k->cpu && cpu < k->cpus; cpu++) {
    if (!ours) k->cpu[cpu].fd = -1;
    kcpu__close(&k->cpu[cpu]);
  }
  pthread_sigmask(SIG_SETMASK, &old, NULL);
  free(k->cpu);
  if (ours)
    ktracefs__destroy(k->instance);
  else
    ktracefs__forget(k->instance);
  kcleanup__withdraw();
  kwriter__free(&k->writer);
  for (unsigned i = 0; i < TRACE_ENGINE_MAX_SESSIONS; i++) kwsession__free(k->slots[i].joining);
  kconv__free(&k->conv);
  kahead__free(&k->ahead);
  kev_table__free(&k->table);
  free(k->kernel_enabled);
  if (k->wake_fd >= 0) close(k->wake_fd);
  pthread_mutex_destroy(&k->mu);
  pthread_cond_destroy(&k->done);
  free(k);
}

/* The instance for a first session with categories c (tracing off, the
 * reader running, no session joined yet); NULL with a message in error. */
static kinstance_t* instance_create(const kwcats_t* c, char* error, size_t error_size) {
  kinstance_t* k = calloc(1, sizeof(*k));
  if (!k) {
    snprintf(error, error_size, "out of memory");
    return NULL;
  }
  k->wake_fd = -1;
  pthread_mutex_init(&k->mu, NULL);
  pthread_cond_init(&k->done, NULL);
  kev_table__init(&k->table, NULL);
  const char* dir = tracefs_tracing_dir();
  if (!extend_table(k, c, dir, error, error_size)) goto fail;
  ktracefs__remove_stale();
  k->clock = ktracefs__clock_for_engine();
  k->instance = ktracefs__create(k->clock, buffer_kb(), error, error_size);
  if (!k->instance) goto fail;
  publish_for_cleanup(k);
  k->cpus = (int)sysconf(_SC_NPROCESSORS_CONF);
  if (k->cpus < 1) k->cpus = 1;
  k->cpu = calloc((size_t)k->cpus, sizeof(*k->cpu));
  if (!k->cpu) {
    snprintf(error, error_size, "out of memory");
    goto fail;
  }
  for (int cpu = 0; cpu < k->cpus; cpu++) /* closed until opened */
    k->cpu[cpu].fd = k->cpu[cpu].pipe[0] = k->cpu[cpu].pipe[1] = -1;
  size_t page_size = kcpu__page_size();
  /* its buffer's pages, the ring's reader page, and the partial page */
  k->drain_pages = page_size > 0 ? buffer_kb() * 1024 / page_size + 2 : 2;
  int opened = 0;
  for (int cpu = 0; page_size > 0 && cpu < k->cpus; cpu++)
    opened += kcpu__open(&k->cpu[cpu], k->instance, cpu, page_size) == 0;
  if (opened == 0) {
    snprintf(error, error_size, "cannot open the per-CPU ftrace buffers");
    goto fail;
  }
  if (publish_for_cleanup(k) == -2) {
    /* a handler removes the instance with the descriptors it knows, which
     * are none of these: closed now, or its removal fails (EBUSY) */
    for (int cpu = 0; cpu < k->cpus; cpu++)
      if (k->cpu[cpu].fd >= 0) {
        close(k->cpu[cpu].fd);
        k->cpu[cpu].fd = -1;
      }
    snprintf(error, error_size, "interrupted: the process is ending on a signal");
    goto fail;
  }
  if (kconv__init(&k->conv, page_size) != 0 ||
      kahead__init(&k->ahead, k->cpus, page_size, k->drain_pages) != 0 ||
      kwriter__init(&k->writer, &k->table, strcmp(k->clock, "x86-tsc") == 0, (uint32_t)k->cpus) !=
          0) {
    snprintf(error, error_size, "out of memory");
    goto fail;
  }
  k->converting_cpu = -1;
  k->writer.births.ahead = read_ahead;
  k->writer.births.ahead_arg = k;
  k->wake_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
  sigset_t all, old;
  sigfillset(&all);
  pthread_sigmask(SIG_SETMASK, &all, &old);
  int err = k->wake_fd < 0 ? errno : pthread_create(&k->thread, NULL, reader_main, k);
  pthread_sigmask(SIG_SETMASK, &old, NULL);
  if (err != 0) {
    snprintf(error, error_size, "cannot start the reader thread: %s", strerror(err));
    goto fail;
  }
  k->thread_running = true;
  return k;
fail:
  instance_free(k);
  return NULL;
}

/* Session `session` (generation g) takes part: the instance created for it
 * or its events extended, its own writer state joined (snapshot, formats)
 * by the reader, tracing on. All before the engine reports the session
 * started (the observer runs first). Under lock. */
static void join(unsigned session, uint64_t g) {
  skipped[session] = g; /* once per generation, whatever comes of it */
  char error[256] = "";
  int status = ktracefs__ensure_mounted();
  const char* dir = tracefs_tracing_dir();
  if (status != 0 || !dir) {
    fprintf(stderr, "fxtrace: kernel provider: no tracefs (%s); no kernel events recorded\n",
            strerror(status ? -status : ENOENT));
    return;
  }
  kwcats_t cats;
  if (!cats_of(session, dir, &cats)) { /* no kernel category in this session */
    kwcats__free(&cats);
    return;
  }
  kinstance_t* k = current;
  if (!k) {
    k = instance_create(&cats, error, sizeof(error));
    if (!k) {
      fprintf(stderr, "fxtrace: kernel provider: %s; no kernel events recorded\n", error);
      kwcats__free(&cats);
      return;
    }
    current = k;
  }
  kwsession_t* ws = kwsession__create(session, &cats, (uint32_t)k->cpus);
  kwcats_t* wanted_cats = ws ? &ws->cats : &cats;
  pause_reader(k);
  bool ok = ws != NULL && extend_table(k, wanted_cats, dir, error, sizeof(error));
  if (!ws) snprintf(error, sizeof(error), "out of memory");
  if (ok) {
    /* pruned too: a last session's leave prunes nothing (the instance goes
     * at STOPPING), and one may join before it went */
    apply_events(k, wanted_cats, true);
    k->slots[session].joining = ws;
    serve(k, 1u << session, 0);
    ok = k->slots[session].joined;
    if (!ok) snprintf(error, sizeof(error), "the session stopped before it could join");
  } else {
    kwsession__free(ws);
  }
  pthread_mutex_unlock(&k->mu);
  kwcats__free(&cats);
  if (!ok) {
    fprintf(stderr, "fxtrace: kernel provider: %s; no kernel events recorded in session %u\n",
            error, session);
    return;
  }
  k->slots[session].generation = g;
  if (!k->on) {
    if (ktracefs__set_on(k->instance, true) == 0)
      k->on = true;
    else
      fprintf(stderr, "fxtrace: kernel provider: cannot turn tracing on\n");
  }
}

/* Session `session` leaves: the reader drains what the kernel holds into
 * it (and the others), takes it out; the instance's losses since it joined
 * are counted in it (an upper bound of its own: ftrace counts losses per
 * instance, docs/kernel-provider.md "Sessions"). count_losses: false when
 * the session's buffer is not its trace's any more. Under lock. */
static void leave(unsigned session, bool count_losses) {
  kinstance_t* k = current;
  if (!k || k->slots[session].generation == 0) return;
  bool last = true;
  for (unsigned i = 0; i < TRACE_ENGINE_MAX_SESSIONS; i++)
    last &= i == session || k->slots[i].generation == 0;
  /* the last one: the kernel stops first, so the drain reaches the end */
  if (last && k->on) {
    ktracefs__set_on(k->instance, false);
    k->on = false;
  }
  pause_reader(k);
  serve(k, 0, 1u << session);
  if (!last) apply_events(k, NULL, true); /* what no session records any more: off */
  uint64_t lane_gaps = k->slots[session].lane_gaps;
  /* (a CPU's stats file unreadable at the join but not now, or the other
   * way: never a wrapped difference) */
  uint64_t lost_now = ktracefs__lost_events(k->instance, k->cpus);
  uint64_t lost =
      lost_now > k->slots[session].lost_base ? lost_now - k->slots[session].lost_base : 0;
  pthread_mutex_unlock(&k->mu);
  k->slots[session].generation = 0;
  if (count_losses && lost > 0) engine__add_dropped(session, lost);
  /* switches the kernel never recorded (ftrace counts no loss for them):
   * each is a sched_switch_missing instant in the archive; said here too */
  if (lane_gaps > 0)
    fprintf(stderr,
            "fxtrace: kernel provider: note: %llu context switches missing from the kernel's "
            "own trace (CPU lane gaps, ftrace counted no loss; sched_switch_missing events in "
            "the trace)\n",
            (unsigned long long)lane_gaps);
}

/* The stop hook (every session's stop, while it is still started): its
 * archive gets the kernel's events up to its stop and its losses; the
 * others keep ftrace running. */
static void drain(unsigned session, void* arg) {
  (void)arg;
  if (session >= TRACE_ENGINE_MAX_SESSIONS) return;
  pthread_mutex_lock(&lock);
  leave(session, true);
  pthread_mutex_unlock(&lock);
}

/* Follows every session's changes (each session's engine thread calls it):
 * the sessions started and not taking part join, those that took part and
 * stopped without the hook (the engine stopped them: buffer full) leave,
 * and the instance goes when none takes part. */
static void observe(trace_state_t state, void* arg) {
  (void)arg;
  (void)state; /* of one session, not said which: every session is looked at */
  pthread_mutex_lock(&lock);
  for (unsigned i = 0; i < TRACE_ENGINE_MAX_SESSIONS; i++) {
    uint64_t g = __atomic_load_n(&trace_engine__generation[i], __ATOMIC_ACQUIRE);
    if (current && current->slots[i].generation != 0 && current->slots[i].generation != g)
      leave(i, trace_engine_session_state(i) == TRACE_STOPPING);
    if (g != 0 && skipped[i] != g && !(current && current->slots[i].generation == g)) join(i, g);
  }
  bool any = false;
  for (unsigned i = 0; current && i < TRACE_ENGINE_MAX_SESSIONS; i++)
    any |= current->slots[i].generation != 0;
  if (current && !any) {
    instance_free(current);
    current = NULL;
  }
  pthread_mutex_unlock(&lock);
}

int kprovider__install(void) {
  if (installed) return 0;
  int status = trace_register_observer_callback(observe, NULL);
  if (status != 0) return status;
  engine__set_stop_hook(drain, NULL);
  installed = true;
  return 0;
}

void kprovider__uninstall(void) {
  if (!installed) return;
  engine__set_stop_hook(NULL, NULL);
  trace_unregister_observer_callback(observe, NULL);
  pthread_mutex_lock(&lock);
  instance_free(current);
  current = NULL;
  pthread_mutex_unlock(&lock);
  installed = false;
}
