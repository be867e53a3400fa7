/* The session and tracee state machines (PROTOCOL.md §10.1), the Controller
 * calls that drive them (§5.1), providers joining mid-session (§10.2), the
 * FIFO packets (§6.3, §9) and the timeouts (§10.3).
 *
 * Several sessions run at once (docs/sessions.md), each owned by one
 * controller connection and acted on only through it (or STOP_SESSION):
 * a tracee belongs to one session, and a provider has one tracee in each
 * session it takes part in, with a buffer and a FIFO of its own. Anything
 * that ends a session or a provider may happen inside a loop over them (a
 * failed send closes a connection), so sessions and tracees are unlinked at
 * once but freed at the end of the loop turn, and loops check `gone`. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "anchor/clock_anchor.h"
#include "engine/buffer_scan.h"
#include "manager/manager_internal.h"

#define DEFAULT_BUFFER_MB 4u
#define MIN_BUFFER_MB 1u
#define MAX_BUFFER_MB 64u
#define DEFAULT_START_TIMEOUT_MS 5000u

static const char* const kStateNames[] = {"?",       "ready",    "initialized", "starting",
                                          "started", "stopping", "stopped",     "terminating"};

static void set_state(session_t* s, int state) {
  mgr__log(s->m, MANAGER_LOG_DEBUG, "session %u: %s -> %s", s->id, kStateNames[s->state],
           kStateNames[state]);
  s->state = state;
}

/* ---- small helpers ---- */

static void free_strs(char** v, size_t n) {
  for (size_t i = 0; i < n; i++) free(v[i]);
  free(v);
}

/* list<str>: u16 count + strings of at most max_length. NULL with *count 0
 * for an empty list; r->error on anything wrong. */
static char** get_str_list(wire_reader_t* r, size_t max_count, size_t max_length, size_t* count) {
  *count = 0;
  uint16_t n = wire__get_u16(r);
  if (r->error) return NULL;
  if (n > max_count) {
    r->error = true;
    return NULL;
  }
  if (n == 0) return NULL;
  char** v = calloc(n, sizeof(char*));
  if (!v) {
    r->error = true;
    return NULL;
  }
  char item[WIRE_MAX_DESCRIPTION + 1];
  for (uint16_t i = 0; i < n; i++) {
    wire__get_str(r, item, sizeof(item), max_length);
    if (r->error || !(v[i] = strdup(item))) {
      r->error = true;
      free_strs(v, i);
      return NULL;
    }
  }
  *count = n;
  return v;
}

static void put_str_list(wire_writer_t* w, char** v, size_t n) {
  wire__put_u16(w, (uint16_t)n);
  for (size_t i = 0; i < n; i++) wire__put_cstr(w, v[i]);
}

static int send_packet(tracee_t* t, uint16_t request, uint32_t data32, uint64_t data64) {
  if (t->fifo < 0) return -EPIPE;
  fifo_packet_t p = {.request = request, .data16 = 0, .data32 = data32, .data64 = data64};
  ssize_t n = send(t->fifo, &p, sizeof(p), MSG_DONTWAIT | MSG_NOSIGNAL);
  return n == (ssize_t)sizeof(p) ? 0 : n < 0 ? -errno : -EIO;
}

static void abort_tracee(manager_t* m, tracee_t* t, const char* why);

/* BUFFER_SAVED. A provider that has already closed its FIFO end (it stopped
 * on its own and exited: SAVE_BUFFER, STOPPED, then the close are still
 * queued here) needs no answer — its save is in the archive and the close is
 * read next; only a full FIFO (§6.3) or another failure aborts it. */
static void send_buffer_saved(manager_t* m, tracee_t* t, uint32_t wrapped, uint64_t durable_end) {
  int status = send_packet(t, FIFO_BUFFER_SAVED, wrapped, durable_end);
  if (status == -EPIPE || status == -ECONNRESET) {
    LOGD(m, "provider \"%s\": BUFFER_SAVED not sent, its FIFO is closed", t->name);
    return;
  }
  if (status != 0) abort_tracee(m, t, "cannot send BUFFER_SAVED");
}

static void close_fifo(manager_t* m, tracee_t* t) {
  if (t->fifo < 0) return;
  mgr__epoll_del(m, t->fifo);
  close(t->fifo);
  t->fifo = -1;
}

/* Sends a provider message that carries only the session id (STOP,
 * TERMINATE); a failure closes the provider's connection, which marks the
 * tracee gone. */
static void send_simple(manager_t* m, tracee_t* t, uint16_t type) {
  if (!t->provider || !t->provider->conn) return;
  wire__begin(m->w, type, 0);
  wire__put_u32(m->w, t->s->id);
  mgr__send(m, t->provider->conn, NULL, 0);
}

static void reply_start(manager_t* m, session_t* s, uint32_t error) {
  if (!s->start.active) return;
  s->start.active = false;
  if (!s->start.conn) return;
  wire__begin(m->w, MSG_START_RESULT, s->start.request_id);
  wire__put_u32(m->w, error);
  wire__put_u32(m->w, s->id);
  mgr__send(m, s->start.conn, NULL, 0);
}

