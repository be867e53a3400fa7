/* An in-process trace manager for `trace record` (see local_manager.h). */
#include "trace/local_manager.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#ifdef FXTRACE_HAVE_MANAGER

#include <dirent.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "manager/manager.h"
#include "ring/archive_ring.h"

#define DIRECTORY_PREFIX "fxtrace-record-"
#define OWNER_NAME "owner"
#define SOCKET_NAME "manager.sock"

/* The directory's owner file: its first line is the owning trace record's
 * pid, and that process holds an exclusive flock() on it for as long as the
 * directory is in use. The kernel drops the lock when the process dies,
 * however it dies (SIGKILL included), and a process that reuses the pid
 * does not hold it: a directory whose owner file can be locked is stale.
 * The descriptor is close-on-exec, so a command trace record runs (which
 * may outlive it) never keeps the lock. */
struct local_manager {
  manager_t* manager;
  pthread_t thread;
  int owner_fd;
  char directory[64];
  char owner_path[80];
  char socket_path[128];
  /* local_manager__archive_into(): the pipe (by its inode) whose archive
   * goes into `ring`; `taken` once the manager did. Under ring_lock: set by
   * the client's thread, read by the manager's. */
  pthread_mutex_t ring_lock;
  dev_t ring_pipe_dev;
  ino_t ring_pipe_ino;
  archive_ring_t* ring;
  bool taken;
};

/* The running one, for local_manager__emergency() */
static local_manager_t* _Atomic running;

static const char* temporary_directory(void) {
  const char* tmp = getenv("TMPDIR");
  return !tmp || !tmp[0] || strlen(tmp) > 40 ? "/tmp" : tmp;
}

/* Creates the owner file locked, under a temporary name first: a scan
 * never finds it unlocked. 0 or -errno. */
