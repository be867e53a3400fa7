/* Not part of the public API: the `trace` client's side of the Controller
 * protocol (PROTOCOL.md §5, encoded as src/protocol/wire.h lays out). One call
 * per Controller request; each waits for its reply and checks it completely
 * (header, type, request id, every length and limit, nothing left over)
 * before returning anything from it. On failure a call returns a negative
 * errno and leaves a one-line description in c->error. */
#ifndef FXTRACE_TRACE_CONTROLLER_H_
#define FXTRACE_TRACE_CONTROLLER_H_

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "protocol/wire.h"

/* An alert relayed by the manager (wire.h ALERT). */
typedef struct controller_alert {
  char name[15];
  uint32_t provider_id;
  uint64_t pid;
  char provider_name[WIRE_MAX_NAME + 1];
  uint64_t time_ns; /* CLOCK_MONOTONIC when the manager received it */
  uint32_t dropped; /* alerts this connection lost before this one */
} controller_alert_t;

typedef struct controller {
  int fd;
  uint32_t watch_request_id; /* 0: no WATCH_ALERT waiting */
  bool alert_ready;          /* its reply came during another call: in `alert` */
  controller_alert_t alert;
  uint32_t next_request_id;
  uint32_t initialize_request_id; /* 0: none sent; a MSG_ERROR for it can come later */
  uint32_t session_id; /* the manager's id of this session, from START_RESULT; 0 before */
  /* SESSION_STOPPED came (another client's STOP_SESSION stopped this
   * connection's session): by whom. Set by whichever call read it. */
  bool session_stopped;
  uint32_t stopped_by_uid;
  uint64_t stopped_by_pid;
  int reply_timeout_ms; /* how long a reply may take; -1 waits forever */
  /* descriptors of the last message received, until taken (or the next) */
  int received_fds[WIRE_MAX_FDS];
  size_t received_fd_count;
  wire_writer_t* writer; /* WIRE_MAX_MESSAGE each: on the heap */
  uint8_t* buffer;
  char error[WIRE_MAX_DESCRIPTION + 160];
} controller_t;

typedef struct controller_provider {
  uint32_t id;
  uint64_t pid;
  char name[WIRE_MAX_NAME + 1];
} controller_provider_t;

typedef struct controller_category {
  char name[WIRE_MAX_NAME + 1];
  char description[WIRE_MAX_DESCRIPTION + 1];
} controller_category_t;

/* category_group of wire.h: who declared which categories. */
typedef struct controller_category_group {
  uint32_t provider_id; /* 0: the manager's own configuration */
  uint64_t pid;
  char name[WIRE_MAX_NAME + 1];
  bool answered; /* false: the provider did not answer in time (or not well) */
  controller_category_t* categories;
  size_t count;
} controller_category_group_t;

/* provider_stats of wire.h. */
enum controller_provider_state {
  CONTROLLER_STOPPED = 1,
  CONTROLLER_TERMINATED = 2,
  CONTROLLER_NOT_STOPPED_IN_TIME = 3,
  CONTROLLER_DIED = 4,
};

typedef struct controller_stats {
  char name[WIRE_MAX_NAME + 1];
  uint64_t pid;
  uint8_t buffering_mode; /* engine enum: 0 oneshot, 1 circular, 2 streaming */
  uint32_t wrapped_count;
  uint64_t records_dropped;
  uint32_t durable_percent;
  uint64_t non_durable_bytes;
  uint8_t state; /* enum controller_provider_state */
  /* What was wrong with the provider's buffer ("" if nothing), and how many
   * records were left out for it (WIRE_RECORDS_UNKNOWN: not known, all). */
  char damage[WIRE_MAX_DAMAGE + 1];
  uint64_t damaged_records;
} controller_stats_t;

typedef struct controller_spec {
  const char* name;
  uint32_t buffer_size_mb;
  const char* const* categories;
  size_t category_count;
} controller_spec_t;

typedef struct controller_config {
  const char* const* categories; /* none: every category */
  size_t category_count;
  uint32_t buffer_size_mb;
  uint64_t start_timeout_ms;
  uint8_t buffering_mode; /* engine enum */
  uint64_t stop_timeout_ms;
  const controller_spec_t* specs;
  size_t spec_count;
} controller_config_t;

/* Buffer dispositions of StartTracing (PROTOCOL.md §3). */
enum { CONTROLLER_CLEAR_ENTIRE = 1, CONTROLLER_CLEAR_NONDURABLE = 2, CONTROLLER_RETAIN = 3 };

/* StartTracing's errors (PROTOCOL.md §5.1). */
enum {
  CONTROLLER_START_OK = 0,
  CONTROLLER_START_NOT_INITIALIZED = 1,
  CONTROLLER_START_ALREADY_STARTED = 2,
  CONTROLLER_START_STOPPING = 3,
  CONTROLLER_START_TERMINATING = 4,
};

/* Connects to the manager at `path` (NULL: none can be there, -ENOENT) as a
 * controller; messages name `shown` (NULL: path). 0, or -errno: -ENOENT /
 * -ECONNREFUSED mean no manager listens there; -EPERM, the one that listens
 * runs neither as this user nor as root (refused, told nothing). Where the
 * paths come from: protocol/manager_socket.h. */
int controller__open(controller_t* c, const char* path, const char* shown);
void controller__close(controller_t* c);