static void put_stats(manager_t* m, session_t* s) {
  size_t n = 0;
  for (tracee_t* t = s ? s->tracees : NULL; t; t = t->next)
    if (t->stat_state != STAT_NONE) n++;
  wire__put_u16(m->w, (uint16_t)n);
  for (tracee_t* t = s ? s->tracees : NULL; t; t = t->next) {
    if (t->stat_state == STAT_NONE) continue;
    trace_buffer_header_t h;
    const char* why = NULL;
    if (!archive__header(t, &h, NULL)) memset(&h, 0, sizeof(h));
    uint64_t non_durable = h.rolling_data_end[0] + h.rolling_data_end[1];
    if (non_durable == 0) {
      non_durable = h.rolling_alloc & TRACE_BUFFER_ALLOC_OFFSET_MASK;
      if (non_durable > h.rolling_buffer_size) non_durable = h.rolling_buffer_size;
    }
    uint32_t percent =
        h.durable_buffer_size ? (uint32_t)(100 * h.durable_data_end / h.durable_buffer_size) : 0;
    wire__put_cstr(m->w, t->name);
    wire__put_u64(m->w, t->pid);
    wire__put_u8(m->w, t->mode);
    wire__put_u32(m->w, h.wrapped_count);
    /* the header's count and the writers' drop counters (a zeroed h: 0) */
    wire__put_u64(m->w, h.magic ? buffer_scan__dropped(t->map, t->size, &h) : 0);
    wire__put_u32(m->w, percent);
    wire__put_u64(m->w, non_durable);
    wire__put_u8(m->w, (uint8_t)t->stat_state);
    if (!t->damage[0] && !archive__header(t, &h, &why)) /* wiped after the last read */
      archive__note_damage(t, WIRE_RECORDS_UNKNOWN, "its buffer header is unusable (%s)", why);
    wire__put_cstr(m->w, t->damage);
    wire__put_u64(m->w, t->damaged_records);
  }
}

static void reply_stats(manager_t* m, session_t* s, pending_reply_t* p, uint16_t type) {
  if (!p->active) return;
  p->active = false;
  if (!p->conn) return;
  wire__begin(m->w, type, p->request_id);
  put_stats(m, s);
  mgr__send(m, p->conn, NULL, 0);
}

/* ---- tracees ---- */

static const provider_spec_t* find_spec(const session_t* s, const char* name) {
  for (size_t i = 0; i < s->spec_count; i++)
    if (strcmp(s->specs[i].name, name) == 0) return &s->specs[i];
  return NULL;
}

static void send_start(manager_t* m, tracee_t* t, uint8_t disposition) {
  session_t* s = t->s;
  if (disposition == 1) { /* CLEAR_ENTIRE: the buffer starts over */
    t->saved_once = false;
    t->last_durable_end = 0;
    t->last_wrapped = 0;
  }
  t->state = TRACEE_STARTING;
  t->started = true;
  t->results_written = false;
  t->stat_state = STAT_NONE;
  if (!t->provider || !t->provider->conn) return;
  wire__begin(m->w, MSG_START, 0);
  wire__put_u32(m->w, s->id);
  wire__put_u8(m->w, disposition);
  put_str_list(m->w, s->additional, s->additional_count);
  mgr__send(m, t->provider->conn, NULL, 0);
}

/* Buffer, FIFO and INITIALIZE for one provider. */
static tracee_t* add_tracee(manager_t* m, session_t* s, provider_t* p) {
  const provider_spec_t* spec = find_spec(s, p->name);
  uint32_t mb = spec && spec->buffer_size_mb ? spec->buffer_size_mb : s->buffer_size_mb;
  if (mb < MIN_BUFFER_MB) mb = MIN_BUFFER_MB;
  if (mb > MAX_BUFFER_MB) mb = MAX_BUFFER_MB;
  size_t size = (size_t)mb << 20;
  tracee_t* t = calloc(1, sizeof(*t));
  int memfd = -1, sv[2] = {-1, -1};
  void* map = MAP_FAILED;
  const char* what = "out of memory";
  if (!t) goto fail;
  what = "memfd";
  memfd = memfd_create("fxtrace-buffer", MFD_CLOEXEC | MFD_ALLOW_SEALING);
  if (memfd < 0 || ftruncate(memfd, (off_t)size) != 0) goto fail;
  what = "sealing the buffer";
  if (fcntl(memfd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL) != 0) goto fail;
  what = "mapping the buffer";
  map = mmap(NULL, size, PROT_READ, MAP_SHARED, memfd, 0);
  if (map == MAP_FAILED) goto fail;
  what = "FIFO socketpair";
  if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) != 0) goto fail;
  fcntl(sv[0], F_SETFL, fcntl(sv[0], F_GETFL) | O_NONBLOCK);
  t->tag.kind = EP_FIFO;
  t->s = s;
  t->provider = p;
  t->provider_id = p->id;
  t->pid = p->pid;
  memcpy(t->name, p->name, sizeof(t->name));
  t->fifo = sv[0];
  t->map = map;
  t->size = size;
  t->mode = s->mode;
  t->state = TRACEE_INITIALIZED;
  what = "epoll";
  if (mgr__epoll_add(m, t->fifo, EPOLLIN, &t->tag) != 0) goto fail;
  /* its program, while it runs (docs/manager.md, "The names section") */
  if (p->other_pid_namespace) {
    t->names = names__source_create_foreign();
  } else {
    t->names = names__source_create(t->pid);
    names__note_program(s->names, t->pid, clock_anchor__monotonic_ns());
  }
  /* append: the archive and the stats follow registration order */
  tracee_t** pp = &s->tracees;
  while (*pp) pp = &(*pp)->next;
  *pp = t;
  /* INITIALIZE: the categories are the session's plus the spec's */
  wire__begin(m->w, MSG_INITIALIZE, 0);
  wire__put_u32(m->w, s->id);
  wire__put_u8(m->w, s->mode);
  size_t extra = spec ? spec->category_count : 0;
  wire__put_u16(m->w, (uint16_t)(s->category_count + extra));
  for (size_t i = 0; i < s->category_count; i++) wire__put_cstr(m->w, s->categories[i]);
  for (size_t i = 0; i < extra; i++) wire__put_cstr(m->w, spec->categories[i]);
  int fds[2] = {memfd, sv[1]};
  LOGI(m, "session %u: provider #%u \"%s\": initialized (%u MiB, mode %u)", s->id, p->id, p->name,
       mb, s->mode);
  mgr__send(m, p->conn, fds, 2); /* a failure marks the tracee gone */
  close(memfd);
  close(sv[1]);
  return t;
