/* A program killed in the middle of a chunk's scrub, for test_scrub_kill.py.
 *
 *   scrub_kill
 *
 * Traced in file mode (FXTRACE_OUTPUT, FXTRACE_BUFFERING_MODE=circular,
 * FXTRACE_BUFFER_SIZE=1 from the test). One thread records instant events
 * test/"event" with the argument "n" = 0, 1, 2, ... until it dies. It is
 * linked with -Wl,--wrap=memset: the engine's chunk scrub (src/engine/
 * writer.c) clears a reused chunk with one memset of the chunk size less 8
 * bytes; the 100th such call (the buffer has wrapped several times by then)
 * clears only the first half of its area and then SIGKILLs the process,
 * leaving the state a crash in the middle of the scrub leaves: the chunk
 * partly cleared, the rest its old records. */
#include <signal.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "trace-provider/provider.h"
#include "trace/event.h"

static int armed;
static unsigned scrubs;

/* A scrub's memset: zeroes, the chunk size (a power of two, 512 B to 16 KiB)
 * less the 8 bytes of its header. */
static void* scrub_memset(void* s, int c, size_t n, void* (*real)(void*, int, size_t)) {
  if (__atomic_load_n(&armed, __ATOMIC_RELAXED) && c == 0 && n >= 504 && n <= 16376 &&
      ((n + 8) & (n + 7)) == 0 && ++scrubs == 100) {
    real(s, 0, n / 2);
    raise(SIGKILL);
  }
  return real(s, c, n);
}

void* __real_memset(void* s, int c, size_t n);
void* __wrap_memset(void* s, int c, size_t n);
void* __wrap_memset(void* s, int c, size_t n) { return scrub_memset(s, c, n, __real_memset); }

/* Under AddressSanitizer the compiler calls __asan_memset instead (the
 * build links with -Wl,--wrap=__asan_memset then: tests/provider/CMakeLists.txt). */
#if defined(__has_feature)
#if __has_feature(address_sanitizer)
#define SCRUB_KILL_ASAN 1
#endif
#endif
#if defined(__SANITIZE_ADDRESS__)
#define SCRUB_KILL_ASAN 1
#endif
#ifdef SCRUB_KILL_ASAN
void* __real___asan_memset(void* s, int c, size_t n);
void* __wrap___asan_memset(void* s, int c, size_t n);
void* __wrap___asan_memset(void* s, int c, size_t n) {
  return scrub_memset(s, c, n, __real___asan_memset);
}
#endif

int main(void) {
  trace_provider_t* provider = trace_provider_create_with_name("scrub_kill");
  if (!provider) {
    fputs("scrub_kill: trace_provider_create_with_name failed\n", stderr);
    return 1;
  }
  __atomic_store_n(&armed, 1, __ATOMIC_RELAXED);
  for (uint64_t n = 0; n < UINT64_C(100000000); n++)
    TRACE_INSTANT("test", "event", TRACE_SCOPE_THREAD, "n", TA_UINT64(n));
  fputs("scrub_kill: never killed: the engine made no scrub of the chunk size\n", stderr);
  trace_provider_destroy(provider);
  return 1;
}
