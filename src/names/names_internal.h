/* Not part of the public API: the table behind names.h, shared by its files. */
#ifndef FXTRACE_NAMES_NAMES_INTERNAL_H_
#define FXTRACE_NAMES_NAMES_INTERNAL_H_

#include "names/names.h"

typedef struct names_entry {
  uint64_t koid;
  uint64_t process_koid; /* threads: 0 while unknown */
  uint64_t ts;           /* when the name was given (ranks 4 and 6) */
  /* when the koid last became another program or another task (an exec, a
   * fork that gave it out, a second provider of the pid, /proc's program
   * changed): a name the program gave before that (rank 6) no longer
   * applies */
  uint64_t changed_at;
  uint64_t program_hash; /* processes: of the program names__note_program read; 0: none */
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

/* How far apart the kernel provider's and a program's clocks may be (both
 * CLOCK_MONOTONIC-based, but a TSC line is calibrated per process). */
#define NAMES_CLOCK_MARGIN_NS UINT64_C(10000000)

/* koid became another program or another task at `ts` (see changed_at):
 * names the program gave it (rank 6) before then give way to the sources
 * that follow (their rank becomes NAMES_RANK_OWN_RECORD's); the thread
 * entry of koid (a process's main thread has its pid) remembers the time. */
void names__program_changed(names_t* n, uint64_t koid, uint64_t ts);
/* The same for one entry (NULL: nothing), which it neither creates nor moves. */
void names__entry_changed(names_entry_t* e, uint64_t ts);

/* Marks (thread, koid), if known, as named from our pid namespace. */
void names__mark_local(names_t* n, bool thread, uint64_t koid);

#endif /* FXTRACE_NAMES_NAMES_INTERNAL_H_ */
