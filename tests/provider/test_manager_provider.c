/* libtrace-provider against a trace manager: the test process is both the
 * traced program (its provider, recording with <trace/event.h>) and a small
 * fake manager speaking src/protocol/wire.h on a temporary FXTRACE_SOCKET:
 * it accepts HELLO + REGISTER_PROVIDER, hands the provider a memfd buffer and
 * a SOCK_SEQPACKET FIFO in INITIALIZE, drives START / STOP / TERMINATE, reads
 * the FIFO packets, answers streaming saves, and turns the buffer into an
 * archive (buffer_scan__records) checked with the reader.
 *
 *   test_manager_provider SCENARIO
 *     oneshot      categories, every event present, additional categories at
 *                  a second start, a second INITIALIZE ignored, TERMINATE
 *     circular     the newest events kept after wrapping
 *     streaming    SAVE_BUFFER / BUFFER_SAVED; received + dropped == attempted
 *     sync         synchronous registration with and without the started hint
 *     register_wait trace_provider_create_with_name() while a trace runs
 *                  returns started (its first event recorded); with none
 *                  running it does not wait; a manager that never starts
 *                  it: the wait ends at FXTRACE_REGISTER_TIMEOUT; a bad
 *                  value is reported
 *     known        known categories round trip, and their limits
 *     manager_dies FIFO closed (trace ends, a new trace works), a bad FIFO
 *                  packet, then the connection closed mid-trace
 *     no_manager   inert (no thread, no message), also with a stale socket
 *     output_wins  FXTRACE_OUTPUT set: file mode, the manager is not contacted
 *     fork         a fork child neither records nor keeps the connection open */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "engine/buffer_scan.h"
#include "lsan_fork_child.h"
#include "protocol/wire.h"
#include "test.h"
#include "trace-engine/handler.h"
#include "trace-provider/provider.h"
#include "trace-reader/reader.h"
#include "trace/event.h"

enum { TIMEOUT_MS = 5000 };

/* The manager's session id the fake uses unless a scenario says otherwise. */
#define FAKE_SESSION_ID 7u

/* ---- the fake manager ---- */

typedef struct fake {
  char dir[64];
  char path[108];
  int listen_fd;
  int conn; /* the provider's connection */
  int fifo; /* our end */
  uint8_t* map;
  size_t size;
  uint8_t mode;
  /* streaming saves, in order */
  uint8_t* saved;
  size_t saved_length, saved_capacity;
  uint64_t saved_durable_end;
  uint32_t saves;
  int64_t last_wrapped;
  uint32_t session_id; /* the manager's session this fake trace is (FAKE_SESSION_ID) */
} fake_t;

static wire_writer_t w;
static uint8_t rbuf[WIRE_MAX_MESSAGE];

static void fake_listen(fake_t* f) {
  memset(f, 0, sizeof(*f));
  f->conn = f->fifo = -1;
  f->last_wrapped = -1;
  f->session_id = FAKE_SESSION_ID;
  snprintf(f->dir, sizeof(f->dir), "/tmp/fxtrace-mp-XXXXXX");
  ASSERT_TRUE(mkdtemp(f->dir) != NULL);
  snprintf(f->path, sizeof(f->path), "%s/manager.sock", f->dir);
  f->listen_fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
  ASSERT_TRUE(f->listen_fd >= 0);
  struct sockaddr_un addr = {0};
  addr.sun_family = AF_UNIX;
  strcpy(addr.sun_path, f->path);
  ASSERT_EQ(bind(f->listen_fd, (struct sockaddr*)&addr, sizeof(addr)), 0);
  ASSERT_EQ(listen(f->listen_fd, 8), 0);
  setenv("FXTRACE_SOCKET", f->path, 1);
}

static void fake_cleanup(fake_t* f) {
  if (f->conn >= 0) close(f->conn);
  if (f->fifo >= 0) close(f->fifo);
  if (f->listen_fd >= 0) close(f->listen_fd);
  if (f->map) munmap(f->map, f->size);
  free(f->saved);
  unlink(f->path);
  rmdir(f->dir);
}

static bool readable(int fd, int timeout_ms) {
  struct pollfd pfd = {fd, POLLIN, 0};
  int n;
  do n = poll(&pfd, 1, timeout_ms);
  while (n < 0 && errno == EINTR);
  return n > 0;
}

/* Receives one message of `type` (fails on anything else). */
static void recv_message(int fd, uint16_t type, wire_reader_t* r, int* fds, size_t* fd_count) {
  ASSERT_TRUE(readable(fd, TIMEOUT_MS));
  int local_fds[WIRE_MAX_FDS];
  size_t local_count = 0;
  ssize_t n = wire__recv(fd, rbuf, fds ? fds : local_fds, fd_count ? fd_count : &local_count);
  ASSERT_TRUE(n > 0);
  ASSERT_TRUE(wire__open(r, rbuf, (size_t)n) == NULL);
  ASSERT_EQ(r->type, type);
}

/* Accepts the provider: HELLO(provider), REGISTER_PROVIDER. */
static void fake_accept(fake_t* f, const char* name, uint8_t synchronous) {
  ASSERT_TRUE(readable(f->listen_fd, TIMEOUT_MS));
  f->conn = accept4(f->listen_fd, NULL, NULL, SOCK_CLOEXEC);
  ASSERT_TRUE(f->conn >= 0);
  wire_reader_t r;
  recv_message(f->conn, MSG_HELLO, &r, NULL, NULL);
  ASSERT_EQ(wire__get_u8(&r), WIRE_ROLE_PROVIDER);
  ASSERT_TRUE(wire__done(&r));
  recv_message(f->conn, MSG_REGISTER_PROVIDER, &r, NULL, NULL);
  ASSERT_EQ(wire__get_u64(&r), (uint64_t)getpid());
  char got[WIRE_MAX_NAME + 1];
  wire__get_str(&r, got, sizeof(got), WIRE_MAX_NAME);
  ASSERT_EQ(wire__get_u8(&r), synchronous);
  ASSERT_TRUE(wire__done(&r));
  ASSERT_STREQ(got, name);
}

static void put_list(const char* const* list) {
  uint16_t n = 0;
  while (list && list[n]) n++;
  wire__put_u16(&w, n);
  for (uint16_t i = 0; i < n; i++) wire__put_cstr(&w, list[i]);
}

/* The session id this fake manager gives its one session (wire.h, "Sessions"). */

