/* The rule for the manager's socket location (see manager_socket.h). */
#include "protocol/manager_socket.h"

#include <errno.h>
#include <fcntl.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static const char kSocketName[] = "manager.sock";

static bool trusted_owner(uid_t uid) { return uid == geteuid() || uid == 0; }

void manager_socket__describe_user(uid_t uid, char* out, size_t size) {
  struct passwd pw, *found = NULL;
  char buf[1024];
  if (getpwuid_r(uid, &pw, buf, sizeof(buf), &found) == 0 && found)
    snprintf(out, size, "%s (uid %u)", found->pw_name, (unsigned)uid);
  else
    snprintf(out, size, "uid %u", (unsigned)uid);
}

/* false, with the reason in s->problem, when a directory whose status is
 * *st may not hold the socket. */
static bool check_directory(struct manager_socket* s, const char* dir, const struct stat* st) {
  char owner[160];
  manager_socket__describe_user(st->st_uid, owner, sizeof(owner));
  const unsigned mode = (unsigned)(st->st_mode & 07777);
  if (S_ISLNK(st->st_mode))
    snprintf(s->problem, sizeof(s->problem), "%s is a symbolic link (owned by %s)", dir, owner);
  else if (!S_ISDIR(st->st_mode))
    snprintf(s->problem, sizeof(s->problem), "%s is not a directory (owned by %s)", dir, owner);
  else if (!trusted_owner(st->st_uid) || (st->st_mode & (S_IWGRP | S_IWOTH)))
    snprintf(s->problem, sizeof(s->problem), "%s is owned by %s, mode %04o", dir, owner, mode);
  else
    return true;
  return false;
}

/* Opens and checks the default directory. The check is made on the opened
 * directory (fstat), and clients connect through that descriptor, so the
 * directory that passed is the one used: nobody can put another in its
 * place in between. */
static void open_directory(struct manager_socket* s) {
  int fd = open(s->directory, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  struct stat st;
  if (fd < 0) {
    if (errno == ENOENT) {
      s->absent = true;
    } else if (lstat(s->directory, &st) != 0 || !check_directory(s, s->directory, &st)) {
      s->kind = MANAGER_SOCKET_UNSAFE; /* a symbolic link, not a directory, ... */
    } else {
      snprintf(s->problem, sizeof(s->problem), "%s cannot be opened: %s", s->directory,
               strerror(errno));
      s->kind = MANAGER_SOCKET_UNSAFE;
    }
    return;
  }
  if (fstat(fd, &st) != 0 || !check_directory(s, s->directory, &st)) {
    if (!s->problem[0])
      snprintf(s->problem, sizeof(s->problem), "%s cannot be examined", s->directory);
    s->kind = MANAGER_SOCKET_UNSAFE;
    close(fd);
    return;
  }
  s->dir_fd = fd;
  /* through /proc when it is there (not in every container) */
  char via[32];
  snprintf(via, sizeof(via), "/proc/self/fd/%d", fd);
  struct stat again;
  if (stat(via, &again) == 0 && again.st_dev == st.st_dev && again.st_ino == st.st_ino)
    snprintf(s->connect_path, sizeof(s->connect_path), "%.31s/%s", via, kSocketName);
}

void manager_socket__release(struct manager_socket* s) {
  if (s->dir_fd >= 0) close(s->dir_fd);
  s->dir_fd = -1;
}

/* The parent may be shared (/tmp) but then sticky, so that nobody else can
 * rename or remove the socket directory and put their own in its place. */
static bool check_parent(struct manager_socket* s, const char* dir) {
  char parent[sizeof(s->directory)];
  snprintf(parent, sizeof(parent), "%s", dir);
  char* slash = strrchr(parent, '/');
  if (!slash) return true;
  if (slash == parent)
    slash[1] = '\0';
  else
    *slash = '\0';
  struct stat st;
  if (stat(parent, &st) != 0) return true; /* then dir cannot exist either */
  bool shared = (st.st_mode & (S_IWGRP | S_IWOTH)) != 0;
  if (trusted_owner(st.st_uid) && (!shared || (st.st_mode & S_ISVTX))) return true;
  char owner[160];
  manager_socket__describe_user(st.st_uid, owner, sizeof(owner));
  snprintf(s->problem, sizeof(s->problem), "its parent %s is owned by %s, mode %04o%s", parent,
           owner, (unsigned)(st.st_mode & 07777),
           shared ? " (writable by others, not sticky)" : "");
  return false;
}

int manager_socket__locate(struct manager_socket* s, bool create, mode_t mode, gid_t group) {
  memset(s, 0, sizeof(*s));
  s->dir_fd = -1;
  const char* env = getenv("FXTRACE_SOCKET");
  if (env && env[0]) {
    s->kind = MANAGER_SOCKET_EXPLICIT;
    if (strlen(env) >= sizeof(s->path)) return -ENAMETOOLONG;
    strcpy(s->path, env);
    strcpy(s->connect_path, s->path);
    return 0;
  }
  const char* xdg = getenv("XDG_RUNTIME_DIR");
  int n;
  if (xdg && xdg[0])
    n = snprintf(s->directory, sizeof(s->directory), "%s/fxtrace", xdg);
  else if (geteuid() == 0)
    n = snprintf(s->directory, sizeof(s->directory), "/run/fxtrace");
  else
    n = snprintf(s->directory, sizeof(s->directory), "/tmp/fxtrace-%u", (unsigned)geteuid());
  if (n < 0 || (size_t)n + 1 + sizeof(kSocketName) > sizeof(s->path)) return -ENAMETOOLONG;
  memcpy(s->path, s->directory, (size_t)n);
  s->path[n] = '/';
  memcpy(s->path + n + 1, kSocketName, sizeof(kSocketName));
  strcpy(s->connect_path, s->path);
  s->kind = MANAGER_SOCKET_DEFAULT;
  if (!check_parent(s, s->directory)) {
    s->kind = MANAGER_SOCKET_UNSAFE;
    return 0;
  }
  if (create) {
    /* mkdir, never "exists, so fine": a directory somebody else made since
     * is refused by the check of the opened one below */
    if (mkdir(s->directory, mode) == 0) {
      if (group != (gid_t)-1 && chown(s->directory, (uid_t)-1, group) != 0) return -errno;
      if (chmod(s->directory, mode) != 0) return -errno; /* not narrowed by the umask */
    } else if (errno != EEXIST) {
      return -errno;
    }
  }
  open_directory(s);
  return 0;
}
