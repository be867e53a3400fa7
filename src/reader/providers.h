/* Not part of the public API: the reader's per-provider state (FXT.md §9):
 * string table, thread table and tick rate, created by provider-info
 * records and made current by provider-section records. */
#ifndef FXTRACE_READER_PROVIDERS_H_
#define FXTRACE_READER_PROVIDERS_H_

#include <stdbool.h>
#include <stdint.h>

#include "trace-reader/reader.h"

enum {
  STRING_CHUNK_BITS = 7, /* the 32768 indexes live in 256 lazily made chunks */
  STRING_CHUNK_SIZE = 1 << STRING_CHUNK_BITS,
  STRING_CHUNKS = 0x8000 / STRING_CHUNK_SIZE,
  MAX_PROVIDERS = 4096, /* bounds the reader's memory on hostile input */
};

typedef struct string_entry {
  char* data; /* NUL-terminated copy, or NULL if the index is unset */
  uint16_t length;
} string_entry_t;

typedef struct thread_entry {
  uint64_t process_koid;
  uint64_t thread_koid;
  bool set;
} thread_entry_t;

typedef struct provider_state {
  trace_reader_provider_t pub;
  char* name;
  string_entry_t* string_chunks[STRING_CHUNKS];
  thread_entry_t threads[256];
} provider_state_t;

typedef struct provider_set {
  provider_state_t** items;
  size_t count, capacity;
  provider_state_t* current;
} provider_set_t;

/* Starts with provider 0 current (data before any metadata record).
 * Returns false when out of memory. */
bool __providers_init(provider_set_t* set);
void __providers_free(provider_set_t* set);

/* Provider info: creates or resets provider `id` and makes it current.
 * NULL when out of memory or past MAX_PROVIDERS. */
provider_state_t* __providers_begin(provider_set_t* set, uint32_t id, const char* name,
                                    size_t length);
/* Provider section: makes `id` current, creating an empty state if unknown
 * (*created is then set). NULL as above. */
provider_state_t* __providers_switch(provider_set_t* set, uint32_t id, bool* created);

/* String table; index in 1..0x7fff. set returns false when out of memory. */
bool __strings_set(provider_state_t* p, uint32_t index, const char* data, size_t length);
const string_entry_t* __strings_get(const provider_state_t* p, uint32_t index);

#endif /* FXTRACE_READER_PROVIDERS_H_ */
