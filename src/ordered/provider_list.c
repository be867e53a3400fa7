/* Provider versions of one input (see provider_list.h). */
#include "ordered/provider_list.h"

#include <stdlib.h>
#include <string.h>

static bool same(const trace_reader_provider_t* a, const trace_reader_provider_t* b) {
  return a->id == b->id && a->ticks_per_second == b->ticks_per_second &&
         a->name.length == b->name.length &&
         memcmp(a->name.data, b->name.data, a->name.length) == 0;
}

bool ordered__providers_intern(ordered_providers_t* list, const trace_reader_provider_t* p,
                               uint32_t* index) {
  if (list->count && same(&list->items[list->last], p)) {
    *index = list->last;
    return true;
  }
  /* Back to a provider seen before (sections alternate): its latest version
   * is the newest entry with its id. Older versions are not looked for, so
   * a provider changed back and forth gets a new entry each time. */
  for (uint32_t i = list->count; i-- > 0;) {
    if (list->items[i].id != p->id) continue;
    if (!same(&list->items[i], p)) break;
    *index = list->last = i;
    return true;
  }
  if (list->count == ORDERED_MAX_PROVIDER_VERSIONS) return false;
  if (list->count == list->capacity) {
    uint32_t cap = list->capacity ? 2 * list->capacity : 8;
    trace_reader_provider_t* items = realloc(list->items, cap * sizeof(*items));
    if (!items) return false;
    list->items = items;
    list->capacity = cap;
  }
  char* name = malloc(p->name.length + 1);
  if (!name) return false;
  if (p->name.length) memcpy(name, p->name.data, p->name.length);
  name[p->name.length] = '\0';
  trace_reader_provider_t* v = &list->items[list->count];
  *v = *p;
  v->name = (trace_reader_string_t){name, p->name.length};
  list->bytes += sizeof(*v) + p->name.length + 1;
  *index = list->last = list->count++;
  return true;
}

void ordered__providers_free(ordered_providers_t* list) {
  for (uint32_t i = 0; i < list->count; i++) free((char*)list->items[i].name.data);
  free(list->items);
  memset(list, 0, sizeof(*list));
}
