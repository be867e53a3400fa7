/* Not part of the public API: the thread names `trace dump` and `trace convert` have seen (thread
 * kernel-object records), so a context switch can show who ran: kernel
 * provider archives name every thread before its first switch. */
#ifndef FXTRACE_TRACE_THREAD_NAMES_H_
#define FXTRACE_TRACE_THREAD_NAMES_H_

#include <stdint.h>
#include <stdio.h>

#include "trace-reader/reader.h"

/* Remembers the name of a thread kernel-object record; other records are ignored. One with a
 * uint64 argument `name_at` (an engine's name at a stop, src/engine/stop_names.h) also gives
 * the thread that name at that time (trace clock ns), as a task event does. */
void thread_names__note(const trace_record_t* r);

/* For a context switch: ` out-name="..." out-state=blocked in-name="..."`
 * (names only when known). */
void thread_names__switch(FILE* out, const trace_record_t* r);

/* Remembers the name a kernel:task instant (task_rename, sched_process_exec, _fork, _exit: the
 * kernel provider's, docs/kernel-provider.md) gives a thread at `ns`; other records are
 * ignored. */
void thread_names__note_task(const trace_record_t* r, uint64_t ns);

/* The name of a thread koid at `ns`, once the whole archive has been noted: the one the latest
 * task event or name at a stop at or before `ns` gave it; before its first rename, the name it
 * had then; else (no such name before `ns`) the last name the archive gives it (the names
 * section's, docs/manager.md). NULL if unknown. */
const char* thread_names__at(uint64_t koid, uint64_t ns);

/* The last name recorded for a thread koid, or NULL. */
const char* thread_names__get(uint64_t koid);

void thread_names__free(void);

#endif /* FXTRACE_TRACE_THREAD_NAMES_H_ */
