/* The kernel provider's session: one per trace start (see kprovider.h).
 *
 * Threads: the engine thread runs the observer (start: tracefs instance,
 * events, the reader thread; stopping: teardown); the reader thread reads
 * every CPU's trace_pipe_raw and writes the records; trace_engine_stop()'s
 * caller runs the stop hook, which turns ftrace off and has the reader drain
 * what is left while records can still be written, then counts the kernel's
 * losses. A mutex orders the three. */
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

typedef struct ksession {
  struct tracefs_instance* instance;
  kev_table_t table;
  kconv_t conv;
  kwriter_t writer;
  bool legacy_sched; /* kernel:sched-legacy named in the trace's categories */
  int cpus;
  kcpu_t* cpu; /* one per CPU; fd -1 where it could not be opened */
  pthread_t thread;
  bool thread_running;
  int wake_fd;
  atomic_int command; /* 0 run, 1 drain and exit, 2 exit */
  pthread_mutex_t ready_lock;
  pthread_cond_t ready_cond;
  bool ready;
} ksession_t;

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static ksession_t* current;
static bool installed;

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
     "names"},
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

static bool enabled(trace_context_t* ctx, const char* category) {
  return trace_context_is_category_enabled(ctx, category);
}

/* The generic events the category set names: kernel:SYSTEM/EVENT, or a
 * pattern covering a whole system (kernel:SYSTEM/ *). A pattern that covers
 * every kernel event ("*", "kernel:*", an empty set) enables none of them:
 * thousands of events are never what such a set means. */
static void generic_events(trace_context_t* ctx, const char* tracing_dir, name_list_t* out) {
  if (enabled(ctx, "kernel:\x01/\x01")) return;
  char path[1024];
  snprintf(path, sizeof(path), "%s/events", tracing_dir);
  DIR* d = opendir(path);
  if (!d) return;
  struct dirent* se;
  while ((se = readdir(d)) != NULL) {
    if (se->d_name[0] == '.' || se->d_type != DT_DIR) continue;
    char category[600];
    snprintf(category, sizeof(category), "kernel:%s/\x01", se->d_name);
    bool whole = enabled(ctx, category);
    snprintf(path, sizeof(path), "%s/events/%s", tracing_dir, se->d_name);
    DIR* sd = opendir(path);
    if (!sd) continue;
    struct dirent* ee;
    while ((ee = readdir(sd)) != NULL) {
      if (ee->d_name[0] == '.' || ee->d_type != DT_DIR) continue;
      snprintf(category, sizeof(category), "kernel:%s/%s", se->d_name, ee->d_name);
      if (whole || enabled(ctx, category)) list_add(out, se->d_name, ee->d_name);
    }
    closedir(sd);
  }
  closedir(d);
}

/* Parses events/SYSTEM/EVENT/format ("SYSTEM/EVENT") into tep; an event
 * the kernel lacks is left out (kev_table__add then reports it). */
static void parse_format(struct tep_handle* tep, const char* tracing_dir, const char* name) {
  char system[256], path[1024];
  snprintf(system, sizeof(system), "%s", name);
  char* slash = strchr(system, '/');
  if (!slash) return;
  *slash = '\0';
  snprintf(path, sizeof(path), "%s/events/%s/%s/format", tracing_dir, system, slash + 1);
  FILE* f = fopen(path, "re");
  if (!f) return;
  char* text = malloc(65536);
  size_t n = text ? fread(text, 1, 65535, f) : 0;
  fclose(f);
  if (n > 0) tep_parse_event(tep, text, n, system);
  free(text);
}

/* Builds the table for the enabled categories; false with a message when
 * nothing could be set up. An empty table (no kernel category) is true. */
