/* Chained hash table keyed by byte strings (see summary_table.h). */
#include "trace/summary_table.h"

#include <stdlib.h>
#include <string.h>

void summary_table__init(summary_table_t* t, size_t value_size) {
  memset(t, 0, sizeof(*t));
  t->value_size =
      (value_size + sizeof(max_align_t) - 1) / sizeof(max_align_t) * sizeof(max_align_t);
}

/* FNV-1a over 8-byte words, then a 64-bit finalizer (splitmix) to spread
 * the bits over the bucket mask. */
uint64_t summary_table__hash(const void* key, size_t length) {
  const unsigned char* p = key;
  uint64_t h = 0xcbf29ce484222325ull ^ length;
  while (length >= 8) {
    uint64_t w;
    memcpy(&w, p, 8);
    h = (h ^ w) * 0x100000001b3ull;
    p += 8;
    length -= 8;
  }
  uint64_t w = 0;
  memcpy(&w, p, length);
  h = (h ^ w) * 0x100000001b3ull;
  h ^= h >> 30;
  h *= 0xbf58476d1ce4e5b9ull;
  h ^= h >> 27;
  h *= 0x94d049bb133111ebull;
  return h ^ (h >> 31);
}

static summary_entry_t** slot_of(const summary_table_t* t, const void* key, size_t length,
                                 uint64_t hash) {
  summary_entry_t** slot = &t->buckets[hash & (t->bucket_count - 1)];
  for (; *slot; slot = &(*slot)->next)
    if ((*slot)->hash == hash && (*slot)->key_length == length &&
        memcmp((*slot)->key, key, length) == 0)
      return slot;
  return slot;
}

static bool grow(summary_table_t* t) {
  size_t count = t->bucket_count ? t->bucket_count * 2 : 64;
  summary_entry_t** buckets = calloc(count, sizeof(*buckets));
  if (!buckets) return false;
  for (size_t i = 0; i < t->bucket_count; i++) {
    for (summary_entry_t *e = t->buckets[i], *next; e; e = next) {
      next = e->next;
      summary_entry_t** slot = &buckets[e->hash & (count - 1)];
      e->next = *slot;
      *slot = e;
    }
  }
  free(t->buckets);
  t->buckets = buckets;
  t->bucket_count = count;
  return true;
}

summary_entry_t* summary_table__find(const summary_table_t* t, const void* key, size_t length) {
  if (!t->bucket_count) return NULL;
  return *slot_of(t, key, length, summary_table__hash(key, length));
}

summary_entry_t* summary_table__get(summary_table_t* t, const void* key, size_t length,
                                    bool* added) {
  *added = false;
  if (t->count >= t->bucket_count && !grow(t)) return NULL;
  uint64_t hash = summary_table__hash(key, length);
  summary_entry_t** slot = slot_of(t, key, length, hash);
  if (*slot) return *slot;
  summary_entry_t* e = calloc(1, sizeof(*e) + t->value_size + length + 1);
  if (!e) return NULL;
  char* copy = (char*)e->value + t->value_size;
  memcpy(copy, key, length);
  e->hash = hash;
  e->key = copy;
  e->key_length = length;
  *slot = e;
  t->count++;
  *added = true;
  return e;
}

void summary_table__remove(summary_table_t* t, summary_entry_t* e) {
  summary_entry_t** slot = &t->buckets[e->hash & (t->bucket_count - 1)];
  while (*slot && *slot != e) slot = &(*slot)->next;
  if (!*slot) return;
  *slot = e->next;
  t->count--;
  free(e);
}

summary_entry_t** summary_table__list(const summary_table_t* t) {
  if (t->count == 0) return NULL;
  summary_entry_t** list = malloc(t->count * sizeof(*list));
  if (!list) return NULL;
  size_t n = 0;
  for (size_t i = 0; i < t->bucket_count; i++)
    for (summary_entry_t* e = t->buckets[i]; e; e = e->next) list[n++] = e;
  return list;
}

void summary_table__free(summary_table_t* t) {
  for (size_t i = 0; i < t->bucket_count; i++) {
    for (summary_entry_t *e = t->buckets[i], *next; e; e = next) {
      next = e->next;
      free(e);
    }
  }
  free(t->buckets);
  memset(t, 0, sizeof(*t));
}