static int take_ownership(local_manager_t* m) {
  char temporary[96];
  snprintf(temporary, sizeof(temporary), "%s/" OWNER_NAME ".new", m->directory);
  snprintf(m->owner_path, sizeof(m->owner_path), "%s/" OWNER_NAME, m->directory);
  int fd = open(temporary, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
  if (fd < 0) return -errno;
  char text[32];
  int n = snprintf(text, sizeof(text), "%ld\n", (long)getpid());
  if (flock(fd, LOCK_EX | LOCK_NB) != 0 || write(fd, text, (size_t)n) != n ||
      rename(temporary, m->owner_path) != 0) {
    int err = errno ? errno : EIO;
    close(fd);
    unlink(temporary);
    return -err;
  }
  m->owner_fd = fd;
  return 0;
}

/* The directory `name` in `parent` if it is a stale one of ours: owned by
 * this user, with an owner file nobody holds locked. Removes its socket,
 * its owner file and itself; true if it did. */
static bool remove_if_stale(const char* parent, const char* name) {
  char path[256];
  if (snprintf(path, sizeof(path), "%s/%s", parent, name) >= (int)sizeof(path)) return false;
  int dir = open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (dir < 0) return false;
  struct stat st;
  bool removed = false;
  /* mkdtemp's 0700 directory of this user: nobody else put anything in it */
  if (fstat(dir, &st) == 0 && st.st_uid == geteuid() && (st.st_mode & 0077) == 0) {
    int owner = openat(dir, OWNER_NAME, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
    /* no owner file: an older trace, or one still taking ownership: left alone */
    if (owner >= 0 && flock(owner, LOCK_EX | LOCK_NB) == 0) {
      char text[32] = "";
      ssize_t n = read(owner, text, sizeof(text) - 1);
      long pid = n > 0 ? strtol(text, NULL, 10) : 0;
      unlinkat(dir, SOCKET_NAME, 0);
      unlinkat(dir, OWNER_NAME, 0);
      removed = rmdir(path) == 0;
      if (removed)
        fprintf(stderr,
                "trace record: removed %s, left by trace record (pid %ld), which was killed\n",
                path, pid);
    }
    if (owner >= 0) close(owner);
  }
  close(dir);
  return removed;
}

void local_manager__remove_stale(void) {
  const char* parent = temporary_directory();
  DIR* d = opendir(parent);
  if (!d) return;
  struct dirent* e;
  while ((e = readdir(d)) != NULL)
    if (strncmp(e->d_name, DIRECTORY_PREFIX, strlen(DIRECTORY_PREFIX)) == 0)
      remove_if_stale(parent, e->d_name);
  closedir(d);
}

void local_manager__emergency(void) {
  local_manager_t* m = atomic_exchange(&running, NULL);
  if (!m) return;
  unlink(m->socket_path);
  unlink(m->owner_path);
  rmdir(m->directory);
}

bool local_manager__available(void) { return true; }

static void log_line(void* arg, manager_log_level_t level, const char* message) {
  (void)arg;
  fprintf(stderr, "trace record: manager: %s%s\n", level == MANAGER_LOG_ERROR ? "error: " : "",
          message);
}

static size_t sink_write(void* arg, const void* data, size_t size) {
  return archive_ring__write(arg, data, size);
}
static void* sink_reserve(void* arg, size_t size) { return archive_ring__reserve(arg, size); }
static void sink_commit(void* arg, size_t n) { archive_ring__commit(arg, n); }
static void sink_clear_room(void* arg) { archive_ring__clear_room(arg); }
static void sink_close(void* arg) { archive_ring__close(arg); }

/* manager_config_t.archive_sink: the registered pipe's archive goes into
 * the ring (once). */
static bool archive_sink(void* arg, int fd, manager_archive_sink_t* sink) {
  local_manager_t* m = arg;
  struct stat st;
  if (fstat(fd, &st) != 0 || !S_ISFIFO(st.st_mode)) return false;
  pthread_mutex_lock(&m->ring_lock);
  bool mine =
      m->ring && !m->taken && st.st_dev == m->ring_pipe_dev && st.st_ino == m->ring_pipe_ino;
  if (mine) {
    m->taken = true;
    *sink = (manager_archive_sink_t){.write = sink_write,
                                     .reserve = sink_reserve,
                                     .commit = sink_commit,
                                     .clear_room = sink_clear_room,
                                     .close = sink_close,
                                     .room_fd = archive_ring__room_fd(m->ring),
                                     .arg = m->ring};
  }
  pthread_mutex_unlock(&m->ring_lock);
  return mine;
}

bool local_manager__archive_into(local_manager_t* m, int pipe_fd, archive_ring_t* ring) {
  struct stat st;
  if (!m || fstat(pipe_fd, &st) != 0) return false;
  pthread_mutex_lock(&m->ring_lock);
  m->ring_pipe_dev = st.st_dev;
  m->ring_pipe_ino = st.st_ino;
  m->ring = ring;
  m->taken = false;
  pthread_mutex_unlock(&m->ring_lock);
  return true;
}

static void* run(void* arg) {
  pthread_setname_np(pthread_self(), "trace-manager"); /* for top -H and bench/run */
  manager__run(arg);
  return NULL;
}

/* Removes what local_manager__start() made of m and frees it. */
static void remove_directory(local_manager_t* m) {
  local_manager_t* expected = m;
  atomic_compare_exchange_strong(&running, &expected, NULL);
  unlink(m->socket_path); /* if the manager left it */
  if (m->owner_fd >= 0) {
    unlink(m->owner_path); /* while still holding the lock */
    close(m->owner_fd);
  }
  rmdir(m->directory);
  pthread_mutex_destroy(&m->ring_lock);
  free(m);
}

int local_manager__start(local_manager_t** out, char* socket_path, size_t path_size, char* error,
                         size_t error_size) {
  *out = NULL;
  local_manager_t* m = calloc(1, sizeof(*m));
  if (!m) {
    snprintf(error, error_size, "out of memory");
    return -ENOMEM;
  }
  m->owner_fd = -1;
  pthread_mutex_init(&m->ring_lock, NULL);
  const char* tmp = temporary_directory();
  snprintf(m->directory, sizeof(m->directory), "%s/" DIRECTORY_PREFIX "XXXXXX", tmp);
  if (!mkdtemp(m->directory)) {
    int err = errno;
    snprintf(error, error_size, "cannot create a directory for the manager's socket in %s: %s", tmp,
             strerror(err));
    free(m);
    return -err;
  }
  snprintf(m->socket_path, sizeof(m->socket_path), "%s/" SOCKET_NAME, m->directory);
  if (strlen(m->socket_path) >= path_size) {
    snprintf(error, error_size, "socket path too long");
    remove_directory(m);
    return -ENAMETOOLONG;
  }
  int status = take_ownership(m);
  if (status != 0) {
    snprintf(error, error_size, "cannot create %s/" OWNER_NAME ": %s", m->directory,
             strerror(-status));
    remove_directory(m);
    return status;
  }
  atomic_store(&running, m); /* from here on a signal handler may remove it */
  manager_config_t config;
  memset(&config, 0, sizeof(config)); /* zero: the defaults */
  config.socket_path = m->socket_path;
  config.log_level = MANAGER_LOG_ERROR; /* the summary reports the rest */
  config.log_fn = log_line;
  config.archive_sink = archive_sink;
  config.archive_sink_arg = m;
  status = manager__create(&config, &m->manager);
  if (status != 0) {
    snprintf(error, error_size, "cannot start a trace manager: %s", strerror(-status));
    remove_directory(m);
    return status;
  }
  sigset_t all, old;
  sigfillset(&all);
  pthread_sigmask(SIG_SETMASK, &all, &old);
  status = -pthread_create(&m->thread, NULL, run, m->manager);
  pthread_sigmask(SIG_SETMASK, &old, NULL);
  if (status != 0) {
    snprintf(error, error_size, "cannot start the trace manager's thread: %s", strerror(-status));
    manager__destroy(m->manager);
    remove_directory(m);
    return status;
  }
  snprintf(socket_path, path_size, "%s", m->socket_path);
  *out = m;
  return 0;
}

void local_manager__stop(local_manager_t* m) {
  if (!m) return;
  manager__shutdown(m->manager);
  pthread_join(m->thread, NULL);
  manager__destroy(m->manager);
  remove_directory(m);
}

#else /* no manager library in this build */

bool local_manager__available(void) { return false; }

int local_manager__start(local_manager_t** out, char* socket_path, size_t path_size, char* error,
                         size_t error_size) {
  (void)socket_path;
  (void)path_size;
  *out = NULL;
  snprintf(error, error_size, "this build of trace cannot run a trace manager of its own");
  return -ENOSYS;
}

void local_manager__stop(local_manager_t* m) { (void)m; }

bool local_manager__archive_into(local_manager_t* m, int pipe_fd, struct archive_ring* ring) {
  (void)m;
  (void)pipe_fd;
  (void)ring;
  return false;
}

void local_manager__remove_stale(void) {}

void local_manager__emergency(void) {}

#endif
