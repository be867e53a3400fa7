/* Per-provider reader state: string and thread tables, tick rate. */
#include "reader/providers.h"

#include <stdlib.h>
#include <string.h>

/* Takes `bytes` from the budget; false if it would be exceeded. */
static bool charge(provider_set_t* set, size_t bytes) {
  if (bytes > set->table_budget - set->table_bytes) return false;
  set->table_bytes += bytes;
  return true;
}

static void clear_state(provider_set_t* set, provider_state_t* p) {
  for (size_t c = 0; c < STRING_CHUNKS; c++) {
    string_entry_t* chunk = p->string_chunks[c];
    if (!chunk) continue;
    for (size_t i = 0; i < STRING_CHUNK_SIZE; i++) {
      if (chunk[i].data) set->table_bytes -= chunk[i].length + 1u;
      free(chunk[i].data);
    }
    free(chunk);
    set->table_bytes -= STRING_CHUNK_SIZE * sizeof(string_entry_t);
    p->string_chunks[c] = NULL;
  }
  if (p->threads) set->table_bytes -= 256 * sizeof(thread_entry_t);
  free(p->threads);
  p->threads = NULL;
  if (p->name) set->table_bytes -= p->pub.name.length + 1u;
  free(p->name);
  p->name = NULL;
  p->pub.name.data = "";
  p->pub.name.length = 0;
  p->pub.ticks_per_second = 1000000000u;
}

provider_state_t* providers__find(provider_set_t* set, uint32_t id) {
  if (set->current && set->current->pub.id == id) return set->current;
  for (size_t i = 0; i < set->count; i++)
    if (set->items[i]->pub.id == id) return set->items[i];
  return NULL;
}

static provider_state_t* add(provider_set_t* set, uint32_t id) {
  if (set->count == set->capacity) {
    size_t cap = set->capacity ? set->capacity * 2 : 8;
    provider_state_t** items = realloc(set->items, cap * sizeof(*items));
    if (!items) return NULL;
    set->items = items;
    set->capacity = cap;
  }
  if (!charge(set, sizeof(provider_state_t))) return NULL;
  provider_state_t* p = calloc(1, sizeof(*p));
  if (!p) {
    set->table_bytes -= sizeof(provider_state_t);
    return NULL;
  }
  p->pub.id = id;
  clear_state(set, p);
  set->items[set->count++] = p;
  return p;
}

bool providers__init(provider_set_t* set, size_t budget) {
  memset(set, 0, sizeof(*set));
  set->table_budget = budget ? budget : READER_DEFAULT_TABLE_BUDGET;
  set->current = add(set, 0);
  return set->current != NULL;
}

void providers__free(provider_set_t* set) {
  for (size_t i = 0; i < set->count; i++) {
    clear_state(set, set->items[i]);
    free(set->items[i]);
  }
  free(set->items);
  memset(set, 0, sizeof(*set));
}

provider_state_t* providers__begin(provider_set_t* set, uint32_t id, const char* name,
                                   size_t length) {
  provider_state_t* p = providers__find(set, id);
  if (p)
    clear_state(set, p);
  else if (!(p = add(set, id)))
    return NULL;
  if (!charge(set, length + 1)) return NULL;
  p->name = malloc(length + 1);
  if (!p->name) {
    set->table_bytes -= length + 1;
    return NULL;
  }
  memcpy(p->name, name, length);
  p->name[length] = '\0';
  p->pub.name.data = p->name;
  p->pub.name.length = length;
  set->current = p;
  return p;
}

provider_state_t* providers__switch(provider_set_t* set, uint32_t id, bool* created) {
  provider_state_t* p = providers__find(set, id);
  *created = (p == NULL);
  if (!p && !(p = add(set, id))) return NULL;
  set->current = p;
  return p;
}

bool strings__set(provider_set_t* set, provider_state_t* p, uint32_t index, const char* data,
                  size_t length) {
  string_entry_t** chunk = &p->string_chunks[index >> STRING_CHUNK_BITS];
  if (!*chunk) {
    if (!charge(set, STRING_CHUNK_SIZE * sizeof(string_entry_t))) return false;
    *chunk = calloc(STRING_CHUNK_SIZE, sizeof(string_entry_t));
    if (!*chunk) {
      set->table_bytes -= STRING_CHUNK_SIZE * sizeof(string_entry_t);
      return false;
    }
  }
  string_entry_t* e = &(*chunk)[index & (STRING_CHUNK_SIZE - 1)];
  size_t old = e->data ? e->length + 1u : 0;
  set->table_bytes -= old; /* a re-registered index replaces its string */
  if (!charge(set, length + 1)) {
    set->table_bytes += old;
    return false;
  }
  char* copy = malloc(length + 1);
  if (!copy) {
    set->table_bytes = set->table_bytes - (length + 1) + old;
    return false;
  }
  memcpy(copy, data, length);
  copy[length] = '\0';
  free(e->data);
  e->data = copy;
  e->length = (uint16_t)length;
  return true;
}

const string_entry_t* strings__get(const provider_state_t* p, uint32_t index) {
  const string_entry_t* chunk =
      p->string_chunks[(index >> STRING_CHUNK_BITS) & (STRING_CHUNKS - 1)];
  if (!chunk) return NULL;
  const string_entry_t* e = &chunk[index & (STRING_CHUNK_SIZE - 1)];
  return e->data ? e : NULL;
}

bool threads__set(provider_set_t* set, provider_state_t* p, uint32_t index, uint64_t pid,
                  uint64_t tid) {
  if (!p->threads) {
    if (!charge(set, 256 * sizeof(thread_entry_t))) return false;
    p->threads = calloc(256, sizeof(thread_entry_t));
    if (!p->threads) {
      set->table_bytes -= 256 * sizeof(thread_entry_t);
      return false;
    }
  }
  p->threads[index & 0xffu] = (thread_entry_t){pid, tid, true};
  return true;
}

const thread_entry_t* threads__get(const provider_state_t* p, uint32_t index) {
  if (!p->threads || !p->threads[index & 0xffu].set) return NULL;
  return &p->threads[index & 0xffu];
}
