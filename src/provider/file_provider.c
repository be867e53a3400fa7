/* File mode: record into FXTRACE_OUTPUT with no trace manager.
 *
 * While tracing, the live buffer is a file in shared memory (FXTRACE_SHM_DIR,
 * default /dev/shm; docs/file-mode.md): reserved with fallocate and its page
 * tables filled up front (the first PREFAULT_SYNC_BYTES before the start, the
 * rest by a background thread that keeps ahead of the writers,
 * provider__touch_ahead), so a record takes no page fault and no
 * writeback ever write-protects a page again, as in the manager path. Every
 * committed record is in that shared memory, so a SIGKILL loses nothing
 * committed. FXTRACE_OUTPUT meanwhile holds a placeholder naming the live
 * buffer (engine/live_placeholder.h), with the archive's size reserved behind
 * it (a full disk fails at start); streaming saves are appended after the
 * placeholder. At the end the reservation is released and the archive
 * (magic, provider info, streamed data, then the buffer's records) goes to a
 * temporary file beside it, which replaces the placeholder only once
 * complete; then the live buffer is removed. A failure (full disk) leaves the
 * placeholder and the live buffer, which `trace recover` still reads. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23 /* Linux 5.14 */
#endif

#include "alert/alert_trigger.h"
#include "anchor/clock_anchor.h"
#include "engine/buffer_scan.h"
#include "engine/categories.h"
#include "engine/engine.h"
#include "engine/explicit_name.h"
#include "engine/live_placeholder.h"
#include "engine/thread_exits.h"
#include "names/names.h"
#include "provider/buffer_touch.h"
#include "provider/provider_internal.h"

enum {
  DEFAULT_BUFFER_MIB = 4,
  MAX_BUFFER_MIB = 4096,
  STAGE_BYTES = 1 << 20,
  /* page tables filled before the start; the rest in the background, in
   * steps of this size (a step takes a few ms) */
  PREFAULT_SYNC_BYTES = 64 << 20,
};

struct file_session {
  trace_handler_t handler; /* first: the engine hands it back to us */
  pid_t pid;               /* the process that records; a fork child never finishes */
  category_set_t categories;
  char* path;     /* FXTRACE_OUTPUT: the placeholder, then the archive */
  char* shm_path; /* the live buffer's file */
  char name[101];
  clock_anchor_t start_anchor; /* taken right after the engine started */
  int fd;                      /* the live buffer */
  int out_fd;                  /* FXTRACE_OUTPUT */
  uint8_t* map;
  size_t size;
  trace_buffering_mode_t mode;
  pthread_mutex_t lock;
  pthread_cond_t cond;
  bool stopped;
  bool terminated;
  int save_errno; /* first failed streaming save */
  pthread_t prefault_thread;
  bool prefaulting;  /* prefault_thread runs (join it before unmapping) */
  int prefault_stop; /* atomic: set to end the prefault early */
  /* FXTRACE_TRIGGER (docs/flight-recorder.md): ALERT:stop finishes the
   * archive at that alert, on the engine thread. */
  alert_trigger_t* triggers;
  size_t trigger_count;
  bool triggered;         /* engine thread: a stop trigger fired */
  bool archive_completed; /* the archive was written (at a trigger) */
  /* streaming saves' staging area (engine thread), kept from one save to
   * the next: a fresh one faults its pages in at every save */
  uint8_t* stage_data;
};

/* Buffered sequential writes to a file descriptor at an offset. */
typedef struct stage {
  int fd;
  off_t offset;
  uint8_t* data;
  size_t used;
  int error;
} stage_t;

static int stage_flush(stage_t* s) {
  size_t done = 0;
  while (done < s->used && s->error == 0) {
    ssize_t n = pwrite(s->fd, s->data + done, s->used - done, s->offset);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      s->error = n < 0 ? errno : EIO;
      break;
    }
    done += (size_t)n;
    s->offset += n;
  }
  s->used = 0;
  return s->error;
}

