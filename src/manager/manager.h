/* Not part of the public API: the trace manager (PROTOCOL.md §3-§10,
 * docs/manager.md) as a library, so that the `trace_manager` daemon and
 * `trace record` (a manager in a thread when none is running) share it.
 *
 * One manager = one listening SOCK_SEQPACKET socket and one epoll loop run by
 * manager__run() on the caller's thread. No globals, no signal handlers, no
 * exit(): several managers may live in one process (on different sockets). */
#ifndef FXTRACE_MANAGER_MANAGER_H_
#define FXTRACE_MANAGER_MANAGER_H_

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef enum manager_log_level {
  MANAGER_LOG_ERROR = 0,
  MANAGER_LOG_WARN = 1,
  MANAGER_LOG_INFO = 2,
  MANAGER_LOG_DEBUG = 3,
} manager_log_level_t;

/* A category the manager declares itself (Fuchsia's trace_manager config
 * file `categories` map): name 1..100 bytes, description at most 400. */
typedef struct manager_category {
  const char* name;
  const char* description;
} manager_category_t;

/* A destination for a session's archive inside the manager's own process
 * (`trace record`'s archive thread: src/ring/archive_ring.h), used instead
 * of writing to the fd the controller handed over (which is still closed at
 * the end). write takes what it can (0: nothing now); after a short write,
 * room_fd becomes readable once there is room, and clear_room is called
 * before writing again. close ends the archive. reserve and commit
 * (optional, both or neither) let the manager copy a provider's records
 * straight into the sink and check them there, when nothing waits in its
 * queue before them: reserve gives `size` contiguous bytes or NULL (then
 * the manager queues and writes as usual), commit hands over the first
 * `n` of them. */
typedef struct manager_archive_sink {
  size_t (*write)(void* arg, const void* data, size_t size);
  void* (*reserve)(void* arg, size_t size);
  void (*commit)(void* arg, size_t n);
  void (*clear_room)(void* arg);
  void (*close)(void* arg);
  /* optional: whether the reader went away (nothing written is read any
   * more); asked when room_fd is readable */
  bool (*gone)(void* arg);
  /* optional: whether the reader has bytes left to read (the output then
   * waits for it, on room_fd, before close); and the end of an archive
   * that was cut short (failed, or not all delivered), instead of close */
  bool (*unread)(void* arg);
  void (*cut)(void* arg);
  int room_fd;
  void* arg;
} manager_archive_sink_t;

typedef struct manager_config {
  /* NULL: wire__socket_path() (FXTRACE_SOCKET, XDG_RUNTIME_DIR, ...). */
  const char* socket_path;
  /* > 0: a bound, listening AF_UNIX SOCK_SEQPACKET socket to accept on
   * instead of binding socket_path (systemd socket activation). The manager
   * owns it from then on; its path (from getsockname) is the socket path,
   * and the file is left in place at exit (it belongs to the service
   * manager). Its permissions are the service manager's (SocketMode=,
   * SocketGroup=); `group` still decides who may control tracing. */
  int listen_fd;
  /* NULL: only the manager's own uid (and root) may control tracing, socket
   * 0600. A group name: its members may too, socket 0660 owned by it. */
  const char* group;
  /* Stop and terminate timeout when the client gives none; 0: 60000
   * (PROTOCOL.md §10.3). */
  uint64_t stop_timeout_ms;
  /* Bound of a session's archive output queue; a client that stops reading
   * until it is exceeded loses its session. 0: 256 MiB. */
  size_t max_output_queue;
  /* Streaming saves are acknowledged only while the output queue is below
   * this (the provider drops records meanwhile, it never stalls). 0: 32 MiB. */
  size_t streaming_high_water;
  /* Categories answered to GetKnownCategories as the manager's own (copied
   * by manager__create, which refuses bad ones with -EINVAL). */
  const manager_category_t* known_categories;
  size_t known_category_count;
  manager_log_level_t log_level; /* messages above it are not logged */
  bool log_syslog;               /* syslog(3) instead of stderr */
  /* Called for each log line instead of stderr/syslog when set. */
  void (*log_fn)(void* arg, manager_log_level_t level, const char* message);
  void* log_arg;
  /* Asked for each archive fd a controller hands over: true (and *sink
   * filled) if the embedding program reads that archive itself (the fd is
   * a pipe it made); NULL: the fd is always written. Runs on the loop's
   * thread. */
  bool (*archive_sink)(void* arg, int fd, manager_archive_sink_t* sink);
  void* archive_sink_arg;
} manager_config_t;

typedef struct manager manager_t;

/* With config->listen_fd, adopts that socket (-ENOTSOCK, or -EINVAL when it
 * is not a listening AF_UNIX SOCK_SEQPACKET socket). Otherwise creates the
 * socket directory if needed (0700, 0750 with a group), refuses
 * to start if another manager answers at the path (-EADDRINUSE), removes a
 * stale socket file, binds and listens. 0 or -errno. */
int manager__create(const manager_config_t* config, manager_t** out);

/* The path the manager listens on. */
const char* manager__socket_path(const manager_t* m);

/* Runs the loop until manager__shutdown(); then stops an active trace,
 * delivers its archive and returns 0 (or -errno if the loop failed). */
int manager__run(manager_t* m);

/* Thread-safe and async-signal-safe (one eventfd write). */
void manager__shutdown(manager_t* m);

/* Closes everything and removes the socket file. Not while running. */
void manager__destroy(manager_t* m);

const char* manager__log_level_name(manager_log_level_t level);
/* "error", "warn", "info", "debug" -> 0 and *out; else -1. */
int manager__parse_log_level(const char* name, manager_log_level_t* out);

#endif /* FXTRACE_MANAGER_MANAGER_H_ */