/* STOP or TERMINATE of the fake's session. */
static void send_simple(int fd, uint16_t type, uint32_t session_id) {
  wire__begin(&w, type, 0);
  wire__put_u32(&w, session_id);
  ASSERT_TRUE(wire__end(&w));
  ASSERT_EQ(wire__send(fd, &w, NULL, 0), 0);
}

/* INITIALIZE with a fresh memfd and FIFO; returns our FIFO end (also kept
 * in f unless `spare`). */
static int fake_initialize(fake_t* f, uint8_t mode, size_t size, const char* const* categories,
                           bool spare) {
  int memfd = memfd_create("fxtrace-test-buffer", MFD_CLOEXEC);
  ASSERT_TRUE(memfd >= 0);
  ASSERT_EQ(ftruncate(memfd, (off_t)size), 0);
  int pair[2];
  ASSERT_EQ(socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, pair), 0);
  wire__begin(&w, MSG_INITIALIZE, 0);
  wire__put_u32(&w, f->session_id);
  wire__put_u8(&w, mode);
  put_list(categories);
  ASSERT_TRUE(wire__end(&w));
  int fds[2] = {memfd, pair[1]};
  ASSERT_EQ(wire__send(f->conn, &w, fds, 2), 0);
  close(pair[1]);
  if (!spare) {
    f->map = mmap(NULL, size, PROT_READ, MAP_SHARED, memfd, 0);
    ASSERT_TRUE(f->map != MAP_FAILED);
    f->size = size;
    f->mode = mode;
    f->fifo = pair[0];
    f->saved_length = 0;
    f->saved_durable_end = 0;
    f->saves = 0;
    f->last_wrapped = -1;
  }
  close(memfd);
  return pair[0];
}

static void fake_start(fake_t* f, uint8_t disposition, const char* const* additional) {
  wire__begin(&w, MSG_START, 0);
  wire__put_u32(&w, f->session_id);
  wire__put_u8(&w, disposition);
  put_list(additional);
  ASSERT_TRUE(wire__end(&w));
  ASSERT_EQ(wire__send(f->conn, &w, NULL, 0), 0);
}

static int append_saved(void* arg, const void* data, size_t bytes) {
  fake_t* f = arg;
  if (f->saved_length + bytes > f->saved_capacity) {
    size_t capacity = f->saved_capacity ? f->saved_capacity * 2 : 1 << 20;
    while (capacity < f->saved_length + bytes) capacity *= 2;
    f->saved = realloc(f->saved, capacity);
    ASSERT_TRUE(f->saved != NULL);
    f->saved_capacity = capacity;
  }
  memcpy(f->saved + f->saved_length, data, bytes);
  f->saved_length += bytes;
  return 0;
}

/* Reads FIFO packets until `request` arrives, answering SAVE_BUFFER as the
 * manager does (PROTOCOL.md §9). Returns the packet. */
static fifo_packet_t fake_pump_until(fake_t* f, uint16_t request) {
  for (;;) {
    ASSERT_TRUE(readable(f->fifo, TIMEOUT_MS));
    fifo_packet_t p;
    ASSERT_EQ(recv(f->fifo, &p, sizeof(p), 0), (ssize_t)sizeof(p));
    ASSERT_EQ(p.data16, 0u);
    if (p.request == FIFO_SAVE_BUFFER && request != FIFO_SAVE_BUFFER) {
      ASSERT_EQ(f->mode, TRACE_BUFFERING_MODE_STREAMING);
      ASSERT_EQ((int64_t)p.data32, f->last_wrapped + 1); /* in sequence */
      ASSERT_TRUE(p.data64 >= f->saved_durable_end);
      ASSERT_EQ(buffer_scan__save(f->map, f->size, p.data32, f->saved_durable_end, p.data64,
                                  append_saved, f, NULL),
                0);
      f->saved_durable_end = p.data64;
      f->last_wrapped = p.data32;
      f->saves++;
      fifo_packet_t reply = {FIFO_BUFFER_SAVED, 0, p.data32, p.data64};
      ASSERT_EQ(send(f->fifo, &reply, sizeof(reply), MSG_NOSIGNAL), (ssize_t)sizeof(reply));
      continue;
    }
    ASSERT_EQ(p.request, request);
    return p;
  }
}

static void fake_expect_started(fake_t* f) {
  fifo_packet_t p = fake_pump_until(f, FIFO_STARTED);
  ASSERT_EQ(p.data32, FIFO_PROTOCOL_VERSION);
  ASSERT_EQ(p.data64, 0u);
}

static void fake_stop(fake_t* f) {
  send_simple(f->conn, MSG_STOP, f->session_id);
  fifo_packet_t p = fake_pump_until(f, FIFO_STOPPED);
  ASSERT_EQ(p.data32, 0u);
  ASSERT_EQ(p.data64, 0u);
}

/* The provider closes the FIFO when terminated (PROTOCOL.md §3). */
static void expect_fifo_closed(int fifo) {
  for (;;) {
    ASSERT_TRUE(readable(fifo, TIMEOUT_MS));
    fifo_packet_t p;
    ssize_t n = recv(fifo, &p, sizeof(p), 0);
    if (n == 0) return;
    ASSERT_EQ(n, (ssize_t)sizeof(p)); /* e.g. a STOPPED before the close */
  }
}

static void fake_terminate(fake_t* f) {
  send_simple(f->conn, MSG_TERMINATE, f->session_id);
  expect_fifo_closed(f->fifo);
  close(f->fifo);
  f->fifo = -1;
  munmap(f->map, f->size);
  f->map = NULL;
}

/* ---- the archive ---- */

typedef struct counts {
  uint64_t by_name[4]; /* "event", "gfx", "other", "child" */
  uint64_t events;
  uint64_t max_n, min_n;
  uint8_t* seen; /* per n of "event", when not NULL */
  uint64_t seen_size;
  uint64_t duplicates;
  char provider[128];
} counts_t;

static const char* const names[4] = {"event", "gfx", "other", "child"};

