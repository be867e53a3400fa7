/* Not part of the public API: names a program gave its own process or
 * threads with TRACE_KERNEL_OBJECT. Readers keep the last name they read
 * for a koid, and an archive ends with the names each process and thread
 * has at the end (/proc's comm, the program's name: docs/manager.md, "The
 * names section"; docs/file-mode.md, "Names"); a name the program chose
 * itself wins over those:
 *   - its kernel-object record carries the uint64 argument EXPLICIT_NAME_ARG,
 *     the time (trace clock, ns) it was given, which the trace manager's
 *     names rank above /proc until the process runs another program or
 *     the koid is given to another task (src/names);
 *   - the engine remembers the latest name of up to EXPLICIT_NAMES_MAX
 *     koids: file mode's names section takes them the same way, and each
 *     stop writes them again (stop_names.h), so a circular buffer that
 *     wrapped past the record still ends with them.
 * Noting one takes no lock and makes no system call (TRACE_KERNEL_OBJECT may
 * run between start and stop, on the record path's rules). */
#ifndef FXTRACE_ENGINE_EXPLICIT_NAME_H_
#define FXTRACE_ENGINE_EXPLICIT_NAME_H_

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define EXPLICIT_NAME_ARG "explicit_name"

enum { EXPLICIT_NAMES_MAX = 256, EXPLICIT_NAME_BYTES = 256 };

/* Remembers `name`, given at `ns`, for process pid (thread false: koid is
 * pid) or one of its threads. A koid keeps one slot, its latest name: a
 * thread that names itself over and over does not push out the others.
 * When every slot its koid may take holds another koid, one gives way: a
 * thread that ended, else another thread, else the process or its main
 * thread, the oldest first; a note that finds all of them in use (other
 * notes, or the reader) a few times running is not kept. */
void explicit_name__note(uint64_t pid, bool thread, uint64_t koid, const char* name, size_t length,
                         uint64_t ns);

/* This process's pid, read at load and in a fork child (no system call). */
uint64_t explicit_name__own_pid(void);

/* Thread tid of process pid ended at `ns` (its exit, seen by the engine):
 * its name is not written into traces that start later, and gives way
 * first. */
void explicit_name__ended(uint64_t pid, uint64_t tid, uint64_t ns);

/* Calls fn for each name remembered for process pid (a fork child's table
 * also holds its parent's), oldest first, but for threads that ended
 * before since_ns (a trace's start): the name, when it was given, and
 * when its thread ended (0: running, or not known to have ended). Not on
 * the record path: it allocates. */
typedef void (*explicit_name_fn)(void* arg, bool thread, uint64_t koid, const char* name,
                                 uint64_t ns, uint64_t ended_ns);
void explicit_name__each(uint64_t pid, uint64_t since_ns, explicit_name_fn fn, void* arg);

#endif /* FXTRACE_ENGINE_EXPLICIT_NAME_H_ */
