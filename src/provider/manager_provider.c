/* A provider connected to the trace manager (PROTOCOL.md §3, §6, §9; the
 * messages of src/protocol/wire.h).
 *
 * The library's own control thread polls the manager connection
 * (INITIALIZE, START, STOP, TERMINATE, GET_KNOWN_CATEGORIES,
 * REGISTER_RESULT), the FIFO of each trace it takes part in (BUFFER_SAVED,
 * peer closed) and an eventfd that trace_provider_destroy() and the exit
 * handler use to stop it.
 *
 * Sessions (wire.h, "Sessions"; docs/sessions.md): the provider takes part
 * in up to WIRE_MAX_SESSIONS traces at once, one provider_trace_t each,
 * with its own buffer, FIFO and categories, recording into engine session
 * `slot` (trace_engine_session_*). An INITIALIZE for a session id it
 * already has, or with every slot taken, is refused by closing that
 * INITIALIZE's FIFO. The engine's callbacks run on the engine's thread and send their
 * FIFO packets (STARTED, STOPPED, SAVE_BUFFER, ALERT) directly: 16-byte
 * writes on a SOCK_SEQPACKET socket, serialized by fifo_lock.
 *
 * Termination is done by the control thread only: trace_engine_terminate()
 * returns once trace_terminated has run, then the buffer is unmapped and the
 * FIFO closed (which the manager reads as "terminated").
 *
 * None of this is on the record path: the macros see only the engine. */
#include <errno.h>
#include <poll.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "engine/categories.h"
#include "engine/engine.h"
#include "protocol/latency_hint.h"
#include "protocol/manager_socket.h"
#include "protocol/wire.h"
#include "provider/buffer_touch.h"
#include "provider/provider_internal.h"

_Static_assert(WIRE_MAX_SESSIONS == TRACE_ENGINE_MAX_SESSIONS,
               "a provider's traces are the engine's sessions, one for one");

enum {
  REGISTER_TIMEOUT_MS = 5000, /* trace_provider_create_synchronously(): the answer */
  /* finish with events counted while a start was pending: how long the
   * buffer they are counted in may take to arrive */
  PENDING_HANDOVER_MS = 2000,
  /* the longest a start may stay pending (events on the engine's slow path,
   * counted) before the provider gives up on it */
  PENDING_MAX_MS = 10000,
  /* FXTRACE_REGISTER_TIMEOUT: how long a provider created while a trace runs
   * waits to be started (docs/provider.md) */
  REGISTER_WAIT_DEFAULT_MS = 3000,
  REGISTER_WAIT_MAX_MS = 600000,
  FINISH_TIMEOUT_MS = 5000, /* destroy: the engine letting go of the buffer */
  FIFO_SEND_TIMEOUT_MS = 2000,
  SAVE_WAIT_TIMEOUT_MS = 5000, /* exit: the manager acknowledging a pending save */
  /* destroy's join covers the exit path's own bounds (the save, then the
   * stop) plus a margin, so it never gives up while they still run */
  JOIN_TIMEOUT_MS = SAVE_WAIT_TIMEOUT_MS + FINISH_TIMEOUT_MS + 1000,
};

/* One trace this provider takes part in: engine session `slot`. Touched by
 * the control thread, and by the engine callbacks (fifo under fifo_lock,
 * categories under categories_lock, the counters under the connection's
 * lock). */
typedef struct provider_trace {
  trace_handler_t handler; /* first: the engine hands it back to us */
  manager_session_t* conn;
  unsigned slot;          /* the engine session */
  uint64_t stopped_count; /* trace_stopped calls (STOPPED sent), under conn->lock */
  /* streaming: SAVE_BUFFERs were sent whose BUFFER_SAVED (cumulative) has not
   * been read yet, under conn->lock: the switch count + 1 of the last one
   * sent (by the engine thread) and of the last one acknowledged (control
   * thread) */
  uint64_t save_sent, save_acked;
  pthread_mutex_t fifo_lock;
  int fifo;            /* -1 when the slot is free */
  uint32_t session_id; /* the manager's session of this trace (wire.h, "Sessions") */
  bool engine_initialized;
  uint8_t* map;
  size_t size;
  pthread_rwlock_t categories_lock;
  category_set_t base;       /* from INITIALIZE; empty = all */
  category_set_t categories; /* base + START's additional categories */
} provider_trace_t;

struct manager_session {
  trace_provider_t* provider;
  pid_t pid; /* the process that owns the connection */
  int sock;  /* manager connection; -1 once lost */
  int wake_fd;
  pthread_t thread;
  bool thread_started;
  uint8_t* buffer;  /* the control thread's receive buffer (WIRE_MAX_MESSAGE) */
  wire_writer_t* w; /* and its replies; both here, so a fork child frees them */

  pthread_mutex_t lock; /* registered, quit */
  pthread_cond_t cond;
  bool registered; /* REGISTER_RESULT (or failure) seen */
  int register_status;
  bool register_started;
  /* the control thread has handled what follows a registration that found a
   * trace running: START (started or not), a STOP or TERMINATE first, or
   * the end of the connection. Ends the registration's wait. */
  bool start_settled;
  bool buffer_ready;                /* INITIALIZE handed the buffer over (under lock) */
  struct timespec pending_deadline; /* when a pending start is given up (under lock) */
  bool quit;
  bool lost; /* the control thread ended without being asked: the manager went away */

  /* the traces, slot i recording into engine session i */
  provider_trace_t traces[WIRE_MAX_SESSIONS];
};