static void count_archive(const uint8_t* data, size_t length, counts_t* c) {
  trace_reader_t* r = trace_reader_open_memory(data, length, NULL);
  ASSERT_TRUE(r != NULL);
  trace_record_t rec;
  int rc;
  c->min_n = UINT64_MAX;
  while ((rc = trace_reader_next(r, &rec)) != TRACE_READ_END) {
    if (rc != TRACE_READ_RECORD)
      TEST_FAIL("archive: %s at %llu", trace_reader_error(r).message,
                (unsigned long long)trace_reader_error(r).offset);
    /* the wall-clock anchors' provider (docs/merge.md#anchors) aside */
    if (rec.type == 0 && rec.metadata.type == 1 &&
        strcmp(rec.metadata.provider_name.data, "fxtrace") != 0)
      snprintf(c->provider, sizeof(c->provider), "%s", rec.metadata.provider_name.data);
    if (rec.type != 4) continue;
    if (strcmp(rec.event.category.data, "fxtrace:clock") == 0) continue; /* the anchors */
    c->events++;
    for (int i = 0; i < 4; i++)
      if (strcmp(rec.event.name.data, names[i]) == 0) c->by_name[i]++;
    if (strcmp(rec.event.name.data, "event") == 0) {
      ASSERT_EQ(rec.event.args.count, 1u);
      uint64_t n = rec.event.args.items[0].uint64_value;
      if (n > c->max_n) c->max_n = n;
      if (n < c->min_n) c->min_n = n;
      if (c->seen && n < c->seen_size) {
        if (c->seen[n]) c->duplicates++;
        c->seen[n] = 1;
      }
    }
  }
  trace_reader_close(r);
}

/* Prologue + streamed saves + what the buffer holds now, as the manager
 * assembles it (PROTOCOL.md §10.4). */
static void fake_collect(fake_t* f, counts_t* c) {
  trace_buffer_header_t h;
  ASSERT_TRUE(buffer_scan__header(f->map, f->size, &h) == NULL);
  fake_t out = {0};
  /* the header's count and the writers' drop counters, as the manager takes it */
  ASSERT_EQ(
      buffer__emit_prologue(1, "mp", buffer_scan__dropped(f->map, f->size, &h), append_saved, &out),
      0);
  if (f->saved_length) append_saved(&out, f->saved, f->saved_length);
  /* the segments this fake saved left out by its own count, as the manager
   * does: the provider may apply the last BUFFER_SAVED to the header only
   * after its STOPPED (a save made while stopping) */
  uint64_t saved_switches = f->last_wrapped >= 0 ? (uint64_t)f->last_wrapped + 1 : 0;
  ASSERT_EQ(buffer_scan__records_unsaved(f->map, f->size, f->saved_durable_end, saved_switches,
                                         append_saved, &out, NULL),
            0);
  count_archive(out.saved, out.saved_length, c);
  free(out.saved);
}

/* ---- the traced side ---- */

static void record_events(uint64_t from, uint64_t to) {
  for (uint64_t n = from; n < to; n++)
    TRACE_INSTANT("test", "event", TRACE_SCOPE_THREAD, "n", TA_UINT64(n));
}

static void record_others(int count) {
  for (int i = 0; i < count; i++) {
    TRACE_INSTANT("gfx.paint", "gfx", TRACE_SCOPE_THREAD);
    TRACE_INSTANT("other", "other", TRACE_SCOPE_THREAD);
  }
}

/* The provider's control thread ("fxtrace-control"), counted by name: a
 * sanitizer's runtime may run threads of its own. */
static int control_threads(void) {
  DIR* d = opendir("/proc/self/task");
  ASSERT_TRUE(d != NULL);
  int n = 0;
  struct dirent* e;
  while ((e = readdir(d)) != NULL) {
    if (e->d_name[0] == '.') continue;
    char path[300], comm[32] = "";
    snprintf(path, sizeof(path), "/proc/self/task/%s/comm", e->d_name);
    FILE* f = fopen(path, "r");
    if (!f) continue; /* the thread just ended */
    if (fgets(comm, sizeof(comm), f) && strcmp(comm, "fxtrace-control\n") == 0) n++;
    fclose(f);
  }
  closedir(d);
  return n;
}

/* Inert: no control thread (it ends only after terminating the engine), not
 * tracing; with no_engine, the engine was never initialized or has been
 * terminated and joined. */
static void assert_inert(bool no_engine) {
  for (int i = 0; i < TIMEOUT_MS && control_threads() != 0; i++) usleep(1000);
  ASSERT_EQ(control_threads(), 0);
  ASSERT_TRUE(!TRACE_ENABLED());
  trace_engine_stats_t stats;
  if (no_engine) ASSERT_EQ(trace_engine_get_stats(&stats), -ENODEV);
}

static void wait_state(trace_state_t state) {
  for (int i = 0; i < TIMEOUT_MS && trace_state() != state; i++) usleep(1000);
  ASSERT_EQ(trace_state(), state);
}

/* ---- scenarios ---- */

static void scenario_oneshot(void) {
  fake_t f;
  fake_listen(&f);
  trace_provider_t* p = trace_provider_create_with_name("mp_oneshot");
  ASSERT_TRUE(p != NULL);
  ASSERT_EQ(control_threads(), 1);
  fake_accept(&f, "mp_oneshot", 0);
  const char* const categories[] = {"test", "gfx*", NULL};
  fake_initialize(&f, TRACE_BUFFERING_MODE_ONESHOT, 1 << 20, categories, false);
  /* a second INITIALIZE before TERMINATE is ignored: its FIFO is closed */
  int spare = fake_initialize(&f, TRACE_BUFFERING_MODE_ONESHOT, 1 << 16, NULL, true);
  expect_fifo_closed(spare);
  close(spare);
  ASSERT_TRUE(!TRACE_ENABLED());
  fake_start(&f, TRACE_START_CLEAR_ENTIRE_BUFFER, NULL);
  fake_expect_started(&f);
  ASSERT_TRUE(TRACE_ENABLED());
  record_events(0, 1000);
  record_others(10);
  fake_stop(&f);
  ASSERT_TRUE(!TRACE_ENABLED());
  counts_t c = {0};
  c.seen = calloc(1000, 1);
  c.seen_size = 1000;
  fake_collect(&f, &c);
  ASSERT_EQ(c.by_name[0], 1000u);
  ASSERT_EQ(c.by_name[1], 10u); /* gfx* */
  ASSERT_EQ(c.by_name[2], 0u);  /* "other" is not enabled */
  ASSERT_EQ(c.duplicates, 0u);
  for (int i = 0; i < 1000; i++) ASSERT_EQ(c.seen[i], 1u);
  free(c.seen);

  /* a second round in the same session, with an additional category */
  const char* const additional[] = {"other", NULL};
  fake_start(&f, TRACE_START_CLEAR_ENTIRE_BUFFER, additional);
  fake_expect_started(&f);
  record_events(0, 5);
  record_others(3);
  fake_stop(&f);
  counts_t c2 = {0};
  fake_collect(&f, &c2);
  ASSERT_EQ(c2.by_name[0], 5u);
  ASSERT_EQ(c2.by_name[1], 3u);
  ASSERT_EQ(c2.by_name[2], 3u);

  /* STOP when stopped is ignored; TERMINATE closes the FIFO */
  send_simple(f.conn, MSG_STOP, f.session_id);
  fake_terminate(&f);

  /* a new session after TERMINATE */
  fake_initialize(&f, TRACE_BUFFERING_MODE_ONESHOT, 1 << 20, NULL, false);
  fake_start(&f, TRACE_START_CLEAR_ENTIRE_BUFFER, NULL);
  fake_expect_started(&f);
  record_events(0, 7);
  record_others(2);
  /* TERMINATE while started: stopped first (STOPPED), then the FIFO closes */
  send_simple(f.conn, MSG_TERMINATE, f.session_id);
  fake_pump_until(&f, FIFO_STOPPED);
  expect_fifo_closed(f.fifo);
  counts_t c3 = {0};
  fake_collect(&f, &c3);
  ASSERT_EQ(c3.by_name[0], 7u);
  ASSERT_EQ(c3.by_name[1], 2u);
  ASSERT_EQ(c3.by_name[2], 2u); /* no categories: all */
  close(f.fifo);
  f.fifo = -1;

  trace_provider_destroy(p);
  /* destroy closes the connection */
  ASSERT_TRUE(readable(f.conn, TIMEOUT_MS));
  ASSERT_EQ(recv(f.conn, rbuf, sizeof(rbuf), 0), 0);
  fake_cleanup(&f);
}

