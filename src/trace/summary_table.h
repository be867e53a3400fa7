/* Not part of the public API: the hash table of `trace summary`: entries
 * keyed by a byte string (a category and name, a thread id, ...), each
 * holding a fixed-size value the caller lays out. Entries never move (their
 * addresses stay valid until removed or the table is freed), so the caller
 * may keep pointers to them. Memory: one allocation per entry plus the
 * bucket array; the table grows with the number of distinct keys only.
 * Thread-safety: a table is used by one thread at a time. */
#ifndef FXTRACE_TRACE_SUMMARY_TABLE_H_
#define FXTRACE_TRACE_SUMMARY_TABLE_H_

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct summary_entry {
  struct summary_entry* next; /* in its bucket */
  uint64_t hash;
  size_t key_length;
  const char* key;     /* a copy, right after the value */
  max_align_t value[]; /* value_size bytes, zeroed when added */
} summary_entry_t;

typedef struct summary_table {
  summary_entry_t** buckets;
  size_t bucket_count; /* a power of two */
  size_t count;
  size_t value_size;
} summary_table_t;

/* The value of an entry (as void*, so that no cast type-puns the array). */
static inline void* summary_entry__value(const summary_entry_t* e) { return (void*)e->value; }

void summary_table__init(summary_table_t* t, size_t value_size);

/* A fast hash of a byte string. */
uint64_t summary_table__hash(const void* key, size_t length);

/* The entry of `key`, added (value zeroed, *added true) if absent; NULL
 * when out of memory. */
summary_entry_t* summary_table__get(summary_table_t* t, const void* key, size_t length,
                                    bool* added);

/* The entry of `key`, or NULL. */
summary_entry_t* summary_table__find(const summary_table_t* t, const void* key, size_t length);

/* Removes and frees an entry of the table. */
void summary_table__remove(summary_table_t* t, summary_entry_t* e);

/* Every entry, in no particular order, into a new array of t->count
 * pointers (free() it); NULL when out of memory or empty. */
summary_entry_t** summary_table__list(const summary_table_t* t);

/* Frees every entry (not what values point to: free that first). */
void summary_table__free(summary_table_t* t);

#endif /* FXTRACE_TRACE_SUMMARY_TABLE_H_ */