/* The session whose descriptors a fork child must close (one per process). */
static manager_session_t* volatile forkable;
static pthread_once_t atfork_once = PTHREAD_ONCE_INIT;

static void close_in_child(void) {
  manager_session_t* s = forkable;
  if (!s) return;
  /* The child must neither use the parent's connection nor keep it open: the
   * manager watches it (and the FIFO) to learn that the provider is gone.
   * Only close(): locks may be held by threads that do not exist here. */
  if (s->sock >= 0) close(s->sock);
  for (unsigned i = 0; i < WIRE_MAX_SESSIONS; i++) {
    if (s->traces[i].fifo >= 0) close(s->traces[i].fifo);
    s->traces[i].fifo = -1;
  }
  if (s->wake_fd >= 0) close(s->wake_fd);
  s->sock = s->wake_fd = -1;
}

static void register_atfork(void) { pthread_atfork(NULL, NULL, close_in_child); }

/* ---- FIFO ---- */

/* With fifo_lock held and the FIFO open. A closed or stuck FIFO: the
 * control thread sees the close and ends the trace; nothing else to do. */
static void fifo_send_locked(provider_trace_t* s, const fifo_packet_t* packet) {
  ssize_t n;
  do n = send(s->fifo, packet, sizeof(*packet), MSG_NOSIGNAL);
  while (n < 0 && errno == EINTR);
}

static void fifo_send(provider_trace_t* s, const fifo_packet_t* packet) {
  pthread_mutex_lock(&s->fifo_lock);
  if (s->fifo >= 0) fifo_send_locked(s, packet);
  pthread_mutex_unlock(&s->fifo_lock);
}

static void fifo_send_request(provider_trace_t* s, uint16_t request, uint32_t data32,
                              uint64_t data64) {
  fifo_packet_t packet = {request, 0, data32, data64};
  fifo_send(s, &packet);
}

/* ---- engine callbacks (the engine's thread) ---- */

static provider_trace_t* session_of(trace_handler_t* h) { return (provider_trace_t*)h; }

static bool is_category_enabled(trace_handler_t* h, const char* category) {
  provider_trace_t* s = session_of(h);
  pthread_rwlock_rdlock(&s->categories_lock);
  bool enabled = categories__match(&s->categories, category);
  pthread_rwlock_unlock(&s->categories_lock);
  return enabled;
}

static void trace_started(trace_handler_t* h) {
  fifo_send_request(session_of(h), FIFO_STARTED, FIFO_PROTOCOL_VERSION, 0);
}

static void trace_stopped(trace_handler_t* h, int disposition) {
  (void)disposition;
  provider_trace_t* t = session_of(h);
  fifo_send_request(t, FIFO_STOPPED, 0, 0);
  pthread_mutex_lock(&t->conn->lock);
  t->stopped_count++;
  pthread_cond_broadcast(&t->conn->cond);
  pthread_mutex_unlock(&t->conn->lock);
}

static void trace_terminated(trace_handler_t* h) {
  (void)h; /* the control thread, back from trace_engine_terminate(), cleans up */
}

static void apply_buffer_saved(provider_trace_t* t, const fifo_packet_t* packet);

static void notify_buffer_full(trace_handler_t* h, uint32_t wrapped_count,
                               uint64_t durable_data_end) {
  provider_trace_t* t = session_of(h);
  /* pending before the packet leaves, so the control thread never reads the
   * acknowledgement of a save it does not know about */
  pthread_mutex_lock(&t->conn->lock);
  t->save_sent = (uint64_t)wrapped_count + 1;
  pthread_mutex_unlock(&t->conn->lock);
  fifo_packet_t request = {FIFO_SAVE_BUFFER, 0, wrapped_count, durable_data_end};
  fifo_packet_t saved[8];
  size_t n_saved = 0;
  pthread_mutex_lock(&t->fifo_lock);
  if (t->fifo >= 0) {
    fifo_send_locked(t, &request);
    /* Acknowledgements of earlier saves that are already here are applied
     * now, on this thread, which every switch wakes: the control thread
     * reads them too, but waiting for it to be scheduled would add a third
     * wake-up to each save's round trip (the writers drop once every other
     * segment waits). Only BUFFER_SAVED packets are taken (peeked first):
     * anything else, or the close, stays for the control thread. */
    while (n_saved < sizeof(saved) / sizeof(saved[0])) {
      fifo_packet_t p;
      ssize_t n = recv(t->fifo, &p, sizeof(p), MSG_PEEK | MSG_DONTWAIT);
      if (n != (ssize_t)sizeof(p) || p.request != FIFO_BUFFER_SAVED || p.data16 != 0) break;
      if (recv(t->fifo, &p, sizeof(p), MSG_DONTWAIT) != (ssize_t)sizeof(p)) break;
      saved[n_saved++] = p;
    }
  }
  pthread_mutex_unlock(&t->fifo_lock);
  for (size_t i = 0; i < n_saved; i++) apply_buffer_saved(t, &saved[i]);
}

static void send_alert(trace_handler_t* h, const char* name) {
  if (!name) return;
  size_t n = strlen(name);
  if (n == 0 || n > 14) return;
  uint8_t raw[16] = {0};
  uint16_t request = FIFO_ALERT;
  memcpy(raw, &request, 2);
  memcpy(raw + 2, name, n); /* bytes 2..15, zero-padded (PROTOCOL.md §6.2) */
  fifo_packet_t packet;
  memcpy(&packet, raw, sizeof(packet));
  fifo_send(session_of(h), &packet);
}

