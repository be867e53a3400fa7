/* The rule for the manager's socket location (see manager_socket.h). */
#include "protocol/manager_socket.h"

#include <errno.h>
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

/* false, with the reason in s->problem, when `dir` may not hold the socket.
 * A missing directory passes: nobody listens there yet, and whoever creates
 * it later is checked by the next look. */
static bool check_directory(struct manager_socket* s, const char* dir) {
  struct stat st;
  if (lstat(dir, &st) != 0) return true;
  char owner[160];
  manager_socket__describe_user(st.st_uid, owner, sizeof(owner));
  const unsigned mode = (unsigned)(st.st_mode & 07777);
  if (S_ISLNK(st.st_mode))
    snprintf(s->problem, sizeof(s->problem), "%s is a symbolic link (owned by %s)", dir, owner);
  else if (!S_ISDIR(st.st_mode))
    snprintf(s->problem, sizeof(s->problem), "%s is not a directory (owned by %s)", dir, owner);
  else if (!trusted_owner(st.st_uid) || (st.st_mode & (S_IWGRP | S_IWOTH)))
    snprintf(s->problem, sizeof(s->problem), "%s is owned by %s, mode %04o", dir, owner, mode);
  else
    return true;
  return false;
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
  const char* env = getenv("FXTRACE_SOCKET");
  if (env && env[0]) {
    s->kind = MANAGER_SOCKET_EXPLICIT;
    if (strlen(env) >= sizeof(s->path)) return -ENAMETOOLONG;
    strcpy(s->path, env);
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
  s->kind = MANAGER_SOCKET_DEFAULT;
  if (!check_parent(s, s->directory) || !check_directory(s, s->directory)) {
    s->kind = MANAGER_SOCKET_UNSAFE;
    return 0;
  }
  if (create) {
    /* mkdir, never "exists, so fine": a directory that appeared since the
     * check above is checked again below. */
    if (mkdir(s->directory, mode) == 0) {
      if (group != (gid_t)-1 && chown(s->directory, (uid_t)-1, group) != 0) return -errno;
      if (chmod(s->directory, mode) != 0) return -errno; /* not narrowed by the umask */
    } else if (errno != EEXIST) {
      return -errno;
    }
    if (!check_directory(s, s->directory)) s->kind = MANAGER_SOCKET_UNSAFE;
  }
  return 0;
}
