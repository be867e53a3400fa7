/* Not part of the public API: how the `trace` commands that only talk to a
 * running trace manager (list-providers, list-categories, list-sessions,
 * stop) find it: the socket protocol/manager_socket.h names, never a manager
 * of their own. */
#ifndef FXTRACE_TRACE_MANAGER_CONNECT_H_
#define FXTRACE_TRACE_MANAGER_CONNECT_H_

#include "trace/controller.h"

/* Connects c as a controller. 0, or the cause (printed as "trace CMD: ..."):
 * -ENAMETOOLONG, -EPERM for a default socket directory that fails the rule
 * (manager_socket.h), or controller__open()'s -errno. */
int manager_connect__controller(const char* cmd, controller_t* c);

#endif /* FXTRACE_TRACE_MANAGER_CONNECT_H_ */