static const trace_handler_ops_t ops = {is_category_enabled, trace_started,      trace_stopped,
                                        trace_terminated,    notify_buffer_full, send_alert};

/* ---- the trace (control thread) ---- */

static void close_trace_resources(provider_trace_t* s) {
  if (s->map) munmap(s->map, s->size);
  s->map = NULL;
  s->size = 0;
  pthread_mutex_lock(&s->fifo_lock);
  if (s->fifo >= 0) close(s->fifo);
  s->fifo = -1;
  pthread_mutex_unlock(&s->fifo_lock);
  pthread_rwlock_wrlock(&s->categories_lock);
  categories__free(&s->categories);
  categories__free(&s->base);
  pthread_rwlock_unlock(&s->categories_lock);
}

/* A running trace ending here (destroy, exit, a lost manager): stop the engine
 * and wait, bounded, for trace_stopped, which sends STOPPED — so the manager
 * sees an orderly stop before the FIFO closes, not a death. */
static void stop_engine(provider_trace_t* t) {
  manager_session_t* s = t->conn;
  pthread_mutex_lock(&s->lock);
  uint64_t before = t->stopped_count;
  pthread_mutex_unlock(&s->lock);
  /* trace_stopped counts after the state becomes STOPPED: a state read after
   * `before` that is not STOPPED means the count still has to move */
  if (trace_engine_session_state(t->slot) == TRACE_STOPPED) return;
  trace_engine_session_stop(t->slot, 0);
  struct timespec deadline;
  clock_gettime(CLOCK_REALTIME, &deadline);
  deadline.tv_sec += FINISH_TIMEOUT_MS / 1000;
  pthread_mutex_lock(&s->lock);
  bool late = false;
  while (t->stopped_count == before && !late)
    late = pthread_cond_timedwait(&s->cond, &s->lock, &deadline) == ETIMEDOUT;
  pthread_mutex_unlock(&s->lock);
  if (late)
    fprintf(stderr,
            "fxtrace: the trace engine did not stop within %d ms (a writer is stuck "
            "in a record)\n",
            FINISH_TIMEOUT_MS);
}

/* One FIFO packet, non-blocking. 1: it was BUFFER_SAVED (applied); 0:
 * nothing there; -1: the FIFO closed or carried something else (PROTOCOL.md
 * §3, §6.3: the trace must end). */
static int read_fifo(provider_trace_t* t) {
  fifo_packet_t packet;
  ssize_t n;
  /* under fifo_lock: the engine thread takes acknowledgements too
   * (notify_buffer_full) */
  pthread_mutex_lock(&t->fifo_lock);
  do n = recv(t->fifo, &packet, sizeof(packet), MSG_DONTWAIT);
  while (n < 0 && errno == EINTR);
  int error = n < 0 ? errno : 0;
  pthread_mutex_unlock(&t->fifo_lock);
  if (n < 0 && error == EAGAIN) return 0;
  if (n == (ssize_t)sizeof(packet) && packet.request == FIFO_BUFFER_SAVED && packet.data16 == 0) {
    apply_buffer_saved(t, &packet);
    return 1;
  }
  return -1;
}

/* BUFFER_SAVED, read by either thread: cumulative, so an older one applied
 * after a newer one changes nothing. */
static void apply_buffer_saved(provider_trace_t* t, const fifo_packet_t* packet) {
  pthread_mutex_lock(&t->conn->lock);
  if ((uint64_t)packet->data32 + 1 > t->save_acked) t->save_acked = (uint64_t)packet->data32 + 1;
  pthread_mutex_unlock(&t->conn->lock);
  /* -EBUSY (no trace) or a stale reply: ignored, as the engine is stopped */
  trace_engine_session_mark_buffer_saved(t->slot, packet->data32, packet->data64);
}

/* The exit path, streaming: the saves still in flight are acknowledged before
 * the stop (bounded by SAVE_WAIT_TIMEOUT_MS). Until then the control thread
 * is the only reader of the FIFO, and it stops reading once it waits for the
 * stop: the manager's reply to the last SAVE_BUFFER would sit unread while
 * the trace ends, and a manager whose output lags (it holds acknowledgements
 * back then) would see STOPPED with a save of its own outstanding. Waiting
 * here, while reading the FIFO, keeps the order the manager expects:
 * SAVE_BUFFER, BUFFER_SAVED, STOPPED, close. */
static void wait_pending_save(provider_trace_t* s) {
  struct timespec start, now;
  clock_gettime(CLOCK_MONOTONIC, &start);
  for (;;) {
    pthread_mutex_lock(&s->conn->lock);
    bool pending = s->save_acked != s->save_sent;
    pthread_mutex_unlock(&s->conn->lock);
    if (!pending || s->fifo < 0) return;
    clock_gettime(CLOCK_MONOTONIC, &now);
    long elapsed =
        (long)(now.tv_sec - start.tv_sec) * 1000 + (long)(now.tv_nsec - start.tv_nsec) / 1000000;
    if (elapsed >= SAVE_WAIT_TIMEOUT_MS) return; /* the stop goes ahead anyway */
    /* in short steps: the engine thread may take the answer meanwhile
     * (notify_buffer_full), and then nothing wakes this poll */
    struct pollfd pfd = {s->fifo, POLLIN, 0};
    long step = SAVE_WAIT_TIMEOUT_MS - elapsed < 10 ? SAVE_WAIT_TIMEOUT_MS - elapsed : 10;
    int ready = poll(&pfd, 1, (int)step);
    if (ready < 0 && errno != EINTR) return;
    if (ready > 0 && read_fifo(s) < 0) return; /* closed: end_trace follows */
  }
}

