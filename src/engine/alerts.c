/* TRACE_ALERT (include/trace/event.h, docs/flight-recorder.md): the writer's
 * half records an instant event marking the alert and hands the alert to the
 * engine thread; the engine thread passes it to the handler's send_alert
 * (the provider's FIFO ALERT packet, PROTOCOL.md §6.2).
 *
 * The writer never blocks and makes at most one syscall (the eventfd write
 * that wakes the engine thread, as a streaming switch does). Between them is
 * a fixed array of slots: a writer claims a free slot (CAS 0 → CLAIMED),
 * fills it and publishes it (READY, release); the engine thread takes READY
 * slots in ticket order and frees them. An alert is dropped, and counted,
 * when the count limit refuses it (alert/alert_limit.h: 16 a second per
 * process) or no slot is free. The instant event is written before the slot
 * is published, so a trace stopped by the alert holds its marker. */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "alert/alert_limit.h"
#include "engine/engine_internal.h"
#include "trace/internal/event_helpers.h"

enum { ALERT_SLOTS = ALERT_LIMIT_PER_WINDOW, SLOT_FREE = 0, SLOT_CLAIMED = 1, SLOT_READY = 2 };

typedef struct alert_slot {
  uint32_t state;  /* atomic: SLOT_* */
  uint64_t ticket; /* order of publication */
  char name[ALERT_NAME_MAX + 1];
} alert_slot_t;

/* One queue per session: each session's fifo gets the alerts of the
 * categories it enables. */
typedef struct alert_queue {
  alert_slot_t slots[ALERT_SLOTS];
  uint64_t next_ticket; /* atomic */
  alert_limit_t limit;
  /* This trace's counts (atomics), reset at start. */
  uint64_t alerts_sent, alerts_dropped, alerts_truncated;
} alert_queue_t;

static alert_queue_t queues[TRACE_ENGINE_MAX_SESSIONS];

static alert_slot_t* claim_slot(alert_queue_t* q) {
  for (size_t i = 0; i < ALERT_SLOTS; i++) {
    uint32_t expected = SLOT_FREE;
    if (__atomic_compare_exchange_n(&q->slots[i].state, &expected, SLOT_CLAIMED, false,
                                    __ATOMIC_ACQUIRE, __ATOMIC_RELAXED))
      return &q->slots[i];
  }
  return NULL;
}

static void alert_in_session(trace_context_t* w, const char* category_literal,
                             const char* alert_name);

void trace_internal_alert_at_site(trace_site_t* site, uint64_t state, const char* category_literal,
                                  const char* alert_name) {
  if (!(state & TRACE_SITE_SEVERAL_FLAG)) {
    uint64_t generation = ATOMIC_ACQUIRE(&trace_engine__generation[TRACE_SITE_SESSION(state)]);
    if (generation == 0 || state != TRACE_SITE_ENABLED(generation))
      state = trace_engine__resolve_site(category_literal, site);
  } else {
    state = trace_engine__resolve_site(category_literal, site);
  }
  if (state == TRACE_SITE_DISABLED) return;
  /* every session that enables the category gets the alert */
  unsigned mask = state & TRACE_SITE_SEVERAL_FLAG ? (unsigned)(state >> 1) & 0xfu
                                                  : 1u << TRACE_SITE_SESSION(state);
  for (; mask != 0; mask &= mask - 1) {
    unsigned session = (unsigned)__builtin_ctz(mask);
    uint64_t generation = ATOMIC_ACQUIRE(&trace_engine__generation[session]);
    if (generation == 0) continue;
    trace_context_t* w = writer__enter(generation);
    if (w != NULL) alert_in_session(w, category_literal, alert_name);
  }
}

