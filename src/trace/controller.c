/* The Controller protocol, client side (see controller.h). */
#include "trace/controller.h"

#include <errno.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "protocol/manager_socket.h"
#include "ring/archive_ring.h"

enum { DEFAULT_REPLY_TIMEOUT_MS = 30000, MAX_ERROR_MESSAGE = 1024 };

static int fail(controller_t* c, int status, const char* fmt, ...)
    __attribute__((format(printf, 3, 4)));

static int fail(controller_t* c, int status, const char* fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(c->error, sizeof(c->error), fmt, ap);
  va_end(ap);
  return status;
}

static void close_received(controller_t* c) {
  for (size_t i = 0; i < c->received_fd_count; i++) close(c->received_fds[i]);
  c->received_fd_count = 0;
}

int controller__open(controller_t* c, const char* path, const char* shown) {
  if (!shown) shown = path;
  memset(c, 0, sizeof(*c));
  c->fd = -1;
  c->next_request_id = 1;
  c->reply_timeout_ms = DEFAULT_REPLY_TIMEOUT_MS;
  c->writer = malloc(sizeof(*c->writer));
  c->buffer = malloc(WIRE_MAX_MESSAGE);
  if (!c->writer || !c->buffer) {
    controller__close(c);
    return fail(c, -ENOMEM, "out of memory");
  }
  uid_t peer = 0;
  int fd = path ? wire__connect(path, WIRE_ROLE_CONTROLLER, &peer) : -ENOENT;
  if (fd < 0) {
    controller__close(c);
    if (fd == -ENOENT || fd == -ECONNREFUSED)
      return fail(c, fd, "no trace manager is running (nothing listens on %s)", shown);
    if (fd == -EPERM) {
      char who[160];
      manager_socket__describe_user(peer, who, sizeof(who));
      return fail(c, fd,
                  "refusing the trace manager at %s: it runs as %s, neither as you nor as root",
                  shown, who);
    }
    return fail(c, fd, "cannot connect to the trace manager at %s: %s", shown, strerror(-fd));
  }
  c->fd = fd;
  return 0;
}

void controller__close(controller_t* c) {
  if (c->fd >= 0) close(c->fd);
  c->fd = -1;
  close_received(c);
  free(c->writer);
  free(c->buffer);
  c->writer = NULL;
  c->buffer = NULL;
}

static uint32_t begin(controller_t* c, uint16_t type) {
  uint32_t id = c->next_request_id++;
  if (c->next_request_id == 0) c->next_request_id = 1;
  wire__begin(c->writer, type, id);
  return id;
}

static int send_request(controller_t* c, const char* what, const int* fds, size_t fd_count) {
  if (c->fd < 0) return fail(c, -ENOTCONN, "not connected to the trace manager");
  if (!wire__end(c->writer))
    return fail(c, -EMSGSIZE, "%s: the request is larger than a message may be (%u bytes)", what,
                WIRE_MAX_MESSAGE);
  int status = wire__send(c->fd, c->writer, fds, fd_count);
  if (status == -EPIPE || status == -ECONNRESET)
    return fail(c, status, "%s: the trace manager closed the connection", what);
  if (status != 0)
    return fail(c, status, "%s: sending to the trace manager failed: %s", what, strerror(-status));
  return 0;
}

static int64_t now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* Reads a MSG_ERROR's payload into a description. */
static void read_error(wire_reader_t* r, int32_t* code, char* message, size_t size) {
  *code = (int32_t)wire__get_u32(r);
  wire__get_str(r, message, size, size - 1);
  if (!wire__done(r)) snprintf(message, size, "(a malformed error message)");
}

/* An ALERT's payload (wire.h). */
static bool read_alert(wire_reader_t* r, controller_alert_t* a) {
  memset(a, 0, sizeof(*a));
  wire__get_str(r, a->name, sizeof(a->name), sizeof(a->name) - 1);
  a->provider_id = wire__get_u32(r);
  a->pid = wire__get_u64(r);
  wire__get_str(r, a->provider_name, sizeof(a->provider_name), WIRE_MAX_NAME);
  a->time_ns = wire__get_u64(r);
  a->dropped = wire__get_u32(r);
  return wire__done(r) && a->name[0] != '\0';
}