static int stage_emit(void* arg, const void* data, size_t bytes) {
  stage_t* s = arg;
  const uint8_t* p = data;
  while (bytes > 0) {
    size_t room = STAGE_BYTES - s->used;
    size_t n = bytes < room ? bytes : room;
    memcpy(s->data + s->used, p, n);
    s->used += n;
    p += n;
    bytes -= n;
    if (s->used == STAGE_BYTES && stage_flush(s)) return -1;
  }
  return s->error ? -1 : 0;
}

/* ---- handler ---- */

static file_session_t* session_of(trace_handler_t* h) { return (file_session_t*)h; }

static bool is_category_enabled(trace_handler_t* h, const char* category) {
  return categories__match(&session_of(h)->categories, category);
}

static void trace_started(trace_handler_t* h) { (void)h; }

static void complete_archive(file_session_t* s);

static void trace_stopped(trace_handler_t* h, int disposition) {
  (void)disposition;
  file_session_t* s = session_of(h);
  /* a stop trigger fired: the archive is finished now, not at exit (the
   * program may go on, or be killed, long after its alert) */
  if (s->triggered) complete_archive(s);
  pthread_mutex_lock(&s->lock);
  s->stopped = true;
  pthread_cond_broadcast(&s->cond);
  pthread_mutex_unlock(&s->lock);
}

static void trace_terminated(trace_handler_t* h) {
  file_session_t* s = session_of(h);
  pthread_mutex_lock(&s->lock);
  s->terminated = true;
  pthread_cond_broadcast(&s->cond);
  pthread_mutex_unlock(&s->lock);
}

/* Streaming: append the durable delta and the full rolling buffer after the
 * buffer, then publish the new length in the header (after the data, so a
 * crash never exposes a half-written save). */
static void notify_buffer_full(trace_handler_t* h, uint32_t wrapped_count,
                               uint64_t durable_data_end) {
  file_session_t* s = session_of(h);
  trace_buffer_header_t* header = (trace_buffer_header_t*)s->map;
  uint64_t streamed = __atomic_load_n(&header->streamed_bytes, __ATOMIC_RELAXED);
  uint64_t durable_from = header->saved_durable_end;
  if (!s->stage_data) s->stage_data = malloc(STAGE_BYTES);
  stage_t stage = {s->out_fd, (off_t)(LIVE_PLACEHOLDER_BYTES + streamed), s->stage_data, 0, 0};
  if (!stage.data) stage.error = ENOMEM;
  /* in runs: the buffer is this process's own, its records need no check */
  if (stage.error == 0)
    buffer_scan__save_runs(s->map, s->size, wrapped_count, durable_from, durable_data_end,
                           stage_emit, &stage, NULL);
  stage_flush(&stage);
  if (stage.error == 0) {
    /* length first: a crash between the two stores then only repeats some
     * durable records (harmless redefinitions), never loses any */
    __atomic_store_n(&header->streamed_bytes, (uint64_t)stage.offset - LIVE_PLACEHOLDER_BYTES,
                     __ATOMIC_RELEASE);
    __atomic_store_n(&header->saved_durable_end, durable_data_end, __ATOMIC_RELEASE);
  } else if (s->save_errno == 0) {
    s->save_errno = stage.error;
    fprintf(stderr, "fxtrace: cannot append a saved buffer to %s: %s; its records are lost\n",
            s->path, strerror(stage.error));
  }
  trace_engine_mark_buffer_saved(wrapped_count, durable_data_end);
}

/* Engine thread. No manager to tell: the alert matters only if it is a stop
 * trigger. */
static void send_alert(trace_handler_t* h, const char* name) {
  file_session_t* s = session_of(h);
  if (!name || s->triggered ||
      alert_trigger__find(s->triggers, s->trigger_count, name) != ALERT_ACTION_STOP)
    return;
  s->triggered = true;
  fprintf(stderr, "fxtrace: alert '%s' (FXTRACE_TRIGGER): finishing the archive %s\n", name,
          s->path);
  trace_engine_stop(0); /* from the engine thread: the stop runs next in its loop */
}

static const trace_handler_ops_t ops = {is_category_enabled, trace_started,      trace_stopped,
                                        trace_terminated,    notify_buffer_full, send_alert};

