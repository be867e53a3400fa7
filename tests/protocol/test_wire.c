/* The control protocol's encoding: round trips of every field kind, header
 * checks, limits, truncated and oversized input, and descriptors passed with
 * SCM_RIGHTS over a SOCK_SEQPACKET pair; the socket location rule
 * (manager_socket.h) and the peer check of wire__connect(). */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include "protocol/manager_socket.h"
#include "protocol/wire.h"
#include "test.h"

static wire_writer_t w;
static uint8_t buffer[WIRE_MAX_MESSAGE];

static void test_round_trip(void) {
  wire__begin(&w, MSG_REGISTER_PROVIDER, 77);
  wire__put_u64(&w, 1234);
  wire__put_cstr(&w, "my provider");
  wire__put_u8(&w, 1);
  wire__put_u16(&w, 65535);
  wire__put_u32(&w, 0xdeadbeef);
  ASSERT_TRUE(wire__end(&w));
  wire_reader_t r;
  ASSERT_TRUE(wire__open(&r, w.data, w.length) == NULL);
  ASSERT_EQ(r.type, MSG_REGISTER_PROVIDER);
  ASSERT_EQ(r.request_id, 77u);
  ASSERT_EQ(wire__get_u64(&r), 1234u);
  char name[WIRE_MAX_NAME + 1];
  wire__get_str(&r, name, sizeof(name), WIRE_MAX_NAME);
  ASSERT_STREQ(name, "my provider");
  ASSERT_EQ(wire__get_u8(&r), 1u);
  ASSERT_EQ(wire__get_u16(&r), 65535u);
  ASSERT_EQ(wire__get_u32(&r), 0xdeadbeefu);
  ASSERT_TRUE(wire__done(&r));
  /* reading past the end is an error, not garbage */
  ASSERT_EQ(wire__get_u64(&r), 0u);
  ASSERT_TRUE(r.error);
}

/* PROVIDER_CATEGORIES (wire.h): the catalogue gives it its own types next to
 * the Controller's others, and every group heading fits one message even
 * with the most groups and the longest names, so a reply always names every
 * source (entries are what a manager trims when the message is full). */
static void test_provider_categories_layout(void) {
  ASSERT_EQ(MSG_GET_PROVIDER_CATEGORIES, 39);
  ASSERT_EQ(MSG_PROVIDER_CATEGORIES, 40);
  ASSERT_EQ(WIRE_CATEGORIES_FORMAT, 1u);
  wire__begin(&w, MSG_PROVIDER_CATEGORIES, 9);
  wire__put_u8(&w, WIRE_CATEGORIES_FORMAT);
  wire__put_u16(&w, WIRE_MAX_PROVIDERS + 1);
  char name[WIRE_MAX_NAME];
  memset(name, 'n', sizeof(name));
  for (int i = 0; i <= WIRE_MAX_PROVIDERS; i++) {
    wire__put_u32(&w, (uint32_t)i);
    wire__put_u64(&w, 1000u + (uint64_t)i);
    wire__put_str(&w, name, sizeof(name));
    wire__put_u8(&w, i % 2);
    wire__put_u16(&w, 0);
  }
  ASSERT_TRUE(wire__end(&w));
  wire_reader_t r;
  ASSERT_TRUE(wire__open(&r, w.data, w.length) == NULL);
  ASSERT_EQ(wire__get_u8(&r), WIRE_CATEGORIES_FORMAT);
  ASSERT_EQ(wire__get_u16(&r), WIRE_MAX_PROVIDERS + 1);
  char out[WIRE_MAX_NAME + 1];
  for (int i = 0; i <= WIRE_MAX_PROVIDERS; i++) {
    ASSERT_EQ(wire__get_u32(&r), (uint32_t)i);
    ASSERT_EQ(wire__get_u64(&r), 1000u + (uint64_t)i);
    wire__get_str(&r, out, sizeof(out), WIRE_MAX_NAME);
    ASSERT_EQ(strlen(out), sizeof(name));
    ASSERT_EQ(wire__get_u8(&r), (uint8_t)(i % 2));
    ASSERT_EQ(wire__get_u16(&r), 0u);
  }
  ASSERT_TRUE(wire__done(&r));
}

static void test_header_checks(void) {
  wire_reader_t r;
  wire__begin(&w, MSG_HELLO, 0);
  wire__put_u8(&w, WIRE_ROLE_PROVIDER);
  ASSERT_TRUE(wire__end(&w));
  ASSERT_TRUE(wire__open(&r, w.data, w.length - 1) != NULL); /* length mismatch */
  ASSERT_TRUE(wire__open(&r, w.data, 10) != NULL);           /* shorter than a header */
  w.data[0] ^= 1;
  ASSERT_TRUE(wire__open(&r, w.data, w.length) != NULL); /* magic */
  w.data[0] ^= 1;
  w.data[4] = WIRE_VERSION + 1;
  ASSERT_TRUE(wire__open(&r, w.data, w.length) != NULL); /* version */
}