/* Receives one message into *r; its descriptors (only ARCHIVE_RING_RESULT
 * has any) stay in c until the next message, unless taken. 0 or -errno. */
static int receive(controller_t* c, const char* what, wire_reader_t* r) {
  close_received(c);
  ssize_t length = wire__recv(c->fd, c->buffer, c->received_fds, &c->received_fd_count);
  if (length == 0 || length == -ECONNRESET)
    return fail(c, -ECONNRESET,
                "%s: the trace manager closed the connection (it shut down, or dropped a "
                "connection that sent a request it cannot accept)",
                what);
  if (length == -EMSGSIZE)
    return fail(c, -EPROTO, "%s: the trace manager's reply is larger than %u bytes", what,
                WIRE_MAX_MESSAGE);
  if (length < 0)
    return fail(c, (int)length, "%s: receiving from the trace manager failed: %s", what,
                strerror((int)-length));
  const char* bad = wire__open(r, c->buffer, (size_t)length);
  if (bad) return fail(c, -EPROTO, "%s: malformed reply from the trace manager: %s", what, bad);
  return 0;
}

/* A message the manager sends unasked while another call waits: the
 * waiting WATCH_ALERT's ALERT (unless `id`, the awaited request, is that
 * WATCH_ALERT), or SESSION_STOPPED. 1 if *r was one (kept in c), 0 if not,
 * or -errno when it was malformed. */
static int take_unsolicited(controller_t* c, const char* what, uint32_t id, wire_reader_t* r) {
  if (r->type == MSG_SESSION_STOPPED && r->request_id == 0) {
    wire__get_u32(r); /* this connection's session: it has one */
    uint32_t uid = wire__get_u32(r);
    uint64_t pid = wire__get_u64(r);
    if (!wire__done(r))
      return fail(c, -EPROTO, "%s: malformed SESSION_STOPPED from the trace manager", what);
    c->session_stopped = true;
    c->stopped_by_uid = uid;
    c->stopped_by_pid = pid;
    return 1;
  }
  if (r->type == MSG_ALERT && c->watch_request_id != 0 && r->request_id == c->watch_request_id &&
      id != c->watch_request_id) {
    if (!read_alert(r, &c->alert))
      return fail(c, -EPROTO, "%s: malformed ALERT from the trace manager", what);
    c->alert_ready = true;
    c->watch_request_id = 0;
    return 1;
  }
  return 0;
}

/* A MSG_ERROR in *r: its status, and c->error says what it answered. */
static int take_error(controller_t* c, const char* what, uint32_t id, wire_reader_t* r) {
  int32_t code;
  char message[MAX_ERROR_MESSAGE];
  read_error(r, &code, message, sizeof(message));
  int status = code < 0 ? code : -EPROTO;
  if (c->initialize_request_id != 0 && r->request_id == c->initialize_request_id) {
    c->initialize_request_id = 0;
    return fail(c, status, "the trace manager refused to initialize tracing: %s", message);
  }
  if (id != 0 && r->request_id == id)
    return fail(c, status, "%s: the trace manager answered with an error: %s", what, message);
  return fail(c, -EPROTO, "%s: the trace manager sent an error for unknown request %u: %s", what,
              (unsigned)r->request_id, message);
}

/* Waits for the reply to request `id`, which must be of type `expected`, and
 * opens it in *r. */
static int await_reply(controller_t* c, const char* what, uint32_t id, uint16_t expected,
                       wire_reader_t* r) {
  int64_t deadline = c->reply_timeout_ms < 0 ? -1 : now_ms() + c->reply_timeout_ms;
  for (;;) {
    int wait_ms = -1;
    if (deadline >= 0) {
      int64_t left = deadline - now_ms();
      if (left <= 0)
        return fail(c, -ETIMEDOUT, "%s: the trace manager did not answer within %d s", what,
                    c->reply_timeout_ms / 1000);
      wait_ms = left > 1000000 ? 1000000 : (int)left;
    }
    struct pollfd p = {c->fd, POLLIN, 0};
    int n = poll(&p, 1, wait_ms);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return fail(c, -errno, "%s: poll failed: %s", what, strerror(errno));
    if (n == 0) continue;
    int status = receive(c, what, r);
    if (status != 0) return status;
    if (r->type == MSG_ERROR) return take_error(c, what, id, r);
    status = take_unsolicited(c, what, id, r);
    if (status < 0) return status;
    if (status == 1) continue;
    if (r->request_id != id)
      return fail(c, -EPROTO, "%s: the trace manager's reply (type %u) is for request %u, not %u",
                  what, (unsigned)r->type, (unsigned)r->request_id, (unsigned)id);
    if (r->type != expected)
      return fail(c, -EPROTO, "%s: the trace manager replied with message type %u, not %u", what,
                  (unsigned)r->type, (unsigned)expected);
    return 0;
  }
}

