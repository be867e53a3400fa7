/* Not part of the public API: the enabled-category set of a trace and its
 * matching rules (PROTOCOL.md §11, newer behaviour):
 *   1. an empty set enables every category;
 *   2. an entry ending in '*' enables every category starting with the text
 *      before it ("*" matches all, "kernel:*" matches "kernel:sched");
 *   3. any other entry must match exactly;
 *   4. an empty entry never matches, and a NULL or empty category is never
 *      enabled.
 * Matching is off the hot path: the engine caches each call site's answer. */
#ifndef FXTRACE_ENGINE_CATEGORIES_H_
#define FXTRACE_ENGINE_CATEGORIES_H_

#include <stdbool.h>
#include <stddef.h>

typedef struct category_set {
  char** patterns; /* owned copies */
  size_t count;
} category_set_t;

/* Parses a comma-separated list ("a,b,gfx*"); surrounding spaces of each
 * entry are dropped; empty entries are kept. NULL or "" gives the empty set. Returns 0, or -1 when
 * out of memory (the set is then empty). */
int categories__parse(category_set_t* set, const char* list);

/* Adds one pattern (copied). Returns 0, or -1 when out of memory. */
int categories__add(category_set_t* set, const char* pattern, size_t length);

bool categories__match(const category_set_t* set, const char* category);

void categories__free(category_set_t* set);

#endif /* FXTRACE_ENGINE_CATEGORIES_H_ */