/* Sessions (wire.h, "Sessions"): one provider in several traces at once,
 * each with its own buffer, FIFO, mode and categories; a second INITIALIZE
 * of a session, or one beyond WIRE_MAX_SESSIONS, gets its FIFO closed and
 * changes nothing else; stopping or terminating one leaves the others. */
static void scenario_sessions(void) {
  fake_t f;
  fake_listen(&f);
  trace_provider_t* p = trace_provider_create_with_name("mp_sessions");
  ASSERT_TRUE(p != NULL);
  fake_accept(&f, "mp_sessions", 0);
  const char* const test[] = {"test", NULL};
  const char* const gfx[] = {"gfx*", NULL};
  fake_t t[WIRE_MAX_SESSIONS];
  for (unsigned i = 0; i < WIRE_MAX_SESSIONS; i++) {
    t[i] = f;
    t[i].session_id = 100 + i;
  }
  fake_initialize(&t[0], TRACE_BUFFERING_MODE_ONESHOT, 1 << 20, test, false);
  fake_initialize(&t[1], TRACE_BUFFERING_MODE_CIRCULAR, 1 << 20, test, false);
  fake_t again = t[0]; /* session 100 a second time */
  int spare = fake_initialize(&again, TRACE_BUFFERING_MODE_ONESHOT, 1 << 16, NULL, true);
  expect_fifo_closed(spare);
  close(spare);
  fake_initialize(&t[2], TRACE_BUFFERING_MODE_ONESHOT, 1 << 20, gfx, false);
  fake_initialize(&t[3], TRACE_BUFFERING_MODE_ONESHOT, 1 << 20, test, false);
  fake_t fifth = f;
  fifth.session_id = 200;
  spare = fake_initialize(&fifth, TRACE_BUFFERING_MODE_ONESHOT, 1 << 16, NULL, true);
  expect_fifo_closed(spare);
  close(spare);
  /* a STOP or TERMINATE of a session the provider is not in: ignored */
  send_simple(f.conn, MSG_STOP, 200);
  send_simple(f.conn, MSG_TERMINATE, 200);

  for (unsigned i = 0; i < 3; i++) { /* the fourth is initialized, never started */
    fake_start(&t[i], TRACE_START_CLEAR_ENTIRE_BUFFER, NULL);
    fake_expect_started(&t[i]);
  }
  record_events(0, 500);
  record_others(5);
  fake_stop(&t[1]); /* the others go on */
  record_events(500, 600);
  fake_stop(&t[0]);
  fake_stop(&t[2]);
  ASSERT_TRUE(!TRACE_ENABLED());

  counts_t c[3];
  for (unsigned i = 0; i < 3; i++) {
    memset(&c[i], 0, sizeof(c[i]));
    c[i].seen = calloc(600, 1);
    c[i].seen_size = 600;
    fake_collect(&t[i], &c[i]);
    ASSERT_EQ(c[i].duplicates, 0u);
  }
  ASSERT_EQ(c[0].by_name[0], 600u);
  for (int n = 0; n < 600; n++) ASSERT_EQ(c[0].seen[n], 1u);
  ASSERT_EQ(c[0].by_name[1], 0u);
  ASSERT_EQ(c[1].by_name[0], 500u);
  for (int n = 0; n < 500; n++) ASSERT_EQ(c[1].seen[n], 1u);
  ASSERT_EQ(c[2].by_name[0], 0u);
  ASSERT_EQ(c[2].by_name[1], 5u); /* gfx* only */
  ASSERT_EQ(c[2].by_name[2], 0u);
  for (unsigned i = 0; i < 3; i++) {
    trace_buffer_header_t h;
    ASSERT_TRUE(buffer_scan__header(t[i].map, t[i].size, &h) == NULL);
    ASSERT_EQ(buffer_scan__dropped(t[i].map, t[i].size, &h), 0u);
    free(c[i].seen);
  }
  /* terminating one leaves the others' FIFOs open */
  fake_terminate(&t[1]);
  ASSERT_TRUE(!readable(t[0].fifo, 100));
  for (unsigned i = 0; i < WIRE_MAX_SESSIONS; i++)
    if (i != 1) fake_terminate(&t[i]);
  trace_provider_destroy(p);
  ASSERT_TRUE(readable(f.conn, TIMEOUT_MS));
  ASSERT_EQ(recv(f.conn, rbuf, sizeof(rbuf), 0), 0);
  fake_cleanup(&f);
}