static bool build_table(ksession_t* s, const char* tracing_dir, char* error, size_t error_size) {
  trace_context_t* ctx = trace_acquire_context();
  if (!ctx) {
    snprintf(error, error_size, "the trace stopped");
    return false;
  }
  /* kernel:sched-legacy counts only when named as such: a pattern that
   * covers it ("*", "kernel:*", "kernel:sched*") also covers the probe
   * below, and means the default form */
  s->legacy_sched =
      enabled(ctx, KPROVIDER_SCHED_LEGACY) && !enabled(ctx, KPROVIDER_SCHED_LEGACY "\x01");
  bool sched = enabled(ctx, "kernel:sched") || s->legacy_sched, task = enabled(ctx, "kernel:task"),
       irq = enabled(ctx, "kernel:irq");
  name_list_t generic = {0}, events = {0};
  generic_events(ctx, tracing_dir, &generic);
  trace_release_context(ctx);

  /* The formats of exactly the events used, parsed from their tracefs
   * files (tracefs_local_events() would also parse /proc/kallsyms: half a
   * second of CPU per trace start, seconds under sanitizers). */
  for (size_t i = 0; sched && i < sizeof(kSchedEvents) / sizeof(kSchedEvents[0]); i++)
    list_add(&events, kSchedEvents[i].system, kSchedEvents[i].event);
  for (size_t i = 0; task && i < sizeof(kTaskEvents) / sizeof(kTaskEvents[0]); i++)
    list_add(&events, kTaskEvents[i].system, kTaskEvents[i].event);
  for (size_t i = 0; irq && i < sizeof(kIrqEvents) / sizeof(kIrqEvents[0]); i++)
    list_add(&events, kIrqEvents[i].system, kIrqEvents[i].event);
  for (size_t i = 0; i < generic.count; i++) list_add(&events, generic.items[i], NULL);
  bool ok = true;
  struct tep_handle* tep = events.count > 0 ? tep_alloc() : NULL;
  kev_table__init(&s->table, tep);
  if (events.count > 0 && !tep) {
    snprintf(error, error_size, "out of memory");
    ok = false;
  }
  for (size_t i = 0; ok && i < events.count; i++) parse_format(tep, tracing_dir, events.items[i]);
  /* kernel:sched wins over the generic form of its own events */
  for (size_t i = 0; ok && sched && i < sizeof(kSchedEvents) / sizeof(kSchedEvents[0]); i++)
    kev_table__add(&s->table, kSchedEvents[i].system, kSchedEvents[i].event, kSchedEvents[i].kind,
                   "kernel:sched");
  for (size_t i = 0; ok && task && i < sizeof(kTaskEvents) / sizeof(kTaskEvents[0]); i++)
    kev_table__add(&s->table, kTaskEvents[i].system, kTaskEvents[i].event, kTaskEvents[i].kind,
                   "kernel:task");
  for (size_t i = 0; ok && irq && i < sizeof(kIrqEvents) / sizeof(kIrqEvents[0]); i++)
    kev_table__add(&s->table, kIrqEvents[i].system, kIrqEvents[i].event, kIrqEvents[i].kind,
                   "kernel:irq");
  for (size_t i = 0; ok && i < generic.count; i++) {
    char sys[256];
    snprintf(sys, sizeof(sys), "%s", generic.items[i]);
    char* slash = strchr(sys, '/');
    if (!slash) continue;
    *slash = '\0';
    if (!kev_table__add(&s->table, sys, slash + 1, KEV_GENERIC, NULL))
      fprintf(stderr, "fxtrace: kernel provider: no format for kernel:%s/%s, not recorded\n", sys,
              slash + 1);
  }
  if (ok && kev_table__finish(&s->table) != 0) {
    snprintf(error, error_size, "unusable kernel event formats");
    ok = false;
  }
  list_free(&generic);
  list_free(&events);
  return ok;
}

/* ---- reading ---- */

/* Streaming: while a full rolling buffer waits for its save, converting a
 * page could fill the other one and drop records; the pages can wait in
 * ftrace's buffer instead (its overruns are counted). *waited_ms counts the
 * wait of one read_cpus() call: past SAVE_WAIT_MS it converts anyway (a
 * drop is counted either way). False when the session is told to end. */
