/* Not part of the public API: the trace manager's internal state, shared by
 * its files (docs/manager.md):
 *   manager.c   the epoll loop, the listening socket, connections, dispatch
 *   registry.c  providers (RegisterProvider, RemoveDeadProvider), GetProviders
 *   known_categories.c  GetKnownCategories (the union, or grouped by provider)
 *   session.c   the session and tracee state machines (PROTOCOL.md §10.1),
 *               the Controller calls, the FIFO packets (§6.3)
 *   sessions.c  the set of sessions (docs/sessions.md): who takes part in
 *               which, LIST_SESSIONS, STOP_SESSION
 *   archive.c   the archive: output queue, provider data (§10.4, §9)
 *   snapshot.c  snapshots of a running session (docs/snapshots.md)
 *   log.c       levelled logging to stderr, syslog or a callback
 * Everything runs on the loop's thread; only manager__shutdown() is called
 * from elsewhere. */
#ifndef FXTRACE_MANAGER_MANAGER_INTERNAL_H_
#define FXTRACE_MANAGER_MANAGER_INTERNAL_H_

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>
#include <sys/types.h>

#include "alert/alert_limit.h"
#include "engine/buffer_header.h"
#include "manager/manager.h"
#include "names/names.h"
#include "protocol/wire.h"
#include "trace-engine/types.h"

typedef struct conn conn_t;
typedef struct provider provider_t;
typedef struct session session_t;
typedef struct tracee tracee_t;
typedef struct output output_t;
typedef struct category_query category_query_t;
typedef struct alert_queue alert_queue_t;

/* What an epoll event's data.ptr points to: the first member of each object. */
enum ep_kind { EP_LISTEN = 1, EP_WAKE, EP_CONN, EP_FIFO, EP_OUTPUT };
typedef struct ep_tag {
  int kind;
} ep_tag_t;

struct conn {
  ep_tag_t tag;
  manager_t* m;
  int fd;
  int role; /* 0 until HELLO, then enum wire_role */
  struct ucred cred;
  bool closed;              /* waiting to be freed at the end of the loop turn */
  provider_t* provider;     /* after REGISTER_PROVIDER */
  session_t* session;       /* a controller's own session (INITIALIZE_TRACING), while it lives */
  alert_queue_t* alerts;    /* a controller's alert queue (alerts.c), once it has one */
  struct shared_ring* ring; /* a controller's archive ring, until INITIALIZE_TRACING takes it */
  conn_t* next;
};

struct provider {
  uint32_t id;
  uint64_t pid;
  bool other_pid_namespace; /* the pid it claims is not the one the kernel says */
  uid_t uid;                /* SO_PEERCRED at registration: whose sessions it joins */
  char name[WIRE_MAX_NAME + 1];
  conn_t* conn;
  provider_t* next;
};

typedef struct known_category {
  char* name;
  char* description;
} known_category_t;

/* One source of known categories in a query: a provider, or (provider_id 0)
 * the manager's own configuration. Its entries are de-duplicated on (name,
 * description) within the group; the union reply de-duplicates across. */
typedef struct category_group {
  uint32_t provider_id; /* 0: the manager's configuration */
  uint64_t pid;
  char name[WIRE_MAX_NAME + 1];
  bool waiting;  /* asked, no reply yet */
  bool answered; /* a well-formed reply came (always true for the manager) */
  known_category_t* items;
  size_t count, capacity;
} category_group_t;

/* A controller's GET_KNOWN_CATEGORIES (by_provider false: PROTOCOL.md's
 * de-duplicated union) or GET_PROVIDER_CATEGORIES (by_provider true: one
 * group per source), waiting for the providers' answers (1 s at most). */
struct category_query {
  uint32_t id; /* the request id sent to the providers */
  conn_t* controller;
  uint32_t request_id;
  bool by_provider;
  uint64_t deadline_ms;
  category_group_t* groups; /* the manager's first (if it declares any), then providers */
  size_t group_count;
  size_t waiting_count; /* groups with waiting set */
  category_query_t* next;
};

/* Output queue of a session's archive: chunks written with non-blocking
 * writes as the fd accepts them. */
typedef struct out_chunk {
  struct out_chunk* next;
  size_t length, pos, capacity;
  uint8_t data[];
} out_chunk_t;

