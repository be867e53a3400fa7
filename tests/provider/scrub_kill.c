/* A program killed in the middle of a chunk's scrub, for test_scrub_kill.py.
 *
 *   scrub_kill
 *
 * Traced in file mode (FXTRACE_OUTPUT, FXTRACE_BUFFERING_MODE=circular,
 * FXTRACE_BUFFER_SIZE=1 from the test). One thread records instant events
 * test/"event" with the argument "n" = 0, 1, 2, ... until it dies. It is
 * linked with -Wl,--wrap=writer__zero_piece: the engine's chunk scrub
 * (src/engine/writer.c) clears a reused chunk, from 8 bytes in, a piece at
 * a time (1 KiB, the last one shorter); the 100th piece (with 16 KiB chunks,
 * the 4th piece of the 7th chunk cleared, while a segment is reused for the
 * first time) is cleared only half-way, and the process
 * SIGKILLs itself: the state a crash in the middle of a scrub leaves, the
 * chunk partly cleared and the rest its old records. */
#include <signal.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "trace-provider/provider.h"
#include "trace/event.h"

static int armed;
static unsigned scrubs;

void __real_writer__zero_piece(void* p, size_t bytes);
void __wrap_writer__zero_piece(void* p, size_t bytes);
void __wrap_writer__zero_piece(void* p, size_t bytes) {
  if (__atomic_load_n(&armed, __ATOMIC_RELAXED) && ++scrubs == 100) {
    __real_writer__zero_piece(p, bytes / 2);
    raise(SIGKILL);
  }
  __real_writer__zero_piece(p, bytes);
}

int main(void) {
  trace_provider_t* provider = trace_provider_create_with_name("scrub_kill");
  if (!provider) {
    fputs("scrub_kill: trace_provider_create_with_name failed\n", stderr);
    return 1;
  }
  __atomic_store_n(&armed, 1, __ATOMIC_RELAXED);
  for (uint64_t n = 0; n < UINT64_C(100000000); n++)
    TRACE_INSTANT("test", "event", TRACE_SCOPE_THREAD, "n", TA_UINT64(n));
  fputs("scrub_kill: never killed: the engine cleared no chunk\n", stderr);
  trace_provider_destroy(provider);
  return 1;
}
