/* GetKnownCategories (PROTOCOL.md §5.1, gnoliyil+): the categories the
 * manager declares itself (its configuration) and those each registered
 * provider answers to GET_KNOWN_CATEGORIES, with a 1 s timeout per query.
 *
 * Two replies from one query: GET_KNOWN_CATEGORIES gets PROTOCOL.md's union,
 * de-duplicated on (name, description); GET_PROVIDER_CATEGORIES gets one
 * group per source (wire.h), each de-duplicated the same way, so
 * `trace list-categories` can say who declared what.
 *
 * Invariants: a query's groups are a snapshot taken when it was asked (a
 * provider that goes away later keeps its group, unanswered unless its reply
 * came first); a query is answered exactly once — when no group is waiting,
 * or at its deadline — and then freed. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "manager/manager_internal.h"

#define KNOWN_CATEGORIES_TIMEOUT_MS 1000u

/* ---- groups ---- */

static void free_items(known_category_t* items, size_t count) {
  for (size_t i = 0; i < count; i++) {
    free(items[i].name);
    free(items[i].description);
  }
  free(items);
}

static void free_query(category_query_t* q) {
  for (size_t i = 0; i < q->group_count; i++) free_items(q->groups[i].items, q->groups[i].count);
  free(q->groups);
  free(q);
}

static bool same(const known_category_t* k, const char* name, const char* description) {
  return strcmp(k->name, name) == 0 && strcmp(k->description, description) == 0;
}

/* Adds (name, description) unless the group has it. false: out of memory. */
static bool group_add(category_group_t* g, const char* name, const char* description) {
  for (size_t i = 0; i < g->count; i++)
    if (same(&g->items[i], name, description)) return true;
  if (g->count >= WIRE_MAX_CATEGORIES) return true; /* more could never be sent */
  if (g->count == g->capacity) {
    size_t capacity = g->capacity ? g->capacity * 2 : 16;
    known_category_t* items = realloc(g->items, capacity * sizeof(*items));
    if (!items) return false;
    g->items = items;
    g->capacity = capacity;
  }
  char* n = strdup(name);
  char* d = strdup(description);
  if (!n || !d) {
    free(n);
    free(d);
    return false;
  }
  g->items[g->count++] = (known_category_t){n, d};
  return true;
}

/* ---- the manager's own ---- */

int known__configure(manager_t* m, const manager_category_t* items, size_t count) {
  if (count == 0) return 0;
  if (!items || count > WIRE_MAX_CATEGORIES) return -EINVAL;
  for (size_t i = 0; i < count; i++) {
    const char* d = items[i].description ? items[i].description : "";
    if (!items[i].name || !items[i].name[0] || strlen(items[i].name) > WIRE_MAX_NAME ||
        strlen(d) > WIRE_MAX_DESCRIPTION)
      return -EINVAL;
  }
  category_group_t g = {0};
  for (size_t i = 0; i < count; i++) {
    if (!group_add(&g, items[i].name, items[i].description ? items[i].description : "")) {
      free_items(g.items, g.count);
      return -ENOMEM;
    }
  }
  m->known = g.items;
  m->known_count = g.count;
  return 0;
}

/* ---- answering ---- */

/* Room a string takes on the wire. */
static size_t wire_str(const char* s) { return 2 + strlen(s); }

static void answer_union(manager_t* m, category_query_t* q) {
  /* the union, de-duplicated across groups, as many entries as fit */
  category_group_t all = {0};
  bool complete = true;
  for (size_t i = 0; i < q->group_count && complete; i++)
    for (size_t k = 0; k < q->groups[i].count && complete; k++)
      complete = group_add(&all, q->groups[i].items[k].name, q->groups[i].items[k].description);
  size_t room = WIRE_MAX_MESSAGE - WIRE_HEADER_SIZE - 2, n = 0;
  while (n < all.count) {
    size_t need = wire_str(all.items[n].name) + wire_str(all.items[n].description);
    if (need > room) break;
    room -= need;
    n++;
  }
  if (n < all.count || !complete)
    LOGW(m, "known categories: %zu of %zu%s fit the reply", n, all.count,
         complete ? "" : " (out of memory)");
  wire__begin(m->w, MSG_KNOWN_CATEGORIES, q->request_id);
  wire__put_u16(m->w, (uint16_t)n);
  for (size_t i = 0; i < n; i++) {
    wire__put_cstr(m->w, all.items[i].name);
    wire__put_cstr(m->w, all.items[i].description);
  }
  mgr__send(m, q->controller, NULL, 0);
  free_items(all.items, all.count);
}