/* Stop if needed, terminate, unmap the buffer and close the FIFO. `exiting`:
 * the program ends its provider (destroy, exit), not the manager. */
static void end_trace(provider_trace_t* s, bool exiting) {
  /* while the buffer is still there for the count (pending.c: session 0's) */
  if (s->slot == 0) engine__end_pending(true);
  if (s->engine_initialized) {
    if (exiting && trace_engine_session_state(s->slot) == TRACE_STARTED) wait_pending_save(s);
    stop_engine(s);
    /* returns after trace_stopped + trace_terminated */
    trace_engine_session_terminate(s->slot);
    s->engine_initialized = false;
  }
  close_trace_resources(s);
}

/* Every trace ends (destroy, exit, a lost manager). */
static void end_traces(manager_session_t* s, bool exiting) {
  engine__end_pending(true);
  for (unsigned i = 0; i < WIRE_MAX_SESSIONS; i++)
    if (s->traces[i].fifo >= 0 || s->traces[i].engine_initialized)
      end_trace(&s->traces[i], exiting);
}

/* The trace of session `id`, or NULL. */
static provider_trace_t* trace_of_session(manager_session_t* s, uint32_t id) {
  for (unsigned i = 0; i < WIRE_MAX_SESSIONS; i++)
    if (s->traces[i].fifo >= 0 && s->traces[i].session_id == id) return &s->traces[i];
  return NULL;
}

static bool read_categories(wire_reader_t* r, category_set_t* set) {
  uint16_t count = wire__get_u16(r);
  if (r->error || count > WIRE_MAX_CATEGORIES) return false;
  char name[WIRE_MAX_NAME + 1];
  for (uint16_t i = 0; i < count; i++) {
    wire__get_str(r, name, sizeof(name), WIRE_MAX_NAME);
    if (r->error) return false;
    if (categories__add(set, name, strlen(name)) != 0) return false;
  }
  return true;
}

/* false: malformed (the connection is dropped). */
static bool on_initialize(manager_session_t* conn, wire_reader_t* r, int* fds, size_t fd_count) {
  uint32_t session_id = wire__get_u32(r);
  uint8_t mode = wire__get_u8(r);
  category_set_t categories = {0};
  bool ok = read_categories(r, &categories) && wire__done(r) && fd_count == 2 &&
            mode <= TRACE_BUFFERING_MODE_STREAMING;
  provider_trace_t* s = NULL;
  if (ok && trace_of_session(conn, session_id) == NULL)
    for (unsigned i = 0; i < WIRE_MAX_SESSIONS && !s; i++)
      if (conn->traces[i].fifo < 0 && !conn->traces[i].engine_initialized) s = &conn->traces[i];
  if (!ok || s == NULL) {
    /* malformed, a second INITIALIZE of a session, or one beyond
     * WIRE_MAX_SESSIONS: ignored, its FIFO closed (which tells the manager) */
    if (ok)
      fprintf(stderr, "fxtrace: the trace manager's session %u refused: %s\n", session_id,
              trace_of_session(conn, session_id) ? "this process takes part in it already"
                                                 : "this process takes part in the most "
                                                   "sessions it can at once");
    categories__free(&categories);
    for (size_t i = 0; i < fd_count; i++) close(fds[i]);
    return ok;
  }
  int buffer_fd = fds[0];
  struct stat st;
  void* map = MAP_FAILED;
  /* MAP_POPULATE: the pages are allocated and mapped writable now, at
   * Initialize, so that no record between start and stop takes a page fault
   * (a shmem page's first touch costs microseconds, a thousand events). */
  if (fstat(buffer_fd, &st) == 0 && st.st_size > 0 && (uint64_t)st.st_size <= (1ull << 32))
    map = mmap(NULL, (size_t)st.st_size, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE,
               buffer_fd, 0);
  close(buffer_fd); /* the mapping keeps the memfd */
  struct timeval timeout = {FIFO_SEND_TIMEOUT_MS / 1000, (FIFO_SEND_TIMEOUT_MS % 1000) * 1000};
  setsockopt(fds[1], SOL_SOCKET, SO_SNDTIMEO, &timeout, sizeof(timeout));
  pthread_mutex_lock(&s->fifo_lock);
  s->fifo = fds[1];
  s->session_id = session_id;
  pthread_mutex_unlock(&s->fifo_lock);
  pthread_rwlock_wrlock(&s->categories_lock);
  s->base = categories;
  s->categories = (category_set_t){0};
  for (size_t i = 0; i < categories.count; i++)
    categories__add(&s->categories, categories.patterns[i], strlen(categories.patterns[i]));
  pthread_rwlock_unlock(&s->categories_lock);
  if (map == MAP_FAILED) {
    fprintf(stderr, "fxtrace: cannot map the trace buffer from the trace manager: %s\n",
            strerror(errno));
    close_trace_resources(s); /* the closed FIFO tells the manager */
    return true;
  }
  /* Written once before any record is (buffer_touch.h): at most 64 MiB, the
   * manager's largest buffer, before this provider reports started. */
  provider__touch_pages(map, 0, (size_t)st.st_size, NULL);
  s->map = map;
  s->size = (size_t)st.st_size;
  /* a fresh memfd is zero-filled: pages are touched only as records come */
  int status = trace_engine__session_initialize_zeroed(s->slot, &s->handler,
                                                       (trace_buffering_mode_t)mode, map, s->size);
  if (status != 0) {
    fprintf(stderr, "fxtrace: cannot initialize the trace engine: %s\n", strerror(-status));
    close_trace_resources(s);
    return true;
  }
  s->engine_initialized = true;
  pthread_mutex_lock(&conn->lock);
  conn->buffer_ready = true; /* for a finish waiting to count pending events (finish) */
  pthread_cond_broadcast(&conn->cond);
  pthread_mutex_unlock(&conn->lock);
  return true;
}

