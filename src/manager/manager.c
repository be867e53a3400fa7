/* The trace manager's loop: the listening socket, one epoll loop, accepted
 * connections (HELLO, peer credentials, dispatch by message type). */
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <limits.h>
#include <pthread.h>
#include <pwd.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "manager/manager_internal.h"
#include "protocol/latency_hint.h"
#include "protocol/manager_socket.h"

#define DEFAULT_STOP_TIMEOUT_MS 60000u
#define DEFAULT_MAX_OUTPUT_QUEUE ((size_t)256 << 20)
/* Streaming: what the queue absorbs of a stall of the client or its disk
 * before the provider drops (at 100 MB/s of saves, about 0.3 s). */
#define DEFAULT_STREAMING_HIGH_WATER ((size_t)32 << 20)
#define SHUTDOWN_DRAIN_MS 10000u

static void reap_closed(manager_t* m);

uint64_t mgr__now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

int mgr__epoll_add(manager_t* m, int fd, uint32_t events, ep_tag_t* tag) {
  struct epoll_event ev = {.events = events, .data.ptr = tag};
  return epoll_ctl(m->epoll_fd, EPOLL_CTL_ADD, fd, &ev) == 0 ? 0 : -errno;
}

int mgr__epoll_mod(manager_t* m, int fd, uint32_t events, ep_tag_t* tag) {
  struct epoll_event ev = {.events = events, .data.ptr = tag};
  return epoll_ctl(m->epoll_fd, EPOLL_CTL_MOD, fd, &ev) == 0 ? 0 : -errno;
}

void mgr__epoll_del(manager_t* m, int fd) { epoll_ctl(m->epoll_fd, EPOLL_CTL_DEL, fd, NULL); }

int mgr__send(manager_t* m, conn_t* c, const int* fds, size_t fd_count) {
  if (!c || c->closed) return -EPIPE;
  if (!wire__end(m->w)) {
    LOGE(m, "message type %u does not fit a message",
         (unsigned)(m->w->data[6] | m->w->data[7] << 8));
    return -EMSGSIZE;
  }
  int status = wire__send(c->fd, m->w, fds, fd_count);
  if (status != 0) {
    /* a peer that does not read its replies (-EAGAIN) or is gone */
    LOGW(m, "connection of pid %d: send failed (%s): closing it", (int)c->cred.pid,
         strerror(-status));
    mgr__close_conn(m, c);
  }
  return status;
}

void mgr__send_error(manager_t* m, conn_t* c, uint32_t request_id, int code, const char* msg) {
  wire__begin(m->w, MSG_ERROR, request_id);
  wire__put_u32(m->w, (uint32_t)code);
  wire__put_cstr(m->w, msg);
  mgr__send(m, c, NULL, 0);
}

void mgr__close_conn(manager_t* m, conn_t* c) {
  if (c->closed) return;
  c->closed = true;
  mgr__epoll_del(m, c->fd);
  close(c->fd);
  c->fd = -1;
  if (c->provider) {
    provider_t* p = c->provider;
    c->provider = NULL;
    registry__remove(m, p);
  }
  if (c->role == WIRE_ROLE_CONTROLLER) {
    known__conn_closed(m, c);
    session__conn_closed(m, c);
  }
  alerts__conn_free(c); /* PROTOCOL.md §5.1: its alert queue goes with it */
  shared_ring__conn_free(c);
  LOGD(m, "connection of pid %d closed", (int)c->cred.pid);
}

/* ---- creation ---- */

static int make_parent_dirs(const char* path, mode_t mode, bool has_group, gid_t gid) {
  char dir[PATH_MAX];
  size_t n = strlen(path);
  if (n >= sizeof(dir)) return -ENAMETOOLONG;
  memcpy(dir, path, n + 1);
  char* slash = strrchr(dir, '/');
  if (!slash || slash == dir) return 0;
  *slash = '\0';
  for (char* p = dir + 1; *p; p++) {
    if (*p != '/') continue;
    *p = '\0';
    if (mkdir(dir, mode) != 0 && errno != EEXIST) return -errno;
    *p = '/';
  }
  if (mkdir(dir, mode) == 0) {
    if (has_group && chown(dir, (uid_t)-1, gid) != 0) return -errno;
    if (chmod(dir, mode) != 0) return -errno; /* not narrowed by the umask */
  } else if (errno != EEXIST) {
    return -errno;
  }
  return 0;
}