static void answer_by_provider(manager_t* m, category_query_t* q) {
  /* Sizes first (a group's count precedes its entries): whole groups while
   * their header fits, then as many of their entries as fit. */
  size_t room = WIRE_MAX_MESSAGE - WIRE_HEADER_SIZE - 1 - 2, groups = 0, dropped = 0;
  size_t fit[WIRE_MAX_PROVIDERS + 1];
  for (size_t i = 0; i < q->group_count && i < WIRE_MAX_PROVIDERS + 1; i++) {
    const category_group_t* g = &q->groups[i];
    size_t head = 4 + 8 + wire_str(g->name) + 1 + 2;
    if (head > room) break;
    room -= head;
    fit[i] = 0;
    while (fit[i] < g->count) {
      size_t need = wire_str(g->items[fit[i]].name) + wire_str(g->items[fit[i]].description);
      if (need > room) break;
      room -= need;
      fit[i]++;
    }
    dropped += g->count - fit[i];
    groups++;
  }
  if (dropped || groups < q->group_count)
    LOGW(m, "known categories by provider: %zu entries and %zu groups do not fit the reply",
         dropped, q->group_count - groups);
  wire__begin(m->w, MSG_PROVIDER_CATEGORIES, q->request_id);
  wire__put_u8(m->w, WIRE_CATEGORIES_FORMAT);
  wire__put_u16(m->w, (uint16_t)groups);
  for (size_t i = 0; i < groups; i++) {
    const category_group_t* g = &q->groups[i];
    wire__put_u32(m->w, g->provider_id);
    wire__put_u64(m->w, g->pid);
    wire__put_cstr(m->w, g->name);
    wire__put_u8(m->w, g->answered ? 1 : 0);
    wire__put_u16(m->w, (uint16_t)fit[i]);
    for (size_t k = 0; k < fit[i]; k++) {
      wire__put_cstr(m->w, g->items[k].name);
      wire__put_cstr(m->w, g->items[k].description);
    }
  }
  mgr__send(m, q->controller, NULL, 0);
}

static void answer_query(manager_t* m, category_query_t* q) {
  if (q->controller && !q->controller->closed) {
    if (q->by_provider)
      answer_by_provider(m, q);
    else
      answer_union(m, q);
  }
  for (category_query_t** pp = &m->queries; *pp; pp = &(*pp)->next) {
    if (*pp == q) {
      *pp = q->next;
      break;
    }
  }
  free_query(q);
}

/* ---- asking ---- */

void known__query(manager_t* m, conn_t* c, wire_reader_t* r, bool by_provider) {
  if (by_provider) {
    uint8_t format = wire__get_u8(r);
    if (!wire__done(r)) {
      mgr__send_error(m, c, r->request_id, -EBADMSG, "malformed GET_PROVIDER_CATEGORIES");
      return;
    }
    if (format != WIRE_CATEGORIES_FORMAT) {
      mgr__send_error(m, c, r->request_id, -EPROTONOSUPPORT,
                      "unsupported PROVIDER_CATEGORIES format");
      return;
    }
  } else if (!wire__done(r)) {
    mgr__send_error(m, c, r->request_id, -EBADMSG, "malformed GET_KNOWN_CATEGORIES");
    return;
  }
  size_t n = m->known_count ? 1 : 0;
  for (provider_t* p = m->providers; p; p = p->next) n++;
  category_query_t* q = calloc(1, sizeof(*q));
  if (!q || (n && !(q->groups = calloc(n, sizeof(*q->groups))))) {
    free(q);
    mgr__send_error(m, c, r->request_id, -ENOMEM, "out of memory");
    return;
  }
  q->id = m->next_query_id++;
  if (m->next_query_id == 0) m->next_query_id = 1;
  q->controller = c;
  q->request_id = r->request_id;
  q->by_provider = by_provider;
  q->deadline_ms = mgr__now_ms() + KNOWN_CATEGORIES_TIMEOUT_MS;
  if (m->known_count) {
    category_group_t* g = &q->groups[q->group_count++];
    g->provider_id = 0;
    g->pid = (uint64_t)getpid();
    strcpy(g->name, "trace_manager");
    g->answered = true;
    for (size_t i = 0; i < m->known_count; i++) {
      if (!group_add(g, m->known[i].name, m->known[i].description)) {
        free_query(q);
        mgr__send_error(m, c, r->request_id, -ENOMEM, "out of memory");
        return;
      }
    }
  }
  /* Sending may close a provider's connection (and free the provider):
   * snapshot the groups and connections first, link the query last. */
  conn_t** conns = n ? calloc(n, sizeof(*conns)) : NULL;
  if (n && !conns) {
    free_query(q);
    mgr__send_error(m, c, r->request_id, -ENOMEM, "out of memory");
    return;
  }
  size_t first = q->group_count;
  for (provider_t* p = m->providers; p; p = p->next) {
    if (!p->conn || p->conn->closed) continue;
    category_group_t* g = &q->groups[q->group_count];
    g->provider_id = p->id;
    g->pid = p->pid;
    memcpy(g->name, p->name, sizeof(g->name));
    conns[q->group_count++] = p->conn;
  }
  for (size_t i = first; i < q->group_count; i++) {
    wire__begin(m->w, MSG_GET_KNOWN_CATEGORIES, q->id);
    if (mgr__send(m, conns[i], NULL, 0) == 0) {
      q->groups[i].waiting = true;
      q->waiting_count++;
    }
  }
  free(conns);
  q->next = m->queries;
  m->queries = q;
  if (q->waiting_count == 0) answer_query(m, q);
}