static bool on_start(manager_session_t* conn, wire_reader_t* r) {
  uint32_t session_id = wire__get_u32(r);
  uint8_t disposition = wire__get_u8(r);
  category_set_t additional = {0};
  bool ok = read_categories(r, &additional) && wire__done(r);
  provider_trace_t* s = ok ? trace_of_session(conn, session_id) : NULL;
  if (s && s->engine_initialized && trace_engine_session_state(s->slot) == TRACE_STOPPED &&
      disposition >= TRACE_START_CLEAR_ENTIRE_BUFFER && disposition <= TRACE_START_RETAIN_BUFFER) {
    /* Writers consult the set only while started: rebuilding it now is
     * safe, and the engine forgets cached answers at start. An empty base
     * already enables everything. */
    pthread_rwlock_wrlock(&s->categories_lock);
    if (s->base.count > 0) {
      categories__free(&s->categories);
      for (size_t i = 0; i < s->base.count; i++)
        categories__add(&s->categories, s->base.patterns[i], strlen(s->base.patterns[i]));
      for (size_t i = 0; i < additional.count; i++)
        categories__add(&s->categories, additional.patterns[i], strlen(additional.patterns[i]));
    }
    pthread_rwlock_unlock(&s->categories_lock);
    if (disposition != TRACE_START_RETAIN_BUFFER) { /* switch counts start over */
      pthread_mutex_lock(&conn->lock);
      s->save_sent = s->save_acked = 0;
      pthread_mutex_unlock(&conn->lock);
    }
    int status = trace_engine_session_start(s->slot, (trace_start_mode_t)disposition);
    if (status != 0 && status != -EBUSY) /* -EBUSY: already started, ignored */
      fprintf(stderr, "fxtrace: cannot start the trace engine: %s\n", strerror(-status));
  }
  categories__free(&additional);
  return ok;
}

static void reply_known_categories(manager_session_t* s, uint32_t request_id, wire_writer_t* w) {
  trace_provider_t* p = s->provider;
  provider__add_tracepoint_categories(p); /* TRACE_EVENT() systems, dlopen'ed ones too */
  wire__begin(w, MSG_KNOWN_CATEGORIES, request_id);
  pthread_mutex_lock(&p->known_lock);
  wire__put_u16(w, (uint16_t)p->known_count);
  for (size_t i = 0; i < p->known_count; i++) {
    wire__put_cstr(w, p->known[i].name);
    wire__put_cstr(w, p->known[i].description);
  }
  pthread_mutex_unlock(&p->known_lock);
  if (wire__end(w)) wire__send(s->sock, w, NULL, 0);
}

static void settle_start(manager_session_t* s) {
  pthread_mutex_lock(&s->lock);
  engine__end_pending(true); /* the start came (and took the count) or will not */
  s->start_settled = true;
  pthread_cond_broadcast(&s->cond);
  pthread_mutex_unlock(&s->lock);
}

static void set_registered(manager_session_t* s, int status, bool started) {
  pthread_mutex_lock(&s->lock);
  if (!s->registered) {
    s->registered = true;
    s->register_status = status;
    s->register_started = started;
    if (!started) engine__end_pending(false); /* no trace to wait for */
    pthread_cond_broadcast(&s->cond);
  }
  pthread_mutex_unlock(&s->lock);
}

/* One message from the manager. false: the connection is unusable. */
static bool on_message(manager_session_t* s, uint8_t* buffer, wire_writer_t* w) {
  int fds[WIRE_MAX_FDS];
  size_t fd_count = 0;
  ssize_t n = wire__recv(s->sock, buffer, fds, &fd_count);
  if (n == -EAGAIN || n == -EMSGSIZE) return true; /* spurious; an oversized message is dropped */
  if (n <= 0) return false;
  wire_reader_t r;
  if (wire__open(&r, buffer, (size_t)n) != NULL) {
    for (size_t i = 0; i < fd_count; i++) close(fds[i]);
    return false;
  }
  if (r.type == MSG_INITIALIZE) return on_initialize(s, &r, fds, fd_count);
  for (size_t i = 0; i < fd_count; i++) close(fds[i]); /* only INITIALIZE carries any */
  switch (r.type) {
    case MSG_REGISTER_RESULT: {
      int32_t status = (int32_t)wire__get_u32(&r);
      uint8_t started = wire__get_u8(&r);
      if (!wire__done(&r)) return false;
      set_registered(s, status, started != 0);
      return true;
    }
    case MSG_ERROR:
      set_registered(s, -EPROTO, false); /* e.g. a refused registration */
      return true;
    case MSG_START: {
      bool ok = on_start(s, &r);
      settle_start(s); /* after trace_engine_start: the engine records now */
      return ok;
    }
    case MSG_STOP: {
      uint32_t session_id = wire__get_u32(&r);
      if (!wire__done(&r)) return false;
      provider_trace_t* t = trace_of_session(s, session_id);
      if (t == NULL) return true; /* not a trace of this provider's */
      /* nothing if not started */
      if (t->engine_initialized) trace_engine_session_stop(t->slot, 0);
      settle_start(s);
      return true;
    }
    case MSG_TERMINATE: {
      uint32_t session_id = wire__get_u32(&r);
      if (!wire__done(&r)) return false;
      provider_trace_t* t = trace_of_session(s, session_id);
      if (t == NULL) return true; /* not a trace of this provider's */
      end_trace(t, false);
      settle_start(s);
      return true;
    }
    case MSG_GET_KNOWN_CATEGORIES:
      if (!wire__done(&r)) return false;
      reply_known_categories(s, r.request_id, w);
      return true;
    default:
      return true; /* a newer manager's message: ignored */
  }
}