fail:
  LOGE(m, "provider #%u \"%s\": cannot set up its buffer (%s: %s)", p->id, p->name, what,
       strerror(errno));
  if (map != MAP_FAILED) munmap(map, size);
  if (memfd >= 0) close(memfd);
  if (sv[0] >= 0) close(sv[0]);
  if (sv[1] >= 0) close(sv[1]);
  free(t);
  return NULL;
}

/* The tracee is finished: its FIFO closed (terminated, or the process died),
 * or its provider is gone. */
static void tracee_ended(manager_t* m, tracee_t* t, const char* how) {
  close_fifo(m, t);
  if (t->state == TRACEE_TERMINATED) return;
  if (t->state == TRACEE_TERMINATING) {
    t->stat_state = STAT_TERMINATED;
    LOGD(m, "provider #%u \"%s\": terminated", t->provider_id, t->name);
  } else if (t->state == TRACEE_STOPPED && t->stat_state != STAT_NOT_STOPPED) {
    /* It had sent STOPPED (asked to, or on its own: trace_provider_destroy
     * or exit mid-trace), so its buffer is complete: an orderly end, not a
     * death. Its data is written as for any stopped tracee. */
    if (t->stat_state == STAT_STOPPED) t->stat_state = STAT_TERMINATED;
    LOGI(m, "provider #%u \"%s\" (pid %llu): ended after stopping", t->provider_id, t->name,
         (unsigned long long)t->pid);
  } else {
    t->dead = true;
    t->stat_state = STAT_DIED;
    LOGW(m, "provider #%u \"%s\" (pid %llu): %s mid-trace; its buffer is read as it is",
         t->provider_id, t->name, (unsigned long long)t->pid, how);
  }
  t->state = TRACEE_TERMINATED;
}

static void abort_tracee(manager_t* m, tracee_t* t, const char* why) {
  LOGW(m, "provider #%u \"%s\": %s: aborting it (its data is ignored)", t->provider_id, t->name,
       why);
  t->aborted = true;
  t->results_written = true;
  t->ack_pending = false;
  if (t->state != TRACEE_TERMINATED) {
    t->state = TRACEE_TERMINATED;
    t->stat_state = STAT_DIED;
  }
  close_fifo(m, t);
  send_simple(m, t, MSG_TERMINATE);
}

void session__provider_gone(manager_t* m, tracee_t* t) {
  /* The FIFO may still hold the provider's last packets (STOPPED before it
   * closed both ends): read them first, so an orderly exit is not taken for
   * a death when the connection's close is seen before the FIFO's. */
  if (t->fifo >= 0) session__fifo_event(m, t, 0);
  if (t->gone) return; /* the session ended meanwhile */
  tracee_ended(m, t, "disconnected");
}

void session__add_provider(manager_t* m, session_t* s, provider_t* p) {
  if (s->gone || s->state == SESSION_TERMINATING) return;
  tracee_t* t = add_tracee(m, s, p);
  if (!t || t->state == TRACEE_TERMINATED) return;
  switch (s->state) {
    case SESSION_STARTING:
    case SESSION_STARTED:
      send_start(m, t, 1); /* CLEAR_ENTIRE, the current additional categories */
      break;
    case SESSION_STOPPING:
    case SESSION_STOPPED:
      t->state = TRACEE_STOPPED; /* nothing to write */
      break;
    default:
      break;
  }
}

/* ---- the session ---- */

void session__destroy(manager_t* m, session_t* s) {
  if (s->gone) return;
  s->gone = true;
  for (session_t** pp = &m->sessions; *pp; pp = &(*pp)->next) {
    if (*pp == s) {
      *pp = s->next; /* s->next stays: a loop standing on s goes on from it */
      break;
    }
  }
  s->dead_next = m->dead_sessions;
  m->dead_sessions = s;
  if (s->owner && s->owner->session == s) s->owner->session = NULL;
  for (tracee_t* t = s->tracees; t; t = t->next) {
    if (t->gone) continue;
    t->gone = true;
    if (t->provider && t->state != TRACEE_TERMINATED) send_simple(m, t, MSG_TERMINATE);
    close_fifo(m, t);
    if (t->map) munmap((void*)t->map, t->size);
    t->map = NULL;
    names__source_free(t->names);
    t->names = NULL;
    t->dead_next = m->dead_tracees;
    m->dead_tracees = t;
  }
  if (s->out) output__release(m, s->out);
  s->out = NULL;
  free_strs(s->categories, s->category_count);
  free_strs(s->additional, s->additional_count);
  s->categories = s->additional = NULL;
  s->category_count = s->additional_count = 0;
  for (size_t i = 0; i < s->spec_count; i++)
    free_strs(s->specs[i].categories, s->specs[i].category_count);
  free(s->specs);
  s->specs = NULL;
  s->spec_count = 0;
  names__free(s->names);
  s->names = NULL;
  LOGI(m, "session %u ended", s->id);
}