static void test_string_limits(void) {
  char long_name[WIRE_MAX_NAME + 2];
  memset(long_name, 'x', sizeof(long_name) - 1);
  long_name[sizeof(long_name) - 1] = '\0';
  wire__begin(&w, MSG_REGISTER_PROVIDER, 1);
  wire__put_cstr(&w, long_name);
  ASSERT_TRUE(wire__end(&w));
  wire_reader_t r;
  ASSERT_TRUE(wire__open(&r, w.data, w.length) == NULL);
  char out[WIRE_MAX_NAME + 1];
  wire__get_str(&r, out, sizeof(out), WIRE_MAX_NAME);
  ASSERT_TRUE(r.error); /* 101 bytes > 100 */
  /* a declared length running past the message */
  wire__begin(&w, MSG_REGISTER_PROVIDER, 1);
  wire__put_u16(&w, 50);
  wire__put_u32(&w, 0);
  ASSERT_TRUE(wire__end(&w));
  ASSERT_TRUE(wire__open(&r, w.data, w.length) == NULL);
  wire__get_str(&r, out, sizeof(out), WIRE_MAX_NAME);
  ASSERT_TRUE(r.error);
  /* a message that would not fit is refused at the end */
  wire__begin(&w, MSG_KNOWN_CATEGORIES, 1);
  static char big[60000];
  memset(big, 'c', sizeof(big));
  for (int i = 0; i < 5; i++) wire__put_str(&w, big, sizeof(big));
  ASSERT_TRUE(!wire__end(&w));
  ASSERT_EQ(wire__send(0, &w, NULL, 0), -EINVAL);
}

static void test_fd_passing(void) {
  int pair[2];
  ASSERT_EQ(socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, pair), 0);
  int pipefd[2];
  ASSERT_EQ(pipe(pipefd), 0);
  wire__begin(&w, MSG_INITIALIZE, 5);
  wire__put_u32(&w, 1);
  wire__put_u8(&w, 2);
  wire__put_u16(&w, 0);
  ASSERT_TRUE(wire__end(&w));
  int fds[2] = {pipefd[0], pipefd[1]};
  ASSERT_EQ(wire__send(pair[0], &w, fds, 2), 0);
  int got[WIRE_MAX_FDS];
  size_t count;
  ssize_t n = wire__recv(pair[1], buffer, got, &count);
  ASSERT_EQ((size_t)n, w.length);
  ASSERT_EQ(count, 2u);
  ASSERT_EQ(write(got[1], "ok", 2), 2); /* the received write end works */
  char text[3] = {0};
  ASSERT_EQ(read(pipefd[0], text, 2), 2);
  ASSERT_STREQ(text, "ok");
  close(got[0]);
  close(got[1]);
  /* end of stream */
  close(pair[0]);
  ASSERT_EQ(wire__recv(pair[1], buffer, got, &count), 0);
  close(pair[1]);
  close(pipefd[0]);
  close(pipefd[1]);
}

static void locate(struct manager_socket* s, bool create) {
  ASSERT_EQ(manager_socket__locate(s, create, 0700, (gid_t)-1), 0);
}

static void test_socket_path(void) {
  struct manager_socket s;
  setenv("FXTRACE_SOCKET", "/tmp/x.sock", 1);
  locate(&s, false);
  ASSERT_STREQ(s.path, "/tmp/x.sock");
  ASSERT_EQ(s.kind, MANAGER_SOCKET_EXPLICIT);
  unsetenv("FXTRACE_SOCKET");
  setenv("XDG_RUNTIME_DIR", "/run/user/5", 1);
  locate(&s, false);
  ASSERT_STREQ(s.path, "/run/user/5/fxtrace/manager.sock");
  ASSERT_EQ(s.kind, MANAGER_SOCKET_DEFAULT);
  unsetenv("XDG_RUNTIME_DIR");
  locate(&s, false);
  char fallback[64];
  snprintf(fallback, sizeof(fallback), "/tmp/fxtrace-%u/manager.sock", (unsigned)geteuid());
  ASSERT_STREQ(s.path, geteuid() == 0 ? "/run/fxtrace/manager.sock" : fallback);
  char long_path[300];
  memset(long_path, 'p', sizeof(long_path) - 1);
  long_path[sizeof(long_path) - 1] = '\0';
  setenv("FXTRACE_SOCKET", long_path, 1);
  ASSERT_EQ(manager_socket__locate(&s, false, 0700, (gid_t)-1), -ENAMETOOLONG);
  unsetenv("FXTRACE_SOCKET");
  ASSERT_EQ(wire__connect("/nonexistent/fxtrace.sock", WIRE_ROLE_CONTROLLER, NULL), -ENOENT);
}

