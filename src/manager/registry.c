/* The Registry (PROTOCOL.md §4): providers register on their connection and
 * are gone when it closes. Also the Controller calls that only read the
 * registry: GetProviders and GetKnownCategories (each provider asked, 1 s
 * timeout, union de-duplicated on (name, description)). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "manager/manager_internal.h"

#define KNOWN_CATEGORIES_TIMEOUT_MS 1000u

void __registry_register(manager_t* m, conn_t* c, wire_reader_t* r) {
  uint64_t claimed_pid = __wire_get_u64(r);
  char name[WIRE_MAX_NAME + 1];
  __wire_get_str(r, name, sizeof(name), WIRE_MAX_NAME);
  uint8_t synchronous = __wire_get_u8(r);
  if (!__wire_done(r)) {
    LOGW(m, "pid %d: malformed REGISTER_PROVIDER: closing", (int)c->cred.pid);
    __mgr_send_error(m, c, r->request_id, -EBADMSG, "malformed REGISTER_PROVIDER");
    __mgr_close_conn(m, c);
    return;
  }
  if (c->provider) {
    __mgr_send_error(m, c, r->request_id, -EALREADY, "already registered");
    return;
  }
  size_t count = 0;
  for (provider_t* p = m->providers; p; p = p->next) count++;
  if (count >= WIRE_MAX_PROVIDERS) {
    LOGW(m, "provider %s (pid %d) refused: %zu providers already", name, (int)c->cred.pid, count);
    __mgr_send_error(m, c, r->request_id, -ENOSPC, "too many providers");
    __mgr_close_conn(m, c);
    return;
  }
  provider_t* p = calloc(1, sizeof(*p));
  if (!p) {
    __mgr_send_error(m, c, r->request_id, -ENOMEM, "out of memory");
    __mgr_close_conn(m, c);
    return;
  }
  p->id = m->next_provider_id++;
  /* The kernel's word for the pid, not the message's (a different pid
   * namespace reports 0: then the claim is all there is). */
  p->pid = c->cred.pid > 0 ? (uint64_t)c->cred.pid : claimed_pid;
  memcpy(p->name, name, sizeof(name));
  p->conn = c;
  c->provider = p;
  /* append: GetProviders lists them in registration order */
  provider_t** pp = &m->providers;
  while (*pp) pp = &(*pp)->next;
  *pp = p;
  LOGI(m, "provider #%u \"%s\" (pid %llu) registered%s", p->id, p->name,
       (unsigned long long)p->pid, synchronous ? " synchronously" : "");
  if (synchronous) {
    session_t* s = m->session;
    bool started = s && (s->state == SESSION_STARTING || s->state == SESSION_STARTED);
    __wire_begin(m->w, MSG_REGISTER_RESULT, r->request_id);
    __wire_put_u32(m->w, 0);
    __wire_put_u8(m->w, started ? 1 : 0);
    if (__mgr_send(m, c, NULL, 0) != 0) return; /* closed: the provider is gone */
  }
  if (m->session) __session_add_provider(m, p);
}

static void free_query(category_query_t* q) {
  for (size_t i = 0; i < q->count; i++) {
    free(q->items[i].name);
    free(q->items[i].description);
  }
  free(q->items);
  free(q->waiting);
  free(q);
}

static void answer_query(manager_t* m, category_query_t* q) {
  /* as many entries as fit a message */
  size_t room = WIRE_MAX_MESSAGE - WIRE_HEADER_SIZE - 2, n = 0;
  while (n < q->count && n < WIRE_MAX_CATEGORIES) {
    size_t need = 4 + strlen(q->items[n].name) + strlen(q->items[n].description);
    if (need > room) break;
    room -= need;
    n++;
  }
  if (n < q->count) LOGW(m, "known categories: %zu of %zu fit the reply", n, q->count);
  if (q->controller && !q->controller->closed) {
    __wire_begin(m->w, MSG_KNOWN_CATEGORIES, q->request_id);
    __wire_put_u16(m->w, (uint16_t)n);
    for (size_t i = 0; i < n; i++) {
      __wire_put_cstr(m->w, q->items[i].name);
      __wire_put_cstr(m->w, q->items[i].description);
    }
    __mgr_send(m, q->controller, NULL, 0);
  }
  for (category_query_t** pp = &m->queries; *pp; pp = &(*pp)->next) {
    if (*pp == q) {
      *pp = q->next;
      break;
    }
  }
  free_query(q);
}

void __registry_get_providers(manager_t* m, conn_t* c, wire_reader_t* r) {
  if (!__wire_done(r)) {
    __mgr_send_error(m, c, r->request_id, -EBADMSG, "malformed GET_PROVIDERS");
    return;
  }
  size_t n = 0;
  for (provider_t* p = m->providers; p; p = p->next) n++;
  __wire_begin(m->w, MSG_PROVIDERS, r->request_id);
  __wire_put_u16(m->w, (uint16_t)n);
  for (provider_t* p = m->providers; p; p = p->next) {
    __wire_put_u32(m->w, p->id);
    __wire_put_u64(m->w, p->pid);
    __wire_put_cstr(m->w, p->name);
  }
  __mgr_send(m, c, NULL, 0);
}