int controller__poll(controller_t* c) {
  static const char kWhat[] = "waiting for the trace manager";
  if (c->fd < 0) return fail(c, -ENOTCONN, "not connected to the trace manager");
  for (;;) {
    struct pollfd p = {c->fd, POLLIN, 0};
    int n = poll(&p, 1, 0);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return fail(c, -errno, "%s: poll failed: %s", kWhat, strerror(errno));
    if (n == 0) return 0;
    wire_reader_t r;
    int status = receive(c, kWhat, &r);
    if (status != 0) return status;
    if (r.type == MSG_ERROR) return take_error(c, kWhat, 0, &r);
    status = take_unsolicited(c, kWhat, 0, &r);
    if (status < 0) return status;
    if (status == 0)
      return fail(c, -EPROTO, "%s: the trace manager sent message type %u for request %u unasked",
                  kWhat, (unsigned)r.type, (unsigned)r.request_id);
  }
}

static int malformed(controller_t* c, const char* what) {
  return fail(c, -EPROTO,
              "%s: malformed reply from the trace manager (a length or limit is "
              "wrong, or bytes are left over)",
              what);
}

/* Allocates room for count items (at least one, so NULL means no memory). */
static void* alloc_list(size_t count, size_t size) { return calloc(count ? count : 1, size); }

/* The common shape of a request answered by a list: sends the request begun
 * as `id` (with `fds`), awaits `reply`, reads the list's count (at most
 * `max`) into *n and allocates n items of `size`, which the caller reads
 * from *r. NULL, with *status the error, when any of it fails. */
static void* request_list(controller_t* c, const char* what, uint32_t id, const int* fds,
                          size_t fd_count, uint16_t reply, uint16_t max, size_t size,
                          wire_reader_t* r, uint16_t* n, int* status) {
  *status = send_request(c, what, fds, fd_count);
  if (*status == 0) *status = await_reply(c, what, id, reply, r);
  if (*status != 0) return NULL;
  *n = wire__get_u16(r);
  if (r->error || *n > max) {
    *status = malformed(c, what);
    return NULL;
  }
  void* items = alloc_list(*n, size);
  if (!items) *status = fail(c, -ENOMEM, "out of memory");
  return items;
}

int controller__get_providers(controller_t* c, controller_provider_t** list, size_t* count) {
  static const char kWhat[] = "GetProviders";
  *list = NULL;
  *count = 0;
  uint32_t id = begin(c, MSG_GET_PROVIDERS);
  wire_reader_t r;
  uint16_t n = 0;
  int status;
  controller_provider_t* items = request_list(c, kWhat, id, NULL, 0, MSG_PROVIDERS,
                                              WIRE_MAX_PROVIDERS, sizeof(*items), &r, &n, &status);
  if (!items) return status;
  for (size_t i = 0; i < n; i++) {
    items[i].id = wire__get_u32(&r);
    items[i].pid = wire__get_u64(&r);
    wire__get_str(&r, items[i].name, sizeof(items[i].name), WIRE_MAX_NAME);
  }
  if (!wire__done(&r)) {
    free(items);
    return malformed(c, kWhat);
  }
  *list = items;
  *count = n;
  return 0;
}

int controller__get_known_categories(controller_t* c, controller_category_t** list, size_t* count) {
  static const char kWhat[] = "GetKnownCategories";
  *list = NULL;
  *count = 0;
  uint32_t id = begin(c, MSG_GET_KNOWN_CATEGORIES);
  wire_reader_t r;
  uint16_t n = 0;
  int status;
  controller_category_t* items = request_list(c, kWhat, id, NULL, 0, MSG_KNOWN_CATEGORIES,
                                              WIRE_MAX_CATEGORIES, sizeof(*items), &r, &n, &status);
  if (!items) return status;
  for (size_t i = 0; i < n && !r.error; i++) {
    wire__get_str(&r, items[i].name, sizeof(items[i].name), WIRE_MAX_NAME);
    wire__get_str(&r, items[i].description, sizeof(items[i].description), WIRE_MAX_DESCRIPTION);
  }
  if (!wire__done(&r)) {
    free(items);
    return malformed(c, kWhat);
  }
  *list = items;
  *count = n;
  return 0;
}

