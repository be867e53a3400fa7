/* The set of sessions (docs/sessions.md, wire.h "Sessions"): which providers
 * take part in which session, providers joining and leaving every session
 * they are in, and the calls that look across sessions: LIST_SESSIONS and
 * STOP_SESSION. Who may see a session is who may stop it: its client's own
 * uid, and root; to anyone else it does not exist (-ENOENT, never -EPERM). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "manager/manager_internal.h"

/* The kernel provider serves every session as it did the one session
 * before (docs/sessions.md): only root can run it under its name. */
static bool is_kernel_provider(const provider_t* p) {
  return p->uid == 0 && strcmp(p->name, KERNEL_PROVIDER_NAME) == 0;
}

bool sessions__includes(const session_t* s, const provider_t* p) {
  return s->client_uid == 0 || p->uid == s->client_uid || is_kernel_provider(p);
}

size_t sessions__count(const manager_t* m) {
  size_t n = 0;
  for (const session_t* s = m->sessions; s; s = s->next) n++;
  return n;
}

void sessions__provider_registered(manager_t* m, provider_t* p) {
  conn_t* c = p->conn;
  for (session_t* s = m->sessions; s && !c->closed; s = s->next) {
    /* a failed send closes c and frees p: checked before each use */
    if (!s->gone && sessions__includes(s, p)) session__add_provider(m, s, p);
  }
}

bool sessions__started_for(const manager_t* m, const provider_t* p) {
  for (const session_t* s = m->sessions; s; s = s->next)
    if ((s->state == SESSION_STARTING || s->state == SESSION_STARTED) && sessions__includes(s, p))
      return true;
  return false;
}

/* The next live tracee of p in any session, or NULL. */
static tracee_t* find_tracee(manager_t* m, const provider_t* p) {
  for (session_t* s = m->sessions; s; s = s->next)
    for (tracee_t* t = s->tracees; t && !s->gone; t = t->next)
      if (t->provider == p && !t->gone) return t;
  return NULL;
}

void sessions__provider_removed(manager_t* m, provider_t* p) {
  /* One at a time from the start: handling one may end any session. */
  tracee_t* t;
  while ((t = find_tracee(m, p)) != NULL) {
    t->provider = NULL;
    session__provider_gone(m, t);
  }
}

static bool visible_to(const session_t* s, const conn_t* c) {
  return c->cred.uid == 0 || c->cred.uid == s->client_uid;
}

/* session_info's state: 1 initialized ... 6 terminating (wire.h). */
static uint8_t wire_state(int state) {
  return state >= SESSION_INITIALIZED && state <= SESSION_TERMINATING
             ? (uint8_t)(state - SESSION_INITIALIZED + 1)
             : 0;
}

static uint32_t providers_taking_part(const session_t* s) {
  uint32_t n = 0;
  for (const tracee_t* t = s->tracees; t; t = t->next)
    if (t->provider && t->state != TRACEE_TERMINATED) n++;
  return n;
}

void sessions__list(manager_t* m, conn_t* c, wire_reader_t* r) {
  if (!wire__done(r)) {
    mgr__send_error(m, c, r->request_id, -EBADMSG, "malformed LIST_SESSIONS");
    return;
  }
  uint16_t n = 0;
  for (session_t* s = m->sessions; s; s = s->next)
    if (visible_to(s, c)) n++;
  wire__begin(m->w, MSG_SESSIONS, r->request_id);
  wire__put_u16(m->w, n);
  for (session_t* s = m->sessions; s; s = s->next) {
    if (!visible_to(s, c)) continue;
    wire__put_u32(m->w, s->id);
    wire__put_u64(m->w, (uint64_t)s->client_pid);
    wire__put_u32(m->w, (uint32_t)s->client_uid);
    wire__put_u8(m->w, s->mode);
    wire__put_u32(m->w, s->buffer_size_mb);
    wire__put_u16(m->w, (uint16_t)s->category_count);
    for (size_t i = 0; i < s->category_count; i++) wire__put_cstr(m->w, s->categories[i]);
    wire__put_u64(m->w, s->start_realtime_ns);
    wire__put_u8(m->w, wire_state(s->state));
    wire__put_u64(m->w, s->out ? s->out->written : 0);
    wire__put_u32(m->w, providers_taking_part(s));
  }
  if (m->w->overflow) {
    /* four sessions of thousands of long category names: said, not cut */
    mgr__send_error(m, c, r->request_id, -EMSGSIZE,
                    "the sessions' category lists do not fit in one message");
    return;
  }
  mgr__send(m, c, NULL, 0);
}

void sessions__stop_session(manager_t* m, conn_t* c, wire_reader_t* r) {
  uint32_t id = wire__get_u32(r);
  if (!wire__done(r)) {
    mgr__send_error(m, c, r->request_id, -EBADMSG, "malformed STOP_SESSION");
    return;
  }
  session_t* s = m->sessions;
  while (s && s->id != id) s = s->next;
  if (!s || !visible_to(s, c)) {
    char message[64];
    snprintf(message, sizeof(message), "no session %u", (unsigned)id);
    mgr__send_error(m, c, r->request_id, -ENOENT, message);
    return;
  }
  LOGI(m, "session %u: stopped by pid %d (uid %u)", s->id, (int)c->cred.pid, (unsigned)c->cred.uid);
  bool stopped = session__stop_for_other(m, s);
  wire__begin(m->w, MSG_STOP_SESSION_RESULT, r->request_id);
  wire__put_u32(m->w, id);
  mgr__send(m, c, NULL, 0);
  /* its client finishes as at the end of its --duration: told once, when
   * this call stopped it (a session already stopping needs no word) */
  if (stopped && !s->gone && s->owner) {
    wire__begin(m->w, MSG_SESSION_STOPPED, 0);
    wire__put_u32(m->w, id);
    wire__put_u32(m->w, (uint32_t)c->cred.uid);
    wire__put_u64(m->w, (uint64_t)c->cred.pid);
    mgr__send(m, s->owner, NULL, 0);
  }
}

void sessions__reap(manager_t* m) {
  while (m->dead_sessions) {
    session_t* s = m->dead_sessions;
    m->dead_sessions = s->dead_next;
    free(s);
  }
}
