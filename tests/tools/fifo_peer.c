/* One side of a conversation between two (simulated) hosts through a FIFO,
 * for tests/merge/test_merge.py and tests/remote/test_remote.py:
 *   fifo_peer send|recv FIFO N [DONE_FILE]
 * For i < N: "send" (a duration beginning flow 1000+i) then writes i to FIFO,
 * or reads i from FIFO then "recv" (a duration ending flow 1000+i). So every
 * "recv" i happens after "send" i, in wall-clock time.
 *
 * Without DONE_FILE the peer is traced in file mode (FXTRACE_OUTPUT): it
 * records from its start and its archive is written when it exits. With
 * DONE_FILE it is registered with its host's trace manager: it waits until
 * the trace records category "merge", creates DONE_FILE after the last
 * message, and stays registered until the trace stops (so its buffer is
 * collected as any live provider's). */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <trace-provider/provider.h>
#include <trace/event.h>
#include <unistd.h>

enum { WAIT_NAPS = 12000 }; /* of 10 ms: 120 s */

static void nap(void) {
  struct timespec ts = {0, 10 * 1000000};
  nanosleep(&ts, NULL);
}

/* The N messages; 0, or the exit status of a failure (printed). */
static int converse(bool send, const char* fifo_path, int n) {
  FILE* fifo = fopen(fifo_path, send ? "w" : "r");
  if (!fifo) {
    perror(fifo_path);
    return 1;
  }
  for (int i = 0; i < n; i++) {
    if (send) {
      {
        TRACE_DURATION("merge", "send", "seq", i);
        TRACE_FLOW_BEGIN("merge", "message", (uint64_t)(1000 + i));
      }
      fprintf(fifo, "%d\n", i);
      fflush(fifo);
    } else {
      int got = -1;
      if (fscanf(fifo, "%d", &got) != 1 || got != i) {
        fprintf(stderr, "fifo_peer: expected %d, read %d\n", i, got);
        fclose(fifo);
        return 1;
      }
      TRACE_DURATION("merge", "recv", "seq", i);
      TRACE_FLOW_END("merge", "message", (uint64_t)(1000 + i));
    }
  }
  fclose(fifo);
  return 0;
}

int main(int argc, char** argv) {
  if (argc != 4 && argc != 5) {
    fprintf(stderr, "usage: fifo_peer send|recv FIFO N [DONE_FILE]\n");
    return 2;
  }
  bool send = strcmp(argv[1], "send") == 0;
  int n = atoi(argv[3]);
  const char* done_file = argc == 5 ? argv[4] : NULL;
  trace_provider_t* provider = trace_provider_create_with_name(send ? "sender" : "receiver");
  if (done_file) {
    int waited = 0;
    while (!TRACE_CATEGORY_ENABLED("merge")) {
      if (++waited > WAIT_NAPS) {
        fprintf(stderr, "fifo_peer: the trace never started\n");
        return 3;
      }
      nap();
    }
  }
  int status = converse(send, argv[2], n);
  if (status != 0) return status;
  if (done_file) {
    int done = open(done_file, O_CREAT | O_WRONLY | O_CLOEXEC, 0644);
    if (done >= 0) close(done);
    for (int waited = 0; TRACE_CATEGORY_ENABLED("merge") && waited < WAIT_NAPS; waited++) nap();
  }
  trace_provider_destroy(provider);
  return 0;
}
