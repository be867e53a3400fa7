/* A byte buffer that grows as a sink appends to it (fuzz targets only). */
#ifndef FXTRACE_FUZZ_GROW_BUFFER_H_
#define FXTRACE_FUZZ_GROW_BUFFER_H_

#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

typedef struct grow_buffer {
  uint8_t* data;
  size_t size, capacity;
} grow_buffer_t;

/* A sink: appends `bytes` to the grow_buffer_t `arg`; false when out of memory. */
static inline bool grow_buffer_append(void* arg, const void* data, size_t bytes) {
  grow_buffer_t* g = arg;
  if (g->size + bytes > g->capacity) {
    size_t capacity = (g->size + bytes) * 2;
    uint8_t* grown = realloc(g->data, capacity);
    if (!grown) return false;
    g->data = grown;
    g->capacity = capacity;
  }
  memcpy(g->data + g->size, data, bytes);
  g->size += bytes;
  return true;
}

#endif /* FXTRACE_FUZZ_GROW_BUFFER_H_ */