void session__abort(manager_t* m, session_t* s, const char* why) {
  LOGW(m, "session %u aborted: %s", s->id, why);
  if (s->out) s->out->failed = true;
  pending_reply_t* pending[] = {&s->start, &s->stop, &s->terminate};
  for (int i = 0; i < 3; i++) {
    if (pending[i]->active && pending[i]->conn)
      mgr__send_error(m, pending[i]->conn, pending[i]->request_id, -ECONNABORTED, why);
    pending[i]->active = false;
  }
  session__destroy(m, s);
}

static void begin_terminate(manager_t* m, session_t* s, bool write_results, conn_t* c,
                            uint32_t request_id) {
  reply_start(m, s, 4); /* TERMINATING */
  reply_stats(m, s, &s->stop, MSG_STOP_RESULT);
  s->write_results_on_terminate = write_results;
  set_state(s, SESSION_TERMINATING);
  s->terminate = (pending_reply_t){true, c, request_id, mgr__now_ms() + s->stop_timeout_ms};
  for (tracee_t* t = s->tracees; t && !s->gone; t = t->next) {
    if (t->state == TRACEE_TERMINATED) continue;
    t->state = TRACEE_TERMINATING;
    send_simple(m, t, MSG_TERMINATE);
  }
}

/* Stop (§10.1): STOP to every started tracee; the STOP_RESULT goes to c when
 * everyone stopped (none when c is NULL). */
static void begin_stop(manager_t* m, session_t* s, bool write_results, conn_t* c,
                       uint32_t request_id) {
  reply_start(m, s, 0);
  s->stop_write_results = write_results;
  if (write_results) s->force_clear_entire = true;
  set_state(s, SESSION_STOPPING);
  s->stop = (pending_reply_t){true, c, request_id, mgr__now_ms() + s->stop_timeout_ms};
  for (tracee_t* t = s->tracees; t && !s->gone; t = t->next) {
    if (t->state == TRACEE_STARTING || t->state == TRACEE_STARTED) {
      t->state = TRACEE_STOPPING;
      send_simple(m, t, MSG_STOP);
    } else if (t->state == TRACEE_INITIALIZED) {
      t->state = TRACEE_STOPPED; /* never started: nothing to stop */
    }
  }
  LOGI(m, "session %u: stopping tracing%s", s->id, write_results ? " (writing results)" : "");
}

static bool running(const session_t* s) {
  return s->state == SESSION_INITIALIZED || s->state == SESSION_STARTING ||
         s->state == SESSION_STARTED;
}

bool session__stop_for_other(manager_t* m, session_t* s) {
  if (s->gone || !running(s)) return false;
  begin_stop(m, s, true, NULL, 0);
  return true;
}

