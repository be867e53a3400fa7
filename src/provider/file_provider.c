/* File mode: record straight into FXTRACE_OUTPUT with no trace manager.
 *
 * While tracing, the file is the trace buffer itself, mapped shared
 * (docs/buffer-layout.md): every committed record is in the page cache, so a
 * crash loses nothing committed. Streaming saves append each full rolling
 * buffer after the buffer (header.streamed_bytes says how much). At the end,
 * the archive (magic, provider info, streamed data, then the buffer's
 * records) goes to a temporary file beside it, which replaces the buffer
 * file only once complete: a failure (full disk) leaves the raw buffer, still
 * readable by `trace dump`, and says so. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "engine/buffer_scan.h"
#include "engine/categories.h"
#include "engine/engine.h"
#include "provider/provider_internal.h"

enum { DEFAULT_BUFFER_MIB = 4, MAX_BUFFER_MIB = 4096, STAGE_BYTES = 1 << 20 };

struct file_session {
  trace_handler_t handler; /* first: the engine hands it back to us */
  pid_t pid;               /* the process that records; a fork child never finishes */
  category_set_t categories;
  char* path;
  char name[101];
  int fd;
  uint8_t* map;
  size_t size;
  trace_buffering_mode_t mode;
  pthread_mutex_t lock;
  pthread_cond_t cond;
  bool stopped;
  bool terminated;
  int save_errno; /* first failed streaming save */
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

static void trace_stopped(trace_handler_t* h, int disposition) {
  (void)disposition;
  file_session_t* s = session_of(h);
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
  stage_t stage = {s->fd, (off_t)(s->size + streamed), malloc(STAGE_BYTES), 0, 0};
  if (!stage.data) stage.error = ENOMEM;
  if (stage.error == 0)
    buffer_scan__save(s->map, s->size, wrapped_count, durable_from, durable_data_end, stage_emit,
                      &stage, NULL);
  stage_flush(&stage);
  free(stage.data);
  if (stage.error == 0) {
    /* length first: a crash between the two stores then only repeats some
     * durable records (harmless redefinitions), never loses any */
    __atomic_store_n(&header->streamed_bytes, (uint64_t)stage.offset - s->size, __ATOMIC_RELEASE);
    __atomic_store_n(&header->saved_durable_end, durable_data_end, __ATOMIC_RELEASE);
  } else if (s->save_errno == 0) {
    s->save_errno = stage.error;
    fprintf(stderr, "fxtrace: cannot append a saved buffer to %s: %s; its records are lost\n",
            s->path, strerror(stage.error));
  }
  trace_engine_mark_buffer_saved(wrapped_count, durable_data_end);
}