/* A list<str>; false if it breaks a limit. */
void controller__free_category_groups(controller_category_group_t* groups, size_t count) {
  for (size_t i = 0; groups && i < count; i++) free(groups[i].categories);
  free(groups);
}

int controller__get_provider_categories(controller_t* c, controller_category_group_t** list,
                                        size_t* count) {
  static const char kWhat[] = "GetKnownCategories (per provider)";
  *list = NULL;
  *count = 0;
  uint32_t id = begin(c, MSG_GET_PROVIDER_CATEGORIES);
  wire__put_u8(c->writer, WIRE_CATEGORIES_FORMAT);
  int status = send_request(c, kWhat, NULL, 0);
  wire_reader_t r;
  if (status == 0) status = await_reply(c, kWhat, id, MSG_PROVIDER_CATEGORIES, &r);
  if (status != 0) return status;
  uint8_t format = wire__get_u8(&r);
  if (!r.error && format != WIRE_CATEGORIES_FORMAT)
    return fail(c, -EPROTO, "%s: the manager answered in format %u, not %u", kWhat,
                (unsigned)format, WIRE_CATEGORIES_FORMAT);
  uint16_t n = wire__get_u16(&r);
  if (r.error || n > WIRE_MAX_PROVIDERS + 1) return malformed(c, kWhat);
  controller_category_group_t* groups = alloc_list(n, sizeof(*groups));
  if (!groups) return fail(c, -ENOMEM, "out of memory");
  for (size_t i = 0; i < n && !r.error; i++) {
    controller_category_group_t* g = &groups[i];
    g->provider_id = wire__get_u32(&r);
    g->pid = wire__get_u64(&r);
    wire__get_str(&r, g->name, sizeof(g->name), WIRE_MAX_NAME);
    uint8_t answered = wire__get_u8(&r);
    uint16_t k = wire__get_u16(&r);
    if (r.error || answered > 1 || k > WIRE_MAX_CATEGORIES ||
        (size_t)k * 4 > r.length - r.pos) { /* each entry takes 4 bytes at least */
      r.error = true;
      break;
    }
    g->answered = answered == 1;
    g->categories = alloc_list(k, sizeof(*g->categories));
    if (!g->categories) {
      controller__free_category_groups(groups, n);
      return fail(c, -ENOMEM, "out of memory");
    }
    g->count = k;
    for (size_t j = 0; j < k && !r.error; j++) {
      wire__get_str(&r, g->categories[j].name, sizeof(g->categories[j].name), WIRE_MAX_NAME);
      wire__get_str(&r, g->categories[j].description, sizeof(g->categories[j].description),
                    WIRE_MAX_DESCRIPTION);
    }
  }
  if (!wire__done(&r)) {
    controller__free_category_groups(groups, n);
    return malformed(c, kWhat);
  }
  *list = groups;
  *count = n;
  return 0;
}

int controller__watch_alert(controller_t* c) {
  if (c->watch_request_id != 0 || c->alert_ready) return 0;
  uint32_t id = begin(c, MSG_WATCH_ALERT);
  int status = send_request(c, "WatchAlert", NULL, 0);
  if (status == 0) c->watch_request_id = id;
  return status;
}

int controller__read_alert(controller_t* c, controller_alert_t* out) {
  if (!c->alert_ready && c->watch_request_id != 0) {
    int status = controller__poll(c);
    if (status != 0) {
      c->watch_request_id = 0;
      return status;
    }
  }
  if (!c->alert_ready) return 0;
  *out = c->alert;
  c->alert_ready = false;
  return 1;
}