void session__initialize(manager_t* m, conn_t* c, wire_reader_t* r, int* fds, size_t fd_count) {
  session_t* s = calloc(1, sizeof(*s));
  char busy[80];
  const char* refusal = NULL;
  int code = -EINVAL;
  if (!s) {
    refusal = "out of memory";
    code = -ENOMEM;
    goto refuse;
  }
  s->m = m;
  s->state = SESSION_READY;
  s->categories = get_str_list(r, WIRE_MAX_CATEGORIES, WIRE_MAX_NAME, &s->category_count);
  s->buffer_size_mb = wire__get_u32(r);
  s->start_timeout_ms = wire__get_u64(r);
  s->mode = wire__get_u8(r);
  s->stop_timeout_ms = wire__get_u64(r);
  uint16_t specs = wire__get_u16(r);
  if (specs > WIRE_MAX_PROVIDERS) r->error = true;
  if (!r->error && specs) {
    s->specs = calloc(specs, sizeof(*s->specs));
    if (!s->specs) r->error = true;
  }
  for (uint16_t i = 0; i < specs && !r->error; i++) {
    provider_spec_t* spec = &s->specs[s->spec_count++];
    wire__get_str(r, spec->name, sizeof(spec->name), WIRE_MAX_NAME);
    spec->buffer_size_mb = wire__get_u32(r);
    spec->categories = get_str_list(r, WIRE_MAX_CATEGORIES, WIRE_MAX_NAME, &spec->category_count);
  }
  if (!wire__done(r)) {
    refusal = "malformed INITIALIZE_TRACING";
    code = -EBADMSG;
  } else if (fd_count != 1) {
    refusal = "INITIALIZE_TRACING needs exactly one file descriptor (the archive's)";
  } else if (s->mode > TRACE_BUFFERING_MODE_STREAMING) {
    refusal = "invalid buffering mode";
  } else if (m->shutting_down) {
    refusal = "the manager is shutting down";
    code = -ESHUTDOWN;
  } else if (c->session) {
    refusal = "this connection's trace is already initialized (one session per connection)";
    code = -EBUSY;
  } else if (sessions__count(m) >= WIRE_MAX_SESSIONS) {
    snprintf(busy, sizeof(busy), "%zu sessions are running (the limit is %u)", sessions__count(m),
             WIRE_MAX_SESSIONS);
    refusal = busy;
    code = -EBUSY;
  }
  if (refusal) goto refuse;
  if (s->buffer_size_mb == 0) s->buffer_size_mb = DEFAULT_BUFFER_MB;
  if (s->buffer_size_mb < MIN_BUFFER_MB) s->buffer_size_mb = MIN_BUFFER_MB;
  if (s->buffer_size_mb > MAX_BUFFER_MB) s->buffer_size_mb = MAX_BUFFER_MB;
  if (s->start_timeout_ms == 0) s->start_timeout_ms = DEFAULT_START_TIMEOUT_MS;
  if (s->stop_timeout_ms == 0) s->stop_timeout_ms = m->config.stop_timeout_ms;
  s->owner = c;
  s->client_uid = c->cred.uid;
  s->client_pid = c->cred.pid;
  s->write_results_on_terminate = true;
  s->out = output__create(m, s, fds[0]);
  if (!s->out) {
    refusal = "out of memory";
    code = -ENOMEM;
    goto refuse;
  }
  s->names = names__create(); /* NULL: the archive ends without a names section */
  if (++m->next_session_id == 0) m->next_session_id = 1;
  s->id = m->next_session_id;
  session_t** pp = &m->sessions; /* appended: LIST_SESSIONS in creation order */
  while (*pp) pp = &(*pp)->next;
  *pp = s;
  c->session = s;
  LOGI(m, "session %u initialized by pid %d (uid %u): mode %u, %u MiB, %zu categories", s->id,
       (int)c->cred.pid, (unsigned)c->cred.uid, s->mode, s->buffer_size_mb, s->category_count);
  if (!archive__magic(s->out) || !archive__clock_anchor(s->out, false) || !output__flush(s->out)) {
    session__abort(m, s, "cannot write the archive");
    return;
  }
  set_state(s, SESSION_INITIALIZED);
  for (provider_t* p = m->providers; p && !s->gone;) {
    provider_t* next = p->next; /* a failed send frees p (and only p) */
    if (sessions__includes(s, p)) session__add_provider(m, s, p);
    p = next;
  }
  return;
refuse:
  LOGW(m, "INITIALIZE_TRACING from pid %d refused: %s", (int)c->cred.pid, refusal);
  for (size_t i = 0; i < fd_count; i++) close(fds[i]);
  if (s) {
    free_strs(s->categories, s->category_count);
    for (size_t i = 0; i < s->spec_count; i++)
      free_strs(s->specs[i].categories, s->specs[i].category_count);
    free(s->specs);
    free(s);
  }
  mgr__send_error(m, c, r->request_id, code, refusal);
}

void session__start(manager_t* m, conn_t* c, wire_reader_t* r) {
  uint8_t disposition = wire__get_u8(r);
  size_t additional_count;
  char** additional = get_str_list(r, WIRE_MAX_CATEGORIES, WIRE_MAX_NAME, &additional_count);
  if (!wire__done(r)) {
    free_strs(additional, additional_count);
    mgr__send_error(m, c, r->request_id, -EBADMSG, "malformed START_TRACING");
    return;
  }
  session_t* s = c->session;
  uint32_t error = 0;
  if (!s)
    error = 1; /* NOT_INITIALIZED */
  else if (s->state == SESSION_STARTING || s->state == SESSION_STARTED)
    error = 2; /* ALREADY_STARTED */
  else if (s->state == SESSION_STOPPING)
    error = 3; /* STOPPING */
  else if (s->state == SESSION_TERMINATING || disposition < 1 || disposition > 3)
    error = 4; /* TERMINATING (also an invalid disposition, as the original) */
  if (error) {
    free_strs(additional, additional_count);
    wire__begin(m->w, MSG_START_RESULT, r->request_id);
    wire__put_u32(m->w, error);
    wire__put_u32(m->w, s ? s->id : 0);
    mgr__send(m, c, NULL, 0);
    return;
  }
  free_strs(s->additional, s->additional_count);
  s->additional = additional;
  s->additional_count = additional_count;
  if (s->force_clear_entire) disposition = 1; /* results were written at the last stop */
  s->force_clear_entire = false;
  set_state(s, SESSION_STARTING);
  if (s->start_realtime_ns == 0) {
    struct timespec now;
    clock_gettime(CLOCK_REALTIME, &now);
    s->start_realtime_ns = (uint64_t)now.tv_sec * 1000000000u + (uint64_t)now.tv_nsec;
  }
  s->start = (pending_reply_t){true, c, r->request_id, mgr__now_ms() + s->start_timeout_ms};
  for (tracee_t* t = s->tracees; t && !s->gone; t = t->next)
    if (t->state == TRACEE_INITIALIZED || (t->state == TRACEE_STOPPED && !t->stopped_itself))
      send_start(m, t, disposition);
  LOGI(m, "session %u: tracing started (disposition %u, %zu additional categories)", s->id,
       disposition, additional_count);
}

