/* Synthetic JSON ids for koids that are no Linux ids (see json_koids.h). */
#include "trace/json_koids.h"

#include <stdlib.h>

static size_t slot_of(uint64_t koid, size_t capacity) {
  return (size_t)((koid * UINT64_C(0x9e3779b97f4a7c15)) >> 17) & (capacity - 1);
}

static bool grow(json_koids_t* k) {
  size_t capacity = k->capacity ? k->capacity * 2 : 64;
  uint64_t* keys = calloc(capacity, sizeof(*keys));
  uint32_t* ids = calloc(capacity, sizeof(*ids));
  if (!keys || !ids) {
    free(keys);
    free(ids);
    return false;
  }
  for (size_t i = 0; i < k->capacity; i++) {
    if (!k->keys[i]) continue;
    size_t s = slot_of(k->keys[i], capacity);
    while (keys[s]) s = (s + 1) & (capacity - 1);
    keys[s] = k->keys[i];
    ids[s] = k->ids[i];
  }
  free(k->keys);
  free(k->ids);
  k->keys = keys;
  k->ids = ids;
  k->capacity = capacity;
  return true;
}

uint64_t json_koids__id(json_koids_t* k, uint64_t koid) {
  if (!json_koids__is_mapped(koid)) return koid;
  if (k->capacity) {
    for (size_t s = slot_of(koid, k->capacity);; s = (s + 1) & (k->capacity - 1)) {
      if (k->keys[s] == koid) return k->ids[s];
      if (!k->keys[s]) break;
    }
  }
  if (JSON_KOID_FIRST - k->count <= JSON_KOID_LAST) return JSON_KOID_LAST;
  if ((k->count + 1) * 2 > k->capacity && !grow(k)) return JSON_KOID_LAST;
  size_t s = slot_of(koid, k->capacity);
  while (k->keys[s]) s = (s + 1) & (k->capacity - 1);
  k->keys[s] = koid;
  k->ids[s] = (uint32_t)(JSON_KOID_FIRST - k->count++);
  return k->ids[s];
}

void json_koids__free(json_koids_t* k) {
  free(k->keys);
  free(k->ids);
  k->keys = NULL;
  k->ids = NULL;
  k->capacity = k->count = 0;
}