static void scenario_circular(void) {
  fake_t f;
  fake_listen(&f);
  trace_provider_t* p = trace_provider_create_with_name("mp_circular");
  fake_accept(&f, "mp_circular", 0);
  fake_initialize(&f, TRACE_BUFFERING_MODE_CIRCULAR, 64 << 10, NULL, false);
  fake_start(&f, TRACE_START_CLEAR_ENTIRE_BUFFER, NULL);
  fake_expect_started(&f);
  record_events(0, 100000);
  fake_stop(&f);
  const trace_buffer_header_t* h = (const trace_buffer_header_t*)f.map;
  ASSERT_TRUE(h->wrapped_count > 0);
  counts_t c = {0};
  fake_collect(&f, &c);
  ASSERT_TRUE(c.by_name[0] > 100);
  ASSERT_TRUE(c.by_name[0] < 100000);
  ASSERT_EQ(c.max_n, 99999u);                     /* the newest are kept */
  ASSERT_EQ(c.max_n - c.min_n + 1, c.by_name[0]); /* a contiguous tail */
  fake_terminate(&f);
  trace_provider_destroy(p);
  fake_cleanup(&f);
}

enum { STREAM_EVENTS = 300000 };
static volatile bool recorder_done;

static void* recorder(void* arg) {
  (void)arg;
  for (uint64_t n = 0; n < STREAM_EVENTS; n++) {
    TRACE_INSTANT("test", "event", TRACE_SCOPE_THREAD, "n", TA_UINT64(n));
    if (n % 4096 == 4095) usleep(200); /* let most saves keep up */
  }
  __atomic_store_n(&recorder_done, true, __ATOMIC_RELEASE);
  return NULL;
}

static void scenario_streaming(void) {
  fake_t f;
  fake_listen(&f);
  trace_provider_t* p = trace_provider_create_with_name("mp_streaming");
  fake_accept(&f, "mp_streaming", 0);
  fake_initialize(&f, TRACE_BUFFERING_MODE_STREAMING, 256 << 10, NULL, false);
  fake_start(&f, TRACE_START_CLEAR_ENTIRE_BUFFER, NULL);
  fake_expect_started(&f);
  pthread_t t;
  ASSERT_EQ(pthread_create(&t, NULL, recorder, NULL), 0);
  /* answer saves while the recorder runs */
  while (!__atomic_load_n(&recorder_done, __ATOMIC_ACQUIRE)) {
    if (!readable(f.fifo, 10)) continue;
    fifo_packet_t pk;
    ASSERT_EQ(recv(f.fifo, &pk, sizeof(pk), MSG_PEEK), (ssize_t)sizeof(pk));
    ASSERT_EQ(pk.request, FIFO_SAVE_BUFFER);
    /* pump exactly this save: wait for a request that cannot come, but
     * return after one save by peeking first */
    ASSERT_EQ(recv(f.fifo, &pk, sizeof(pk), 0), (ssize_t)sizeof(pk));
    ASSERT_EQ((int64_t)pk.data32, f.last_wrapped + 1);
    ASSERT_EQ(buffer_scan__save(f.map, f.size, pk.data32, f.saved_durable_end, pk.data64,
                                append_saved, &f, NULL),
              0);
    f.saved_durable_end = pk.data64;
    f.last_wrapped = pk.data32;
    f.saves++;
    fifo_packet_t reply = {FIFO_BUFFER_SAVED, 0, pk.data32, pk.data64};
    ASSERT_EQ(send(f.fifo, &reply, sizeof(reply), MSG_NOSIGNAL), (ssize_t)sizeof(reply));
  }
  pthread_join(t, NULL);
  fake_stop(&f); /* answers saves made while stopping */
  ASSERT_TRUE(f.saves >= 4);
  trace_engine_stats_t stats;
  ASSERT_EQ(trace_engine_get_stats(&stats), 0);
  counts_t c = {0};
  c.seen = calloc(STREAM_EVENTS, 1);
  c.seen_size = STREAM_EVENTS;
  fake_collect(&f, &c);
  ASSERT_EQ(c.duplicates, 0u);
  ASSERT_EQ(c.by_name[0] + stats.records_dropped, (uint64_t)STREAM_EVENTS);
  ASSERT_TRUE(c.by_name[0] > STREAM_EVENTS / 10);
  { /* what the manager reads from the buffer: the same count */
    trace_buffer_header_t h;
    ASSERT_TRUE(buffer_scan__header(f.map, f.size, &h) == NULL);
    ASSERT_EQ(buffer_scan__dropped(f.map, f.size, &h), stats.records_dropped);
  }
  printf("streaming: %u saves, %llu received, %llu dropped\n", f.saves,
         (unsigned long long)c.by_name[0], (unsigned long long)stats.records_dropped);
  free(c.seen);
  fake_terminate(&f);
  trace_provider_destroy(p);
  fake_cleanup(&f);
}

typedef struct sync_args {
  fake_t* f;
  uint8_t started;
} sync_args_t;

/* The manager side of a synchronous registration: REGISTER_RESULT, then
 * (trace running) INITIALIZE + START as a manager does for a newcomer. */
static void* sync_manager(void* arg) {
  sync_args_t* a = arg;
  fake_accept(a->f, "mp_sync", 1);
  wire__begin(&w, MSG_REGISTER_RESULT, 1);
  wire__put_u32(&w, 0);
  wire__put_u8(&w, a->started);
  ASSERT_TRUE(wire__end(&w));
  ASSERT_EQ(wire__send(a->f->conn, &w, NULL, 0), 0);
  if (a->started) {
    fake_initialize(a->f, TRACE_BUFFERING_MODE_ONESHOT, 1 << 20, NULL, false);
    fake_start(a->f, TRACE_START_CLEAR_ENTIRE_BUFFER, NULL);
  }
  return NULL;
}

static void scenario_sync(void) {
  for (int started = 1; started >= 0; started--) {
    fake_t f;
    fake_listen(&f);
    sync_args_t args = {&f, (uint8_t)started};
    pthread_t t;
    ASSERT_EQ(pthread_create(&t, NULL, sync_manager, &args), 0);
    bool already = !started;
    trace_provider_t* p = trace_provider_create_synchronously("mp_sync", &already);
    ASSERT_TRUE(p != NULL);
    ASSERT_EQ(already, (bool)started);
    pthread_join(t, NULL);
    if (started) {
      fake_expect_started(&f);
      record_events(0, 50);
      fake_stop(&f);
      counts_t c = {0};
      fake_collect(&f, &c);
      ASSERT_EQ(c.by_name[0], 50u);
      fake_terminate(&f);
    }
    trace_provider_destroy(p);
    fake_cleanup(&f);
  }
  /* a manager that never answers: inert after the timeout, hint false */
  fake_t f;
  fake_listen(&f);
  bool already = true;
  int saved_stderr = dup(2);
  int devnull = open("/dev/null", O_WRONLY);
  dup2(devnull, 2);
  trace_provider_t* p = trace_provider_create_synchronously("mp_sync", &already);
  dup2(saved_stderr, 2);
  close(devnull);
  close(saved_stderr);
  ASSERT_TRUE(p != NULL);
  ASSERT_TRUE(!already);
  assert_inert(true);
  trace_provider_destroy(p);
  fake_cleanup(&f);
}