void session__stop(manager_t* m, conn_t* c, wire_reader_t* r) {
  uint8_t write_results = wire__get_u8(r);
  if (!wire__done(r)) {
    mgr__send_error(m, c, r->request_id, -EBADMSG, "malformed STOP_TRACING");
    return;
  }
  session_t* s = c->session;
  if (s && s->state == SESSION_STOPPING && s->stop.active && !s->stop.conn) {
    /* stopped by STOP_SESSION: its client's own STOP_TRACING gets the result */
    s->stop.conn = c;
    s->stop.request_id = r->request_id;
    return;
  }
  if (!s || !running(s)) {
    /* nothing to stop: answered at once */
    wire__begin(m->w, MSG_STOP_RESULT, r->request_id);
    put_stats(m, s);
    mgr__send(m, c, NULL, 0);
    return;
  }
  begin_stop(m, s, write_results != 0, c, r->request_id);
}

void session__terminate(manager_t* m, conn_t* c, wire_reader_t* r) {
  uint8_t write_results = wire__get_u8(r);
  if (!wire__done(r)) {
    mgr__send_error(m, c, r->request_id, -EBADMSG, "malformed TERMINATE_TRACING");
    return;
  }
  session_t* s = c->session;
  if (!s) {
    wire__begin(m->w, MSG_TERMINATE_RESULT, r->request_id);
    put_stats(m, NULL);
    mgr__send(m, c, NULL, 0);
    return;
  }
  if (s->state == SESSION_TERMINATING) {
    if (s->terminate.conn) {
      mgr__send_error(m, c, r->request_id, -EALREADY, "already terminating");
    } else { /* terminating for the manager's own reasons: answer this one */
      s->terminate.conn = c;
      s->terminate.request_id = r->request_id;
    }
    return;
  }
  LOGI(m, "session %u: terminating tracing%s", s->id, write_results ? " (writing results)" : "");
  begin_terminate(m, s, write_results != 0, c, r->request_id);
}

void session__conn_closed(manager_t* m, conn_t* c) {
  for (session_t* s = m->sessions; s; s = s->next) {
    if (s->gone) continue;
    if (s->start.conn == c) s->start.conn = NULL;
    if (s->stop.conn == c) s->stop.conn = NULL;
    if (s->terminate.conn == c) s->terminate.conn = NULL;
  }
  session_t* s = c->session;
  c->session = NULL;
  if (!s || s->gone) return;
  s->owner = NULL;
  if (s->state != SESSION_TERMINATING) {
    LOGI(m, "session %u: its client disconnected: terminating", s->id);
    begin_terminate(m, s, s->write_results_on_terminate, NULL, 0);
  }
}

void session__shutdown(manager_t* m) {
  for (session_t* s = m->sessions; s; s = s->next)
    if (!s->gone && s->state != SESSION_TERMINATING) begin_terminate(m, s, true, NULL, 0);
}

void session__output_drained(session_t* s) {
  manager_t* m = s->m;
  for (tracee_t* t = s->tracees; t; t = t->next) {
    if (!t->ack_pending) continue;
    t->ack_pending = false;
    LOGD(m, "provider #%u \"%s\": acknowledgement of save %u released (archive queue %zu bytes)",
         t->provider_id, t->name, t->ack.data32, s->out->queued);
    send_buffer_saved(m, t, t->ack.data32, t->ack.data64);
  }
}

/* ---- FIFO packets (§6.3) ---- */

static void handle_save(manager_t* m, tracee_t* t, const fifo_packet_t* p) {
  session_t* s = t->s;
  if (t->mode != TRACE_BUFFERING_MODE_STREAMING) {
    LOGW(m, "provider \"%s\": SAVE_BUFFER outside streaming mode ignored", t->name);
    return;
  }
  if (t->state != TRACEE_STARTED && t->state != TRACEE_STOPPING && t->state != TRACEE_TERMINATING) {
    LOGD(m, "provider \"%s\": SAVE_BUFFER in state %d ignored", t->name, t->state);
    return;
  }
  trace_buffer_header_t h;
  const char* why;
  if (!archive__header(t, &h, &why)) {
    abort_tracee(m, t, why);
    return;
  }
  uint32_t w = p->data32;
  uint64_t d = p->data64;
  if (t->saved_once && w != t->last_wrapped + 1) {
    abort_tracee(m, t, "SAVE_BUFFER out of sequence");
    return;
  }
  /* The engine asks for a segment's save after switching away from it, and
   * cannot switch back into it before this save's acknowledgement: the
   * header's switch count is within segment_count - 1 past it. */
  uint64_t sw = h.rolling_alloc >> TRACE_BUFFER_ALLOC_OFFSET_BITS;
  if ((uint64_t)w >= sw || sw - w > h.segment_count - 1u) {
    abort_tracee(m, t,
                 "SAVE_BUFFER for a segment the buffer does not hold (damaged segment table)");
    return;
  }
  if (d % 8 != 0 || d < 16 || d > h.durable_buffer_size ||
      (t->saved_once && d < t->last_durable_end)) {
    abort_tracee(m, t, "SAVE_BUFFER with a bad durable end");
    return;
  }
  if (!archive__write_save(m, t, w, d)) {
    session__abort(m, s, "the archive output failed");
    return;
  }
  t->saved_once = true;
  t->last_wrapped = w;
  t->last_durable_end = d;
  if (s->out->queued >= m->config.streaming_high_water) {
    /* The client reads slower than the provider writes: the acknowledgement
     * waits, and the provider drops records meanwhile (never stalls) once
     * every other segment waits too. BUFFER_SAVED is cumulative, so the
     * held one is the latest save's: the queue grows by at most the
     * provider's other segments. */
    if (!t->ack_pending)
      LOGD(m, "provider #%u \"%s\": acknowledgement of save %u held (archive queue %zu bytes)",
           t->provider_id, t->name, w, s->out->queued);
    t->ack_pending = true;
    t->ack = (fifo_packet_t){FIFO_BUFFER_SAVED, 0, w, d};
    return;
  }
  if (t->ack_pending) /* covered by this one: BUFFER_SAVED is cumulative */
    LOGD(m, "provider #%u \"%s\": acknowledgement of save %u released (archive queue %zu bytes)",
         t->provider_id, t->name, w, s->out->queued);
  t->ack_pending = false;
  send_buffer_saved(m, t, w, d);
}

