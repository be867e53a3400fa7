/* A provider process for the manager's tests, written against wire.h and the
 * real engine (not libtrace-provider's manager connection, which is tested
 * on its own): registers, follows INITIALIZE / START / STOP / TERMINATE,
 * runs the engine on the manager's memfd and speaks the FIFO protocol.
 * It reports what it does on stdout, one line each, for the test driver:
 *   registered [started=0|1]   initialized   started   emitted N
 *   stopped written=W dropped=D   terminated
 * Options:
 *   --socket PATH --name NAME --events N (per start, default 1000)
 *   --sync               synchronous registration
 *   --all-categories     also emit in "other" and "test:sub" (N each)
 *   --continuous         emit until stopped (counting attempts)
 *   --garbage data|header|dropped  after emitting, scribble over the buffer
 *                        (dropped: the header's drop counter set to 2^64 - 1)
 *   --garbage segments   streaming: at the first save, a damaged segment table
 *                        (the switch count moved past the segment being saved)
 *   --garbage save-data  streaming: at the first save, in each chunk of the
 *                        segment saved, the 3rd record made a metadata record
 *                        (its size kept) and the 6th record's header zeroed
 *   --garbage segment-count  after emitting, the header's segment count wrong
 *   --hang-stop          ignore STOP (never reports STOPPED)
 *   --bad-packet         after starting, send an invalid FIFO packet
 *   --known NAME=DESC    a known category (repeatable)
 *   --raw-alerts N       after starting, send N FIFO ALERT packets "raw0", "raw1",
 *                        ... directly (no library limit), then say "alerted N"
 *   --multi              take part in several sessions at once (docs/sessions.md):
 *                        each INITIALIZE forks a child process that runs its own
 *                        engine on that session's buffer and FIFO; this process
 *                        relays the session's START / STOP / TERMINATE to it. The
 *                        children's lines start with "session=ID ". */
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "engine/buffer_header.h"
#include "engine/categories.h"
#include "engine/engine.h"
#include "protocol/manager_socket.h"
#include "protocol/wire.h"
#include "trace/event.h"

static struct {
  const char* socket;
  const char* name;
  long events;
  bool sync, all_categories, continuous, hang_stop, bad_packet, multi;
  long raw_alerts;
  const char* garbage;
  char* known[16];
  int known_count;
} opt = {.name = "fake", .events = 1000};

static int g_fifo = -1;
static uint32_t g_session_id; /* of the last INITIALIZE */
static uint8_t* g_buffer;
static size_t g_size;
static category_set_t g_categories;
static pthread_mutex_t g_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t g_cond = PTHREAD_COND_INITIALIZER;
static int g_starts;          /* STARTED sent so far */
static atomic_bool g_running; /* between started and stop */
static bool g_terminated;
static long g_attempted;

static uint32_t g_child_session; /* --multi: the session this child serves (0: none) */

static void say(const char* format, ...) __attribute__((format(printf, 1, 2)));
static void say(const char* format, ...) {
  va_list ap;
  va_start(ap, format);
  pthread_mutex_lock(&g_lock);
  if (g_child_session) printf("session=%u ", (unsigned)g_child_session);
  vprintf(format, ap);
  putchar('\n');
  fflush(stdout);
  pthread_mutex_unlock(&g_lock);
  va_end(ap);
}

static void fifo_send(uint16_t request, uint32_t data32, uint64_t data64) {
  fifo_packet_t p = {request, 0, data32, data64};
  if (send(g_fifo, &p, sizeof(p), MSG_NOSIGNAL) != sizeof(p)) say("fifo send failed");
}