/* A FIFO packet from the manager. */
static void on_fifo(provider_trace_t* t) {
  /* peer closed without STOP (the manager died), or a bad packet: the trace
   * ends here (PROTOCOL.md §3, §6.3) */
  if (read_fifo(t) < 0) end_trace(t, false);
}

/* A start pending for PENDING_MAX_MS (the manager answered "started" but
 * sent no START, or never answered) is given up: the events counted so far
 * go into the buffer's header if there is one, and call sites cache their
 * answers again. true: given up now. */
static bool give_up_pending(manager_session_t* s) {
  pthread_mutex_lock(&s->lock);
  struct timespec now;
  clock_gettime(CLOCK_REALTIME, &now);
  bool expired =
      s->pending_deadline.tv_sec != 0 &&
      (now.tv_sec > s->pending_deadline.tv_sec ||
       (now.tv_sec == s->pending_deadline.tv_sec && now.tv_nsec >= s->pending_deadline.tv_nsec));
  pthread_mutex_unlock(&s->lock);
  if (!expired) return false;
  fprintf(stderr,
          "fxtrace: the trace manager has not started this provider in %d s; events are no "
          "longer counted until it does\n",
          PENDING_MAX_MS / 1000);
  engine__end_pending(true);
  return true;
}

static void* control_main(void* arg) {
  latency_hint__short_slice();
  manager_session_t* s = arg;
  uint8_t* buffer = s->buffer;
  wire_writer_t* w = s->w;
  bool connected = true;
  while (connected) {
    /* the wake fd, the connection, then each trace's FIFO (traced[i]) */
    struct pollfd pfd[2 + WIRE_MAX_SESSIONS] = {{s->wake_fd, POLLIN, 0}, {s->sock, POLLIN, 0}};
    provider_trace_t* traced[WIRE_MAX_SESSIONS];
    nfds_t count = 2;
    for (unsigned i = 0; i < WIRE_MAX_SESSIONS; i++)
      if (s->traces[i].fifo >= 0) {
        traced[count - 2] = &s->traces[i];
        pfd[count++] = (struct pollfd){s->traces[i].fifo, POLLIN, 0};
      }
    /* a pending start (pending.c) is bounded: checked once a second */
    bool pending = engine__pending_active();
    int ready = poll(pfd, count, pending ? 1000 : -1);
    if (ready < 0) {
      if (errno == EINTR) continue;
      break;
    }
    if (pending && give_up_pending(s)) continue;
    if (pfd[0].revents) {
      uint64_t value;
      if (read(s->wake_fd, &value, sizeof(value)) < 0) { /* EAGAIN: spurious */
      }
      pthread_mutex_lock(&s->lock);
      bool quit = s->quit;
      pthread_mutex_unlock(&s->lock);
      if (quit) break;
    }
    if (pfd[1].revents && !on_message(s, buffer, w)) connected = false;
    /* a trace the message just ended is skipped (its FIFO is -1 now) */
    for (nfds_t i = 2; connected && i < count; i++)
      if (pfd[i].revents && traced[i - 2]->fifo == pfd[i].fd) on_fifo(traced[i - 2]);
  }
  /* destroy, exit or a lost connection: end any trace and become inert */
  pthread_mutex_lock(&s->lock);
  bool exiting = s->quit;
  s->lost = !exiting;
  pthread_mutex_unlock(&s->lock);
  end_traces(s, exiting);
  set_registered(s, -ECONNRESET, false);
  settle_start(s);
  return NULL;
}

/* ---- start / finish ---- */

static void free_session(manager_session_t* s) {
  if (s->sock >= 0) close(s->sock);
  if (s->wake_fd >= 0) close(s->wake_fd);
  pthread_mutex_destroy(&s->lock);
  pthread_cond_destroy(&s->cond);
  for (unsigned i = 0; i < WIRE_MAX_SESSIONS; i++) {
    pthread_mutex_destroy(&s->traces[i].fifo_lock);
    pthread_rwlock_destroy(&s->traces[i].categories_lock);
  }
  free(s->buffer);
  free(s->w);
  free(s);
}

static int send_register(manager_session_t* s, bool synchronous) {
  wire_writer_t* w = malloc(sizeof(*w));
  if (!w) return -ENOMEM;
  wire__begin(w, MSG_REGISTER_PROVIDER, 1);
  wire__put_u64(w, (uint64_t)s->pid);
  wire__put_cstr(w, s->provider->name);
  wire__put_u8(w, synchronous ? 1 : 0);
  int status = wire__end(w) ? wire__send(s->sock, w, NULL, 0) : -EINVAL;
  free(w);
  return status;
}