static bool put_str_list(wire_writer_t* w, const char* const* items, size_t count) {
  if (count > WIRE_MAX_CATEGORIES) return false;
  wire__put_u16(w, (uint16_t)count);
  for (size_t i = 0; i < count; i++) {
    size_t length = strlen(items[i]);
    if (length > WIRE_MAX_NAME) return false;
    wire__put_str(w, items[i], length);
  }
  return true;
}

int controller__initialize_tracing(controller_t* c, const controller_config_t* config,
                                   int archive_fd) {
  static const char kWhat[] = "InitializeTracing";
  uint32_t id = begin(c, MSG_INITIALIZE_TRACING);
  wire_writer_t* w = c->writer;
  if (!put_str_list(w, config->categories, config->category_count))
    return fail(c, -EINVAL, "%s: more than %d categories, or a name longer than %d bytes", kWhat,
                WIRE_MAX_CATEGORIES, WIRE_MAX_NAME);
  wire__put_u32(w, config->buffer_size_mb);
  wire__put_u64(w, config->start_timeout_ms);
  wire__put_u8(w, config->buffering_mode);
  wire__put_u64(w, config->stop_timeout_ms);
  if (config->spec_count > WIRE_MAX_PROVIDERS)
    return fail(c, -EINVAL, "%s: more than %d provider specs", kWhat, WIRE_MAX_PROVIDERS);
  wire__put_u16(w, (uint16_t)config->spec_count);
  for (size_t i = 0; i < config->spec_count; i++) {
    const controller_spec_t* s = &config->specs[i];
    if (strlen(s->name) > WIRE_MAX_NAME)
      return fail(c, -EINVAL, "%s: provider name '%s' is longer than %d bytes", kWhat, s->name,
                  WIRE_MAX_NAME);
    wire__put_cstr(w, s->name);
    wire__put_u32(w, s->buffer_size_mb);
    if (!put_str_list(w, s->categories, s->category_count))
      return fail(c, -EINVAL, "%s: provider '%s': too many categories or one too long", kWhat,
                  s->name);
  }
  int status = send_request(c, kWhat, &archive_fd, 1);
  if (status == 0) c->initialize_request_id = id;
  return status;
}

int controller__start_tracing(controller_t* c, uint8_t disposition,
                              const char* const* additional_categories, size_t count,
                              uint32_t* start_error) {
  static const char kWhat[] = "StartTracing";
  *start_error = 0;
  uint32_t id = begin(c, MSG_START_TRACING);
  wire__put_u8(c->writer, disposition);
  if (!put_str_list(c->writer, additional_categories, count))
    return fail(c, -EINVAL, "%s: more than %d categories, or a name longer than %d bytes", kWhat,
                WIRE_MAX_CATEGORIES, WIRE_MAX_NAME);
  int status = send_request(c, kWhat, NULL, 0);
  wire_reader_t r;
  if (status == 0) status = await_reply(c, kWhat, id, MSG_START_RESULT, &r);
  if (status != 0) return status;
  uint32_t error = wire__get_u32(&r);
  uint32_t session_id = wire__get_u32(&r);
  if (!wire__done(&r) || error > CONTROLLER_START_TERMINATING) return malformed(c, kWhat);
  *start_error = error;
  if (session_id != 0) c->session_id = session_id;
  return 0;
}

static int stats_reply(controller_t* c, const char* what, uint16_t request, uint16_t reply,
                       bool write_results, controller_stats_t** stats, size_t* count) {
  *stats = NULL;
  *count = 0;
  uint32_t id = begin(c, request);
  wire__put_u8(c->writer, write_results ? 1 : 0);
  wire_reader_t r;
  uint16_t n = 0;
  int status;
  controller_stats_t* items = request_list(c, what, id, NULL, 0, reply, WIRE_MAX_PROVIDERS,
                                           sizeof(*items), &r, &n, &status);
  if (!items) return status;
  bool valid = true;
  for (size_t i = 0; i < n && !r.error; i++) {
    controller_stats_t* s = &items[i];
    wire__get_str(&r, s->name, sizeof(s->name), WIRE_MAX_NAME);
    s->pid = wire__get_u64(&r);
    s->buffering_mode = wire__get_u8(&r);
    s->wrapped_count = wire__get_u32(&r);
    s->records_dropped = wire__get_u64(&r);
    s->durable_percent = wire__get_u32(&r);
    s->non_durable_bytes = wire__get_u64(&r);
    s->state = wire__get_u8(&r);
    wire__get_str(&r, s->damage, sizeof(s->damage), WIRE_MAX_DAMAGE);
    s->damaged_records = wire__get_u64(&r);
    if (s->buffering_mode > 2 || s->durable_percent > 100 || s->state < CONTROLLER_STOPPED ||
        s->state > CONTROLLER_DIED)
      valid = false;
  }
  if (!valid || !wire__done(&r)) {
    free(items);
    return malformed(c, what);
  }
  *stats = items;
  *count = n;
  return 0;
}