static bool h_enabled(trace_handler_t* h, const char* category) {
  (void)h;
  return categories__match(&g_categories, category);
}
static void h_started(trace_handler_t* h) {
  (void)h;
  fifo_send(FIFO_STARTED, FIFO_PROTOCOL_VERSION, 0);
  say("started");
  pthread_mutex_lock(&g_lock);
  g_starts++;
  atomic_store(&g_running, true);
  pthread_cond_broadcast(&g_cond);
  pthread_mutex_unlock(&g_lock);
  if (opt.bad_packet) fifo_send(0x77, 0, 0);
  for (long i = 0; i < opt.raw_alerts; i++) {
    /* PROTOCOL.md §6.2: the name in packet bytes 2..15 */
    uint8_t raw[16] = {0};
    uint16_t request = FIFO_ALERT;
    memcpy(raw, &request, 2);
    snprintf((char*)raw + 2, 14, "raw%d", (int)(i % 100000));
    if (send(g_fifo, raw, sizeof(raw), MSG_NOSIGNAL) != sizeof(raw)) say("fifo send failed");
  }
  if (opt.raw_alerts) say("alerted %ld", opt.raw_alerts);
}
static void h_stopped(trace_handler_t* h, int disposition) {
  (void)h;
  (void)disposition;
  atomic_store(&g_running, false);
  trace_engine_stats_t st = {0};
  trace_engine_get_stats(&st);
  say("stopped written=%llu dropped=%llu", (unsigned long long)st.records_written,
      (unsigned long long)st.records_dropped);
  fifo_send(FIFO_STOPPED, 0, 0);
}
static void h_terminated(trace_handler_t* h) {
  (void)h;
  pthread_mutex_lock(&g_lock);
  g_terminated = true;
  pthread_cond_broadcast(&g_cond);
  pthread_mutex_unlock(&g_lock);
}
/* --garbage save-data: damage the segment of switch count `wrapped` before
 * its save, record by record, in each chunk. */
static void scribble_segment(uint32_t wrapped) {
  trace_buffer_header_t* header = (trace_buffer_header_t*)g_buffer;
  uint8_t* segment = g_buffer + sizeof(*header) + header->durable_buffer_size +
                     (uint64_t)(wrapped % header->segment_count) * header->rolling_buffer_size;
  for (uint64_t chunk = 0; chunk < header->rolling_buffer_size; chunk += header->chunk_size) {
    uint64_t pos = chunk;
    for (int i = 0; i < 6 && pos + 8 <= chunk + header->chunk_size; i++) {
      uint64_t word;
      memcpy(&word, segment + pos, 8);
      uint64_t size = ((word >> 4) & 0xfff) * 8;
      if (word == 0 || size == 0) break;
      if (i == 2) word &= ~(uint64_t)0xf; /* type 0: metadata, the manager's own */
      if (i == 5) word = 0;
      memcpy(segment + pos, &word, 8);
      pos += size;
    }
  }
}

static void h_buffer_full(trace_handler_t* h, uint32_t wrapped, uint64_t durable_end) {
  (void)h;
  static bool scribbled;
  if (opt.garbage && strcmp(opt.garbage, "save-data") == 0 && !scribbled) {
    scribbled = true;
    scribble_segment(wrapped);
  }
  if (opt.garbage && strcmp(opt.garbage, "segments") == 0) {
    /* as if the segment had been reused before its save: a switch count a
     * whole round of segments past it */
    trace_buffer_header_t* header = (trace_buffer_header_t*)g_buffer;
    uint64_t moved = (uint64_t)wrapped + header->segment_count + 1;
    __atomic_store_n(&header->rolling_alloc, moved << TRACE_BUFFER_ALLOC_OFFSET_BITS,
                     __ATOMIC_RELAXED);
  }
  fifo_send(FIFO_SAVE_BUFFER, wrapped, durable_end);
}
static void h_alert(trace_handler_t* h, const char* name) {
  (void)h;
  (void)name;
}
static const trace_handler_ops_t kOps = {h_enabled,    h_started,     h_stopped,
                                         h_terminated, h_buffer_full, h_alert};
static trace_handler_t g_handler = {&kOps};

static void scribble(void) {
  trace_buffer_header_t* h = (trace_buffer_header_t*)g_buffer;
  srand(42);
  if (strcmp(opt.garbage, "header") == 0) {
    memset(g_buffer, 0xa5, 64);
    return;
  }
  if (strcmp(opt.garbage, "segments") == 0) return;  /* at the save, h_buffer_full */
  if (strcmp(opt.garbage, "save-data") == 0) return; /* likewise */
  if (strcmp(opt.garbage, "segment-count") == 0) {
    h->segment_count = (uint8_t)(h->segment_count == 2 ? 4 : 2);
    return;
  }
  if (strcmp(opt.garbage, "dropped") == 0) {
    __atomic_store_n(&h->num_records_dropped, UINT64_MAX, __ATOMIC_RELAXED);
    return;
  }
  /* random words over the data areas (the header stays) */
  size_t data = sizeof(*h);
  for (size_t off = data; off + 8 <= g_size; off += 8) {
    if ((off / 4096) % 3 != 1) continue; /* every third page */
    uint64_t word = (uint64_t)rand() << 33 ^ (uint64_t)rand() << 11 ^ (uint64_t)rand();
    memcpy(g_buffer + off, &word, 8);
  }
}

