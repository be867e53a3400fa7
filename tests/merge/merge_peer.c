/* One side of a conversation between two "hosts" for test_merge.py, traced
 * in file mode (FXTRACE_OUTPUT):
 *   merge_peer send FIFO N   for i < N: "send" (a duration beginning flow i)
 *                            then writes i to FIFO
 *   merge_peer recv FIFO N   for i < N: reads i from FIFO, then "recv" (a
 *                            duration ending flow i)
 * So every "recv" i happens after "send" i, in wall-clock time. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <trace-provider/provider.h>
#include <trace/event.h>

int main(int argc, char** argv) {
  if (argc != 4) {
    fprintf(stderr, "usage: merge_peer send|recv FIFO N\n");
    return 2;
  }
  bool send = strcmp(argv[1], "send") == 0;
  int n = atoi(argv[3]);
  trace_provider_t* provider = trace_provider_create_with_name(send ? "sender" : "receiver");
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
        fprintf(stderr, "merge_peer: expected %d, read %d\n", i, got);
        return 1;
      }
      TRACE_DURATION("merge", "recv", "seq", i);
      TRACE_FLOW_END("merge", "message", (uint64_t)(1000 + i));
    }
  }
  fclose(fifo);
  trace_provider_destroy(provider);
  return 0;
}