/* The default location, by the rule every client follows
 * (protocol/manager_socket.h): its directory is made here if missing, and a
 * directory somebody else controls is refused, never used or "repaired". */
static int locate_default_socket(manager_t* m) {
  struct manager_socket where;
  int status = manager_socket__locate(&where, true, m->has_group ? 0750 : 0700,
                                      m->has_group ? m->gid : (gid_t)-1);
  if (status != 0) {
    LOGE(m, "cannot create the directory of %s: %s", where.path[0] ? where.path : where.directory,
         strerror(-status));
    return status;
  }
  if (where.kind == MANAGER_SOCKET_UNSAFE) {
    manager_socket__release(&where);
    LOGE(m, "not listening in %s: %s; %s", where.directory, where.problem, MANAGER_SOCKET_ADVICE);
    return -EPERM;
  }
  /* bound by its name: the directory is this user's (or root's) and nobody
   * else can replace it (checked parent), so the name stays the one checked */
  manager_socket__release(&where);
  snprintf(m->socket_path, sizeof(m->socket_path), "%s", where.path);
  return 0;
}

static int bind_socket(manager_t* m) {
  struct sockaddr_un addr = {.sun_family = AF_UNIX};
  size_t n = strlen(m->socket_path);
  if (n == 0 || n >= sizeof(addr.sun_path)) return -ENAMETOOLONG;
  memcpy(addr.sun_path, m->socket_path, n + 1);
  int status = make_parent_dirs(m->socket_path, m->has_group ? 0750 : 0700, m->has_group, m->gid);
  if (status != 0) {
    LOGE(m, "cannot create the directory of %s: %s", m->socket_path, strerror(-status));
    return status;
  }
  /* Another manager answering there? A stale file is removed. */
  struct stat st;
  if (lstat(m->socket_path, &st) == 0) {
    if (!S_ISSOCK(st.st_mode)) {
      LOGE(m, "%s exists and is not a socket", m->socket_path);
      return -EEXIST;
    }
    int probe = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
    if (probe < 0) return -errno;
    int r = connect(probe, (struct sockaddr*)&addr, sizeof(addr));
    int err = errno;
    close(probe);
    if (r == 0) {
      LOGE(m, "another trace manager is running at %s", m->socket_path);
      return -EADDRINUSE;
    }
    if (err != ECONNREFUSED && err != ENOENT) return -err;
    LOGI(m, "removing the stale socket %s", m->socket_path);
    if (unlink(m->socket_path) != 0 && errno != ENOENT) return -errno;
  }
  m->listen_fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
  if (m->listen_fd < 0) return -errno;
  /* Bound with owner-only permissions from the start, widened below. */
  mode_t old = umask(0177);
  int r = bind(m->listen_fd, (struct sockaddr*)&addr, sizeof(addr));
  int err = errno;
  umask(old);
  if (r != 0) {
    LOGE(m, "cannot bind %s: %s", m->socket_path, strerror(err));
    return -err;
  }
  /* Listening at once: a client that sees the socket file (it appears at
   * bind) is not refused. Only the owner can connect until it is widened. */
  if (listen(m->listen_fd, 64) != 0) {
    err = errno;
    unlink(m->socket_path);
    return -err;
  }
  if (m->has_group) {
    if (chown(m->socket_path, (uid_t)-1, m->gid) != 0 || chmod(m->socket_path, 0660) != 0) {
      err = errno;
      LOGE(m, "cannot give %s to the group: %s", m->socket_path, strerror(err));
      unlink(m->socket_path);
      return -err;
    }
  } else if (chmod(m->socket_path, 0600) != 0) {
    err = errno;
    unlink(m->socket_path);
    return -err;
  }
  if (stat(m->socket_path, &st) == 0) {
    m->socket_dev = st.st_dev;
    m->socket_ino = st.st_ino;
  }
  return 0;
}