static void* emitter(void* arg) {
  (void)arg;
  int seen = 0;
  for (;;) {
    pthread_mutex_lock(&g_lock);
    while (g_starts == seen) pthread_cond_wait(&g_cond, &g_lock);
    seen = g_starts;
    pthread_mutex_unlock(&g_lock);
    long n = 0;
    if (opt.continuous) {
      while (atomic_load(&g_running)) {
        TRACE_INSTANT("test", "tick", TRACE_SCOPE_THREAD, "i", TA_INT64(n));
        n++;
      }
    } else {
      for (long i = 0; i < opt.events; i++) {
        TRACE_INSTANT("test", "tick", TRACE_SCOPE_THREAD, "i", TA_INT64(i));
        if (opt.all_categories) {
          TRACE_INSTANT("other", "tock", TRACE_SCOPE_THREAD, "i", TA_INT64(i));
          TRACE_INSTANT("test:sub", "tuck", TRACE_SCOPE_THREAD, "i", TA_INT64(i));
        }
        n++;
      }
    }
    g_attempted += n;
    if (opt.garbage) scribble();
    say("emitted %ld", n);
  }
  return NULL;
}

static wire_writer_t g_w;
static uint8_t g_rbuf[WIRE_MAX_MESSAGE];

static void handle(int conn, size_t length, int* fds, size_t fd_count) {
  wire_reader_t r;
  if (wire__open(&r, g_rbuf, length)) {
    say("bad message");
    return;
  }
  switch (r.type) {
    case MSG_REGISTER_RESULT: {
      wire__get_u32(&r);
      say("registered started=%u", wire__get_u8(&r));
      break;
    }
    case MSG_INITIALIZE: {
      g_session_id = wire__get_u32(&r);
      uint8_t mode = wire__get_u8(&r);
      uint16_t n = wire__get_u16(&r);
      categories__free(&g_categories);
      for (uint16_t i = 0; i < n; i++) {
        char c[WIRE_MAX_NAME + 1];
        wire__get_str(&r, c, sizeof(c), WIRE_MAX_NAME);
        categories__add(&g_categories, c, strlen(c));
      }
      if (fd_count != 2 || !wire__done(&r)) {
        say("bad INITIALIZE");
        exit(3);
      }
      g_size = (size_t)lseek(fds[0], 0, SEEK_END);
      g_buffer = mmap(NULL, g_size, PROT_READ | PROT_WRITE, MAP_SHARED, fds[0], 0);
      close(fds[0]);
      g_fifo = fds[1];
      if (g_buffer == MAP_FAILED ||
          trace_engine__initialize_zeroed(&g_handler, (trace_buffering_mode_t)mode, g_buffer,
                                          g_size) != 0) {
        say("engine initialize failed");
        exit(3);
      }
      say("initialized mode=%u size=%zu categories=%u session=%u", mode, g_size, n, g_session_id);
      break;
    }
    case MSG_START: {
      if (wire__get_u32(&r) != g_session_id) say("START for another session");
      uint8_t disposition = wire__get_u8(&r);
      uint16_t n = wire__get_u16(&r);
      for (uint16_t i = 0; i < n; i++) {
        char c[WIRE_MAX_NAME + 1];
        wire__get_str(&r, c, sizeof(c), WIRE_MAX_NAME);
        categories__add(&g_categories, c, strlen(c));
      }
      int status = trace_engine_start((trace_start_mode_t)disposition);
      if (status != 0) say("start failed %d", status);
      break;
    }
    case MSG_STOP:
      if (wire__get_u32(&r) != g_session_id) say("STOP for another session");
      if (!opt.hang_stop) trace_engine_stop(0);
      break;
    case MSG_TERMINATE:
      if (wire__get_u32(&r) != g_session_id) say("TERMINATE for another session");
      if (opt.hang_stop) break;
      trace_engine_terminate();
      pthread_mutex_lock(&g_lock);
      while (!g_terminated) pthread_cond_wait(&g_cond, &g_lock);
      g_terminated = false;
      pthread_mutex_unlock(&g_lock);
      munmap(g_buffer, g_size);
      close(g_fifo);
      g_fifo = -1;
      say("terminated");
      break;
    case MSG_GET_KNOWN_CATEGORIES:
      wire__begin(&g_w, MSG_KNOWN_CATEGORIES, r.request_id);
      wire__put_u16(&g_w, (uint16_t)opt.known_count);
      for (int i = 0; i < opt.known_count; i++) {
        char* eq = strchr(opt.known[i], '=');
        wire__put_str(&g_w, opt.known[i], (size_t)(eq - opt.known[i]));
        wire__put_cstr(&g_w, eq + 1);
      }
      wire__end(&g_w);
      wire__send(conn, &g_w, NULL, 0);
      break;
    default:
      say("unexpected message %u", r.type);
  }
  for (size_t i = 0; i < fd_count && r.type != MSG_INITIALIZE; i++) close(fds[i]);
}

