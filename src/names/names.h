/* Not part of the public API: the names an archive should end with
 * (docs/manager.md, "The names section"). Readers such as Perfetto apply
 * kernel-object records in file order and keep the last name they read for a
 * koid, so the manager ends each archive with one kernel-object record per
 * process and thread it has seen, carrying its right name at the end of the
 * trace. What it learns, from the weakest source to the strongest:
 *
 *   1. kernel-object records a provider wrote about someone else (the kernel
 *      provider's snapshot of /proc, a thread's comm when first seen);
 *   2. kernel-object records a provider wrote about its own process and
 *      threads (the engine names a thread when it first writes);
 *   3. a provider's program, read from /proc when it registered;
 *   4. the kernel's task events (category kernel:task: exec, rename, fork,
 *      exit), the latest timestamp winning;
 *   5. /proc at the end, for the processes and threads still alive;
 *   6. a name a program gave its own process or thread (TRACE_KERNEL_OBJECT:
 *      its record carries the uint64 argument `explicit_name`, when), until
 *      the koid becomes another program or task (an exec, a fork that gives
 *      it out, a second provider of the pid: names__program_changed); it
 *      says nothing surer than rank 2 about a thread's process.
 *
 * A stronger source replaces a weaker one; within one source, the latest
 * (task events and explicit names: the latest time; records: the last in
 * the archive).
 * A process is named after its program (the executable's base name; else
 * argv[0]'s), never after its main thread's comm; a thread after its comm.
 * Used by one thread at a time. */
#ifndef FXTRACE_NAMES_NAMES_H_
#define FXTRACE_NAMES_NAMES_H_

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Names are cut to this many bytes (at a UTF-8 character boundary). */
enum { NAMES_MAX_LENGTH = 255 };

/* How many processes and threads one collection remembers (a busy machine
 * has a few thousand; the section is then at most a few MiB); more are
 * counted (names__stats) and keep the names the archive gave them. */
enum { NAMES_MAX_ENTRIES = 1 << 16 };

enum names_rank {
  NAMES_RANK_OTHERS_RECORD = 1,
  NAMES_RANK_OWN_RECORD = 2,
  NAMES_RANK_PROGRAM = 3,
  NAMES_RANK_TASK_EVENT = 4,
  NAMES_RANK_PROC = 5,
  NAMES_RANK_EXPLICIT = 6,
};

typedef struct names names_t;
/* What one provider's records need to be understood: its string table. */
typedef struct names_source names_source_t;

names_t* names__create(void);
void names__free(names_t* n);

/* A provider (pid: its process) whose records are noted with names__note.
 * NULL when out of memory (its records are then not noted). */
names_source_t* names__source_create(uint64_t pid);
/* A provider in another pid namespace: its koids are not ours, so /proc
 * must not name them (names__refresh_from_proc leaves the koids only such
 * providers named alone), and nothing of it is its own. */
names_source_t* names__source_create_foreign(void);
void names__source_free(names_source_t* s);

/* One whole record of source s, as written to the archive (`bytes` its size
 * field's). Strings are remembered; process and thread kernel-object
 * records and kernel:task instants are learned from. */
void names__note(names_t* n, names_source_t* s, const void* record, size_t bytes);
/* The same for whole records one after the other ([records, records +
 * bytes), framed by their size fields): each noted as names__note would. */
void names__note_run(names_t* n, names_source_t* s, const void* records, size_t bytes);
/* Whether names__note_run could learn anything from a run whose record
 * headers, OR-ed together, give `any` and, AND-ed together, `all`. false
 * when every record is an event with an indexed category and s never
 * defined "kernel:task" (nearly every run of a userspace provider): a
 * caller that reads each header anyway (the archive's framing check) then
 * spares the run a second pass. */
bool names__run_may_teach(const names_source_t* s, uint64_t any, uint64_t all);

/* Learns pid's program from /proc (rank 3): a provider that registered at
 * now_ns (CLOCK_MONOTONIC, the trace clock's base). A second provider of
 * the same pid (an exec, a reused pid, or the same program's provider made
 * anew, whose stop says its names again): the names given before then
 * (rank 6) give way. */
void names__note_program(names_t* n, uint64_t pid, uint64_t now_ns);

/* Learns, for every process and thread known, its name from /proc if it is
 * still alive (rank 5). A process whose program is no longer the one
 * names__note_program read (it exec'd) loses, for itself and its main
 * thread, the names it gave itself before now_ns (CLOCK_MONOTONIC). */
void names__refresh_from_proc(names_t* n, uint64_t now_ns);

/* Sets a name directly (tests, and sources without records). For a thread,
 * process_koid 0 keeps the one known. */
void names__set(names_t* n, bool thread, uint64_t koid, uint64_t process_koid, const char* name,
                size_t length, int rank, uint64_t ts);

/* The name known for a process (thread false) or thread koid, or NULL. */
const char* names__get(const names_t* n, bool thread, uint64_t koid);

typedef struct names_stats {
  uint64_t processes, threads; /* known */
  uint64_t not_kept;           /* past NAMES_MAX_ENTRIES */
} names_stats_t;
names_stats_t names__stats(const names_t* n);

/* The names section: one process kernel-object record per process known,
 * then one thread kernel-object record (with its `process` koid argument)
 * per thread whose process is known; names inline. Handed to `sink` in
 * pieces of whole records; returns false as soon as sink does (true when
 * there is nothing to write). `records` (may be NULL) counts what was
 * written. */
typedef bool (*names_sink_t)(void* arg, const void* data, size_t bytes);
bool names__write_section(const names_t* n, names_sink_t sink, void* arg, uint64_t* records);

/* For /proc readers: bounds `length` bytes of `name` to NAMES_MAX_LENGTH at a
 * character boundary and stops at a NUL or newline; the length kept. */
size_t names__bound(const char* name, size_t length);

#endif /* FXTRACE_NAMES_NAMES_H_ */
