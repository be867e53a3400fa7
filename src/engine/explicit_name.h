/* Not part of the public API: names a program gave its own process or
 * threads with TRACE_KERNEL_OBJECT. Readers keep the last name they read
 * for a koid, and an archive ends with the names each process and thread
 * has at the end (/proc's comm, the program's name: docs/manager.md, "The
 * names section"; docs/file-mode.md, "Names"); a name the program chose
 * itself wins over those:
 *   - its kernel-object record carries the bool argument EXPLICIT_NAME_ARG,
 *     which the trace manager's names rank above /proc (src/names);
 *   - the engine remembers the latest EXPLICIT_NAMES_MAX of them, which file
 *     mode's names section takes the same way.
 * Noting one takes no lock and makes no system call (TRACE_KERNEL_OBJECT may
 * run between start and stop, on the record path's rules). */
#ifndef FXTRACE_ENGINE_EXPLICIT_NAME_H_
#define FXTRACE_ENGINE_EXPLICIT_NAME_H_

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define EXPLICIT_NAME_ARG "explicit_name"

enum { EXPLICIT_NAMES_MAX = 256, EXPLICIT_NAME_BYTES = 256 };

/* Remembers `name` for process pid (thread false: koid is pid) or one of
 * its threads; the latest for a koid wins. A note that meets another in its
 * slot is not kept. */
void explicit_name__note(uint64_t pid, bool thread, uint64_t koid, const char* name, size_t length);

/* Calls fn for each name remembered for process pid (a fork child's table
 * also holds its parent's), oldest first. */
void explicit_name__each(uint64_t pid,
                         void (*fn)(void* arg, bool thread, uint64_t koid, const char* name),
                         void* arg);

#endif /* FXTRACE_ENGINE_EXPLICIT_NAME_H_ */