void __registry_get_known_categories(manager_t* m, conn_t* c, wire_reader_t* r) {
  if (!__wire_done(r)) {
    __mgr_send_error(m, c, r->request_id, -EBADMSG, "malformed GET_KNOWN_CATEGORIES");
    return;
  }
  category_query_t* q = calloc(1, sizeof(*q));
  size_t n = 0;
  for (provider_t* p = m->providers; p; p = p->next) n++;
  if (!q || (n && !(q->waiting = calloc(n, sizeof(uint32_t))))) {
    free(q);
    __mgr_send_error(m, c, r->request_id, -ENOMEM, "out of memory");
    return;
  }
  q->id = m->next_query_id++;
  if (m->next_query_id == 0) m->next_query_id = 1;
  q->controller = c;
  q->request_id = r->request_id;
  q->deadline_ms = __mgr_now_ms() + KNOWN_CATEGORIES_TIMEOUT_MS;
  /* Sending may close a provider's connection (and free the provider):
   * take the connections first, link the query last. */
  conn_t** conns = n ? calloc(n, sizeof(*conns)) : NULL;
  if (n && !conns) {
    free_query(q);
    __mgr_send_error(m, c, r->request_id, -ENOMEM, "out of memory");
    return;
  }
  size_t k = 0;
  for (provider_t* p = m->providers; p; p = p->next) {
    if (!p->conn || p->conn->closed) continue;
    q->waiting[k] = p->id;
    conns[k++] = p->conn;
  }
  for (size_t i = 0; i < k; i++) {
    __wire_begin(m->w, MSG_GET_KNOWN_CATEGORIES, q->id);
    if (__mgr_send(m, conns[i], NULL, 0) == 0) q->waiting[q->waiting_count++] = q->waiting[i];
  }
  free(conns);
  q->next = m->queries;
  m->queries = q;
  if (q->waiting_count == 0) answer_query(m, q);
}

static bool add_category(category_query_t* q, const char* name, const char* description) {
  for (size_t i = 0; i < q->count; i++)
    if (strcmp(q->items[i].name, name) == 0 && strcmp(q->items[i].description, description) == 0)
      return true;
  if (q->count >= WIRE_MAX_CATEGORIES) return true;
  if (q->count == q->capacity) {
    size_t capacity = q->capacity ? q->capacity * 2 : 16;
    known_category_t* items = realloc(q->items, capacity * sizeof(*items));
    if (!items) return false;
    q->items = items;
    q->capacity = capacity;
  }
  char* n = strdup(name);
  char* d = strdup(description);
  if (!n || !d) {
    free(n);
    free(d);
    return false;
  }
  q->items[q->count++] = (known_category_t){n, d};
  return true;
}

static bool take_waiting(category_query_t* q, uint32_t provider_id) {
  for (size_t i = 0; i < q->waiting_count; i++) {
    if (q->waiting[i] == provider_id) {
      q->waiting[i] = q->waiting[--q->waiting_count];
      return true;
    }
  }
  return false;
}

void __registry_known_categories_reply(manager_t* m, conn_t* c, wire_reader_t* r) {
  provider_t* p = c->provider;
  category_query_t* q = m->queries;
  while (q && q->id != r->request_id) q = q->next;
  if (!p || !q || !take_waiting(q, p->id)) {
    LOGD(m, "pid %d: late or unasked KNOWN_CATEGORIES ignored", (int)c->cred.pid);
    return;
  }
  uint16_t n = __wire_get_u16(r);
  if (n > WIRE_MAX_CATEGORIES) r->error = true;
  char name[WIRE_MAX_NAME + 1], description[WIRE_MAX_DESCRIPTION + 1];
  /* checked first, merged second: a malformed list adds nothing */
  size_t start = r->pos;
  for (uint16_t i = 0; i < n && !r->error; i++) {
    __wire_get_str(r, name, sizeof(name), WIRE_MAX_NAME);
    __wire_get_str(r, description, sizeof(description), WIRE_MAX_DESCRIPTION);
  }
  if (!__wire_done(r)) {
    LOGW(m, "provider \"%s\": malformed KNOWN_CATEGORIES ignored", p->name);
  } else {
    r->pos = start;
    for (uint16_t i = 0; i < n; i++) {
      __wire_get_str(r, name, sizeof(name), WIRE_MAX_NAME);
      __wire_get_str(r, description, sizeof(description), WIRE_MAX_DESCRIPTION);
      if (name[0] && !add_category(q, name, description)) break;
    }
  }
  if (q->waiting_count == 0) answer_query(m, q);
}

void __registry_remove(manager_t* m, provider_t* p) {
  LOGI(m, "provider #%u \"%s\" (pid %llu) is gone", p->id, p->name, (unsigned long long)p->pid);
  for (provider_t** pp = &m->providers; *pp; pp = &(*pp)->next) {
    if (*pp == p) {
      *pp = p->next;
      break;
    }
  }
  for (category_query_t* q = m->queries; q;) {
    category_query_t* next = q->next;
    if (take_waiting(q, p->id) && q->waiting_count == 0) answer_query(m, q);
    q = next;
  }
  if (p->tracee) {
    tracee_t* t = p->tracee;
    p->tracee = NULL;
    t->provider = NULL;
    __session_provider_gone(m, t);
  }
  free(p);
}

void __registry_conn_closed(manager_t* m, conn_t* c) {
  for (category_query_t* q = m->queries; q; q = q->next)
    if (q->controller == c) q->controller = NULL;
}

void __registry_timeouts(manager_t* m, uint64_t now, uint64_t* next_deadline) {
  for (category_query_t* q = m->queries; q;) {
    category_query_t* next = q->next;
    if (now >= q->deadline_ms) {
      LOGW(m, "known categories: %zu provider(s) did not answer within %u ms", q->waiting_count,
           KNOWN_CATEGORIES_TIMEOUT_MS);
      answer_query(m, q);
    } else if (q->deadline_ms < *next_deadline) {
      *next_deadline = q->deadline_ms;
    }
    q = next;
  }
}

void __registry_destroy(manager_t* m) {
  while (m->queries) {
    category_query_t* q = m->queries;
    m->queries = q->next;
    free_query(q);
  }
  while (m->providers) {
    provider_t* p = m->providers;
    m->providers = p->next;
    free(p);
  }
}
