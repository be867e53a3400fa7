/* Connecting to the running trace manager (see manager_connect.h). */
#include "trace/manager_connect.h"

#include <errno.h>
#include <sys/types.h>

#include "protocol/manager_socket.h"
#include "trace/cli.h"

int manager_connect__controller(const char* cmd, controller_t* c) {
  struct manager_socket where;
  if (manager_socket__locate(&where, false, 0, (gid_t)-1) != 0) {
    cli__error(cmd, "the manager's socket path is too long (check FXTRACE_SOCKET)");
    return -ENAMETOOLONG;
  }
  if (where.kind == MANAGER_SOCKET_UNSAFE) {
    cli__error(cmd, "not looking for the trace manager in %s: %s; %s", where.directory,
               where.problem, MANAGER_SOCKET_ADVICE);
    return -EPERM;
  }
  int status = controller__open(c, where.absent ? NULL : where.connect_path, where.path);
  manager_socket__release(&where);
  if (status != 0) cli__error(cmd, "%s", c->error);
  return status;
}