/* FXTRACE_REGISTER_TIMEOUT in milliseconds (0 .. REGISTER_WAIT_MAX_MS; 0 =
 * do not wait), else the default, with a message for a bad value. */
static long register_wait_ms(void) {
  const char* text = getenv("FXTRACE_REGISTER_TIMEOUT");
  if (!text || !text[0]) return REGISTER_WAIT_DEFAULT_MS;
  char* end;
  errno = 0;
  long value = strtol(text, &end, 10);
  if (errno || *end || text[0] < '0' || text[0] > '9' || value > REGISTER_WAIT_MAX_MS) {
    fprintf(stderr,
            "fxtrace: FXTRACE_REGISTER_TIMEOUT=%s is not a number of milliseconds from 0 to %d; "
            "using %d\n",
            text, REGISTER_WAIT_MAX_MS, REGISTER_WAIT_DEFAULT_MS);
    return REGISTER_WAIT_DEFAULT_MS;
  }
  return value;
}

static struct timespec deadline_after_ms(long ms) {
  struct timespec t;
  clock_gettime(CLOCK_REALTIME, &t);
  t.tv_sec += ms / 1000;
  t.tv_nsec += (ms % 1000) * 1000000;
  if (t.tv_nsec >= 1000000000) {
    t.tv_sec++;
    t.tv_nsec -= 1000000000;
  }
  return t;
}

/* Waits, until `deadline`, for REGISTER_RESULT. Under s->lock. */
static void wait_registered(manager_session_t* s, const struct timespec* deadline) {
  while (!s->registered)
    if (pthread_cond_timedwait(&s->cond, &s->lock, deadline) == ETIMEDOUT) break;
}

/* Says why this process does not trace, once: a program may create and
 * destroy providers, or fork, many times. */
static void say_not_tracing(const char* fmt, ...) __attribute__((format(printf, 1, 2)));
static void say_not_tracing(const char* fmt, ...) {
  static atomic_bool said;
  if (atomic_exchange(&said, true)) return;
  va_list ap;
  va_start(ap, fmt);
  fputs("fxtrace: ", stderr);
  vfprintf(stderr, fmt, ap);
  fputs("; not tracing\n", stderr);
  va_end(ap);
}

/* The manager's socket by the rule of protocol/manager_socket.h, connected
 * and checked, or -1. No manager is no message: the program runs untraced. */
static int connect_manager(struct manager_socket* found) {
  struct manager_socket where;
  if (manager_socket__locate(&where, false, 0, (gid_t)-1) != 0) {
    say_not_tracing("the trace manager's socket path is too long (FXTRACE_SOCKET)");
    return -1;
  }
  if (where.kind == MANAGER_SOCKET_UNSAFE) {
    say_not_tracing("not looking for the trace manager in %s: %s; %s", where.directory,
                    where.problem, MANAGER_SOCKET_ADVICE);
    return -1;
  }
  uid_t peer = 0;
  int sock = where.absent ? -ENOENT : wire__connect(where.connect_path, WIRE_ROLE_PROVIDER, &peer);
  manager_socket__release(&where);
  if (sock == -EPERM) {
    char who[160];
    manager_socket__describe_user(peer, who, sizeof(who));
    say_not_tracing("the trace manager at %s runs as %s, neither as this user nor as root",
                    where.path, who);
  } else if (sock < 0 && sock != -ENOENT && sock != -ECONNREFUSED && sock != -ENOTDIR) {
    say_not_tracing("cannot connect to the trace manager at %s: %s", where.path, strerror(-sock));
  }
  *found = where;
  return sock < 0 ? -1 : sock;
}