static void send_alert(trace_handler_t* h, const char* name) {
  (void)h;
  (void)name;
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

static void free_session(file_session_t* s) {
  if (s->map && s->map != MAP_FAILED) munmap(s->map, s->size);
  if (s->fd >= 0) close(s->fd);
  categories__free(&s->categories);
  pthread_mutex_destroy(&s->lock);
  pthread_cond_destroy(&s->cond);
  free(s->path);
  free(s);
}

file_session_t* file_session__start(const char* path, const char* name) {
  file_session_t* s = calloc(1, sizeof(*s));
  if (!s) return NULL;
  s->fd = -1;
  s->pid = getpid();
  s->handler.ops = &ops;
  pthread_mutex_init(&s->lock, NULL);
  pthread_cond_init(&s->cond, NULL);
  snprintf(s->name, sizeof(s->name), "%s", name);
  s->path = strdup(path);
  if (!s->path || parse_mode(getenv("FXTRACE_BUFFERING_MODE"), &s->mode) ||
      parse_size(getenv("FXTRACE_BUFFER_SIZE"), &s->size) ||
      categories__parse(&s->categories, getenv("FXTRACE_CATEGORIES"))) {
    free_session(s);
    return NULL;
  }
  s->fd = open(path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  int err = s->fd < 0 ? errno : 0;
  if (!err && ftruncate(s->fd, (off_t)s->size) != 0) err = errno;
  /* Reserve the blocks now: a full disk must fail here, not as SIGBUS when
   * a record first touches a page. */
  if (!err) err = posix_fallocate(s->fd, 0, (off_t)s->size);
  if (!err) {
    s->map = mmap(NULL, s->size, PROT_READ | PROT_WRITE, MAP_SHARED, s->fd, 0);
    if (s->map == MAP_FAILED) err = errno;
  }
  if (err) {
    fprintf(stderr, "fxtrace: cannot record to %s: %s; not tracing\n", path, strerror(err));
    if (s->fd >= 0) unlink(path);
    free_session(s);
    return NULL;
  }
  int status = trace_engine__initialize_zeroed(&s->handler, s->mode, s->map, s->size);
  if (status == 0) status = trace_engine_start(TRACE_START_CLEAR_ENTIRE_BUFFER);
  if (status != 0) {
    fprintf(stderr, "fxtrace: cannot start the trace engine: %s; not tracing\n", strerror(-status));
    unlink(path);
    free_session(s);
    return NULL;
  }
  return s;
}

/* ---- finishing ---- */

/* The archive into a temporary file beside `path`, then renamed over it. */
static int write_archive(file_session_t* s, uint64_t dropped) {
  const trace_buffer_header_t* header = (const trace_buffer_header_t*)s->map;
  size_t length = strlen(s->path);
  char* tmp = malloc(length + 16);
  if (!tmp) return ENOMEM;
  snprintf(tmp, length + 16, "%s.tmp-XXXXXX", s->path);
  int fd = mkstemp(tmp);
  if (fd < 0) {
    int err = errno;
    free(tmp);
    return err;
  }
  stage_t stage = {fd, 0, malloc(STAGE_BYTES), 0, 0};
  if (!stage.data) stage.error = ENOMEM;
  if (!stage.error) buffer__emit_prologue(1, s->name, dropped, stage_emit, &stage);
  /* streamed saves, then what the buffer still holds; the prologue goes out
   * first, since the copy loop reuses the stage's block */
  stage_flush(&stage);
  uint64_t streamed = header->streamed_bytes;
  for (uint64_t done = 0; done < streamed && !stage.error;) {
    size_t n = streamed - done < STAGE_BYTES ? (size_t)(streamed - done) : STAGE_BYTES;
    ssize_t got = pread(s->fd, stage.data, n, (off_t)(s->size + done));
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
  stage_flush(&stage);
  free(stage.data);
  int err = stage.error;
  struct stat st;
  if (!err && fstat(s->fd, &st) == 0 && fchmod(fd, st.st_mode & 07777) != 0) err = errno;
  if (close(fd) != 0 && !err) err = errno;
  if (!err && rename(tmp, s->path) != 0) err = errno;
  if (err) unlink(tmp);
  free(tmp);
  return err;
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
  trace_engine_stats_t stats = {0};
  trace_engine_get_stats(&stats);
  int err = write_archive(s, stats.records_dropped);
  trace_engine_terminate();
  if (err) {
    fprintf(stderr,
            "fxtrace: cannot finish the archive %s: %s; the raw trace buffer is left in it "
            "(trace dump and trace convert recover its records)\n",
            s->path, strerror(err));
  } else if (stats.records_dropped > 0) {
    fprintf(stderr,
            "fxtrace: %llu trace records dropped because the buffer was full (%s mode, %zu MiB); "
            "raise FXTRACE_BUFFER_SIZE or use FXTRACE_BUFFERING_MODE=streaming\n",
            (unsigned long long)stats.records_dropped,
            s->mode == TRACE_BUFFERING_MODE_ONESHOT    ? "oneshot"
            : s->mode == TRACE_BUFFERING_MODE_CIRCULAR ? "circular"
                                                       : "streaming",
            s->size >> 20);
  }
  free_session(s);
}