static bool wait_for_save(ksession_t* s, int* waited_ms) {
  while (*waited_ms < SAVE_WAIT_MS && trace_engine_save_pending()) {
    if (atomic_load(&s->command) != 0) return false;
    struct pollfd p = {s->wake_fd, POLLIN, 0};
    poll(&p, 1, 1);
    ++*waited_ms;
  }
  return true;
}

/* Reads and converts what each CPU has (at most `rounds` pages per CPU, 0 =
 * until empty); flush: also the last partial pages. Returns pages read. */
static size_t read_cpus(ksession_t* s, size_t rounds, bool flush) {
  size_t pages = 0;
  int waited_ms = 0;
  for (int cpu = 0; cpu < s->cpus; cpu++) {
    if (s->cpu[cpu].fd < 0) continue;
    for (size_t i = 0; rounds == 0 || i < rounds; i++) {
      if (!flush && !wait_for_save(s, &waited_ms)) return pages;
      /* Whole pages only while tracing (spliced through a pipe, as trace-cmd
       * does): fewer reads, and no copy of a page the kernel is still
       * writing. The last partial page of each CPU comes with the flush. */
      /* read straight into the converter's padded buffer: no copy of the page */
      void* page = kconv__page_buffer(&s->conv);
      int n = kcpu__read(&s->cpu[cpu], page);
      if (n <= 0 && flush) n = kcpu__flush(&s->cpu[cpu], page);
      if (n <= 0) break;
      if (kwriter__begin(&s->writer)) {
        kconv__page(&s->conv, &s->table, (uint32_t)cpu, page, (size_t)n, kwriter__event,
                    &s->writer);
      }
      kwriter__end(&s->writer);
      pages++;
    }
  }
  return pages;
}

static void* reader_main(void* arg) {
  ksession_t* s = arg;
  /* names and formats first, from this thread (oneshot keeps a thread's
   * definitions before its uses) */
  if (kwriter__begin(&s->writer)) {
    kwriter__snapshot(&s->writer);
    kwriter__formats(&s->writer, tracefs_tracing_dir());
  }
  kwriter__end(&s->writer);
  pthread_mutex_lock(&s->ready_lock);
  s->ready = true;
  pthread_cond_broadcast(&s->ready_cond);
  pthread_mutex_unlock(&s->ready_lock);
  for (;;) {
    int command = atomic_load(&s->command);
    if (command == 1) {
      read_cpus(s, 0, true);
      break;
    }
    if (command == 2) break;
    if (read_cpus(s, PAGES_PER_ROUND, false) > 0) continue;
    struct pollfd p = {s->wake_fd, POLLIN, 0};
    poll(&p, 1, READ_INTERVAL_MS);
  }
  return NULL;
}

/* ---- session life cycle ---- */

/* For a process that dies of a signal (kcleanup.h): the instance and the
 * trace_pipe_raw files open on it (the pipes hold no tracefs file). */
static void publish_for_cleanup(ksession_t* s) {
  char* dir = tracefs_instance_get_dir(s->instance);
  int* fds = s->cpu ? malloc((size_t)s->cpus * sizeof(int)) : NULL;
  size_t count = 0;
  for (int cpu = 0; fds && cpu < s->cpus; cpu++)
    if (s->cpu[cpu].fd >= 0) fds[count++] = s->cpu[cpu].fd;
  if (dir) kcleanup__publish(dir, fds, count);
  tracefs_put_tracing_file(dir);
  free(fds);
}