manager_session_t* manager_session__start(trace_provider_t* provider, bool synchronous,
                                          bool* out_started) {
  if (out_started) *out_started = false;
  long wait_ms = register_wait_ms();
  struct manager_socket where;
  int sock = connect_manager(&where);
  if (sock < 0) return NULL;
  /* room for the largest message (KNOWN_CATEGORIES): a datagram may not
   * exceed the send buffer (the kernel doubles this value, capped) */
  int sndbuf = WIRE_MAX_MESSAGE;
  setsockopt(sock, SOL_SOCKET, SO_SNDBUF, &sndbuf, sizeof(sndbuf));
  manager_session_t* s = calloc(1, sizeof(*s));
  if (!s) {
    close(sock);
    return NULL;
  }
  s->provider = provider;
  s->pid = getpid();
  s->sock = sock;
  pthread_mutex_init(&s->lock, NULL);
  pthread_cond_init(&s->cond, NULL);
  /* writers first: while a start is pending (engine pending.c) every event
   * asks for its category, and a stream of readers must not keep INITIALIZE
   * from ever taking the lock */
  pthread_rwlockattr_t rwattr;
  pthread_rwlockattr_init(&rwattr);
  pthread_rwlockattr_setkind_np(&rwattr, PTHREAD_RWLOCK_PREFER_WRITER_NONRECURSIVE_NP);
  for (unsigned i = 0; i < WIRE_MAX_SESSIONS; i++) {
    provider_trace_t* t = &s->traces[i];
    t->handler.ops = &ops;
    t->conn = s;
    t->slot = i;
    t->fifo = -1;
    pthread_mutex_init(&t->fifo_lock, NULL);
    pthread_rwlock_init(&t->categories_lock, &rwattr);
  }
  pthread_rwlockattr_destroy(&rwattr);
  s->wake_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
  s->buffer = malloc(WIRE_MAX_MESSAGE);
  s->w = malloc(sizeof(*s->w));
  int status = s->wake_fd < 0        ? -errno
               : !s->buffer || !s->w ? -ENOMEM
                                     : send_register(s, synchronous || wait_ms > 0);
  if (status == 0) {
    pthread_once(&atfork_once, register_atfork);
    forkable = s;
    status = -pthread_create(&s->thread, NULL, control_main, s);
    s->thread_started = status == 0;
    if (s->thread_started) pthread_setname_np(s->thread, "fxtrace-control");
  }
  if (status != 0) {
    fprintf(stderr, "fxtrace: cannot register with the trace manager at %s: %s; not tracing\n",
            where.path, strerror(-status));
    forkable = NULL;
    free_session(s);
    return NULL;
  }
  /* The registration's answer says whether a trace runs; if one does, the
   * manager initializes and starts this provider right after it (INITIALIZE
   * and START follow REGISTER_RESULT on the connection), and the first
   * record after this call must be in it: wait (at most wait_ms in all) for
   * the control thread to have handled that START. No trace: no wait beyond
   * the answer. The explicit synchronous call keeps its own bound on the
   * answer (a manager that does not answer makes it inert). */
  struct timespec wait_deadline = deadline_after_ms(wait_ms);
  if (synchronous || wait_ms > 0) {
    struct timespec answer_deadline =
        synchronous ? deadline_after_ms(REGISTER_TIMEOUT_MS) : wait_deadline;
    pthread_mutex_lock(&s->lock);
    wait_registered(s, &answer_deadline);
    bool registered = s->registered;
    bool ok = registered && s->register_status == 0;
    bool started = ok && s->register_started;
    bool late = false;
    if (started && wait_ms > 0) {
      while (!s->start_settled && !late)
        late = pthread_cond_timedwait(&s->cond, &s->lock, &wait_deadline) == ETIMEDOUT;
    }
    /* Past the wait, a start that may still come: the events until then
     * are counted as dropped in it rather than silently absent (pending.c).
     * Under s->lock, so that the control thread's settle or "no trace"
     * ends it only after it began. */
    bool awaited = s->registered ? s->register_status == 0 && s->register_started : !synchronous;
    if (awaited && !s->start_settled) {
      s->pending_deadline = deadline_after_ms(PENDING_MAX_MS);
      engine__begin_pending();
    }
    pthread_mutex_unlock(&s->lock);
    if (synchronous && !ok) {
      fprintf(stderr, "fxtrace: the trace manager at %s did not accept the registration%s\n",
              where.path, registered ? "" : " in time");
      manager_session__finish(s);
      return NULL;
    }
    if (late)
      fprintf(stderr,
              "fxtrace: the trace manager did not start this provider within %ld ms "
              "(FXTRACE_REGISTER_TIMEOUT); events until it does are not recorded (they are "
              "counted as dropped)\n",
              wait_ms);
    else if (!registered && !synchronous)
      fprintf(stderr,
              "fxtrace: the trace manager did not answer the registration within %ld ms "
              "(FXTRACE_REGISTER_TIMEOUT); if a trace runs, events until this provider "
              "starts are not recorded (they are counted as dropped)\n",
              wait_ms);
    if (out_started) *out_started = started;
  }
  return s;
}

bool manager_session__finish(manager_session_t* s) {
  if (getpid() != s->pid) { /* a fork child: no thread, descriptors closed at fork */
    if (forkable == s) forkable = NULL;
    for (unsigned i = 0; i < WIRE_MAX_SESSIONS; i++) {
      provider_trace_t* t = &s->traces[i];
      if (t->map) munmap(t->map, t->size); /* the engine never writes in a child */
      categories__free(&t->categories);
      categories__free(&t->base);
    }
    free(s->buffer);
    free(s->w);
    free(s);
    return true;
  }
  pthread_mutex_lock(&s->lock);
  /* Events counted while the start was pending (pending.c) are counted in
   * the buffer's header; if the manager has not handed the buffer over
   * yet, give it a moment to, so that the count reaches the trace. */
  if (engine__pending_count() > 0) {
    struct timespec deadline = deadline_after_ms(PENDING_HANDOVER_MS);
    while (!s->buffer_ready && !s->start_settled && !s->lost &&
           !(s->registered && !s->register_started))
      if (pthread_cond_timedwait(&s->cond, &s->lock, &deadline) == ETIMEDOUT) break;
  }
  s->quit = true;
  pthread_mutex_unlock(&s->lock);
  uint64_t one = 1;
  if (write(s->wake_fd, &one, sizeof(one)) < 0) { /* counter full: still signalled */
  }
  if (s->thread_started) {
    struct timespec deadline;
    clock_gettime(CLOCK_REALTIME, &deadline);
    deadline.tv_sec += JOIN_TIMEOUT_MS / 1000;
    if (pthread_timedjoin_np(s->thread, NULL, &deadline) != 0) {
      fprintf(stderr,
              "fxtrace: a trace writer did not leave the buffer in time; tracing is dead in "
              "this process\n");
      pthread_detach(s->thread);
      return false; /* the thread still uses the session */
    }
  }
  if (forkable == s) forkable = NULL;
  free_session(s);
  return true;
}

bool manager_session__connected(manager_session_t* s) {  // thread-safe
  pthread_mutex_lock(&s->lock);
  bool connected = !s->lost && s->registered && s->register_status == 0;
  pthread_mutex_unlock(&s->lock);
  return connected;
}