/* Takes the socket the service manager passed (systemd socket activation). */
static int adopt_socket(manager_t* m, int fd) {
  int type = 0, domain = 0, listening = 0;
  socklen_t len = sizeof(type);
  if (getsockopt(fd, SOL_SOCKET, SO_TYPE, &type, &len) != 0) {
    int err = errno;
    LOGE(m, "the passed descriptor %d is not a socket: %s", fd, strerror(err));
    return err == EBADF ? -EBADF : -ENOTSOCK;
  }
  len = sizeof(domain);
  getsockopt(fd, SOL_SOCKET, SO_DOMAIN, &domain, &len);
  len = sizeof(listening);
  getsockopt(fd, SOL_SOCKET, SO_ACCEPTCONN, &listening, &len);
  if (type != SOCK_SEQPACKET || domain != AF_UNIX || !listening) {
    LOGE(m,
         "the passed socket (descriptor %d) is not a listening Unix SOCK_SEQPACKET socket "
         "(ListenSequentialPacket= in the .socket unit)",
         fd);
    return -EINVAL;
  }
  int flags = fcntl(fd, F_GETFL);
  if (flags < 0 || fcntl(fd, F_SETFL, flags | O_NONBLOCK) != 0 ||
      fcntl(fd, F_SETFD, FD_CLOEXEC) != 0)
    return -errno;
  struct sockaddr_un addr = {0};
  len = sizeof(addr);
  if (getsockname(fd, (struct sockaddr*)&addr, &len) == 0 && addr.sun_path[0] &&
      len > offsetof(struct sockaddr_un, sun_path)) {
    size_t n = strnlen(addr.sun_path, sizeof(addr.sun_path));
    if (n < sizeof(m->socket_path)) {
      memcpy(m->socket_path, addr.sun_path, n);
      m->socket_path[n] = '\0';
    }
  }
  m->listen_fd = fd; /* socket_ino stays 0: the file is never unlinked */
  return 0;
}

int manager__create(const manager_config_t* config, manager_t** out) {
  *out = NULL;
  manager_t* m = calloc(1, sizeof(*m));
  if (!m) return -ENOMEM;
  if (config) m->config = *config;
  if (m->config.stop_timeout_ms == 0) m->config.stop_timeout_ms = DEFAULT_STOP_TIMEOUT_MS;
  if (m->config.max_output_queue == 0) m->config.max_output_queue = DEFAULT_MAX_OUTPUT_QUEUE;
  if (m->config.streaming_high_water == 0)
    m->config.streaming_high_water = DEFAULT_STREAMING_HIGH_WATER;
  if (m->config.streaming_high_water > m->config.max_output_queue / 2)
    m->config.streaming_high_water = m->config.max_output_queue / 2;
  m->config.socket_path = NULL;
  m->config.group = NULL;
  m->config.known_categories = NULL; /* copied below: the caller's may go */
  m->config.known_category_count = 0;
  m->listen_fd = m->wake_fd = m->epoll_fd = -1;
  m->next_provider_id = 1;
  m->next_query_id = 1;
  m->uid = getuid();
  m->listen_tag.kind = EP_LISTEN;
  m->wake_tag.kind = EP_WAKE;
  int status = 0;
  m->w = malloc(sizeof(*m->w));
  m->rbuf = malloc(WIRE_MAX_MESSAGE);
  if (!m->w || !m->rbuf) {
    status = -ENOMEM;
    goto fail;
  }
  if (config &&
      (status = known__configure(m, config->known_categories, config->known_category_count)) != 0) {
    LOGE(m, "bad known category in the configuration");
    goto fail;
  }
  if (config && config->group) {
    struct group grp, *found = NULL;
    char buf[4096];
    if (getgrnam_r(config->group, &grp, buf, sizeof(buf), &found) != 0 || !found) {
      LOGE(m, "unknown group %s", config->group);
      status = -ENOENT;
      goto fail;
    }
    m->has_group = true;
    m->gid = found->gr_gid;
  }
  bool passed = config && config->listen_fd > 0;
  if (config && config->socket_path) {
    if (strlen(config->socket_path) >= sizeof(m->socket_path)) {
      status = -ENAMETOOLONG;
      goto fail;
    }
    strcpy(m->socket_path, config->socket_path);
  } else if (!passed && (status = locate_default_socket(m)) != 0) {
    goto fail;
  }
  if (passed)
    status = adopt_socket(m, config->listen_fd);
  else
    status = bind_socket(m);
  if (status != 0) goto fail;
  m->wake_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
  m->epoll_fd = epoll_create1(EPOLL_CLOEXEC);
  if (m->wake_fd < 0 || m->epoll_fd < 0) {
    status = -errno;
    goto fail;
  }
  if ((status = mgr__epoll_add(m, m->listen_fd, EPOLLIN, &m->listen_tag)) != 0 ||
      (status = mgr__epoll_add(m, m->wake_fd, EPOLLIN, &m->wake_tag)) != 0)
    goto fail;
  LOGI(m, "listening on %s (%s%s)", m->socket_path, m->has_group ? "owner and group" : "owner only",
       m->socket_ino == 0 ? ", socket passed by the service manager" : "");
  *out = m;
  return 0;
fail:
  manager__destroy(m);
  return status;
}