static void session_free(ksession_t* s) {
  if (!s) return;
  kcleanup__withdraw(); /* the orderly removal below, from here on */
  if (s->thread_running) {
    int expected = 0;
    atomic_compare_exchange_strong(&s->command, &expected, 2);
    uint64_t one = 1;
    if (write(s->wake_fd, &one, sizeof(one)) < 0) { /* the poll times out anyway */
    }
    pthread_join(s->thread, NULL);
  }
  if (s->instance) ktracefs__set_on(s->instance, false);
  if (getenv("FXTRACE_KERNEL_DEBUG") && s->instance)
    for (int cpu = 0; cpu < s->cpus; cpu++) {
      char file[64];
      snprintf(file, sizeof(file), "per_cpu/cpu%d/stats", cpu);
      char* text = tracefs_instance_file_read(s->instance, file, NULL);
      if (text) fprintf(stderr, "cpu%d: %s", cpu, text);
      free(text);
    }
  if (getenv("FXTRACE_KERNEL_DEBUG"))
    fprintf(stderr,
            "fxtrace: kernel provider: %llu pages, %llu events, %llu unknown, %llu damaged "
            "pages, %llu missed, %llu records written, %llu context switches missing\n",
            (unsigned long long)s->conv.pages, (unsigned long long)s->conv.events,
            (unsigned long long)s->conv.unknown, (unsigned long long)s->conv.damaged_pages,
            (unsigned long long)s->conv.missed, (unsigned long long)s->writer.written,
            (unsigned long long)s->writer.lane_gaps);
  for (int cpu = 0; s->cpu && cpu < s->cpus; cpu++) kcpu__close(&s->cpu[cpu]);
  free(s->cpu);
  ktracefs__destroy(s->instance);
  kwriter__free(&s->writer);
  kconv__free(&s->conv);
  kev_table__free(&s->table);
  if (s->wake_fd >= 0) close(s->wake_fd);
  pthread_mutex_destroy(&s->ready_lock);
  pthread_cond_destroy(&s->ready_cond);
  free(s);
}

static ksession_t* session_start(void) {
  char error[256] = "";
  ksession_t* s = calloc(1, sizeof(*s));
  if (!s) return NULL;
  s->wake_fd = -1;
  pthread_mutex_init(&s->ready_lock, NULL);
  pthread_cond_init(&s->ready_cond, NULL);
  int status = ktracefs__ensure_mounted();
  const char* dir = tracefs_tracing_dir();
  if (status != 0 || !dir) {
    snprintf(error, sizeof(error), "no tracefs (%s)", strerror(status ? -status : ENOENT));
    goto fail;
  }
  if (!build_table(s, dir, error, sizeof(error))) goto fail;
  if (s->table.count == 0) { /* no kernel category in this trace */
    session_free(s);
    return NULL;
  }
  ktracefs__remove_stale();
  const char* clock = ktracefs__clock_for_engine();
  s->instance = ktracefs__create(clock, buffer_kb(), error, sizeof(error));
  if (!s->instance) goto fail;
  publish_for_cleanup(s);
  for (size_t i = 0; i < s->table.count; i++) {
    const kev_desc_t* d = &s->table.descs[i];
    if (ktracefs__enable(s->instance, d->event->system, d->event->name) != 0)
      fprintf(stderr, "fxtrace: kernel provider: cannot enable %s/%s\n", d->event->system,
              d->event->name);
  }
  s->cpus = (int)sysconf(_SC_NPROCESSORS_CONF);
  if (s->cpus < 1) s->cpus = 1;
  s->cpu = calloc((size_t)s->cpus, sizeof(*s->cpu));
  if (!s->cpu) goto fail;
  for (int cpu = 0; cpu < s->cpus; cpu++) /* closed until opened */
    s->cpu[cpu].fd = s->cpu[cpu].pipe[0] = s->cpu[cpu].pipe[1] = -1;
  size_t page_size = kcpu__page_size();
  int opened = 0;
  for (int cpu = 0; page_size > 0 && cpu < s->cpus; cpu++)
    opened += kcpu__open(&s->cpu[cpu], s->instance, cpu, page_size) == 0;
  if (opened == 0) {
    snprintf(error, sizeof(error), "cannot open the per-CPU ftrace buffers");
    goto fail;
  }
  publish_for_cleanup(s);
  if (kconv__init(&s->conv, page_size) != 0 ||
      kwriter__init(&s->writer, &s->table, strcmp(clock, "x86-tsc") == 0, s->legacy_sched,
                    (uint32_t)s->cpus) != 0) {
    snprintf(error, sizeof(error), "out of memory");
    goto fail;
  }
  s->wake_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
  sigset_t all, old;
  sigfillset(&all);
  pthread_sigmask(SIG_SETMASK, &all, &old);
  int err = s->wake_fd < 0 ? errno : pthread_create(&s->thread, NULL, reader_main, s);
  pthread_sigmask(SIG_SETMASK, &old, NULL);
  if (err != 0) {
    snprintf(error, sizeof(error), "cannot start the reader thread: %s", strerror(err));
    goto fail;
  }
  s->thread_running = true;
  pthread_mutex_lock(&s->ready_lock);
  while (!s->ready) pthread_cond_wait(&s->ready_cond, &s->ready_lock);
  pthread_mutex_unlock(&s->ready_lock);
  if (ktracefs__set_on(s->instance, true) != 0) {
    snprintf(error, sizeof(error), "cannot turn tracing on");
    goto fail;
  }
  return s;
fail:
  fprintf(stderr, "fxtrace: kernel provider: %s; no kernel events recorded\n", error);
  session_free(s);
  return NULL;
}

