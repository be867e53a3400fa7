/* trace_generate_nonce(): ids for async and flow events.
 *
 * API.md asks for a process-unique, never-zero id from an atomic counter
 * starting at 1. fxtrace also puts the process id above the counter, so that
 * the ids of different processes differ: Perfetto drops a flow step or end
 * whose id was begun in more than one process (READERS.md), and several
 * traced processes would otherwise all count 1, 2, 3, ... The id is
 *
 *   pid << 31  +  counter
 *
 * which stays below 2^53, so it is exact as a JSON number (Catapult readers
 * parse ids as doubles): Linux pids are below 2^22 (PID_MAX_LIMIT, and
 * systemd's pid_max), so every pid gets a range of its own, disjoint from
 * every other process's for the first 2^31 ids of each (with 21 bits of pid,
 * two processes whose pids differed by 2^21 shared their ids). The pid is
 * read once at load and again in a fork child, never on the hot path
 * (no syscall between start and stop). */
#include <pthread.h>
#include <unistd.h>

#include "trace-engine/instrumentation.h"

#define NONCE_PID_MASK ((UINT64_C(1) << 22) - 1) /* every Linux pid */

static uint64_t nonce_base;    /* written at load and in a fork child only */
static uint64_t nonce_counter; /* atomic */

static void set_nonce_base(void) { nonce_base = ((uint64_t)getpid() & NONCE_PID_MASK) << 31; }

__attribute__((constructor)) static void nonce_init(void) {
  set_nonce_base();
  pthread_atfork(NULL, NULL, set_nonce_base);
}

uint64_t trace_generate_nonce(void) {
  return nonce_base + __atomic_add_fetch(&nonce_counter, 1, __ATOMIC_RELAXED);
}