struct output {
  ep_tag_t tag;
  manager_t* m;
  session_t* session; /* NULL once the session is gone (draining) */
  int fd;
  bool pollable; /* epoll accepts it (pipe, socket); else writes block (file) */
  bool has_sink; /* the archive goes into `sink` (same process), not to fd */
  manager_archive_sink_t sink;
  bool is_socket; /* send(MSG_NOSIGNAL) */
  bool want_out;  /* EPOLLOUT registered */
  bool failed;    /* the client is gone or too slow: abort */
  bool overflow;  /* the queue exceeded its bound */
  out_chunk_t *head, *tail;
  /* chunks written out, kept for reuse (at most SPARE_CHUNKS): a fresh
   * allocation of this size faults its pages in again at every save */
  out_chunk_t* spare;
  unsigned spare_count;
  size_t queued;
  uint64_t written; /* bytes delivered */
  bool gone;        /* freed at the end of the loop turn */
  output_t* next;   /* in the manager's draining or dead list */
};

/* Tracee states (PROTOCOL.md §10.1). */
enum tracee_state {
  TRACEE_READY = 0,
  TRACEE_INITIALIZED,
  TRACEE_STARTING,
  TRACEE_STARTED,
  TRACEE_STOPPING,
  TRACEE_STOPPED,
  TRACEE_TERMINATING,
  TRACEE_TERMINATED,
};

/* provider_stats.state of wire.h */
enum stat_state {
  STAT_NONE = 0,
  STAT_STOPPED = 1,
  STAT_TERMINATED = 2,
  STAT_NOT_STOPPED = 3,
  STAT_DIED = 4,
};

struct tracee {
  ep_tag_t tag; /* the FIFO */
  session_t* s;
  provider_t* provider; /* NULL once the provider is gone */
  uint32_t provider_id;
  uint64_t pid;
  char name[WIRE_MAX_NAME + 1];
  int state;
  int fifo; /* the manager's end, -1 when closed */
  const uint8_t* map;
  size_t size;
  uint8_t mode;
  bool started;         /* was started in this session */
  bool populated;       /* the mapping's page tables filled (session.c) */
  bool results_written; /* since the last start */
  bool info_written;    /* provider-info record sent */
  bool dead;            /* connection or FIFO closed outside Terminate */
  bool stopped_itself;  /* sent STOPPED unasked (destroy or exit mid-trace): not restarted */
  bool aborted;         /* bad FIFO packet: data ignored */
  int stat_state;
  /* What was wrong with the buffer (first problem; empty: nothing), and how
   * many records were left out for it (WIRE_RECORDS_UNKNOWN: all of them):
   * reported to the client in provider_stats. */
  char damage[WIRE_MAX_DAMAGE + 1];
  uint64_t damaged_records;
  /* streaming saves */
  bool saved_once;
  uint32_t last_wrapped;
  uint64_t last_durable_end;
  bool ack_pending; /* BUFFER_SAVED held back while the output queue is high */
  fifo_packet_t ack;
  names_source_t* names;     /* what its records need to be read for names */
  alert_limit_t alert_limit; /* the manager's own limit on its alerts */
  uint64_t alerts_dropped;   /* refused by it */
  bool gone;                 /* its session is gone: freed at the end of the loop turn */
  tracee_t* next;            /* in its session; kept when it is gone (iterations survive) */
  tracee_t* dead_next;       /* in the manager's dead_tracees */
};

/* Session states (PROTOCOL.md §5.1). */
enum session_state {
  SESSION_READY = 1,
  SESSION_INITIALIZED,
  SESSION_STARTING,
  SESSION_STARTED,
  SESSION_STOPPING,
  SESSION_STOPPED,
  SESSION_TERMINATING,
};

typedef struct provider_spec {
  char name[WIRE_MAX_NAME + 1];
  uint32_t buffer_size_mb;
  char** categories;
  size_t category_count;
} provider_spec_t;

typedef struct pending_reply {
  bool active;
  conn_t* conn; /* NULL if the caller went away */
  uint32_t request_id;
  uint64_t deadline_ms;
} pending_reply_t;