/* The session whose stop runs the stop hook: the engine runs it only when
 * the last started session stops, before that session leaves STARTED, so
 * it is the one session with a generation. The kernel's records went into
 * the first started session at each batch, which at the end is this one;
 * an earlier session may be stopped and saved by now, its count final. */
static unsigned stopping_session(void) {
  for (unsigned i = 0; i < TRACE_ENGINE_MAX_SESSIONS; i++)
    if (__atomic_load_n(&trace_engine__generation[i], __ATOMIC_ACQUIRE) != 0) return i;
  return 0;
}

/* The stop hook: ftrace off, drain while records can still be written,
 * count the kernel's losses (in the session that stops). */
static void drain(unsigned session, void* arg) {
  (void)arg;
  /* ftrace serves every session: drained at the last one's stop */
  for (unsigned i = 0; i < TRACE_ENGINE_MAX_SESSIONS; i++)
    if (i != session && trace_engine_session_state(i) == TRACE_STARTED) return;
  pthread_mutex_lock(&lock);
  ksession_t* s = current;
  if (s && s->thread_running) {
    ktracefs__set_on(s->instance, false);
    atomic_store(&s->command, 1);
    uint64_t one = 1;
    if (write(s->wake_fd, &one, sizeof(one)) < 0) { /* the poll times out anyway */
    }
    pthread_join(s->thread, NULL);
    s->thread_running = false;
    uint64_t lost = ktracefs__lost_events(s->instance, s->cpus);
    if (lost > 0) engine__add_dropped(stopping_session(), lost);
    /* switches the kernel never recorded (ftrace counts no loss for them):
     * each is a sched_switch_missing instant in the archive; said here too */
    if (s->writer.lane_gaps > 0)
      fprintf(stderr,
              "fxtrace: kernel provider: note: %llu context switches missing from the kernel's "
              "own trace (CPU lane gaps, ftrace counted no loss; sched_switch_missing events in "
              "the trace)\n",
              (unsigned long long)s->writer.lane_gaps);
  }
  pthread_mutex_unlock(&lock);
}

static void observe(trace_state_t state, void* arg) {
  (void)arg;
  /* the process's state, not the one session's that changed: ftrace runs
   * while any session is started (docs/kernel-provider.md, "Sessions") */
  (void)state;
  state = trace_state();
  pthread_mutex_lock(&lock);
  if (state == TRACE_STARTED && !current) {
    current = session_start();
  } else if (state != TRACE_STARTED && current) {
    session_free(current);
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
  session_free(current);
  current = NULL;
  pthread_mutex_unlock(&lock);
  installed = false;
}