const char* manager__socket_path(const manager_t* m) { return m->socket_path; }

void manager__shutdown(manager_t* m) {
  uint64_t one = 1;
  ssize_t r = write(m->wake_fd, &one, sizeof(one));
  (void)r;
}

void manager__destroy(manager_t* m) {
  if (!m) return;
  while (m->sessions) session__destroy(m, m->sessions);
  while (m->conns) {
    conn_t* c = m->conns;
    m->conns = c->next;
    if (!c->closed) {
      c->closed = true;
      close(c->fd);
    }
    alerts__conn_free(c);
    shared_ring__conn_free(c);
    free(c);
  }
  registry__destroy(m);
  while (m->draining) {
    output_t* o = m->draining;
    m->draining = o->next;
    output__free(m, o);
  }
  reap_closed(m);
  if (m->listen_fd >= 0) {
    /* remove the socket file only if it is still ours */
    struct stat st;
    if (m->socket_ino && stat(m->socket_path, &st) == 0 && st.st_dev == m->socket_dev &&
        st.st_ino == m->socket_ino)
      unlink(m->socket_path);
    close(m->listen_fd);
  }
  if (m->wake_fd >= 0) close(m->wake_fd);
  if (m->epoll_fd >= 0) close(m->epoll_fd);
  free(m->w);
  free(m->rbuf);
  free(m);
}

/* ---- connections ---- */

/* Membership of --group: the peer's gid (primary, as SO_PEERCRED gives it at
 * connect), its supplementary groups as the kernel knows them for the
 * connecting process (SO_PEERGROUPS: what `newgrp`, `sg` or a login after
 * being added grant), or the group database's list for its uid. */
static bool peer_in_group(int fd, const struct ucred* cred, gid_t gid) {
  if (cred->gid == gid) return true;
  gid_t peer_groups[256];
  socklen_t length = sizeof(peer_groups);
  if (getsockopt(fd, SOL_SOCKET, SO_PEERGROUPS, peer_groups, &length) == 0) {
    for (size_t i = 0; i < length / sizeof(gid_t); i++)
      if (peer_groups[i] == gid) return true;
  }
  char buf[8192];
  struct passwd pw, *found = NULL;
  if (getpwuid_r(cred->uid, &pw, buf, sizeof(buf), &found) != 0 || !found) return false;
  gid_t groups[256];
  int n = 256;
  if (getgrouplist(found->pw_name, found->pw_gid, groups, &n) < 0) return false;
  for (int i = 0; i < n; i++)
    if (groups[i] == gid) return true;
  return false;
}

static bool controller_allowed(manager_t* m, const conn_t* c) {
  if (c->cred.uid == m->uid || c->cred.uid == 0) return true;
  return m->has_group && peer_in_group(c->fd, &c->cred, m->gid);
}

static void accept_connections(manager_t* m) {
  for (;;) {
    int fd = accept4(m->listen_fd, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK);
    if (fd < 0) {
      if (errno == EINTR) continue;
      if (errno != EAGAIN && errno != EWOULDBLOCK) LOGW(m, "accept: %s", strerror(errno));
      return;
    }
    conn_t* c = calloc(1, sizeof(*c));
    socklen_t len = sizeof(c ? c->cred : (struct ucred){0});
    if (!c || getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &c->cred, &len) != 0) {
      LOGW(m, "cannot take a connection: %s", c ? strerror(errno) : "out of memory");
      free(c);
      close(fd);
      continue;
    }
    c->tag.kind = EP_CONN;
    c->m = m;
    c->fd = fd;
    if (mgr__epoll_add(m, fd, EPOLLIN, &c->tag) != 0) {
      free(c);
      close(fd);
      continue;
    }
    c->next = m->conns;
    m->conns = c;
    LOGD(m, "connection from pid %d uid %u", (int)c->cred.pid, (unsigned)c->cred.uid);
  }
}