typedef struct wait_args {
  fake_t* f;
  uint8_t started; /* the REGISTER_RESULT hint */
  bool start;      /* then INITIALIZE + START, as a manager does for a newcomer */
} wait_args_t;

static void* wait_manager(void* arg) {
  wait_args_t* a = arg;
  fake_accept(a->f, "mp_wait", 1); /* a waiting registration asks for the answer */
  wire__begin(&w, MSG_REGISTER_RESULT, 1);
  wire__put_u32(&w, 0);
  wire__put_u8(&w, a->started);
  ASSERT_TRUE(wire__end(&w));
  ASSERT_EQ(wire__send(a->f->conn, &w, NULL, 0), 0);
  if (a->start) {
    /* slower than the provider would like: the wait covers it */
    usleep(100 * 1000);
    fake_initialize(a->f, TRACE_BUFFERING_MODE_ONESHOT, 1 << 20, NULL, false);
    usleep(100 * 1000);
    fake_start(a->f, TRACE_START_CLEAR_ENTIRE_BUFFER, NULL);
  }
  return NULL;
}

static double elapsed_ms(const struct timespec* since) {
  struct timespec now;
  clock_gettime(CLOCK_MONOTONIC, &now);
  return (double)(now.tv_sec - since->tv_sec) * 1e3 + (double)(now.tv_nsec - since->tv_nsec) / 1e6;
}

/* Runs trace_provider_create_with_name() against a fake manager answering
 * per `args`; returns the provider; *ms: how long the call took; stderr
 * goes to `err_path` when not NULL. */
