/* Per-provider reader state: string and thread tables, tick rate. */
#include "reader/providers.h"

#include <stdlib.h>
#include <string.h>

static void clear_state(provider_state_t* p) {
  for (size_t c = 0; c < STRING_CHUNKS; c++) {
    string_entry_t* chunk = p->string_chunks[c];
    if (!chunk) continue;
    for (size_t i = 0; i < STRING_CHUNK_SIZE; i++) free(chunk[i].data);
    free(chunk);
    p->string_chunks[c] = NULL;
  }
  memset(p->threads, 0, sizeof(p->threads));
  free(p->name);
  p->name = NULL;
  p->pub.name.data = "";
  p->pub.name.length = 0;
  p->pub.ticks_per_second = 1000000000u;
}

static provider_state_t* find(provider_set_t* set, uint32_t id) {
  if (set->current && set->current->pub.id == id) return set->current;
  for (size_t i = 0; i < set->count; i++)
    if (set->items[i]->pub.id == id) return set->items[i];
  return NULL;
}

static provider_state_t* add(provider_set_t* set, uint32_t id) {
  if (set->count == MAX_PROVIDERS) return NULL;
  if (set->count == set->capacity) {
    size_t cap = set->capacity ? set->capacity * 2 : 8;
    provider_state_t** items = realloc(set->items, cap * sizeof(*items));
    if (!items) return NULL;
    set->items = items;
    set->capacity = cap;
  }
  provider_state_t* p = calloc(1, sizeof(*p));
  if (!p) return NULL;
  p->pub.id = id;
  clear_state(p);
  set->items[set->count++] = p;
  return p;
}

bool __providers_init(provider_set_t* set) {
  memset(set, 0, sizeof(*set));
  set->current = add(set, 0);
  return set->current != NULL;
}

void __providers_free(provider_set_t* set) {
  for (size_t i = 0; i < set->count; i++) {
    clear_state(set->items[i]);
    free(set->items[i]);
  }
  free(set->items);
  memset(set, 0, sizeof(*set));
}

provider_state_t* __providers_begin(provider_set_t* set, uint32_t id, const char* name,
                                    size_t length) {
  provider_state_t* p = find(set, id);
  if (p)
    clear_state(p);
  else if (!(p = add(set, id)))
    return NULL;
  p->name = malloc(length + 1);
  if (!p->name) return NULL;
  memcpy(p->name, name, length);
  p->name[length] = '\0';
  p->pub.name.data = p->name;
  p->pub.name.length = length;
  set->current = p;
  return p;
}

provider_state_t* __providers_switch(provider_set_t* set, uint32_t id, bool* created) {
  provider_state_t* p = find(set, id);
  *created = (p == NULL);
  if (!p && !(p = add(set, id))) return NULL;
  set->current = p;
  return p;
}

bool __strings_set(provider_state_t* p, uint32_t index, const char* data, size_t length) {
  string_entry_t** chunk = &p->string_chunks[index >> STRING_CHUNK_BITS];
  if (!*chunk && !(*chunk = calloc(STRING_CHUNK_SIZE, sizeof(string_entry_t)))) return false;
  string_entry_t* e = &(*chunk)[index & (STRING_CHUNK_SIZE - 1)];
  char* copy = malloc(length + 1);
  if (!copy) return false;
  memcpy(copy, data, length);
  copy[length] = '\0';
  free(e->data);
  e->data = copy;
  e->length = (uint16_t)length;
  return true;
}

const string_entry_t* __strings_get(const provider_state_t* p, uint32_t index) {
  const string_entry_t* chunk = p->string_chunks[(index >> STRING_CHUNK_BITS) & (STRING_CHUNKS - 1)];
  if (!chunk) return NULL;
  const string_entry_t* e = &chunk[index & (STRING_CHUNK_SIZE - 1)];
  return e->data ? e : NULL;
}