struct session {
  manager_t* m;
  uint32_t id; /* non-zero, never reused while the daemon runs (wire.h, "Sessions") */
  int state;
  conn_t* owner;              /* its connection closing terminates the session */
  uid_t client_uid;           /* the owner's SO_PEERCRED: who may see and stop it, */
  pid_t client_pid;           /* and which providers take part (sessions.c) */
  uint64_t start_realtime_ns; /* CLOCK_REALTIME at the first START_TRACING; 0 before */
  /* Destroyed sessions are unlinked at once but freed at the end of the loop
   * turn, so that a loop over the sessions (or over a session's tracees)
   * survives a session ending inside it: check `gone`. */
  bool gone;
  session_t* next;      /* in m->sessions, creation order */
  session_t* dead_next; /* in m->dead_sessions */
  char** categories;
  size_t category_count;
  uint32_t buffer_size_mb;
  uint64_t start_timeout_ms;
  uint64_t stop_timeout_ms;
  uint8_t mode;
  provider_spec_t* specs;
  size_t spec_count;
  char** additional; /* additional categories of the last start */
  size_t additional_count;
  output_t* out;
  tracee_t* tracees;
  pending_reply_t start, stop, terminate;
  bool stop_write_results;
  bool force_clear_entire;
  bool write_results_on_terminate;
  /* The names the archive ends with (names.h, archive_names.c): NULL when
   * out of memory; due once records were written since the last section. */
  names_t* names;
  bool names_due;
  bool names_info_written;
  bool stop_anchor_written; /* the stop's wall-clock anchor is in the archive */
};

struct manager {
  manager_config_t config;
  char socket_path[108];
  dev_t socket_dev;
  ino_t socket_ino;
  int listen_fd;
  int wake_fd;           /* eventfd: manager__shutdown */
  unsigned shared_rings; /* archive rings alive (shared_ring.c) */
  int epoll_fd;
  ep_tag_t listen_tag, wake_tag;
  known_category_t* known; /* the manager's own (config.known_categories, copied) */
  size_t known_count;
  uid_t uid;
  bool has_group;
  gid_t gid;
  conn_t* conns;
  provider_t* providers;
  uint32_t next_provider_id;
  uint32_t next_query_id;
  uint32_t next_session_id;
  category_query_t* queries;
  session_t* sessions;      /* at most WIRE_MAX_SESSIONS, creation order */
  session_t* dead_sessions; /* freed at the end of the loop turn */
  output_t* draining;
  tracee_t* dead_tracees; /* freed at the end of the loop turn */
  output_t* dead_outputs;
  bool shutting_down;
  wire_writer_t* w; /* one message being built (256 KiB, not on the stack) */
  uint8_t* rbuf;    /* one message received */
};

/* The kernel provider's registration name (src/kernel/kprovider.h
 * KPROVIDER_NAME): run by root under it, it takes part in every session. */
#define KERNEL_PROVIDER_NAME "trace_kernel_provider"

/* ---- manager.c ---- */
uint64_t mgr__now_ms(void);
int mgr__send(manager_t* m, conn_t* c, const int* fds, size_t fd_count); /* m->w */
void mgr__send_error(manager_t* m, conn_t* c, uint32_t request_id, int code, const char* msg);
void mgr__close_conn(manager_t* m, conn_t* c);
int mgr__epoll_add(manager_t* m, int fd, uint32_t events, ep_tag_t* tag);
void mgr__epoll_del(manager_t* m, int fd);
int mgr__epoll_mod(manager_t* m, int fd, uint32_t events, ep_tag_t* tag);

/* ---- log.c ---- */
void mgr__log(manager_t* m, manager_log_level_t level, const char* format, ...)
    __attribute__((format(printf, 3, 4)));
#define LOGE(m, ...) mgr__log(m, MANAGER_LOG_ERROR, __VA_ARGS__)
#define LOGW(m, ...) mgr__log(m, MANAGER_LOG_WARN, __VA_ARGS__)
#define LOGI(m, ...) mgr__log(m, MANAGER_LOG_INFO, __VA_ARGS__)
#define LOGD(m, ...) mgr__log(m, MANAGER_LOG_DEBUG, __VA_ARGS__)

/* ---- registry.c ---- */
void registry__register(manager_t* m, conn_t* c, wire_reader_t* r);
void registry__remove(manager_t* m, provider_t* p); /* RemoveDeadProvider */
void registry__get_providers(manager_t* m, conn_t* c, wire_reader_t* r);
void registry__destroy(manager_t* m);

