/* The enabled-category set and its matching rules (see categories.h). */
#include "engine/categories.h"

#include <stdlib.h>
#include <string.h>

int categories__add(category_set_t* set, const char* pattern, size_t length) {
  char** grown = realloc(set->patterns, (set->count + 1) * sizeof(*grown));
  if (!grown) return -1;
  set->patterns = grown;
  char* copy = malloc(length + 1);
  if (!copy) return -1;
  memcpy(copy, pattern, length);
  copy[length] = '\0';
  set->patterns[set->count++] = copy;
  return 0;
}

static bool is_space(char c) { return c == ' ' || c == '\t'; }

int categories__parse(category_set_t* set, const char* list) {
  set->patterns = NULL;
  set->count = 0;
  if (!list) return 0;
  while (*list) {
    const char* end = strchr(list, ',');
    if (!end) end = list + strlen(list);
    const char* a = list;
    const char* b = end;
    while (a < b && is_space(*a)) a++;
    while (b > a && is_space(b[-1])) b--;
    /* Empty entries are kept: they match nothing (rule 4), so "," enables
     * no category, while "" (no entry at all) enables every one. */
    if (categories__add(set, a, (size_t)(b - a)) != 0) {
      categories__free(set);
      return -1;
    }
    if (!*end) break;
    list = end + 1;
    if (!*list) { /* a trailing comma: one more, empty, entry */
      if (categories__add(set, "", 0) != 0) {
        categories__free(set);
        return -1;
      }
    }
  }
  return 0;
}

/* Rules 2-4 for one entry. */
static bool pattern_matches(const char* pattern, const char* category) {
  size_t n = strlen(pattern);
  if (n == 0) return false;
  if (pattern[n - 1] == '*') return strncmp(pattern, category, n - 1) == 0;
  return strcmp(pattern, category) == 0;
}

bool categories__match(const category_set_t* set, const char* category) {
  if (!category || !*category) return false; /* rule 4 */
  if (set->count == 0) return true;          /* rule 1 */
  for (size_t i = 0; i < set->count; i++)
    if (pattern_matches(set->patterns[i], category)) return true;
  return false;
}

void categories__free(category_set_t* set) {
  for (size_t i = 0; i < set->count; i++) free(set->patterns[i]);
  free(set->patterns);
  set->patterns = NULL;
  set->count = 0;
}