/* The directory rule, on a private XDG_RUNTIME_DIR: each way a directory can
 * be unsafe is refused, and a missing one is created owner-only. */
static void test_socket_directory_rule(void) {
  char base[] = "/tmp/fxtrace-test-wire-XXXXXX";
  ASSERT_TRUE(mkdtemp(base) != NULL);
  char dir[128], target[128];
  snprintf(dir, sizeof(dir), "%s/fxtrace", base);
  snprintf(target, sizeof(target), "%s/elsewhere", base);
  setenv("XDG_RUNTIME_DIR", base, 1);
  struct manager_socket s;

  locate(&s, false); /* missing: usable, not created */
  ASSERT_EQ(s.kind, MANAGER_SOCKET_DEFAULT);
  struct stat st;
  ASSERT_TRUE(lstat(dir, &st) != 0);
  locate(&s, true); /* created 0700 whatever the umask */
  ASSERT_EQ(s.kind, MANAGER_SOCKET_DEFAULT);
  ASSERT_EQ(lstat(dir, &st), 0);
  ASSERT_TRUE(S_ISDIR(st.st_mode));
  ASSERT_EQ((int)(st.st_mode & 07777), 0700);

  ASSERT_EQ(chmod(dir, 0777), 0); /* writable by others */
  locate(&s, false);
  ASSERT_EQ(s.kind, MANAGER_SOCKET_UNSAFE);
  ASSERT_TRUE(strstr(s.problem, "mode 0777") != NULL);
  locate(&s, true); /* the manager does not "fix" it */
  ASSERT_EQ(s.kind, MANAGER_SOCKET_UNSAFE);
  ASSERT_EQ(chmod(dir, 0720), 0); /* writable by the group */
  locate(&s, false);
  ASSERT_EQ(s.kind, MANAGER_SOCKET_UNSAFE);
  ASSERT_EQ(chmod(dir, 0750), 0); /* readable by the group: fine (--group) */
  locate(&s, false);
  ASSERT_EQ(s.kind, MANAGER_SOCKET_DEFAULT);
  if (geteuid() == 0) { /* owned by somebody else */
    ASSERT_EQ(chmod(dir, 0700), 0);
    ASSERT_EQ(chown(dir, 65534, 65534), 0);
    locate(&s, false);
    ASSERT_EQ(s.kind, MANAGER_SOCKET_UNSAFE);
    ASSERT_TRUE(strstr(s.problem, "uid 65534") != NULL);
    ASSERT_EQ(chown(dir, 0, 0), 0);
  }
  ASSERT_EQ(rmdir(dir), 0);

  ASSERT_EQ(mkdir(target, 0700), 0); /* a symbolic link, even to a good directory */
  ASSERT_EQ(symlink(target, dir), 0);
  locate(&s, false);
  ASSERT_EQ(s.kind, MANAGER_SOCKET_UNSAFE);
  ASSERT_TRUE(strstr(s.problem, "symbolic link") != NULL);
  ASSERT_EQ(unlink(dir), 0);
  int fd = open(dir, O_CREAT | O_WRONLY | O_CLOEXEC, 0600); /* not a directory */
  ASSERT_TRUE(fd >= 0);
  close(fd);
  locate(&s, true);
  ASSERT_EQ(s.kind, MANAGER_SOCKET_UNSAFE);
  ASSERT_EQ(unlink(dir), 0);

  ASSERT_EQ(chmod(base, 0777), 0); /* a parent others may write to, not sticky */
  locate(&s, false);
  ASSERT_EQ(s.kind, MANAGER_SOCKET_UNSAFE);
  ASSERT_TRUE(strstr(s.problem, "parent") != NULL);
  ASSERT_EQ(chmod(base, 01777), 0); /* sticky, as /tmp */
  locate(&s, true);
  ASSERT_EQ(s.kind, MANAGER_SOCKET_DEFAULT);

  rmdir(dir);
  rmdir(target);
  rmdir(base);
  unsetenv("XDG_RUNTIME_DIR");
}

/* A client connects into the directory it checked (connect_path, through
 * the descriptor locate() opened): a directory put in its place after the
 * check is not the one reached. */
