/* Not part of the public API: a growable in-memory FXT word buffer for tools
 * and tests that build whole archives (the sample generator, the manager's
 * archive assembly). The engine writes into shared memory instead.
 *
 *     fxt_buffer_t b = {0};
 *     uint64_t* p = fxt_buffer_reserve(&b, words);   // NULL: out of memory
 *     if (p) fxt_write_..._record(p, words, ...);
 *     ... use b.words[0 .. b.count) ...
 *     fxt_buffer_free(&b);
 * Thread-safety: one buffer per thread. */
#ifndef FXTRACE_FXT_BUFFER_H_
#define FXTRACE_FXT_BUFFER_H_

#include <stdint.h>
#include <stdlib.h>

typedef struct fxt_buffer {
  uint64_t* words;
  size_t count;    /* words written */
  size_t capacity; /* words allocated */
} fxt_buffer_t;

/* Appends `n` words and returns a pointer to them (zeroed), or NULL when out
 * of memory. The pointer is valid until the next reserve (invalidated by
 * growth). */
static inline uint64_t* fxt_buffer_reserve(fxt_buffer_t* b, size_t n) {
  if (b->capacity - b->count < n) {
    size_t cap = b->capacity ? b->capacity : 512;
    while (cap - b->count < n) cap *= 2;
    uint64_t* grown = (uint64_t*)realloc(b->words, cap * sizeof(uint64_t));
    if (!grown) return NULL;
    b->words = grown;
    b->capacity = cap;
  }
  uint64_t* p = b->words + b->count;
  for (size_t i = 0; i < n; i++) p[i] = 0;
  b->count += n;
  return p;
}

static inline void fxt_buffer_free(fxt_buffer_t* b) {
  free(b->words);
  b->words = NULL;
  b->count = b->capacity = 0;
}

#endif /* FXTRACE_FXT_BUFFER_H_ */