/* ---- configuration ---- */

static int parse_mode(const char* text, trace_buffering_mode_t* out) {
  if (!text || !text[0] || strcmp(text, "oneshot") == 0) {
    *out = TRACE_BUFFERING_MODE_ONESHOT;
  } else if (strcmp(text, "circular") == 0) {
    *out = TRACE_BUFFERING_MODE_CIRCULAR;
  } else if (strcmp(text, "streaming") == 0) {
    *out = TRACE_BUFFERING_MODE_STREAMING;
  } else {
    fprintf(stderr,
            "fxtrace: FXTRACE_BUFFERING_MODE=%s: expected oneshot, circular or streaming; "
            "not tracing\n",
            text);
    return -1;
  }
  return 0;
}

/* FXTRACE_TRIGGER: ALERT:stop, comma-separated. */
static int parse_triggers(file_session_t* s, const char* text) {
  if (!text || !text[0]) return 0;
  for (const char* p = text; *p;) {
    const char* comma = strchr(p, ',');
    size_t length = comma ? (size_t)(comma - p) : strlen(p);
    alert_trigger_t t;
    const char* bad = alert_trigger__parse(p, length, &t);
    if (!bad && t.action != ALERT_ACTION_STOP)
      bad = "file mode has no snapshots (the action is stop; `trace record` takes snapshots)";
    if (bad) {
      fprintf(stderr, "fxtrace: FXTRACE_TRIGGER=%s: %s; not tracing\n", text, bad);
      return -1;
    }
    alert_trigger_t* grown = realloc(s->triggers, (s->trigger_count + 1) * sizeof(*grown));
    if (!grown) return -1;
    s->triggers = grown;
    s->triggers[s->trigger_count++] = t;
    p += length;
    if (*p == ',') p++;
  }
  return 0;
}

static int parse_size(const char* text, size_t* out) {
  unsigned long mib = DEFAULT_BUFFER_MIB;
  if (text && text[0]) {
    char* end;
    errno = 0;
    mib = strtoul(text, &end, 10);
    if (errno || *end || end == text || text[0] == '-' || mib < 1 || mib > MAX_BUFFER_MIB) {
      fprintf(stderr,
              "fxtrace: FXTRACE_BUFFER_SIZE=%s: expected a whole number of MiB from 1 to %d; "
              "not tracing\n",
              text, MAX_BUFFER_MIB);
      return -1;
    }
  }
  *out = (size_t)mib << 20;
  return 0;
}

/* ---- the live buffer ---- */

/* Maps [from, to) of the live buffer writable and writes each page once
 * (buffer_touch.h), so that records take no page fault and no first-write
 * cost; safe while records are written. */
static void prefault(file_session_t* s, size_t from, size_t to) {
  provider__touch_pages(s->map, from, to, &s->prefault_stop);
}

static void* prefault_rest(void* arg) {
  file_session_t* s = arg;
  provider__touch_ahead(s->map, s->size, PREFAULT_SYNC_BYTES, &s->prefault_stop);
  return NULL;
}

/* The live buffer: a new file in FXTRACE_SHM_DIR (default /dev/shm),
 * reserved whole (a full shared-memory file system fails here, never as
 * SIGBUS later) and mapped. 0 or an errno; *what names the step. */
static int create_live_buffer(file_session_t* s, const char** what) {
  const char* dir = getenv("FXTRACE_SHM_DIR");
  if (!dir || !dir[0]) dir = "/dev/shm";
  *what = dir;
  size_t length = strlen(dir) + 48;
  s->shm_path = malloc(length);
  if (!s->shm_path) return ENOMEM;
  snprintf(s->shm_path, length, "%s/fxtrace-%d-XXXXXX", dir, (int)s->pid);
  s->fd = mkostemp(s->shm_path, O_CLOEXEC);
  if (s->fd < 0) {
    int err = errno;
    free(s->shm_path);
    s->shm_path = NULL;
    return err;
  }
  *what = s->shm_path;
  int err = posix_fallocate(s->fd, 0, (off_t)s->size);
  if (!err) {
    s->map = mmap(NULL, s->size, PROT_READ | PROT_WRITE, MAP_SHARED, s->fd, 0);
    if (s->map == MAP_FAILED) {
      s->map = NULL;
      err = errno;
    }
  }
  return err;
}