static void test_connect_through_checked_directory(void) {
  char base[] = "/tmp/fxtrace-test-pin-XXXXXX";
  ASSERT_TRUE(mkdtemp(base) != NULL);
  char dir[64], moved[64], sock[100];
  snprintf(dir, sizeof(dir), "%.40s/fxtrace", base);
  snprintf(moved, sizeof(moved), "%.40s/moved", base);
  snprintf(sock, sizeof(sock), "%.60s/manager.sock", dir);
  ASSERT_EQ(mkdir(dir, 0700), 0);
  int l = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
  struct sockaddr_un a = {.sun_family = AF_UNIX};
  snprintf(a.sun_path, sizeof(a.sun_path), "%s", sock);
  ASSERT_EQ(bind(l, (struct sockaddr*)&a, sizeof(a)), 0);
  ASSERT_EQ(listen(l, 4), 0);
  setenv("XDG_RUNTIME_DIR", base, 1);
  struct manager_socket s;
  locate(&s, false);
  ASSERT_EQ(s.kind, MANAGER_SOCKET_DEFAULT);
  ASSERT_TRUE(!s.absent && s.dir_fd >= 0);
  ASSERT_TRUE(strncmp(s.connect_path, "/proc/self/fd/", 14) == 0);
  /* swapped after the check: by path, nothing listens there now */
  ASSERT_EQ(rename(dir, moved), 0);
  ASSERT_EQ(mkdir(dir, 0700), 0);
  ASSERT_EQ(wire__connect(s.path, WIRE_ROLE_CONTROLLER, NULL), -ENOENT);
  int fd = wire__connect(s.connect_path, WIRE_ROLE_CONTROLLER, NULL);
  ASSERT_TRUE(fd >= 0); /* the checked directory's listener */
  int c = accept4(l, NULL, NULL, SOCK_CLOEXEC);
  ASSERT_TRUE(c >= 0);
  close(c);
  close(fd);
  manager_socket__release(&s);
  ASSERT_EQ(s.dir_fd, -1);
  close(l);
  char moved_sock[100];
  snprintf(moved_sock, sizeof(moved_sock), "%.60s/manager.sock", moved);
  unlink(moved_sock);
  rmdir(moved);
  rmdir(dir);
  /* absent: nothing to connect to, and nothing opened */
  locate(&s, false);
  ASSERT_TRUE(s.absent && s.dir_fd == -1);
  rmdir(base);
  unsetenv("XDG_RUNTIME_DIR");
}

/* A listener run by another user is refused before it is told anything. */
static void test_peer_check(void) {
  if (geteuid() != 0) {
    printf("test_peer_check: skipped (needs root to run a listener as another user)\n");
    return;
  }
  char base[] = "/tmp/fxtrace-test-peer-XXXXXX";
  ASSERT_TRUE(mkdtemp(base) != NULL);
  ASSERT_EQ(chmod(base, 0777), 0);
  char path[100];
  snprintf(path, sizeof(path), "%.60s/manager.sock", base);
  int ready[2];
  ASSERT_EQ(pipe2(ready, O_CLOEXEC), 0);
  pid_t child = fork();
  ASSERT_TRUE(child >= 0);
  if (child == 0) {
    if (setgid(65534) != 0 || setuid(65534) != 0) _exit(2);
    int l = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
    struct sockaddr_un a = {.sun_family = AF_UNIX};
    snprintf(a.sun_path, sizeof(a.sun_path), "%s", path);
    if (l < 0 || bind(l, (struct sockaddr*)&a, sizeof(a)) != 0 || chmod(path, 0666) != 0 ||
        listen(l, 4) != 0)
      _exit(3);
    if (write(ready[1], "r", 1) != 1) _exit(4);
    int c = accept4(l, NULL, NULL, SOCK_CLOEXEC);
    char buf[64];
    /* anything the client sent is a failure: it must say nothing */
    ssize_t n = c >= 0 ? recv(c, buf, sizeof(buf), 0) : -1;
    _exit(n > 0 ? 1 : 0);
  }
  close(ready[1]);
  char r;
  ASSERT_EQ(read(ready[0], &r, 1), 1);
  close(ready[0]);
  uid_t peer = 0;
  ASSERT_EQ(wire__connect(path, WIRE_ROLE_CONTROLLER, &peer), -EPERM);
  ASSERT_EQ((int)peer, 65534);
  int status;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  unlink(path);
  rmdir(base);
}

int main(void) {
  test_round_trip();
  test_header_checks();
  test_provider_categories_layout();
  test_string_limits();
  test_fd_passing();
  test_socket_path();
  test_socket_directory_rule();
  test_connect_through_checked_directory();
  test_peer_check();
  printf("wire: ok\n");
  return 0;
}
