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
};

/* The default limit of the memory all providers' tables may use together, so
 * that a hostile archive cannot make the reader grow without bound. A real
 * trace needs a small fraction: even 32767 strings of 64 bytes are 2 MiB. */
#define READER_DEFAULT_TABLE_BUDGET ((size_t)256 << 20)

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
  thread_entry_t* threads; /* 256 entries, made at the first thread record */
} provider_state_t;

typedef struct provider_set {
  provider_state_t** items;
  size_t count, capacity;
  provider_state_t* current;
  size_t table_bytes; /* memory held by all tables, <= table_budget */
  size_t table_budget;
} provider_set_t;

/* Starts with provider 0 current (data before any metadata record); budget 0
 * means READER_DEFAULT_TABLE_BUDGET. Returns false when out of memory. */
bool providers__init(provider_set_t* set, size_t budget);
void providers__free(provider_set_t* set);

/* The state of provider `id`, or NULL if none was announced. */
provider_state_t* providers__find(provider_set_t* set, uint32_t id);

/* Provider info: creates or resets provider `id` and makes it current.
 * NULL when out of memory or past the table budget. */
provider_state_t* providers__begin(provider_set_t* set, uint32_t id, const char* name,
                                   size_t length);
/* Provider section: makes `id` current, creating an empty state if unknown
 * (*created is then set). NULL as above. */
provider_state_t* providers__switch(provider_set_t* set, uint32_t id, bool* created);

/* String table; index in 1..0x7fff. set returns false when out of memory or
 * past the table budget. */
bool strings__set(provider_set_t* set, provider_state_t* p, uint32_t index, const char* data,
                  size_t length);

/* Thread table; index in 1..255. set returns false as above; get returns
 * NULL for an undefined index. */
bool threads__set(provider_set_t* set, provider_state_t* p, uint32_t index, uint64_t pid,
                  uint64_t tid);
const thread_entry_t* threads__get(const provider_state_t* p, uint32_t index);
const string_entry_t* strings__get(const provider_state_t* p, uint32_t index);

#endif /* FXTRACE_READER_PROVIDERS_H_ */
