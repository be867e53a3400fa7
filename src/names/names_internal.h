/* Not part of the public API: the table behind names.h, shared by its files. */
#ifndef FXTRACE_NAMES_NAMES_INTERNAL_H_
#define FXTRACE_NAMES_NAMES_INTERNAL_H_

#include "names/names.h"

typedef struct names_entry {
  uint64_t koid;
  uint64_t process_koid; /* threads: 0 while unknown */
  uint64_t ts;           /* of the task event that gave the name (rank 4) */
  char* name;            /* NUL-terminated, at most NAMES_MAX_LENGTH bytes */
  uint8_t used, thread, rank;
  uint8_t local; /* named by a provider of our pid namespace (or /proc) */
} names_entry_t;

struct names {
  names_entry_t* slots;
  size_t capacity; /* a power of two */
  size_t used;
  uint64_t processes, threads, not_kept;
};

/* The entry of (thread, koid), created without a name when new (NULL past
 * NAMES_MAX_ENTRIES or out of memory; counted in not_kept). */
names_entry_t* names__entry(names_t* n, bool thread, uint64_t koid);

/* Marks (thread, koid), if known, as named from our pid namespace. */
void names__mark_local(names_t* n, bool thread, uint64_t koid);

#endif /* FXTRACE_NAMES_NAMES_INTERNAL_H_ */