/* The single-session provider on `conn` (the manager's connection, or
 * with --multi the relay's socket to this child). */
static int serve(int conn) {
  pthread_t thread;
  pthread_create(&thread, NULL, emitter, NULL);
  for (;;) {
    struct pollfd p[2] = {{conn, POLLIN, 0}, {g_fifo, POLLIN, 0}};
    int n = poll(p, g_fifo >= 0 ? 2 : 1, -1);
    if (n < 0 && errno == EINTR) continue;
    if (p[0].revents) {
      int fds[2];
      size_t fd_count;
      ssize_t len = wire__recv(conn, g_rbuf, fds, &fd_count);
      if (len <= 0) {
        say("manager gone");
        return 0;
      }
      handle(conn, (size_t)len, fds, fd_count);
    }
    if (g_fifo >= 0 && p[1].revents) {
      fifo_packet_t pkt;
      ssize_t len = recv(g_fifo, &pkt, sizeof(pkt), MSG_DONTWAIT);
      if (len == sizeof(pkt) && pkt.request == FIFO_BUFFER_SAVED) {
        trace_engine_mark_buffer_saved(pkt.data32, pkt.data64);
      } else if (len == 0) {
        say("fifo closed");
        trace_engine_terminate();
        close(g_fifo);
        g_fifo = -1;
      }
    }
  }
}

/* --multi: one child per session. */
typedef struct child {
  uint32_t session_id;
  int sock; /* -1: free */
  pid_t pid;
} child_t;
static child_t g_children[WIRE_MAX_SESSIONS + 2];

static child_t* child_of(uint32_t session_id) {
  for (size_t i = 0; i < sizeof(g_children) / sizeof(g_children[0]); i++)
    if (g_children[i].sock >= 0 && g_children[i].session_id == session_id) return &g_children[i];
  return NULL;
}

/* Sends the message just received (g_rbuf) on to a child. */
static void forward(child_t* ch, size_t length, const int* fds, size_t fd_count) {
  memcpy(g_w.data, g_rbuf, length);
  g_w.length = length;
  g_w.overflow = false;
  if (wire__send(ch->sock, &g_w, fds, fd_count) != 0)
    say("relay to session %u failed", ch->session_id);
}

static void spawn_child(int conn, size_t length, int* fds, size_t fd_count, uint32_t id) {
  child_t* ch = NULL;
  for (size_t i = 0; i < sizeof(g_children) / sizeof(g_children[0]) && !ch; i++)
    if (g_children[i].sock < 0) ch = &g_children[i];
  int sv[2];
  if (!ch || child_of(id) || socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) != 0) {
    say("INITIALIZE for session %u refused", id);
    for (size_t i = 0; i < fd_count; i++) close(fds[i]); /* the manager sees the FIFO close */
    return;
  }
  fflush(stdout);
  pid_t pid = fork();
  if (pid == 0) {
    close(conn);
    close(sv[0]);
    for (size_t i = 0; i < sizeof(g_children) / sizeof(g_children[0]); i++)
      if (g_children[i].sock >= 0) close(g_children[i].sock);
    g_child_session = id;
    exit(serve(sv[1]));
  }
  close(sv[1]);
  ch->session_id = id;
  ch->sock = sv[0];
  ch->pid = pid;
  forward(ch, length, fds, fd_count);
  for (size_t i = 0; i < fd_count; i++) close(fds[i]);
}