#ifndef MADV_POPULATE_READ
#define MADV_POPULATE_READ 22 /* Linux 5.14 */
#endif

/* Streaming: the manager's mapping of the buffer gets its page tables at
 * the start, before the first save, which would otherwise take a page fault
 * per 4 KiB on its first copy of each segment and acknowledge the first
 * saves late (records dropped early in a fast trace). The provider wrote
 * every page before it reported started (provider__touch_pages), so this
 * only maps them: the pages stay charged to the provider. Advice only: a
 * failure (an older kernel) leaves the faults to the first saves. */
static void populate_mapping(manager_t* m, tracee_t* t) {
  if (t->mode != TRACE_BUFFERING_MODE_STREAMING || t->populated) return;
  t->populated = true;
  if (madvise((void*)t->map, t->size, MADV_POPULATE_READ) != 0)
    LOGD(m, "provider \"%s\": populating the buffer mapping: %s", t->name, strerror(errno));
}

static void handle_packet(manager_t* m, tracee_t* t, const fifo_packet_t* p) {
  if (p->data16 != 0 && p->request != FIFO_ALERT) {
    abort_tracee(m, t, "FIFO packet with data16 set");
    return;
  }
  switch (p->request) {
    case FIFO_STARTED:
      if (p->data32 != FIFO_PROTOCOL_VERSION || p->data64 != 0) {
        abort_tracee(m, t, "STARTED with an unsupported FIFO protocol version");
        return;
      }
      if (t->state == TRACEE_STARTING) {
        t->state = TRACEE_STARTED;
        populate_mapping(m, t);
        LOGD(m, "provider \"%s\": started", t->name);
      } else {
        LOGD(m, "provider \"%s\": STARTED in state %d ignored", t->name, t->state);
      }
      return;
    case FIFO_STOPPED:
      if (p->data32 != 0 || p->data64 != 0) {
        abort_tracee(m, t, "STOPPED with data");
        return;
      }
      if (t->state == TRACEE_STOPPING) {
        t->state = TRACEE_STOPPED;
        t->stat_state = STAT_STOPPED;
        LOGD(m, "provider \"%s\": stopped", t->name);
      } else if (t->state == TRACEE_STARTING || t->state == TRACEE_STARTED) {
        /* stopped on its own (trace_provider_destroy or exit mid-trace; the
         * FIFO closes next): every record it wrote is committed. The data
         * is written at the session's stop or terminate, as for the others. */
        t->state = TRACEE_STOPPED;
        t->stat_state = STAT_STOPPED;
        t->stopped_itself = true;
        LOGI(m, "provider #%u \"%s\": stopped on its own", t->provider_id, t->name);
      } else if (t->state != TRACEE_TERMINATING) {
        LOGD(m, "provider \"%s\": STOPPED in state %d ignored", t->name, t->state);
      }
      return;
    case FIFO_SAVE_BUFFER:
      handle_save(m, t, p);
      return;
    case FIFO_ALERT: {
      /* PROTOCOL.md §6.2: bytes 2..15, up to the first NUL */
      char name[ALERT_NAME_MAX + 1] = {0};
      memcpy(name, (const uint8_t*)p + 2, ALERT_NAME_MAX);
      if (name[0] == '\0') {
        LOGW(m, "provider #%u \"%s\": an alert without a name ignored", t->provider_id, t->name);
        return;
      }
      alerts__from_provider(m, t, name);
      return;
    }
    default:
      abort_tracee(m, t, "unknown FIFO request");
      return;
  }
}

void session__fifo_event(manager_t* m, tracee_t* t, uint32_t events) {
  (void)events;
  session_t* s = t->s;
  for (int i = 0; i < 64 && t->fifo >= 0 && !s->gone && !t->gone; i++) {
    fifo_packet_t p;
    ssize_t n = recv(t->fifo, &p, sizeof(p), MSG_DONTWAIT | MSG_TRUNC);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return;
    if (n <= 0) {
      tracee_ended(m, t, "its FIFO closed");
      return;
    }
    if (n != (ssize_t)sizeof(p)) {
      abort_tracee(m, t, "FIFO packet of the wrong size");
      return;
    }
    handle_packet(m, t, &p);
  }
}

/* ---- progress and timeouts ---- */

static bool any_in_state(session_t* s, int state) {
  for (tracee_t* t = s->tracees; t; t = t->next)
    if (t->state == state) return true;
  return false;
}