/* ---- alerts.c ---- */
void alerts__watch(manager_t* m, conn_t* c, wire_reader_t* r); /* WATCH_ALERT */
/* A FIFO ALERT packet's name (NUL-terminated, 1 to 14 bytes). */
void alerts__from_provider(manager_t* m, tracee_t* t, const char* name);
void alerts__conn_free(conn_t* c);
/* ---- known_categories.c ---- */
/* GET_KNOWN_CATEGORIES (by_provider false) or GET_PROVIDER_CATEGORIES. */
void known__query(manager_t* m, conn_t* c, wire_reader_t* r, bool by_provider);
void known__provider_reply(manager_t* m, conn_t* c, wire_reader_t* r); /* KNOWN_CATEGORIES */
void known__provider_gone(manager_t* m, uint32_t provider_id);
void known__conn_closed(manager_t* m, conn_t* c); /* forget queries of a controller */
void known__timeouts(manager_t* m, uint64_t now, uint64_t* next_deadline);
/* Copies config.known_categories into m->known. 0 or -EINVAL / -ENOMEM. */
int known__configure(manager_t* m, const manager_category_t* items, size_t count);
void known__destroy(manager_t* m); /* queries and m->known */

/* ---- session.c ---- */
/* The Controller calls act on the calling connection's own session
 * (c->session); a connection has at most one. */
void session__initialize(manager_t* m, conn_t* c, wire_reader_t* r, int* fds, size_t fd_count);
void session__start(manager_t* m, conn_t* c, wire_reader_t* r);
void session__stop(manager_t* m, conn_t* c, wire_reader_t* r);
void session__terminate(manager_t* m, conn_t* c, wire_reader_t* r);
/* AddProvider (§10.2) into one session (the caller checked that p may take
 * part: sessions__includes). */
void session__add_provider(manager_t* m, session_t* s, provider_t* p);
void session__provider_gone(manager_t* m, tracee_t* t);
void session__fifo_event(manager_t* m, tracee_t* t, uint32_t events);
void session__conn_closed(manager_t* m, conn_t* c);

/* shared_ring.c: ARCHIVE_RING (wire.h). A controller's ring, offered: */
typedef struct shared_ring shared_ring_t;
void shared_ring__offer(manager_t* m, conn_t* c, wire_reader_t* r);
/* taken as the sink of its session's archive (false: it has none), */
bool shared_ring__take(conn_t* c, manager_archive_sink_t* sink);
/* or freed with the connection. */
void shared_ring__conn_free(conn_t* c);
void session__timeouts(manager_t* m, uint64_t now, uint64_t* next_deadline);
/* After every event: writes the results that became due, flushes the output,
 * completes Start / Stop / Terminate whose tracees are all there. */
void session__progress(manager_t* m);
/* Stops s as its own client's STOP_TRACING{write_results = 1} would, with no
 * one waiting for the STOP_RESULT (STOP_SESSION). false if s was not
 * running (initialized, starting or started): nothing was done. */
bool session__stop_for_other(manager_t* m, session_t* s);
/* The output queue went below the streaming high-water mark. */
void session__output_drained(session_t* s);
/* The output failed (client gone, too slow, write error): abort. */
void session__abort(manager_t* m, session_t* s, const char* why);
/* Shutdown: terminate every session with results (idempotent). */
void session__shutdown(manager_t* m);
void session__destroy(manager_t* m, session_t* s);

/* ---- sessions.c ---- */
/* Whether provider p takes part in session s: its client's own providers
 * (same uid), every one for root, and the kernel provider (run by root under
 * KERNEL_PROVIDER_NAME) in every session. */
bool sessions__includes(const session_t* s, const provider_t* p);
/* A provider registered: it joins every session it may take part in. */
void sessions__provider_registered(manager_t* m, provider_t* p);
/* Whether a session p takes part in is starting or started (REGISTER_RESULT). */
bool sessions__started_for(const manager_t* m, const provider_t* p);
/* A provider's connection closed: every tracee of it, in every session. */
void sessions__provider_removed(manager_t* m, provider_t* p);
size_t sessions__count(const manager_t* m);
void sessions__list(manager_t* m, conn_t* c, wire_reader_t* r);         /* LIST_SESSIONS */
void sessions__stop_session(manager_t* m, conn_t* c, wire_reader_t* r); /* STOP_SESSION */
/* Frees the sessions destroyed during this loop turn. */
void sessions__reap(manager_t* m);