/* The placeholder FXTRACE_OUTPUT holds while tracing. */
static int write_placeholder(file_session_t* s) {
  char text[LIVE_PLACEHOLDER_BYTES];
  memset(text, 0, sizeof(text));
  int n = snprintf(text, sizeof(text),
                   LIVE_PLACEHOLDER_MAGIC
                   "fxtrace: a program is tracing into this file, or died before it finished.\n"
                   "buffer %s\n"
                   "pid %d\n"
                   "Its records are in the live buffer above; rebuild the archive with\n"
                   "  trace recover THIS_FILE -o OUT.fxt\n",
                   s->shm_path, (int)s->pid);
  if (n < 0 || (size_t)n >= sizeof(text)) return ENAMETOOLONG;
  for (size_t done = 0; done < sizeof(text);) {
    ssize_t w = pwrite(s->out_fd, text + done, sizeof(text) - done, (off_t)done);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) return w < 0 ? errno : EIO;
    done += (size_t)w;
  }
  return 0;
}

static void stop_prefault(file_session_t* s) {
  if (!s->prefaulting) return;
  __atomic_store_n(&s->prefault_stop, 1, __ATOMIC_RELAXED);
  pthread_join(s->prefault_thread, NULL);
  s->prefaulting = false;
}

static void free_session(file_session_t* s) {
  /* a fork child has no prefault thread: the flag is the parent's */
  if (getpid() == s->pid) stop_prefault(s);
  if (s->map) munmap(s->map, s->size);
  if (s->fd >= 0) close(s->fd);
  if (s->out_fd >= 0) close(s->out_fd);
  categories__free(&s->categories);
  pthread_mutex_destroy(&s->lock);
  pthread_cond_destroy(&s->cond);
  free(s->path);
  free(s->shm_path);
  free(s->triggers);
  free(s->stage_data);
  free(s);
}

/* Start failed: remove what was created, free. */
static void abandon(file_session_t* s, bool output_created) {
  if (output_created) unlink(s->path);
  if (s->shm_path) unlink(s->shm_path);
  free_session(s);
}