/* The alert in w's session; releases w. */
static void alert_in_session(trace_context_t* w, const char* category_literal,
                             const char* alert_name) {
  alert_queue_t* q = &queues[w->session];
  trace_string_ref_t category = writer__register_literal(w, category_literal);
  /* A name longer than 14 bytes is cut to 14 (a literal one does not
   * compile: event.h); an empty one cannot be sent. */
  size_t length = alert_name ? strnlen(alert_name, ALERT_NAME_MAX + 1) : 0;
  bool truncated = length > ALERT_NAME_MAX;
  if (truncated) length = ALERT_NAME_MAX;
  trace_ticks_t now = trace_clock__now_ns();
  alert_slot_t* slot = NULL;
  /* the event's timestamp is CLOCK_MONOTONIC ns (fitted): the limit's windows too */
  if (length > 0 && alert_limit__admit(&q->limit, now)) slot = claim_slot(q);

  /* the marker: an instant event named by the alert (copied inline: the
   * name need not be a literal), saying whether the alert went out */
  trace_arg_t args[2];
  size_t num_args = 1;
  args[0].name_ref = writer__register_literal(w, "alert_sent");
  args[0].value = trace_make_bool_arg_value(slot != NULL);
  if (truncated) {
    args[1].name_ref = writer__register_literal(w, "alert_truncated");
    args[1].value = trace_make_bool_arg_value(true);
    num_args = 2;
  }
  trace_string_ref_t name_ref = trace_make_inline_string_ref(alert_name ? alert_name : "", length);
  writer__write_event(w, FXT_EVENT_INSTANT, now, writer__current_thread(w), &category, &name_ref,
                      args, num_args, TRACE_SCOPE_THREAD);

  if (truncated) __atomic_fetch_add(&q->alerts_truncated, 1, __ATOMIC_RELAXED);
  if (slot) {
    memcpy(slot->name, alert_name, length);
    slot->name[length] = '\0';
    slot->ticket = __atomic_fetch_add(&q->next_ticket, 1, __ATOMIC_RELAXED);
    __atomic_store_n(&slot->state, SLOT_READY, __ATOMIC_RELEASE);
    __atomic_fetch_add(&q->alerts_sent, 1, __ATOMIC_RELAXED);
    /* inside the record still: terminate waits for us, so the eventfd is
     * the engine's */
    engine__wake_thread(engine__of(w));
  } else {
    __atomic_fetch_add(&q->alerts_dropped, 1, __ATOMIC_RELAXED);
  }
  writer__release(w);
}

void engine__reset_alerts(engine_t* e) {
  alert_queue_t* q = &queues[e->session];
  alert_limit__reset(&q->limit);
  __atomic_store_n(&q->alerts_sent, 0, __ATOMIC_RELAXED);
  __atomic_store_n(&q->alerts_dropped, 0, __ATOMIC_RELAXED);
  __atomic_store_n(&q->alerts_truncated, 0, __ATOMIC_RELAXED);
}

void engine__deliver_alerts(engine_t* e) {
  alert_queue_t* q = &queues[e->session];
  alert_slot_t* slots = q->slots;
  trace_handler_t* handler = e->handler;
  for (;;) {
    alert_slot_t* first = NULL;
    for (size_t i = 0; i < ALERT_SLOTS; i++) {
      if (__atomic_load_n(&slots[i].state, __ATOMIC_ACQUIRE) != SLOT_READY) continue;
      if (!first || slots[i].ticket < first->ticket) first = &slots[i];
    }
    if (!first) return;
    char name[ALERT_NAME_MAX + 1];
    memcpy(name, first->name, sizeof(name));
    __atomic_store_n(&first->state, SLOT_FREE, __ATOMIC_RELEASE);
    if (handler && handler->ops->send_alert) handler->ops->send_alert(handler, name);
  }
}

void engine__report_alerts(engine_t* e) {
  alert_queue_t* q = &queues[e->session];
  uint64_t dropped = __atomic_load_n(&q->alerts_dropped, __ATOMIC_RELAXED);
  uint64_t truncated = __atomic_load_n(&q->alerts_truncated, __ATOMIC_RELAXED);
  if (dropped)
    fprintf(stderr,
            "fxtrace: %llu alert(s) of this trace were not sent: more than %d a second (the "
            "limit per process), or an empty name; each is marked alert_sent=false in the "
            "trace\n",
            (unsigned long long)dropped, ALERT_LIMIT_PER_WINDOW);
  if (truncated)
    fprintf(stderr, "fxtrace: %llu alert name(s) longer than %d bytes were cut to %d\n",
            (unsigned long long)truncated, ALERT_NAME_MAX, ALERT_NAME_MAX);
}

int trace_engine_session_get_alert_stats(unsigned session, trace_engine_alert_stats_t* out) {
  if (session >= TRACE_ENGINE_MAX_SESSIONS) return -EINVAL;
  alert_queue_t* q = &queues[session];
  out->alerts_sent = __atomic_load_n(&q->alerts_sent, __ATOMIC_RELAXED);
  out->alerts_dropped = __atomic_load_n(&q->alerts_dropped, __ATOMIC_RELAXED);
  out->alerts_truncated = __atomic_load_n(&q->alerts_truncated, __ATOMIC_RELAXED);
  return 0;
}

int trace_engine_get_alert_stats(trace_engine_alert_stats_t* out) {
  return trace_engine_session_get_alert_stats(0, out);
}