/* The waiting group of provider_id in q, taken off the waiting list; NULL if
 * it is not waiting (late, unasked, or already answered). */
static category_group_t* take_waiting(category_query_t* q, uint32_t provider_id) {
  for (size_t i = 0; i < q->group_count; i++) {
    category_group_t* g = &q->groups[i];
    if (g->waiting && g->provider_id == provider_id) {
      g->waiting = false;
      q->waiting_count--;
      return g;
    }
  }
  return NULL;
}

void known__provider_reply(manager_t* m, conn_t* c, wire_reader_t* r) {
  provider_t* p = c->provider;
  category_query_t* q = m->queries;
  while (q && q->id != r->request_id) q = q->next;
  category_group_t* g = p && q ? take_waiting(q, p->id) : NULL;
  if (!g) {
    LOGD(m, "pid %d: late or unasked KNOWN_CATEGORIES ignored", (int)c->cred.pid);
    return;
  }
  uint16_t n = wire__get_u16(r);
  if (n > WIRE_MAX_CATEGORIES) r->error = true;
  char name[WIRE_MAX_NAME + 1], description[WIRE_MAX_DESCRIPTION + 1];
  /* checked first, merged second: a malformed list adds nothing */
  size_t start = r->pos;
  for (uint16_t i = 0; i < n && !r->error; i++) {
    wire__get_str(r, name, sizeof(name), WIRE_MAX_NAME);
    wire__get_str(r, description, sizeof(description), WIRE_MAX_DESCRIPTION);
  }
  if (!wire__done(r)) {
    LOGW(m, "provider \"%s\": malformed KNOWN_CATEGORIES ignored", p->name);
  } else {
    g->answered = true;
    r->pos = start;
    for (uint16_t i = 0; i < n; i++) {
      wire__get_str(r, name, sizeof(name), WIRE_MAX_NAME);
      wire__get_str(r, description, sizeof(description), WIRE_MAX_DESCRIPTION);
      if (name[0] && !group_add(g, name, description)) break;
    }
  }
  if (q->waiting_count == 0) answer_query(m, q);
}

void known__provider_gone(manager_t* m, uint32_t provider_id) {
  for (category_query_t* q = m->queries; q;) {
    category_query_t* next = q->next;
    if (take_waiting(q, provider_id) && q->waiting_count == 0) answer_query(m, q);
    q = next;
  }
}

void known__conn_closed(manager_t* m, conn_t* c) {
  for (category_query_t* q = m->queries; q; q = q->next)
    if (q->controller == c) q->controller = NULL;
}

void known__timeouts(manager_t* m, uint64_t now, uint64_t* next_deadline) {
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

void known__destroy(manager_t* m) {
  while (m->queries) {
    category_query_t* q = m->queries;
    m->queries = q->next;
    free_query(q);
  }
  free_items(m->known, m->known_count);
  m->known = NULL;
  m->known_count = 0;
}
