/* The cost of a snapshot's buffer copy (src/snapshot/buffer_copy.h,
 * docs/snapshots.md) by buffer size: the engine's circular buffer, filled
 * and wrapped, copied and checked the way the manager does it, idle and
 * while a thread writes events as fast as it can. Prints one line per size:
 * median copy (steps 1-3) and check (step 4, both scans, the records handed
 * to an emitter that appends them to memory like the manager's output
 * queue) in ms and in ms per MiB, bytes emitted, records discarded.
 *
 *   bench_snapshot [REPEATS]      (default 21)
 * Build: cmake --build build --target bench_snapshot. */
#include <pthread.h>
#include <stdatomic.h>

#include "../tests/engine/engine_test_util.h"
#include "../tests/engine/harness.h"
#include "snapshot/buffer_copy.h"

typedef struct sink {
  uint8_t* data;
  size_t length, capacity;
} sink_t;

static int sink_emit(void* arg, const void* p, size_t n) {
  sink_t* s = arg;
  return harness_append(&s->data, &s->length, &s->capacity, p, n);
}

static atomic_bool stop_writing;

static void* writer(void* arg) {
  (void)arg;
  for (uint64_t i = 0; !atomic_load(&stop_writing); i++) emit_seq(i);
  return NULL;
}

static int cmp_u64(const void* a, const void* b) {
  uint64_t x = *(const uint64_t*)a, y = *(const uint64_t*)b;
  return x < y ? -1 : x > y;
}

static void measure(size_t mib, int repeats, bool busy) {
  size_t size = mib << 20;
  harness_t h;
  ASSERT_EQ(harness_start(&h, TRACE_BUFFERING_MODE_CIRCULAR, size, NULL), 0);
  for (uint64_t i = 0; i < (uint64_t)size / 8; i++) emit_seq(i); /* wraps: ~32 B each */
  uint8_t* scratch = malloc(size);
  sink_t out = {0};
  pthread_t t;
  atomic_store(&stop_writing, false);
  if (busy) ASSERT_EQ(pthread_create(&t, NULL, writer, NULL), 0);
  uint64_t* copy = calloc((size_t)repeats, 8);
  uint64_t* check = calloc((size_t)repeats, 8);
  uint64_t bytes = 0, discarded = 0;
  for (int r = 0; r < repeats; r++) {
    buffer_copy_stats_t st;
    out.length = 0;
    ASSERT_EQ(buffer_copy__snapshot(h.buffer, h.size, scratch, sink_emit, &out, &st, NULL), 0);
    copy[r] = st.copy_ns;
    check[r] = st.scan_ns;
    bytes += st.bytes;
    discarded += st.discarded;
  }
  if (busy) {
    atomic_store(&stop_writing, true);
    pthread_join(t, NULL);
  }
  qsort(copy, (size_t)repeats, 8, cmp_u64);
  qsort(check, (size_t)repeats, 8, cmp_u64);
  double c = (double)copy[repeats / 2] / 1e6, k = (double)check[repeats / 2] / 1e6;
  printf(
      "%3zu MiB %-5s copy %7.3f ms (%.3f ms/MiB)  check %7.3f ms (%.3f ms/MiB)  "
      "%5.1f MiB emitted  %llu discarded in %d\n",
      mib, busy ? "busy" : "idle", c, c / (double)mib, k, k / (double)mib,
      (double)bytes / repeats / (1 << 20), (unsigned long long)discarded, repeats);
  free(copy);
  free(check);
  free(out.data);
  free(scratch);
  harness_stop(&h);
  harness_free(&h);
}

int main(int argc, char** argv) {
  int repeats = argc > 1 ? atoi(argv[1]) : 21;
  if (repeats < 1) repeats = 1;
  static const size_t kSizes[] = {1, 4, 16, 64};
  for (size_t i = 0; i < sizeof(kSizes) / sizeof(kSizes[0]); i++) {
    measure(kSizes[i], repeats, false);
    measure(kSizes[i], repeats, true);
  }
  return 0;
}
