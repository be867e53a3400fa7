/* Alerts (PROTOCOL.md §5.1 WatchAlert, §6.2 ALERT; docs/manager.md): from the
 * providers' FIFO ALERT packets to the controllers.
 *
 * Each alert a provider sends passes the manager's own count limit for that
 * provider (alert/alert_limit.h: 16 a second, again, whatever the provider's
 * library did) and then goes into the queue of the controller connection
 * that owns the tracee's session (each session has a FIFO of its own with
 * the provider, so a provider's alert reaches every session it takes part
 * in, and no other: docs/sessions.md): PROTOCOL.md's queue of 16 that drops
 * the oldest when full. A controller
 * asks with WATCH_ALERT (a hanging get: one at a time per connection); the
 * reply, ALERT, carries the oldest queued alert as soon as there is one, and
 * how many alerts this connection lost since its previous ALERT (refused by
 * the limit, or pushed out of its full queue), so that nothing is lost
 * without the client hearing of it. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "alert/alert_limit.h"
#include "manager/manager_internal.h"

enum { ALERT_QUEUE_SIZE = 16 };

typedef struct queued_alert {
  char name[ALERT_NAME_MAX + 1];
  uint32_t provider_id;
  uint64_t pid;
  char provider_name[WIRE_MAX_NAME + 1];
  uint64_t time_ns; /* CLOCK_MONOTONIC when the manager received it */
} queued_alert_t;

struct alert_queue {
  queued_alert_t items[ALERT_QUEUE_SIZE];
  size_t head, count;
  uint32_t dropped; /* since the last ALERT sent on this connection */
  bool watching;    /* a WATCH_ALERT waits for its reply */
  uint32_t watch_request_id;
};

static uint64_t monotonic_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static alert_queue_t* queue_of(conn_t* c) {
  if (!c->alerts) c->alerts = calloc(1, sizeof(*c->alerts));
  return c->alerts;
}

static void add_dropped(alert_queue_t* q, uint32_t n) {
  q->dropped = q->dropped > UINT32_MAX - n ? UINT32_MAX : q->dropped + n;
}

/* Answers the waiting WATCH_ALERT with the oldest alert, if both exist. */
static void serve(manager_t* m, conn_t* c) {
  alert_queue_t* q = c->alerts;
  if (!q || !q->watching || q->count == 0) return;
  const queued_alert_t* a = &q->items[q->head];
  wire__begin(m->w, MSG_ALERT, q->watch_request_id);
  wire__put_cstr(m->w, a->name);
  wire__put_u32(m->w, a->provider_id);
  wire__put_u64(m->w, a->pid);
  wire__put_cstr(m->w, a->provider_name);
  wire__put_u64(m->w, a->time_ns);
  wire__put_u32(m->w, q->dropped);
  q->head = (q->head + 1) % ALERT_QUEUE_SIZE;
  q->count--;
  q->dropped = 0;
  q->watching = false;
  mgr__send(m, c, NULL, 0);
}

void alerts__watch(manager_t* m, conn_t* c, wire_reader_t* r) {
  if (!wire__done(r)) {
    mgr__send_error(m, c, r->request_id, -EBADMSG, "malformed WATCH_ALERT");
    return;
  }
  alert_queue_t* q = queue_of(c);
  if (!q) {
    mgr__send_error(m, c, r->request_id, -ENOMEM, "out of memory");
    return;
  }
  if (q->watching) {
    mgr__send_error(m, c, r->request_id, -EBUSY, "a WATCH_ALERT of this connection is waiting");
    return;
  }
  q->watching = true;
  q->watch_request_id = r->request_id;
  serve(m, c);
}

void alerts__from_provider(manager_t* m, tracee_t* t, const char* name) {
  if (!alert_limit__admit(&t->alert_limit, monotonic_ns())) {
    t->alerts_dropped++;
    LOGW(m, "provider #%u \"%s\": alert \"%s\" dropped: more than %d a second", t->provider_id,
         t->name, name, ALERT_LIMIT_PER_WINDOW);
    conn_t* c = t->s->owner;
    if (c && !c->closed) {
      alert_queue_t* q = queue_of(c);
      if (q) add_dropped(q, 1);
    }
    return;
  }
  LOGI(m, "session %u: provider #%u \"%s\": alert \"%s\"", t->s->id, t->provider_id, t->name, name);
  queued_alert_t a;
  memset(&a, 0, sizeof(a));
  snprintf(a.name, sizeof(a.name), "%s", name);
  a.provider_id = t->provider_id;
  a.pid = t->pid;
  snprintf(a.provider_name, sizeof(a.provider_name), "%s", t->name);
  a.time_ns = monotonic_ns();
  conn_t* c = t->s->owner; /* none once its client is gone */
  if (c && !c->closed) {
    alert_queue_t* q = queue_of(c);
    if (!q) return;
    if (q->count == ALERT_QUEUE_SIZE) { /* full: the oldest goes (PROTOCOL.md §5.1) */
      q->head = (q->head + 1) % ALERT_QUEUE_SIZE;
      q->count--;
      add_dropped(q, 1);
    }
    q->items[(q->head + q->count) % ALERT_QUEUE_SIZE] = a;
    q->count++;
    serve(m, c);
  }
}

void alerts__conn_free(conn_t* c) {
  free(c->alerts);
  c->alerts = NULL;
}