static trace_provider_t* create_waiting(wait_args_t* args, double* ms, const char* err_path) {
  pthread_t t;
  ASSERT_EQ(pthread_create(&t, NULL, wait_manager, args), 0);
  int saved_stderr = -1;
  if (err_path) {
    saved_stderr = dup(2);
    int fd = open(err_path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    ASSERT_TRUE(fd >= 0);
    dup2(fd, 2);
    close(fd);
  }
  struct timespec start;
  clock_gettime(CLOCK_MONOTONIC, &start);
  trace_provider_t* p = trace_provider_create_with_name("mp_wait");
  *ms = elapsed_ms(&start);
  if (err_path) {
    dup2(saved_stderr, 2);
    close(saved_stderr);
  }
  pthread_join(t, NULL);
  ASSERT_TRUE(p != NULL);
  return p;
}

static bool file_contains(const char* path, const char* text) {
  char buf[4096] = {0};
  FILE* f = fopen(path, "r");
  if (!f) return false;
  size_t n = fread(buf, 1, sizeof(buf) - 1, f);
  fclose(f);
  buf[n] = '\0';
  return strstr(buf, text) != NULL;
}

static void scenario_register_wait(void) {
  char err_path[] = "/tmp/fxtrace-mp-err-XXXXXX";
  int err_fd = mkstemp(err_path);
  ASSERT_TRUE(err_fd >= 0);
  close(err_fd);
  double ms;
  /* A trace runs: the call returns once the engine is started, so the very
   * first event after it is in the buffer (the manager took 200 ms). */
  setenv("FXTRACE_REGISTER_TIMEOUT", "10000", 1);
  {
    fake_t f;
    fake_listen(&f);
    wait_args_t args = {&f, 1, true};
    trace_provider_t* p = create_waiting(&args, &ms, NULL);
    ASSERT_TRUE(TRACE_ENABLED());
    record_events(0, 10);
    fake_expect_started(&f);
    fake_stop(&f);
    counts_t c = {0};
    fake_collect(&f, &c);
    ASSERT_EQ(c.by_name[0], 10u);
    ASSERT_EQ(c.min_n, 0u);
    fake_terminate(&f);
    trace_provider_destroy(p);
    fake_cleanup(&f);
  }
  /* No trace: the answer says so and the call does not wait for a start. */
  {
    fake_t f;
    fake_listen(&f);
    wait_args_t args = {&f, 0, false};
    trace_provider_t* p = create_waiting(&args, &ms, NULL);
    ASSERT_TRUE(!TRACE_ENABLED());
    ASSERT_TRUE(ms < 10000.0); /* not the whole bound */
    trace_provider_destroy(p);
    fake_cleanup(&f);
  }
  /* A trace runs but the manager never starts this provider: the wait ends
   * at the bound, with a message, and the provider stays registered. */
  setenv("FXTRACE_REGISTER_TIMEOUT", "300", 1);
  {
    fake_t f;
    fake_listen(&f);
    wait_args_t args = {&f, 1, false};
    trace_provider_t* p = create_waiting(&args, &ms, err_path);
    ASSERT_TRUE(!TRACE_ENABLED());
    ASSERT_TRUE(ms >= 300.0);
    ASSERT_TRUE(file_contains(err_path, "did not start this provider within 300 ms"));
    /* the start, late, still works */
    fake_initialize(&f, TRACE_BUFFERING_MODE_ONESHOT, 1 << 20, NULL, false);
    fake_start(&f, TRACE_START_CLEAR_ENTIRE_BUFFER, NULL);
    fake_expect_started(&f);
    ASSERT_TRUE(TRACE_ENABLED());
    fake_stop(&f);
    fake_terminate(&f);
    trace_provider_destroy(p);
    fake_cleanup(&f);
  }
  /* A bad value: reported, and the default used. */
  setenv("FXTRACE_REGISTER_TIMEOUT", "3s", 1);
  {
    fake_t f;
    fake_listen(&f);
    wait_args_t args = {&f, 0, false};
    trace_provider_t* p = create_waiting(&args, &ms, err_path);
    ASSERT_TRUE(file_contains(err_path, "FXTRACE_REGISTER_TIMEOUT=3s is not a number"));
    trace_provider_destroy(p);
    fake_cleanup(&f);
  }
  unlink(err_path);
  setenv("FXTRACE_REGISTER_TIMEOUT", "0", 1);
}

static void scenario_known(void) {
  fake_t f;
  fake_listen(&f);
  trace_provider_t* p = trace_provider_create_with_name("mp_known");
  fake_accept(&f, "mp_known", 0);
  char long_name[WIRE_MAX_NAME + 2], long_description[WIRE_MAX_DESCRIPTION + 2];
  memset(long_name, 'n', sizeof(long_name));
  long_name[sizeof(long_name) - 1] = '\0';
  memset(long_description, 'd', sizeof(long_description));
  long_description[sizeof(long_description) - 1] = '\0';
  ASSERT_EQ(trace_provider_add_known_category(p, long_name, "x"), -EINVAL);
  ASSERT_EQ(trace_provider_add_known_category(p, "x", long_description), -EINVAL);
  ASSERT_EQ(trace_provider_add_known_category(p, "", "x"), -EINVAL);
  ASSERT_EQ(trace_provider_add_known_category(NULL, "x", "x"), -EINVAL);
  long_name[WIRE_MAX_NAME] = '\0'; /* exactly at the limits */
  long_description[WIRE_MAX_DESCRIPTION] = '\0';
  ASSERT_EQ(trace_provider_add_known_category(p, "gfx", "old"), 0);
  ASSERT_EQ(trace_provider_add_known_category(p, "gfx", "Graphics"), 0); /* replaced */
  ASSERT_EQ(trace_provider_add_known_category(p, "net", NULL), 0);
  ASSERT_EQ(trace_provider_add_known_category(p, long_name, long_description), 0);

  wire__begin(&w, MSG_GET_KNOWN_CATEGORIES, 42);
  ASSERT_TRUE(wire__end(&w));
  ASSERT_EQ(wire__send(f.conn, &w, NULL, 0), 0);
  wire_reader_t r;
  recv_message(f.conn, MSG_KNOWN_CATEGORIES, &r, NULL, NULL);
  ASSERT_EQ(r.request_id, 42u);
  ASSERT_EQ(wire__get_u16(&r), 3u);
  char name[WIRE_MAX_NAME + 1], description[WIRE_MAX_DESCRIPTION + 1];
  const char* expect[3][2] = {{"gfx", "Graphics"}, {"net", ""}, {long_name, long_description}};
  for (int i = 0; i < 3; i++) {
    wire__get_str(&r, name, sizeof(name), WIRE_MAX_NAME);
    wire__get_str(&r, description, sizeof(description), WIRE_MAX_DESCRIPTION);
    ASSERT_STREQ(name, expect[i][0]);
    ASSERT_STREQ(description, expect[i][1]);
  }
  ASSERT_TRUE(wire__done(&r));

  /* the list is capped to what one message holds */
  int status = 0, added = 0;
  char many[32];
  for (int i = 0; i < 6000 && status == 0; i++) {
    snprintf(many, sizeof(many), "category.%d", i);
    status = trace_provider_add_known_category(p, many, long_description);
    if (status == 0) added++;
  }
  ASSERT_EQ(status, -ENOSPC);
  ASSERT_TRUE(added > 500);
  wire__begin(&w, MSG_GET_KNOWN_CATEGORIES, 43);
  ASSERT_TRUE(wire__end(&w));
  ASSERT_EQ(wire__send(f.conn, &w, NULL, 0), 0);
  recv_message(f.conn, MSG_KNOWN_CATEGORIES, &r, NULL, NULL);
  ASSERT_EQ(wire__get_u16(&r), (uint64_t)added + 3);

  /* an inert provider keeps its list too */
  trace_provider_destroy(p);
  fake_cleanup(&f);
  setenv("FXTRACE_SOCKET", "/nonexistent/fxtrace.sock", 1);
  p = trace_provider_create_with_name("mp_known");
  ASSERT_EQ(trace_provider_add_known_category(p, "gfx", "Graphics"), 0);
  trace_provider_destroy(p);
}

static void scenario_manager_dies(void) {
  fake_t f;
  fake_listen(&f);
  trace_provider_t* p = trace_provider_create_with_name("mp_dies");
  fake_accept(&f, "mp_dies", 0);

  /* 1. the FIFO closed without STOP: the trace ends... */
  fake_initialize(&f, TRACE_BUFFERING_MODE_ONESHOT, 1 << 20, NULL, false);
  fake_start(&f, TRACE_START_CLEAR_ENTIRE_BUFFER, NULL);
  fake_expect_started(&f);
  record_events(0, 10);
  close(f.fifo);
  f.fifo = -1;
  munmap(f.map, f.size);
  f.map = NULL;
  wait_state(TRACE_STOPPED);
  record_events(0, 10); /* harmless */
  /* ...and the next one works */
  fake_initialize(&f, TRACE_BUFFERING_MODE_ONESHOT, 1 << 20, NULL, false);
  fake_start(&f, TRACE_START_CLEAR_ENTIRE_BUFFER, NULL);
  fake_expect_started(&f);
  record_events(0, 20);
  fake_stop(&f);
  counts_t c = {0};
  fake_collect(&f, &c);
  ASSERT_EQ(c.by_name[0], 20u);

  /* 2. a bad packet (unknown request) ends the trace: the FIFO closes */
  fake_start(&f, TRACE_START_RETAIN_BUFFER, NULL);
  fake_expect_started(&f);
  fifo_packet_t bad = {0x0777, 0, 0, 0};
  ASSERT_EQ(send(f.fifo, &bad, sizeof(bad), MSG_NOSIGNAL), (ssize_t)sizeof(bad));
  expect_fifo_closed(f.fifo);
  wait_state(TRACE_STOPPED);
  close(f.fifo);
  f.fifo = -1;
  munmap(f.map, f.size);
  f.map = NULL;

  /* 3. the manager disappears mid-trace: the program keeps running */
  fake_initialize(&f, TRACE_BUFFERING_MODE_STREAMING, 64 << 10, NULL, false);
  fake_start(&f, TRACE_START_CLEAR_ENTIRE_BUFFER, NULL);
  fake_expect_started(&f);
  record_events(0, 100);
  close(f.conn);
  f.conn = -1;
  close(f.fifo);
  f.fifo = -1;
  record_events(0, 100000); /* streaming saves nobody answers: dropped, no stall */
  wait_state(TRACE_STOPPED);
  ASSERT_TRUE(!TRACE_ENABLED());
  assert_inert(false); /* control thread gone, engine terminated */
  record_events(0, 100);
  trace_provider_destroy(p);
  fake_cleanup(&f);
}

static void scenario_no_manager(void) {
  int saved_stderr = dup(2);
  char err_path[] = "/tmp/fxtrace-mp-stderr-XXXXXX";
  int err_fd = mkstemp(err_path);
  ASSERT_TRUE(err_fd >= 0);
  dup2(err_fd, 2);

  /* no socket at all */
  setenv("FXTRACE_SOCKET", "/tmp/fxtrace-mp-no-such-dir/manager.sock", 1);
  trace_provider_t* p = trace_provider_create_with_name("mp_none");
  ASSERT_TRUE(p != NULL);
  assert_inert(true);
  ASSERT_TRUE(!TRACE_ENABLED());
  record_events(0, 10);
  trace_provider_destroy(p);
  bool already = true;
  p = trace_provider_create_synchronously("mp_none", &already);
  ASSERT_TRUE(p != NULL);
  ASSERT_TRUE(!already);
  assert_inert(true);
  trace_provider_destroy(p);

  /* a stale socket file nobody listens on (ECONNREFUSED) */
  fake_t f;
  fake_listen(&f);
  close(f.listen_fd);
  f.listen_fd = -1;
  p = trace_provider_create_with_name("mp_none");
  ASSERT_TRUE(p != NULL);
  assert_inert(true);
  trace_provider_destroy(p);
  fake_cleanup(&f);

  dup2(saved_stderr, 2);
  close(saved_stderr);
  struct stat st;
  ASSERT_EQ(fstat(err_fd, &st), 0);
  ASSERT_EQ(st.st_size, 0); /* silently */
  close(err_fd);
  unlink(err_path);
}

static void scenario_output_wins(void) {
  fake_t f;
  fake_listen(&f);
  char path[] = "/tmp/fxtrace-mp-output-XXXXXX";
  int fd = mkstemp(path);
  ASSERT_TRUE(fd >= 0);
  close(fd);
  setenv("FXTRACE_OUTPUT", path, 1);
  trace_provider_t* p = trace_provider_create_with_name("mp_file");
  ASSERT_TRUE(TRACE_ENABLED());
  record_events(0, 100);
  trace_provider_destroy(p);
  unsetenv("FXTRACE_OUTPUT");
  ASSERT_TRUE(!readable(f.listen_fd, 0)); /* nobody connected */
  fd = open(path, O_RDONLY);
  ASSERT_TRUE(fd >= 0);
  struct stat st;
  ASSERT_EQ(fstat(fd, &st), 0);
  uint8_t* data = malloc((size_t)st.st_size);
  ASSERT_EQ(read(fd, data, (size_t)st.st_size), st.st_size);
  close(fd);
  counts_t c = {0};
  count_archive(data, (size_t)st.st_size, &c);
  ASSERT_EQ(c.by_name[0], 100u);
  ASSERT_STREQ(c.provider, "mp_file");
  free(data);
  unlink(path);
  fake_cleanup(&f);
}

static void scenario_fork(void) {
  fake_t f;
  fake_listen(&f);
  trace_provider_t* p = trace_provider_create_with_name("mp_fork");
  fake_accept(&f, "mp_fork", 0);
  fake_initialize(&f, TRACE_BUFFERING_MODE_ONESHOT, 1 << 20, NULL, false);
  fake_start(&f, TRACE_START_CLEAR_ENTIRE_BUFFER, NULL);
  fake_expect_started(&f);
  record_events(0, 100);
  int go[2];
  ASSERT_EQ(pipe(go), 0);
  pid_t child = fork();
  ASSERT_TRUE(child >= 0);
  if (child == 0) {
    alarm(20); /* a hang fails the test instead of stalling it */
    close(go[1]);
    char byte;
    if (read(go[0], &byte, 1) != 1) _exit(3);
    for (int i = 0; i < 100; i++) TRACE_INSTANT("test", "child", TRACE_SCOPE_THREAD);
    exit(0); /* runs the provider's exit handler */
  }
  close(go[0]);
  record_events(100, 200);
  fake_stop(&f);
  counts_t c = {0};
  fake_collect(&f, &c);
  ASSERT_EQ(c.by_name[0], 200u);
  ASSERT_EQ(c.by_name[3], 0u);
  fake_terminate(&f);
  /* the parent lets go while the child lives: the manager sees the
   * connection close, so the child did not keep a copy */
  trace_provider_destroy(p);
  ASSERT_TRUE(readable(f.conn, TIMEOUT_MS));
  ASSERT_EQ(recv(f.conn, rbuf, sizeof(rbuf), MSG_DONTWAIT), 0);
  ASSERT_EQ(write(go[1], "x", 1), 1);
  close(go[1]);
  int status;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFEXITED(status));
  ASSERT_EQ(WEXITSTATUS(status), 0);
  fake_cleanup(&f);
}