static void handle_hello(manager_t* m, conn_t* c, wire_reader_t* r) {
  uint8_t role = wire__get_u8(r);
  if (!wire__done(r) || (role != WIRE_ROLE_PROVIDER && role != WIRE_ROLE_CONTROLLER)) {
    mgr__send_error(m, c, r->request_id, -EPROTO, "bad HELLO");
    mgr__close_conn(m, c);
    return;
  }
  if (role == WIRE_ROLE_CONTROLLER && !controller_allowed(m, c)) {
    LOGW(m, "refused a controller connection from uid %u (pid %d): not allowed",
         (unsigned)c->cred.uid, (int)c->cred.pid);
    mgr__send_error(m, c, r->request_id, -EACCES, "this user may not control tracing");
    mgr__close_conn(m, c);
    return;
  }
  c->role = role;
}

static void close_fds(int* fds, size_t* count) {
  for (size_t i = 0; i < *count; i++) close(fds[i]);
  *count = 0;
}

static void handle_message(manager_t* m, conn_t* c, size_t length, int* fds, size_t* fd_count) {
  wire_reader_t r;
  const char* why = wire__open(&r, m->rbuf, length);
  if (why) {
    LOGW(m, "connection of pid %d: malformed message (%s)", (int)c->cred.pid, why);
    mgr__send_error(m, c, 0, -EBADMSG, why);
    mgr__close_conn(m, c); /* framing cannot be trusted any more */
    return;
  }
  if (c->role == 0) {
    if (r.type != MSG_HELLO) {
      mgr__send_error(m, c, r.request_id, -EPROTO, "HELLO expected");
      mgr__close_conn(m, c);
      return;
    }
    handle_hello(m, c, &r);
    return;
  }
  if (c->role == WIRE_ROLE_PROVIDER) {
    switch (r.type) {
      case MSG_REGISTER_PROVIDER:
        registry__register(m, c, &r);
        return;
      case MSG_KNOWN_CATEGORIES:
        known__provider_reply(m, c, &r);
        return;
      case MSG_ERROR:
        return; /* a provider's complaint: nothing to answer */
      default:
        break;
    }
  } else {
    switch (r.type) {
      case MSG_GET_PROVIDERS:
        registry__get_providers(m, c, &r);
        return;
      case MSG_GET_KNOWN_CATEGORIES:
        known__query(m, c, &r, false);
        return;
      case MSG_GET_PROVIDER_CATEGORIES:
        known__query(m, c, &r, true);
        return;
      case MSG_INITIALIZE_TRACING:
        session__initialize(m, c, &r, fds, *fd_count);
        *fd_count = 0; /* taken */
        return;
      case MSG_START_TRACING:
        session__start(m, c, &r);
        return;
      case MSG_STOP_TRACING:
        session__stop(m, c, &r);
        return;
      case MSG_TERMINATE_TRACING:
        session__terminate(m, c, &r);
        return;
      case MSG_SNAPSHOT:
        snapshot__take(m, c, &r, fds, *fd_count);
        *fd_count = 0; /* taken */
        return;
      case MSG_WATCH_ALERT:
        alerts__watch(m, c, &r);
        return;
      case MSG_LIST_SESSIONS:
        sessions__list(m, c, &r);
        return;
      case MSG_STOP_SESSION:
        sessions__stop_session(m, c, &r);
        return;
      case MSG_ARCHIVE_RING:
        shared_ring__offer(m, c, &r);
        return;
      default:
        break;
    }
  }
  LOGD(m, "connection of pid %d: unexpected message type %u", (int)c->cred.pid, r.type);
  mgr__send_error(m, c, r.request_id, -ENOSYS, "unexpected message type");
}

