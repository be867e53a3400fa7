/* Not part of the public API: the near end of one host's channel
 * (remote.h), run on a thread of its own: the host's `trace remote`
 * started, the handshake, the clock exchange at the start, START when the
 * recording says go, DATA into a temporary file, the clock exchange at the
 * end and STOP when it says stop, until END.
 * Thread-safety: the recording thread reads `state`, `bytes` and the
 * results under remote_sync_t's mutex (or atomically); the host thread owns
 * the rest. */
#ifndef FXTRACE_REMOTE_REMOTE_HOST_H_
#define FXTRACE_REMOTE_REMOTE_HOST_H_

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>

#include "remote/remote.h"

typedef enum remote_host_state {
  HOST_CONNECTING,
  HOST_READY,   /* handshake and first clock exchange done: waits for go */
  HOST_STARTED, /* tracing there */
  HOST_DONE,    /* ended: see failed / dropped */
} remote_host_state_t;

/* What the recording tells every host, and how it hears back. */
typedef struct remote_sync {
  pthread_mutex_t mutex;
  pthread_cond_t changed;
  bool go;   /* send START */
  bool stop; /* end clock exchange, then STOP; before go: give up */
} remote_sync_t;

typedef struct remote_host {
  /* set before the thread starts */
  const char* name;
  bool local;
  char** argv; /* what runs (owned) */
  const remote_options_t* o;
  remote_sync_t* sync;
  int wake[2]; /* the recording writes a byte on go and stop */
  FILE* file;  /* the host's archive as received (anonymous temporary) */
  /* the thread's */
  pthread_t thread;
  bool thread_running;
  pid_t pid;
  int to_far, from_far, far_stderr;
  remote_reader_t reader;
  char err_line[1024]; /* the far end's standard error: the line being read */
  size_t err_length;
  /* results: read by the recording once the state says so */
  remote_host_state_t state; /* under sync->mutex */
  atomic_uint_least64_t bytes;
  char far_hostname[256];
  char socket_path[256]; /* the far manager's (the local host's: for COMMAND) */
  remote_clock_sample_t start, end;
  bool failed;  /* it is reported: failure says why */
  bool dropped; /* ended after it started, before END: what it sent is kept */
  bool write_failed;
  char failure[2048];
  bool failure_local;     /* the failure is this host's side's, not the far end's */
  char last_stderr[1024]; /* the far end's last non-empty line of standard error */
  char end_refused[128];  /* why the end clock exchange was implausible ("" if not) */
  int end_status;         /* its `trace record`'s exit status, from END */
  bool ended;             /* END received */
} remote_host_t;

/* Starts the host's thread. false with host->failure set. */
bool remote_host__start(remote_host_t* host);
/* Waits for the thread (after sync->stop). */
void remote_host__join(remote_host_t* host);

#endif /* FXTRACE_REMOTE_REMOTE_HOST_H_ */
