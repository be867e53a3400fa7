/* Not part of the public API: systemd socket activation for trace_manager
 * (sd_listen_fds(3) semantics, without libsystemd). */
#ifndef FXTRACE_MANAGER_LISTEN_FDS_H_
#define FXTRACE_MANAGER_LISTEN_FDS_H_

/* The first passed descriptor (SD_LISTEN_FDS_START). */
enum { LISTEN_FDS_START = 3 };

/* The number of sockets passed by the service manager: 0 unless
 * LISTEN_PID is this process's pid and LISTEN_FDS a positive count, in
 * which case descriptors LISTEN_FDS_START .. LISTEN_FDS_START + n - 1 are
 * the sockets, made close-on-exec here. LISTEN_PID, LISTEN_FDS and
 * LISTEN_FDNAMES are removed from the environment either way (so that
 * children do not take the sockets for theirs). -EINVAL when the variables
 * are malformed, -EBADF when a promised descriptor is not open. */
int listen_fds__take(void);

#endif /* FXTRACE_MANAGER_LISTEN_FDS_H_ */
