/* Not part of the public API: the table behind names.h, shared by its files. */
#ifndef FXTRACE_NAMES_NAMES_INTERNAL_H_
#define FXTRACE_NAMES_NAMES_INTERNAL_H_

#include "names/names.h"

typedef struct names_entry {
  uint64_t koid;
  uint64_t process_koid; /* threads: 0 while unknown */
  uint64_t ts;           /* of the task event that gave the name (rank 4) */
  uint64_t start_time;   /* processes: /proc/PID/stat's starttime when its program was
                          * read (names__note_program); 0: unknown */
  char* name;            /* NUL-terminated, at most NAMES_MAX_LENGTH bytes */
  uint8_t used, thread, rank;
  uint8_t process_rank; /* threads: the rank of the source that gave process_koid */
  uint8_t local;        /* named by a provider of our pid namespace (or /proc) */
  /* processes, during names__refresh_from_proc: checked, and /proc/PID is
   * still this process (not a reused pid) */
  uint8_t checked, same;
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

/* The entry of (thread, koid), or NULL. */
names_entry_t* names__lookup(const names_t* n, bool thread, uint64_t koid);

/* Marks (thread, koid), if known, as named from our pid namespace. */
void names__mark_local(names_t* n, bool thread, uint64_t koid);

#endif /* FXTRACE_NAMES_NAMES_INTERNAL_H_ */