int main(int argc, char** argv) {
  if (argc != 2) {
    fprintf(stderr, "usage: test_manager_provider SCENARIO\n");
    return 2;
  }
  unsetenv("FXTRACE_OUTPUT");
  /* The scenarios drive the manager side by hand, after the provider is
   * created: registration must not wait for a start (register_wait sets
   * its own values). */
  setenv("FXTRACE_REGISTER_TIMEOUT", "0", 1);
  signal(SIGPIPE, SIG_IGN);
  static const struct {
    const char* name;
    void (*run)(void);
  } scenarios[] = {
      {"oneshot", scenario_oneshot},
      {"sessions", scenario_sessions},
      {"circular", scenario_circular},
      {"streaming", scenario_streaming},
      {"sync", scenario_sync},
      {"register_wait", scenario_register_wait},
      {"known", scenario_known},
      {"manager_dies", scenario_manager_dies},
      {"no_manager", scenario_no_manager},
      {"output_wins", scenario_output_wins},
      {"fork", scenario_fork},
  };
  for (size_t i = 0; i < sizeof(scenarios) / sizeof(scenarios[0]); i++) {
    if (strcmp(argv[1], scenarios[i].name) == 0) {
      scenarios[i].run();
      printf("%s: ok\n", argv[1]);
      return 0;
    }
  }
  fprintf(stderr, "unknown scenario %s\n", argv[1]);
  return 2;
}