/* --multi's parent: no engine of its own; each session's messages go to its
 * child (the session id is every such message's first field). */
static int relay(int conn) {
  signal(SIGCHLD, SIG_IGN); /* children are reaped by the kernel */
  for (size_t i = 0; i < sizeof(g_children) / sizeof(g_children[0]); i++) g_children[i].sock = -1;
  for (;;) {
    int fds[2];
    size_t fd_count;
    ssize_t len = wire__recv(conn, g_rbuf, fds, &fd_count);
    if (len <= 0) {
      say("manager gone");
      for (size_t i = 0; i < sizeof(g_children) / sizeof(g_children[0]); i++)
        if (g_children[i].sock >= 0) close(g_children[i].sock);
      while (wait(NULL) > 0) {
      }
      return 0;
    }
    wire_reader_t r;
    if (wire__open(&r, g_rbuf, (size_t)len)) {
      say("bad message");
      continue;
    }
    if (r.type == MSG_INITIALIZE || r.type == MSG_START || r.type == MSG_STOP ||
        r.type == MSG_TERMINATE) {
      uint32_t id = wire__get_u32(&r);
      if (r.type == MSG_INITIALIZE) {
        spawn_child(conn, (size_t)len, fds, fd_count, id);
        continue;
      }
      child_t* ch = child_of(id);
      if (!ch) {
        say("message %u for unknown session %u", r.type, id);
      } else {
        forward(ch, (size_t)len, fds, fd_count);
        if (r.type == MSG_TERMINATE) { /* the child ends after it (end of its stream) */
          close(ch->sock);
          ch->sock = -1;
        }
      }
      for (size_t i = 0; i < fd_count; i++) close(fds[i]);
      continue;
    }
    handle(conn, (size_t)len, fds, fd_count); /* registration result, known categories */
  }
}

int main(int argc, char** argv) {
  for (int i = 1; i < argc; i++) {
    const char* a = argv[i];
    if (!strcmp(a, "--socket"))
      opt.socket = argv[++i];
    else if (!strcmp(a, "--name"))
      opt.name = argv[++i];
    else if (!strcmp(a, "--events"))
      opt.events = atol(argv[++i]);
    else if (!strcmp(a, "--sync"))
      opt.sync = true;
    else if (!strcmp(a, "--all-categories"))
      opt.all_categories = true;
    else if (!strcmp(a, "--continuous"))
      opt.continuous = true;
    else if (!strcmp(a, "--garbage"))
      opt.garbage = argv[++i];
    else if (!strcmp(a, "--hang-stop"))
      opt.hang_stop = true;
    else if (!strcmp(a, "--bad-packet"))
      opt.bad_packet = true;
    else if (!strcmp(a, "--raw-alerts"))
      opt.raw_alerts = atol(argv[++i]);
    else if (!strcmp(a, "--multi"))
      opt.multi = true;
    else if (!strcmp(a, "--known") && opt.known_count < 16)
      opt.known[opt.known_count++] = argv[++i];
    else {
      fprintf(stderr, "fake_provider: bad argument %s\n", a);
      return 2;
    }
  }
  struct manager_socket where;
  if (!opt.socket) {
    manager_socket__locate(&where, false, 0, (gid_t)-1);
    opt.socket = where.connect_path; /* its directory stays open: the process is short */
  }
  int conn = wire__connect(opt.socket, WIRE_ROLE_PROVIDER, NULL);
  if (conn < 0) {
    fprintf(stderr, "fake_provider: connect %s: %s\n", opt.socket, strerror(-conn));
    return 1;
  }
  wire__begin(&g_w, MSG_REGISTER_PROVIDER, 1);
  wire__put_u64(&g_w, (uint64_t)getpid());
  wire__put_cstr(&g_w, opt.name);
  wire__put_u8(&g_w, opt.sync);
  wire__end(&g_w);
  if (wire__send(conn, &g_w, NULL, 0) != 0) return 1;
  if (!opt.sync) say("registered");
  if (opt.multi) return relay(conn);
  return serve(conn);
}