/* ---- snapshot.c ---- */
/* SNAPSHOT (wire.h): the buffers of the running session as they are now,
 * written to the archive fd that comes with it as a complete archive of its
 * own (docs/snapshots.md); tracing goes on. */
void snapshot__take(manager_t* m, conn_t* c, wire_reader_t* r, int* fds, size_t fd_count);

/* ---- archive.c ---- */
output_t* output__create(manager_t* m, session_t* s, int fd);
/* Appends whole bytes; false if the queue overflowed (the session must be
 * aborted). */
bool output__append(output_t* o, const void* data, size_t bytes);
/* Writes what the fd accepts; false if the output failed. */
bool output__flush(output_t* o);
void output__event(manager_t* m, output_t* o, uint32_t events);
/* Detaches from the session: the fd is closed once the queue is delivered
 * (or immediately if failed). */
void output__release(manager_t* m, output_t* o);
void output__free(manager_t* m, output_t* o);
/* Shutdown: delivers every draining queue within timeout_ms (blocking). */
void output__drain_all(manager_t* m, uint64_t timeout_ms);

/* Writes the magic-number record. */
bool archive__magic(output_t* o);
/* The wall-clock anchor (anchor/clock_anchor.h) at the start or the stop,
 * taken now; the trace clock is CLOCK_MONOTONIC, which the engine's clock
 * follows (docs/clock.md). Whoever writes after it names its provider. */
bool archive__clock_anchor(output_t* o, bool stop);
/* A provider-info record (FXT.md: id and name), and a buffer-overflow
 * provider event. false if the output failed. */
bool archive__provider_info(output_t* o, uint32_t provider_id, const char* name);
bool archive__overflow_event(output_t* o, uint32_t provider_id);
/* What a buffer scan hands over, appended to `out` and checked again once
 * copied (the provider may still be writing its buffer): a record's size
 * field must say exactly the bytes emitted, and no metadata record (the
 * manager's to write) is taken from a provider, else the copy is taken back
 * and counted in `rejected`. archive__emit_record is a buffer_emit_fn whose
 * arg is an archive_emit_t; -1 once the output failed. */
typedef struct archive_emit {
  output_t* out;
  const uint8_t* skip_begin; /* records in [skip_begin, skip_end) are not written */
  const uint8_t* skip_end;
  names_t* names; /* learns from each record written, when not NULL */
  names_source_t* source;
  uint64_t records, bytes, rejected;
} archive_emit_t;
int archive__emit_record(void* arg, const void* data, size_t bytes);
/* The same for a run of whole records (buffer_scan__save_runs): copied in
 * one piece, then framed and checked record by record in the copy; from a
 * record that fails on, the rest goes through archive__emit_record. */
int archive__emit_run(void* arg, const void* data, size_t bytes);
/* A save's chunk (buffer_scan__save_prefixes): copied whole, framed in the
 * copy; the whole records before the first it does not take are kept. */
int64_t archive__emit_prefix(void* arg, const void* data, size_t max_bytes, uint64_t* records);
/* The provider's results: provider-info/section record, then its buffer
 * data (§10.4). false only if the output failed. */
bool archive__write_results(manager_t* m, tracee_t* t);
/* One streaming save (§9). false only if the output failed. */
bool archive__write_save(manager_t* m, tracee_t* t, uint32_t wrapped, uint64_t durable_end);
/* The names section (docs/manager.md): the names learned so far, checked
 * against /proc, as kernel-object records under the manager's provider id 0
 * ("trace_manager"), when records were written since the last one. false if
 * the output failed. */
bool archive__write_names(manager_t* m, session_t* s);
/* The same names, as a whole section of an archive of its own (a snapshot's)
 * written to `o`; the session's own section is not affected. */
bool archive__write_names_to(manager_t* m, session_t* s, output_t* o);
/* Reads the tracee's buffer header; false if unusable. */
bool archive__header(const tracee_t* t, trace_buffer_header_t* h, const char** why);
/* Notes damage to t's buffer for the client: the first description is kept,
 * `records` (left out for it; WIRE_RECORDS_UNKNOWN: all) are added up. */
void archive__note_damage(tracee_t* t, uint64_t records, const char* fmt, ...)
    __attribute__((format(printf, 3, 4)));

#endif /* FXTRACE_MANAGER_MANAGER_INTERNAL_H_ */