int controller__stop_tracing(controller_t* c, bool write_results, controller_stats_t** stats,
                             size_t* count) {
  return stats_reply(c, "StopTracing", MSG_STOP_TRACING, MSG_STOP_RESULT, write_results, stats,
                     count);
}

int controller__terminate_tracing(controller_t* c, bool write_results, controller_stats_t** stats,
                                  size_t* count) {
  return stats_reply(c, "TerminateTracing", MSG_TERMINATE_TRACING, MSG_TERMINATE_RESULT,
                     write_results, stats, count);
}

int controller__snapshot(controller_t* c, int snapshot_fd, controller_snapshot_stats_t** stats,
                         size_t* count) {
  static const char kWhat[] = "Snapshot";
  *stats = NULL;
  *count = 0;
  uint32_t id = begin(c, MSG_SNAPSHOT);
  wire_reader_t r;
  uint16_t n = 0;
  int status;
  controller_snapshot_stats_t* items =
      request_list(c, kWhat, id, &snapshot_fd, 1, MSG_SNAPSHOT_RESULT, WIRE_MAX_PROVIDERS,
                   sizeof(*items), &r, &n, &status);
  if (!items) return status;
  bool valid = true;
  for (size_t i = 0; i < n && !r.error; i++) {
    controller_snapshot_stats_t* s = &items[i];
    wire__get_str(&r, s->name, sizeof(s->name), WIRE_MAX_NAME);
    s->pid = wire__get_u64(&r);
    s->buffering_mode = wire__get_u8(&r);
    s->records = wire__get_u64(&r);
    s->records_dropped = wire__get_u64(&r);
    s->discarded = wire__get_u64(&r);
    s->durable_missing = wire__get_u64(&r);
    s->copy_ns = wire__get_u64(&r);
    s->check_ns = wire__get_u64(&r);
    wire__get_str(&r, s->damage, sizeof(s->damage), WIRE_MAX_DAMAGE);
    if (s->buffering_mode > 1) valid = false; /* never streaming */
  }
  if (!valid || !wire__done(&r)) {
    free(items);
    return malformed(c, kWhat);
  }
  *stats = items;
  *count = n;
  return 0;
}

void controller__free_sessions(controller_session_t* list, size_t count) {
  for (size_t i = 0; list && i < count; i++) {
    for (size_t j = 0; j < list[i].category_count; j++) free(list[i].categories[j]);
    free(list[i].categories);
  }
  free(list);
}

int controller__list_sessions(controller_t* c, controller_session_t** list, size_t* count) {
  static const char kWhat[] = "ListSessions";
  *list = NULL;
  *count = 0;
  uint32_t id = begin(c, MSG_LIST_SESSIONS);
  wire_reader_t r;
  uint16_t n = 0;
  int status;
  controller_session_t* items = request_list(c, kWhat, id, NULL, 0, MSG_SESSIONS, WIRE_MAX_SESSIONS,
                                             sizeof(*items), &r, &n, &status);
  if (!items) return status;
  bool valid = true;
  for (size_t i = 0; i < n && !r.error && valid; i++) {
    controller_session_t* s = &items[i];
    s->id = wire__get_u32(&r);
    s->client_pid = wire__get_u64(&r);
    s->client_uid = wire__get_u32(&r);
    s->buffering_mode = wire__get_u8(&r);
    s->buffer_size_mb = wire__get_u32(&r);
    uint16_t k = wire__get_u16(&r);
    if (r.error || k > WIRE_MAX_CATEGORIES || (size_t)k * 2 > r.length - r.pos) {
      r.error = true;
      break;
    }
    s->categories = alloc_list(k, sizeof(char*));
    if (!s->categories) {
      controller__free_sessions(items, n);
      return fail(c, -ENOMEM, "out of memory");
    }
    for (size_t j = 0; j < k && !r.error; j++) {
      char name[WIRE_MAX_NAME + 1];
      wire__get_str(&r, name, sizeof(name), WIRE_MAX_NAME);
      if (r.error) break;
      if (!(s->categories[j] = strdup(name))) {
        controller__free_sessions(items, n);
        return fail(c, -ENOMEM, "out of memory");
      }
      s->category_count = j + 1;
    }
    s->start_realtime_ns = wire__get_u64(&r);
    s->state = wire__get_u8(&r);
    s->bytes = wire__get_u64(&r);
    s->providers = wire__get_u32(&r);
    if (s->buffering_mode > 2 || s->state < CONTROLLER_SESSION_INITIALIZED ||
        s->state > CONTROLLER_SESSION_TERMINATING)
      valid = false;
  }
  if (!valid || !wire__done(&r)) {
    controller__free_sessions(items, n);
    return malformed(c, kWhat);
  }
  *list = items;
  *count = n;
  return 0;
}