static void connection_event(manager_t* m, conn_t* c, uint32_t events) {
  for (int i = 0; i < 64 && !c->closed; i++) {
    int fds[WIRE_MAX_FDS];
    size_t fd_count = 0;
    ssize_t n = wire__recv(c->fd, m->rbuf, fds, &fd_count);
    if (n == -EAGAIN || n == -EWOULDBLOCK) break;
    if (n == -EMSGSIZE) {
      LOGW(m, "connection of pid %d: oversized message dropped", (int)c->cred.pid);
      mgr__send_error(m, c, 0, -EMSGSIZE, "message too large");
      continue;
    }
    if (n <= 0) { /* peer closed, or an error */
      mgr__close_conn(m, c);
      return;
    }
    handle_message(m, c, (size_t)n, fds, &fd_count);
    close_fds(fds, &fd_count);
  }
  if (!c->closed && (events & (EPOLLHUP | EPOLLERR)) && !(events & EPOLLIN)) mgr__close_conn(m, c);
}

static void reap_closed(manager_t* m) {
  while (m->dead_tracees) {
    tracee_t* t = m->dead_tracees;
    m->dead_tracees = t->dead_next;
    free(t);
  }
  sessions__reap(m);
  while (m->dead_outputs) {
    output_t* o = m->dead_outputs;
    m->dead_outputs = o->next;
    free(o);
  }
  for (conn_t** pp = &m->conns; *pp;) {
    conn_t* c = *pp;
    if (c->closed) {
      *pp = c->next;
      free(c);
    } else {
      pp = &c->next;
    }
  }
}

/* Blocks SIGPIPE on the loop's thread while it runs: writing to a pipe whose
 * reader is gone returns EPIPE instead (archive.c consumes the signal). */
int manager__run(manager_t* m) {
  latency_hint__short_slice(); /* its loop answers streaming saves */
  sigset_t pipe_set, old_set;
  sigemptyset(&pipe_set);
  sigaddset(&pipe_set, SIGPIPE);
  pthread_sigmask(SIG_BLOCK, &pipe_set, &old_set);
  int status = 0;
  uint64_t drain_deadline = 0;
  for (;;) {
    uint64_t now = mgr__now_ms();
    uint64_t next = UINT64_MAX;
    known__timeouts(m, now, &next);
    session__timeouts(m, now, &next);
    reap_closed(m);
    if (m->shutting_down && !m->sessions) {
      if (!m->draining) break;
      if (drain_deadline == 0) drain_deadline = now + SHUTDOWN_DRAIN_MS;
      if (now >= drain_deadline) break;
      if (drain_deadline < next) next = drain_deadline;
    }
    int timeout = next == UINT64_MAX ? -1 : next <= now ? 0 : (int)(next - now);
    struct epoll_event events[32];
    int n = epoll_wait(m->epoll_fd, events, 32, timeout);
    if (n < 0) {
      if (errno == EINTR) continue;
      status = -errno;
      LOGE(m, "epoll_wait: %s", strerror(errno));
      break;
    }
    for (int i = 0; i < n; i++) {
      ep_tag_t* tag = events[i].data.ptr;
      switch (tag->kind) {
        case EP_LISTEN:
          accept_connections(m);
          break;
        case EP_WAKE: {
          uint64_t value;
          ssize_t r = read(m->wake_fd, &value, sizeof(value));
          (void)r;
          if (!m->shutting_down) {
            LOGI(m, "shutting down");
            m->shutting_down = true;
            session__shutdown(m);
          }
          break;
        }
        case EP_CONN: {
          conn_t* c = (conn_t*)tag;
          if (!c->closed) connection_event(m, c, events[i].events);
          break;
        }
        case EP_FIFO:
          if (!((tracee_t*)tag)->gone) session__fifo_event(m, (tracee_t*)tag, events[i].events);
          break;
        case EP_OUTPUT:
          if (!((output_t*)tag)->gone) output__event(m, (output_t*)tag, events[i].events);
          break;
      }
    }
  }
  while (m->sessions) session__destroy(m, m->sessions);
  /* what the loop's drain left of the one SHUTDOWN_DRAIN_MS (docs/manager.md:
   * "at most 10 s more"), not another 10 s */
  uint64_t now = mgr__now_ms();
  output__drain_all(m, drain_deadline == 0    ? SHUTDOWN_DRAIN_MS
                       : drain_deadline > now ? drain_deadline - now
                                              : 0);
  reap_closed(m);
  pthread_sigmask(SIG_SETMASK, &old_set, NULL);
  LOGI(m, "stopped");
  return status;
}
