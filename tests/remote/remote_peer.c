/* One side of a conversation between two simulated hosts for
 * test_remote.py, registered with its host's trace manager:
 *   remote_peer send|recv FIFO N DONE_FILE
 * waits until the trace records category "merge", then for i < N: "send"
 * (a duration beginning flow 1000+i) then writes i to FIFO, or reads i from
 * FIFO then "recv" (a duration ending flow 1000+i); creates DONE_FILE, and
 * stays registered until the trace stops (so its buffer is collected as
 * any live provider's). Every "recv" i happens after "send" i. */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <trace-provider/provider.h>
#include <trace/event.h>
#include <unistd.h>

static void nap(void) {
  struct timespec ts = {0, 10 * 1000000};
  nanosleep(&ts, NULL);
}

int main(int argc, char** argv) {
  if (argc != 5) {
    fprintf(stderr, "usage: remote_peer send|recv FIFO N DONE_FILE\n");
    return 2;
  }
  bool send = strcmp(argv[1], "send") == 0;
  int n = atoi(argv[3]);
  trace_provider_t* provider = trace_provider_create_with_name(send ? "sender" : "receiver");
  int waited = 0;
  while (!TRACE_CATEGORY_ENABLED("merge")) {
    if (++waited > 12000) { /* 120 s */
      fprintf(stderr, "remote_peer: the trace never started\n");
      return 3;
    }
    nap();
  }
  FILE* fifo = fopen(argv[2], send ? "w" : "r");
  if (!fifo) {
    perror(argv[2]);
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
        fprintf(stderr, "remote_peer: expected %d, read %d\n", i, got);
        return 1;
      }
      TRACE_DURATION("merge", "recv", "seq", i);
      TRACE_FLOW_END("merge", "message", (uint64_t)(1000 + i));
    }
  }
  fclose(fifo);
  int done = open(argv[4], O_CREAT | O_WRONLY | O_CLOEXEC, 0644);
  if (done >= 0) close(done);
  for (waited = 0; TRACE_CATEGORY_ENABLED("merge") && waited < 12000; waited++) nap();
  trace_provider_destroy(provider);
  return 0;
}
