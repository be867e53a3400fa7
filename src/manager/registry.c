/* The Registry (PROTOCOL.md §4): providers register on their connection and
 * are gone when it closes. Also the Controller call that only reads the
 * registry: GetProviders (GetKnownCategories is known_categories.c). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "manager/manager_internal.h"

void registry__register(manager_t* m, conn_t* c, wire_reader_t* r) {
  uint64_t claimed_pid = wire__get_u64(r);
  char name[WIRE_MAX_NAME + 1];
  wire__get_str(r, name, sizeof(name), WIRE_MAX_NAME);
  uint8_t synchronous = wire__get_u8(r);
  if (!wire__done(r)) {
    LOGW(m, "pid %d: malformed REGISTER_PROVIDER: closing", (int)c->cred.pid);
    mgr__send_error(m, c, r->request_id, -EBADMSG, "malformed REGISTER_PROVIDER");
    mgr__close_conn(m, c);
    return;
  }
  if (c->provider) {
    mgr__send_error(m, c, r->request_id, -EALREADY, "already registered");
    return;
  }
  size_t count = 0;
  for (provider_t* p = m->providers; p; p = p->next) count++;
  if (count >= WIRE_MAX_PROVIDERS) {
    LOGW(m, "provider %s (pid %d) refused: %zu providers already", name, (int)c->cred.pid, count);
    mgr__send_error(m, c, r->request_id, -ENOSPC, "too many providers");
    mgr__close_conn(m, c);
    return;
  }
  provider_t* p = calloc(1, sizeof(*p));
  if (!p) {
    mgr__send_error(m, c, r->request_id, -ENOMEM, "out of memory");
    mgr__close_conn(m, c);
    return;
  }
  p->id = m->next_provider_id++;
  /* The kernel's word for the pid, not the message's (a different pid
   * namespace reports 0: then the claim is all there is). */
  p->pid = c->cred.pid > 0 ? (uint64_t)c->cred.pid : claimed_pid;
  /* its records' koids are then its namespace's pids, not ours (names.h) */
  p->other_pid_namespace = c->cred.pid <= 0 || claimed_pid != (uint64_t)c->cred.pid;
  p->uid = c->cred.uid;
  memcpy(p->name, name, sizeof(name));
  p->conn = c;
  c->provider = p;
  /* append: GetProviders lists them in registration order */
  provider_t** pp = &m->providers;
  while (*pp) pp = &(*pp)->next;
  *pp = p;
  LOGI(m, "provider #%u \"%s\" (pid %llu, uid %u) registered%s", p->id, p->name,
       (unsigned long long)p->pid, (unsigned)p->uid, synchronous ? " synchronously" : "");
  if (synchronous) {
    bool started = sessions__started_for(m, p);
    wire__begin(m->w, MSG_REGISTER_RESULT, r->request_id);
    wire__put_u32(m->w, 0);
    wire__put_u8(m->w, started ? 1 : 0);
    if (mgr__send(m, c, NULL, 0) != 0) return; /* closed: the provider is gone */
  }
  sessions__provider_registered(m, p); /* AddProvider in each session it may join */
}

void registry__get_providers(manager_t* m, conn_t* c, wire_reader_t* r) {
  if (!wire__done(r)) {
    mgr__send_error(m, c, r->request_id, -EBADMSG, "malformed GET_PROVIDERS");
    return;
  }
  size_t n = 0;
  for (provider_t* p = m->providers; p; p = p->next) n++;
  wire__begin(m->w, MSG_PROVIDERS, r->request_id);
  wire__put_u16(m->w, (uint16_t)n);
  for (provider_t* p = m->providers; p; p = p->next) {
    wire__put_u32(m->w, p->id);
    wire__put_u64(m->w, p->pid);
    wire__put_cstr(m->w, p->name);
  }
  mgr__send(m, c, NULL, 0);
}

void registry__remove(manager_t* m, provider_t* p) {
  LOGI(m, "provider #%u \"%s\" (pid %llu) is gone", p->id, p->name, (unsigned long long)p->pid);
  for (provider_t** pp = &m->providers; *pp; pp = &(*pp)->next) {
    if (*pp == p) {
      *pp = p->next;
      break;
    }
  }
  known__provider_gone(m, p->id);
  sessions__provider_removed(m, p);
  free(p);
}

void registry__destroy(manager_t* m) {
  known__destroy(m);
  while (m->providers) {
    provider_t* p = m->providers;
    m->providers = p->next;
    free(p);
  }
}
