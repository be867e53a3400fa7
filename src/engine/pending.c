/* Events that come before a start the process is waiting for.
 *
 * A provider that registers while a trace runs waits (bounded by
 * FXTRACE_REGISTER_TIMEOUT, docs/provider.md) for its engine to start;
 * when the wait runs out first, the events until the start would be
 * silently absent. Instead the provider marks the start "pending": until it
 * comes (or the trace turns out not to include this process), no call site
 * caches "disabled" (sites.c re-checks the flag like the generation), so
 * every event reaches trace_engine__resolve_site(), which counts it as
 * missed when its category is enabled (every category while the provider
 * does not know them yet). The start makes the count part of the trace's
 * dropped records, which the manager reports per provider. Nothing here is
 * on the record path: while pending, events take the slow path anyway. */
#include <inttypes.h>
#include <stdio.h>

#include "engine/engine_internal.h"

/* The flag and the count in one word, so that a count is never added
 * after the start took it: PENDING_FLAG | events counted. */
uint64_t engine__pending_word; /* atomic */
#define PENDING_FLAG (UINT64_C(1) << 63)

void engine__begin_pending(void) {
  engine_t* e = &engine__sessions[0];
  pthread_mutex_lock(&e->lock);
  if (ATOMIC_LOAD(&e->state) == TRACE_STOPPED && !e->forked &&
      !(__atomic_load_n(&engine__pending_word, __ATOMIC_SEQ_CST) & PENDING_FLAG)) {
    __atomic_store_n(&engine__pending_word, PENDING_FLAG, __ATOMIC_SEQ_CST);
    pthread_mutex_lock(&engine__sessions_lock); /* resets and unlinks one at a time */
    sites__reset();                             /* sites that cached "disabled" ask again */
    pthread_mutex_unlock(&engine__sessions_lock);
  }
  pthread_mutex_unlock(&e->lock);
}

void engine__end_pending(bool trace_ran) {
  engine_t* e = &engine__sessions[0];
  pthread_mutex_lock(&e->lock);
  uint64_t word = __atomic_exchange_n(&engine__pending_word, 0, __ATOMIC_SEQ_CST);
  uint64_t count = word & ~PENDING_FLAG;
  if (trace_ran && count != 0) {
    /* The trace ran but never started here (it stopped first, or this
     * process is leaving, or the start never came): the count goes into the
     * buffer's header, where the manager reads the provider's drops, when
     * there is a buffer. */
    if (e->header != NULL)
      __atomic_fetch_add(&e->header->num_records_dropped, count, __ATOMIC_RELAXED);
    fprintf(stderr,
            "fxtrace: %" PRIu64
            " events of this process were not recorded: its trace had not started here "
            "yet%s\n",
            count, e->header != NULL ? " (counted as dropped)" : "");
  }
  pthread_mutex_unlock(&e->lock);
}

bool engine__pending_active(void) {
  return (__atomic_load_n(&engine__pending_word, __ATOMIC_SEQ_CST) & PENDING_FLAG) != 0;
}

uint64_t engine__pending_count(void) {
  return __atomic_load_n(&engine__pending_word, __ATOMIC_SEQ_CST) & ~PENDING_FLAG;
}

bool engine__count_if_pending(const char* category_literal) {
  uint64_t word = __atomic_load_n(&engine__pending_word, __ATOMIC_SEQ_CST);
  if (!(word & PENDING_FLAG)) return false;
  if (ATOMIC_ACQUIRE(&engine__sessions[0].handler) != NULL &&
      !writer__handler_enables(&engine__sessions[0], category_literal))
    return true; /* not an event of this trace; still not cached */
  /* acquire on failure: a start that took the count meanwhile published its
   * generation before, so the caller, asking again, sees the trace */
  while (!__atomic_compare_exchange_n(&engine__pending_word, &word, word + 1, true,
                                      __ATOMIC_SEQ_CST, __ATOMIC_ACQUIRE))
    if (!(word & PENDING_FLAG)) return false;
  return true;
}

uint64_t engine__take_pending_locked(void) {
  uint64_t word = __atomic_exchange_n(&engine__pending_word, 0, __ATOMIC_SEQ_CST);
  uint64_t count = word & ~PENDING_FLAG;
  if (count != 0)
    fprintf(stderr,
            "fxtrace: %" PRIu64
            " events of this process came before its trace started (the registration wait, "
            "FXTRACE_REGISTER_TIMEOUT, ran out); they are counted as dropped\n",
            count);
  return count;
}

void engine__forget_pending(void) { __atomic_store_n(&engine__pending_word, 0, __ATOMIC_SEQ_CST); }