int controller__stop_session(controller_t* c, uint32_t session_id) {
  static const char kWhat[] = "StopSession";
  uint32_t id = begin(c, MSG_STOP_SESSION);
  wire__put_u32(c->writer, session_id);
  int status = send_request(c, kWhat, NULL, 0);
  wire_reader_t r;
  if (status == 0) status = await_reply(c, kWhat, id, MSG_STOP_SESSION_RESULT, &r);
  if (status != 0) return status;
  uint32_t stopped = wire__get_u32(&r);
  if (!wire__done(&r) || stopped != session_id) return malformed(c, kWhat);
  return 0;
}

const char* controller__session_state_name(uint8_t state) {
  static const char* const kNames[] = {"?",        "initialized", "starting",   "started",
                                       "stopping", "stopped",     "terminating"};
  return state < sizeof(kNames) / sizeof(kNames[0]) ? kNames[state] : "?";
}

const char* controller__mode_name(uint8_t buffering_mode) {
  switch (buffering_mode) {
    case 0:
      return "oneshot";
    case 1:
      return "circular";
    case 2:
      return "streaming";
    default:
      return "?";
  }
}

const char* controller__start_error_name(uint32_t start_error) {
  switch (start_error) {
    case CONTROLLER_START_OK:
      return "ok";
    case CONTROLLER_START_NOT_INITIALIZED:
      return "not initialized";
    case CONTROLLER_START_ALREADY_STARTED:
      return "already started";
    case CONTROLLER_START_STOPPING:
      return "stopping";
    case CONTROLLER_START_TERMINATING:
      return "terminating";
    default:
      return "?";
  }
}

const char* controller__state_name(uint8_t state) {
  switch (state) {
    case CONTROLLER_STOPPED:
      return "stopped";
    case CONTROLLER_TERMINATED:
      return "terminated";
    case CONTROLLER_NOT_STOPPED_IN_TIME:
      return "did not stop in time";
    case CONTROLLER_DIED:
      return "gone";
    default:
      return "?";
  }
}

int controller__archive_ring(controller_t* c, uint32_t size, archive_ring_t** ring, bool* refused) {
  static const char kWhat[] = "ArchiveRing";
  *ring = NULL;
  *refused = false;
  uint32_t id = begin(c, MSG_ARCHIVE_RING);
  wire__put_u32(c->writer, size);
  int status = send_request(c, kWhat, NULL, 0);
  wire_reader_t r = {0};
  if (status == 0) status = await_reply(c, kWhat, id, MSG_ARCHIVE_RING_RESULT, &r);
  if (status != 0) {
    /* an answer, MSG_ERROR: the manager made no ring */
    *refused = r.type == MSG_ERROR && r.request_id == id && c->fd >= 0;
    return status;
  }
  uint32_t got = wire__get_u32(&r);
  if (!wire__done(&r) || got != size || c->received_fd_count != 3) return malformed(c, kWhat);
  c->received_fd_count = 0; /* taken: archive_ring__attach closes them */
  *ring = archive_ring__attach(size, c->received_fds);
  if (!*ring)
    return fail(c, -errno, "%s: the trace manager's ring is not usable: %s", kWhat,
                strerror(errno));
  return 0;
}
