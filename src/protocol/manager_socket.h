/* Finding the trace manager's socket, and deciding whether to trust it: the
 * one rule that trace, trace_manager, trace_kernel_provider and
 * libtrace-provider all follow (docs/security.md).
 *
 * - FXTRACE_SOCKET (or a --socket option) names the socket explicitly: the
 *   user's choice, used as it is.
 * - Otherwise the default directory is $XDG_RUNTIME_DIR/fxtrace, else
 *   /run/fxtrace for root, else /tmp/fxtrace-$UID. It is used only if it is a
 *   real directory (not a symbolic link) owned by the user or root and not
 *   writable by group or others, inside a parent owned by the user or root that
 *   others cannot write to (or that is sticky, as /tmp is): anybody else who
 *   could create, replace or write into it could listen in the manager's place.
 *
 * The check is made on the opened directory, and clients connect through
 * that descriptor (connect_path), so no other directory can be put in its
 * place between the check and the connection.
 *
 * Whatever the path, a client then checks who answers: wire__connect()
 * refuses a peer that runs neither as the client's user nor as root. */
#ifndef FXTRACE_PROTOCOL_MANAGER_SOCKET_H_
#define FXTRACE_PROTOCOL_MANAGER_SOCKET_H_

#include <stdbool.h>
#include <sys/types.h>

enum manager_socket_kind {
  MANAGER_SOCKET_EXPLICIT, /* FXTRACE_SOCKET: the directory rule does not apply */
  MANAGER_SOCKET_DEFAULT,  /* a default location whose directory passed (or is absent) */
  MANAGER_SOCKET_UNSAFE,   /* a default directory that fails the rule: never used */
};

struct manager_socket {
  enum manager_socket_kind kind;
  char path[108];      /* the socket: sizeof(sockaddr_un.sun_path) */
  char directory[108]; /* its directory (default locations) */
  /* DEFAULT: the directory does not exist: no manager can be there (a
   * client does not connect; the manager has created it). */
  bool absent;
  /* DEFAULT: the checked directory, open (O_PATH) until
   * manager_socket__release(); -1 otherwise. */
  int dir_fd;
  /* Where a client connects: /proc/self/fd/DIR_FD/manager.sock, i.e. into
   * the very directory that was checked, when /proc allows; else path. */
  char connect_path[108];
  /* UNSAFE: what is wrong, e.g. "/tmp/fxtrace-1001 is owned by mallory (uid
   * 1002), mode 0777"; a sentence without a final period. */
  char problem[512];
};

/* Fills *s from the environment. 0, or -ENAMETOOLONG (a path does not fit a
 * socket address). With create, a missing default directory is made (mode
 * `mode`, group `group` unless it is (gid_t)-1) before it is checked, as the
 * manager does before it binds; -errno if that fails. An UNSAFE result is not
 * an error: the caller says what it does instead. */
int manager_socket__locate(struct manager_socket* s, bool create, mode_t mode, gid_t group);

/* Closes what locate() opened; s stays readable. */
void manager_socket__release(struct manager_socket* s);

/* "mallory (uid 1002)", or "uid 1002" when the user database has no name. */
void manager_socket__describe_user(uid_t uid, char* out, size_t size);

/* The advice that follows an UNSAFE problem in every tool's message. */
#define MANAGER_SOCKET_ADVICE                                                        \
  "another user may have created it to receive your traces; remove it (ask root if " \
  "it is another user's), or set XDG_RUNTIME_DIR to a private directory or "         \
  "FXTRACE_SOCKET to the socket to use"

#endif /* FXTRACE_PROTOCOL_MANAGER_SOCKET_H_ */