static void progress(manager_t* m, session_t* s) {
  for (tracee_t* t = s->tracees; t && !s->gone; t = t->next) {
    if (!t->started || t->results_written || t->aborted) continue;
    bool due = false;
    if ((s->state == SESSION_STOPPING || s->state == SESSION_STOPPED) && s->stop_write_results &&
        (t->state == TRACEE_STOPPED || t->state == TRACEE_TERMINATED))
      due = true;
    if (s->state == SESSION_TERMINATING && s->write_results_on_terminate &&
        t->state == TRACEE_TERMINATED)
      due = true;
    if (due && !archive__write_results(m, t)) {
      session__abort(m, s,
                     s->out->overflow ? "the client stopped reading the archive"
                                      : "the archive output failed");
      return;
    }
  }
  if (s->gone) return;
  if (!output__flush(s->out)) {
    session__abort(m, s, "the archive output failed");
    return;
  }
  /* A held acknowledgement is released when the queue drains (output__event
   * does it when the output becomes writable again). A queue drained
   * without that event, by this flush or by another provider's save moving
   * it into the in-process ring or the pipe piece by piece (archive.c,
   * copy_framed, which leaves EPOLLOUT unasked for when it empties it),
   * would otherwise keep the hold until that provider's next save, which
   * never comes while every one of its segments waits for this one. */
  if (s->out->queued < m->config.streaming_high_water / 2) session__output_drained(s);
  if (s->state == SESSION_STARTING && !any_in_state(s, TRACEE_STARTING)) {
    set_state(s, SESSION_STARTED);
    reply_start(m, s, 0);
  }
  if (s->state == SESSION_STOPPING && !any_in_state(s, TRACEE_STOPPING)) {
    /* after every provider's results: the names are the archive's last word */
    s->stop_anchor_written = true;
    if (!archive__clock_anchor(s->out, true) || !archive__write_names(m, s) ||
        !output__flush(s->out)) {
      session__abort(m, s,
                     s->out->overflow ? "the client stopped reading the archive"
                                      : "the archive output failed");
      return;
    }
    set_state(s, SESSION_STOPPED);
    reply_stats(m, s, &s->stop, MSG_STOP_RESULT);
    LOGI(m, "session %u: tracing stopped", s->id);
  }
  if (s->state == SESSION_TERMINATING && !any_in_state(s, TRACEE_TERMINATING)) {
    if ((!s->stop_anchor_written && !archive__clock_anchor(s->out, true)) ||
        !archive__write_names(m, s)) {
      session__abort(m, s,
                     s->out->overflow ? "the client stopped reading the archive"
                                      : "the archive output failed");
      return;
    }
    reply_stats(m, s, &s->terminate, MSG_TERMINATE_RESULT);
    session__destroy(m, s);
  }
}

void session__progress(manager_t* m) {
  for (session_t* s = m->sessions; s; s = s->next)
    if (!s->gone) progress(m, s);
}

static void timeouts(manager_t* m, session_t* s, uint64_t now) {
  if (s->state == SESSION_STARTING && s->start.active && now >= s->start.deadline_ms) {
    for (tracee_t* t = s->tracees; t; t = t->next)
      if (t->state == TRACEE_STARTING)
        LOGW(m, "provider #%u \"%s\" did not start within %llu ms", t->provider_id, t->name,
             (unsigned long long)s->start_timeout_ms);
    set_state(s, SESSION_STARTED); /* late STARTED packets are still taken */
    reply_start(m, s, 0);
    if (s->gone) return; /* the reply's failure ended it */
  }
  if (s->state == SESSION_STOPPING && now >= s->stop.deadline_ms) {
    for (tracee_t* t = s->tracees; t; t = t->next) {
      if (t->state != TRACEE_STOPPING) continue;
      LOGW(m, "provider #%u \"%s\" did not stop within %llu ms: read as it is", t->provider_id,
           t->name, (unsigned long long)s->stop_timeout_ms);
      t->state = TRACEE_STOPPED;
      t->stat_state = STAT_NOT_STOPPED;
    }
  }
  if (s->state == SESSION_TERMINATING && now >= s->terminate.deadline_ms) {
    for (tracee_t* t = s->tracees; t; t = t->next) {
      if (t->state != TRACEE_TERMINATING) continue;
      LOGW(m, "provider #%u \"%s\" did not terminate within %llu ms: read as it is", t->provider_id,
           t->name, (unsigned long long)s->stop_timeout_ms);
      close_fifo(m, t);
      t->state = TRACEE_TERMINATED;
      t->stat_state = STAT_NOT_STOPPED;
    }
  }
}

void session__timeouts(manager_t* m, uint64_t now, uint64_t* next_deadline) {
  for (session_t* s = m->sessions; s; s = s->next)
    if (!s->gone) timeouts(m, s, now);
  session__progress(m);
  for (session_t* s = m->sessions; s; s = s->next) {
    uint64_t deadline = UINT64_MAX;
    if (s->state == SESSION_STARTING && s->start.active) deadline = s->start.deadline_ms;
    if (s->state == SESSION_STOPPING) deadline = s->stop.deadline_ms;
    if (s->state == SESSION_TERMINATING) deadline = s->terminate.deadline_ms;
    if (deadline < *next_deadline) *next_deadline = deadline;
  }
}
