/* Call-site state words (instrumentation.h, trace_site_t): the list of
 * sites that cached an answer, and its reset at every start and stop of
 * any session.
 *
 * A site's word is TRACE_SITE_DISABLED, 0 (unknown: ask the slow path),
 * TRACE_SITE_ENABLED(generation) or TRACE_SITE_SEVERAL(epoch, mask). The
 * inline check tests DISABLED only, so a stale DISABLED would keep a site
 * off for a whole trace, and a stale ENABLED of one session would keep a
 * session started since out of it: every site that stores an answer is
 * first pushed (once, lock-free) on `list`, and the engine resets every
 * listed word to 0 after it publishes a new generation (start) or 0 (stop)
 * of any session, with a new sessions epoch.
 *
 * The race: a thread decides a site's answer in sessions epoch E while a
 * start or stop publishes E + 1 and resets the list. The engine does
 *   store generation and epoch; fence; load list head; store 0 to each listed word
 * and the thread does
 *   push the site (RMW of the head); store its answer; fence; load the epoch
 * and, if the epoch is no longer E, puts 0 back (compare-exchange from
 * its answer). Both sides store, fence (sequentially consistent), then load
 * what the other stored (the Dekker argument of engine.c), so the two loads
 * cannot both miss: either the thread's generation load sees g + 1 and it
 * repairs, or the engine's head load sees the push, and then the thread's
 * DISABLED store (before its fence, which precedes the engine's fence in the
 * fences' total order) comes before the engine's 0 in the word's order. A
 * repair only ever costs one more slow-path visit. A pending start
 * (pending.c) is published the same way (store the flag, fence, reset the
 * list), and the thread checks the flag with the generation. */
#include "engine/engine_internal.h"

/* The pushed sites, newest first, linked through trace_site_t.next; the
 * last one's next is &list_end, so next == NULL means "not listed". */
static trace_site_t list_end;
static trace_site_t* list = &list_end;

/* Lists the site unless it is already listed (or being listed by another
 * thread, whose push completes before that thread stores DISABLED). */
static void push(trace_site_t* site) {
  trace_site_t* expected = NULL;
  if (ATOMIC_LOAD(&site->next) != NULL ||
      !__atomic_compare_exchange_n(&site->next, &expected, &list_end, false, __ATOMIC_SEQ_CST,
                                   __ATOMIC_RELAXED))
    return;
  trace_site_t* head = __atomic_load_n(&list, __ATOMIC_RELAXED);
  do {
    __atomic_store_n(&site->next, head, __ATOMIC_RELAXED);
  } while (
      !__atomic_compare_exchange_n(&list, &head, site, false, __ATOMIC_SEQ_CST, __ATOMIC_RELAXED));
}

void sites__set(trace_site_t* site, uint64_t state, uint64_t epoch) {
  push(site);
  __atomic_store_n(&site->state, state, __ATOMIC_SEQ_CST);
  __atomic_thread_fence(__ATOMIC_SEQ_CST);
  if (UNLIKELY(__atomic_load_n(&trace_engine__sessions_epoch, __ATOMIC_SEQ_CST) != epoch ||
               (state == TRACE_SITE_DISABLED &&
                (__atomic_load_n(&engine__pending_word, __ATOMIC_SEQ_CST) >> 63) != 0)))
    __atomic_compare_exchange_n(&site->state, &state, 0, false, __ATOMIC_SEQ_CST, __ATOMIC_RELAXED);
}

void sites__reset(void) {
  __atomic_thread_fence(__ATOMIC_SEQ_CST); /* after the caller's store of the generation */
  for (trace_site_t* s = __atomic_load_n(&list, __ATOMIC_SEQ_CST); s != &list_end;
       s = ATOMIC_LOAD(&s->next))
    __atomic_store_n(&s->state, 0, __ATOMIC_SEQ_CST);
}

void sites__unlink(trace_site_t* site) {
  if (ATOMIC_LOAD(&site->next) == NULL) return; /* not listed */
  trace_site_t* head = __atomic_load_n(&list, __ATOMIC_SEQ_CST);
  /* the head: pushes race with this, a compare-exchange settles it */
  while (head == site) {
    if (__atomic_compare_exchange_n(&list, &head, ATOMIC_LOAD(&site->next), false, __ATOMIC_SEQ_CST,
                                    __ATOMIC_SEQ_CST)) {
      __atomic_store_n(&site->next, NULL, __ATOMIC_RELEASE);
      return;
    }
  }
  /* inside the list: only pushes (at the head) and unlinks (serialized by
   * the caller) change it */
  for (trace_site_t* s = head; s != &list_end; s = ATOMIC_LOAD(&s->next))
    if (ATOMIC_LOAD(&s->next) == site) {
      __atomic_store_n(&s->next, ATOMIC_LOAD(&site->next), __ATOMIC_SEQ_CST);
      __atomic_store_n(&site->next, NULL, __ATOMIC_RELEASE);
      return;
    }
}

void sites__forget(void) {
  trace_site_t* s = __atomic_exchange_n(&list, &list_end, __ATOMIC_SEQ_CST);
  while (s != &list_end) {
    trace_site_t* next = ATOMIC_LOAD(&s->next);
    __atomic_store_n(&s->state, 0, __ATOMIC_RELAXED);
    __atomic_store_n(&s->next, NULL, __ATOMIC_RELEASE);
    s = next;
  }
}