/* Lists are malloc'ed (free() them); *count may be 0 with *list NULL. */
int controller__get_providers(controller_t* c, controller_provider_t** list, size_t* count);
int controller__get_known_categories(controller_t* c, controller_category_t** list, size_t* count);
/* GET_PROVIDER_CATEGORIES: one group per source. Free the list with
 * controller__free_category_groups. */
int controller__get_provider_categories(controller_t* c, controller_category_group_t** list,
                                        size_t* count);
void controller__free_category_groups(controller_category_group_t* list, size_t count);

/* Sends InitializeTracing with archive_fd (the caller keeps its copy). There
 * is no reply on success: a refusal (MSG_ERROR) is reported by the next call
 * that waits for a reply. */
int controller__initialize_tracing(controller_t* c, const controller_config_t* config,
                                   int archive_fd);

/* *start_error receives 0 or one of CONTROLLER_START_*; the call itself
 * succeeds (returns 0) whenever a valid START_RESULT came back. */
int controller__start_tracing(controller_t* c, uint8_t disposition,
                              const char* const* additional_categories, size_t count,
                              uint32_t* start_error);

int controller__stop_tracing(controller_t* c, bool write_results, controller_stats_t** stats,
                             size_t* count);
int controller__terminate_tracing(controller_t* c, bool write_results, controller_stats_t** stats,
                                  size_t* count);

/* snapshot_stats of wire.h: one provider's part of a snapshot. */
typedef struct controller_snapshot_stats {
  char name[WIRE_MAX_NAME + 1];
  uint64_t pid;
  uint8_t buffering_mode;
  uint64_t records;         /* in the snapshot */
  uint64_t records_dropped; /* the buffer's drop counter */
  uint64_t discarded;       /* copied, but rewritten before they were checked */
  uint64_t durable_missing; /* bytes of string / thread records not committed in time */
  uint64_t copy_ns, check_ns;
  char damage[WIRE_MAX_DAMAGE + 1]; /* "" if nothing */
} controller_snapshot_stats_t;

/* SNAPSHOT with snapshot_fd (the caller keeps its copy and reads the
 * snapshot archive from its other end, to its end, while this waits: the
 * manager replies once the snapshot is queued, and closes its copy once it
 * is delivered). Free *stats. */
int controller__snapshot(controller_t* c, int snapshot_fd, controller_snapshot_stats_t** stats,
                         size_t* count);

/* WATCH_ALERT: asks for the next alert without waiting for it (one at a
 * time). Its ALERT comes later: when c->fd is readable or alert_ready is
 * set, controller__read_alert() takes it. */
int controller__watch_alert(controller_t* c);
/* The ALERT of the waiting WATCH_ALERT: 1 with *out filled, 0 if nothing
 * has come yet (never waits), or -errno. */
int controller__read_alert(controller_t* c, controller_alert_t* out);

/* Reads what the manager sent unasked, without waiting: the waiting
 * WATCH_ALERT's ALERT (then alert_ready) and SESSION_STOPPED (then
 * session_stopped). 0, or -errno (the connection failed, or a message that
 * answers nothing came). */
int controller__poll(controller_t* c);

/* session_info of wire.h: a running session. */
typedef struct controller_session {
  uint32_t id;
  uint64_t client_pid;
  uint32_t client_uid;
  uint8_t buffering_mode;
  uint32_t buffer_size_mb;
  char** categories; /* category_count names; none: every category */
  size_t category_count;
  uint64_t start_realtime_ns; /* 0: not started yet */
  uint8_t state;              /* enum controller_session_state */
  uint64_t bytes;             /* archive bytes written to its client so far */
  uint32_t providers;         /* taking part */
} controller_session_t;

enum controller_session_state {
  CONTROLLER_SESSION_INITIALIZED = 1,
  CONTROLLER_SESSION_STARTING = 2,
  CONTROLLER_SESSION_STARTED = 3,
  CONTROLLER_SESSION_STOPPING = 4,
  CONTROLLER_SESSION_STOPPED = 5,
  CONTROLLER_SESSION_TERMINATING = 6,
};

/* LIST_SESSIONS: the sessions this user may see (all of them for root).
 * Free with controller__free_sessions. */
int controller__list_sessions(controller_t* c, controller_session_t** list, size_t* count);
void controller__free_sessions(controller_session_t* list, size_t count);
/* STOP_SESSION: -ENOENT when no session `id` is visible to this user. */
int controller__stop_session(controller_t* c, uint32_t id);

/* ARCHIVE_RING (wire.h): before controller__initialize_tracing, asks for
 * the archive to come through a ring of `size` bytes the manager shares
 * (src/ring/archive_ring.h) instead of the archive fd; *ring is its
 * reader's side. *refused: the manager answered with an error and made no
 * ring (-ENOSYS: it does not know the message), so the archive fd is used;
 * any other failure leaves the connection's archive where it cannot be
 * read (the manager may hold a ring for it): give up the trace. */
typedef struct archive_ring archive_ring_t;
int controller__archive_ring(controller_t* c, uint32_t size, archive_ring_t** ring, bool* refused);

/* Names, for messages. */
const char* controller__session_state_name(uint8_t state);
const char* controller__mode_name(uint8_t buffering_mode);
const char* controller__start_error_name(uint32_t start_error);
const char* controller__state_name(uint8_t state);

#endif /* FXTRACE_TRACE_CONTROLLER_H_ */