file_session_t* file_session__start(const char* path, const char* name) {
  file_session_t* s = calloc(1, sizeof(*s));
  if (!s) return NULL;
  s->fd = -1;
  s->out_fd = -1;
  s->pid = getpid();
  s->handler.ops = &ops;
  pthread_mutex_init(&s->lock, NULL);
  pthread_cond_init(&s->cond, NULL);
  snprintf(s->name, sizeof(s->name), "%s", name);
  s->path = strdup(path);
  if (!s->path || parse_mode(getenv("FXTRACE_BUFFERING_MODE"), &s->mode) ||
      parse_size(getenv("FXTRACE_BUFFER_SIZE"), &s->size) ||
      categories__parse(&s->categories, getenv("FXTRACE_CATEGORIES")) ||
      parse_triggers(s, getenv("FXTRACE_TRIGGER"))) {
    free_session(s);
    return NULL;
  }
  /* the owner's only, as trace's outputs (docs/security.md); kept by the rename */
  s->out_fd = open(path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  int err = s->out_fd < 0 ? errno : 0;
  /* Reserve the archive's blocks now (the placeholder and a buffer's worth):
   * a full disk must fail here, not when the archive is written. */
  if (!err) err = posix_fallocate(s->out_fd, 0, (off_t)(LIVE_PLACEHOLDER_BYTES + s->size));
  if (err) {
    fprintf(stderr, "fxtrace: cannot record to %s: %s; not tracing\n", path, strerror(err));
    abandon(s, s->out_fd >= 0);
    return NULL;
  }
  const char* what = NULL;
  err = create_live_buffer(s, &what);
  if (err) {
    fprintf(stderr, "fxtrace: cannot create the live trace buffer %s (%zu MiB): %s; not tracing\n",
            what, s->size >> 20, strerror(err));
    abandon(s, true);
    return NULL;
  }
  err = write_placeholder(s);
  if (err) {
    fprintf(stderr, "fxtrace: cannot record to %s: %s; not tracing\n", path, strerror(err));
    abandon(s, true);
    return NULL;
  }
  size_t sync = s->size < (size_t)PREFAULT_SYNC_BYTES ? s->size : (size_t)PREFAULT_SYNC_BYTES;
  prefault(s, 0, sync);
  int status = trace_engine__initialize_zeroed(&s->handler, s->mode, s->map, s->size);
  if (status == 0) status = trace_engine_start(TRACE_START_CLEAR_ENTIRE_BUFFER);
  if (status != 0) {
    fprintf(stderr, "fxtrace: cannot start the trace engine: %s; not tracing\n", strerror(-status));
    abandon(s, true);
    return NULL;
  }
  s->start_anchor = clock_anchor__take(trace_clock__now_ns);
  if (sync < s->size)
    s->prefaulting = pthread_create(&s->prefault_thread, NULL, prefault_rest, s) == 0;
  return s;
}

/* ---- finishing ---- */

/* The names section (docs/file-mode.md, "Names"): the program's process and
 * its threads with the names they have at the end (or had when they ended),
 * after every other record, since readers keep the last name they read. */
static void note_thread(void* arg, uint64_t tid, const char* name, int alive) {
  (void)alive; /* a live thread's newest name comes from /proc below */
  names__set(arg, true, tid, (uint64_t)getpid(), name, strlen(name), NAMES_RANK_OWN_RECORD, 0);
}

/* A name the program gave its own process or thread: over /proc's. */
static void note_explicit(void* arg, bool thread, uint64_t koid, const char* name, uint64_t ns,
                          uint64_t ended_ns) {
  (void)ended_ns;
  names__set(arg, thread, koid, thread ? (uint64_t)getpid() : 0, name, strlen(name),
             NAMES_RANK_EXPLICIT, ns);
}

static bool names_sink(void* arg, const void* data, size_t bytes) {
  return stage_emit(arg, data, bytes) == 0;
}

static void emit_names(stage_t* stage) {
  names_t* n = names__create();
  if (!n) return; /* out of memory: the names the records carry stay */
  uint64_t pid = (uint64_t)getpid();
  uint64_t now = trace_clock__now_ns();
  names__note_program(n, pid, now);
  thread_exits__each(note_thread, n);
  names__refresh_from_proc(n, now);
  explicit_name__each(pid, 0, note_explicit, n); /* one trace: the process's life */
  names__write_section(n, names_sink, stage, NULL);
  names__free(n);
}

/* A wall-clock anchor (anchor/clock_anchor.h), then the program's provider
 * (1, as buffer__emit_prologue names it) selected again. */
static void emit_anchor(stage_t* stage, const clock_anchor_t* a, bool stop) {
  uint64_t words[CLOCK_ANCHOR_MAX_WORDS + 1];
  size_t bytes = clock_anchor__encode(words, a, stop);
  fxt_write_provider_section_record(&words[bytes / 8], 1);
  stage_emit(stage, words, bytes + 8);
}

/* The archive into a temporary file beside `path`, then renamed over it. */
static int write_archive(file_session_t* s, uint64_t dropped) {
  const trace_buffer_header_t* header = (const trace_buffer_header_t*)s->map;
  uint64_t streamed = header->streamed_bytes;
  /* Give the reservation back just before the archive needs the space; the
   * placeholder and the streamed saves stay. */
  if (ftruncate(s->out_fd, (off_t)(LIVE_PLACEHOLDER_BYTES + streamed)) != 0) return errno;
  size_t length = strlen(s->path);
  char* tmp = malloc(length + 16);
  if (!tmp) return ENOMEM;
  snprintf(tmp, length + 16, "%s.tmp-XXXXXX", s->path);
  int fd = mkostemp(tmp, O_CLOEXEC);
  if (fd < 0) {
    int err = errno;
    free(tmp);
    return err;
  }
  stage_t stage = {fd, 0, malloc(STAGE_BYTES), 0, 0};
  if (!stage.data) stage.error = ENOMEM;
  if (!stage.error) buffer__emit_prologue(1, s->name, dropped, stage_emit, &stage);
  if (!stage.error) emit_anchor(&stage, &s->start_anchor, false);
  /* streamed saves, then what the buffer still holds; the prologue goes out
   * first, since the copy loop reuses the stage's block */
  stage_flush(&stage);
  for (uint64_t done = 0; done < streamed && !stage.error;) {
    size_t n = streamed - done < STAGE_BYTES ? (size_t)(streamed - done) : STAGE_BYTES;
    ssize_t got = pread(s->out_fd, stage.data, n, (off_t)(LIVE_PLACEHOLDER_BYTES + done));
    if (got <= 0) {
      stage.error = got < 0 ? errno : EIO;
      break;
    }
    stage.used = (size_t)got;
    stage_flush(&stage);
    done += (uint64_t)got;
  }
  if (!stage.error)
    buffer_scan__records(s->map, s->size, header->saved_durable_end, stage_emit, &stage, NULL);
  clock_anchor_t stop_anchor = clock_anchor__take(trace_clock__now_ns);
  if (!stage.error) emit_anchor(&stage, &stop_anchor, true);
  if (!stage.error) emit_names(&stage);
  stage_flush(&stage);
  free(stage.data);
  int err = stage.error;
  struct stat st;
  if (!err && fstat(s->out_fd, &st) == 0 && fchmod(fd, st.st_mode & 07777) != 0) err = errno;
  if (close(fd) != 0 && !err) err = errno;
  if (!err && rename(tmp, s->path) != 0) err = errno;
  if (err) unlink(tmp);
  free(tmp);
  return err;
}

/* The engine is stopped: the archive replaces the placeholder, and the live
 * buffer goes (or stays, named by the placeholder, if that failed). Once. */
static void complete_archive(file_session_t* s) {
  if (s->archive_completed) return;
  s->archive_completed = true;
  trace_engine_stats_t stats = {0};
  trace_engine_get_stats(&stats);
  stop_prefault(s);
  int err = write_archive(s, stats.records_dropped);
  if (err) {
    fprintf(stderr,
            "fxtrace: cannot finish the archive %s: %s; the trace stays recoverable: the live "
            "buffer %s is kept and %s names it (trace recover %s -o OUT.fxt, trace dump and "
            "trace convert read it)\n",
            s->path, strerror(err), s->shm_path, s->path, s->path);
  } else {
    unlink(s->shm_path);
  }
  if (!err && stats.records_dropped > 0) {
    /* Why, by mode (docs/file-mode.md): streaming drops when every rolling
     * segment waits for its save or a record is larger than one segment
     * (1/8 of a 4 MiB buffer, docs/buffer-layout.md); suggesting streaming
     * there would send the user in a circle. */
    fprintf(stderr,
            "fxtrace: %llu trace records dropped because the buffer was full (%s mode, %zu MiB); "
            "%s\n",
            (unsigned long long)stats.records_dropped,
            s->mode == TRACE_BUFFERING_MODE_ONESHOT    ? "oneshot"
            : s->mode == TRACE_BUFFERING_MODE_CIRCULAR ? "circular"
                                                       : "streaming",
            s->size >> 20,
            s->mode == TRACE_BUFFERING_MODE_STREAMING
                ? "every rolling segment was waiting for its save, or a record was larger than "
                  "one segment; raise FXTRACE_BUFFER_SIZE"
                : "raise FXTRACE_BUFFER_SIZE or use FXTRACE_BUFFERING_MODE=streaming");
  }
}

void file_session__finish(file_session_t* s) {
  if (getpid() != s->pid) { /* a fork child: the file is the parent's; just let go */
    free_session(s);
    return;
  }
  trace_engine_stop(0);
  pthread_mutex_lock(&s->lock);
  while (!s->stopped) pthread_cond_wait(&s->cond, &s->lock);
  pthread_mutex_unlock(&s->lock);
  complete_archive(s); /* nothing if a trigger did it */
  trace_engine_terminate();
  free_session(s);
}
