/* Not part of the public API: the thread names `trace dump` and `trace convert` have seen (thread
 * kernel-object records), so a context switch can show who ran: kernel
 * provider archives name every thread before its first switch. */
#ifndef FXTRACE_TRACE_THREAD_NAMES_H_
#define FXTRACE_TRACE_THREAD_NAMES_H_

#include <stdint.h>
#include <stdio.h>

#include "trace-reader/reader.h"

/* Remembers the name of a thread kernel-object record; other records are ignored. */
void thread_names__note(const trace_record_t* r);

/* For a context switch: ` out-name="..." out-state=blocked in-name="..."`
 * (names only when known). */
void thread_names__switch(FILE* out, const trace_record_t* r);

/* The last name recorded for a thread koid, or NULL. */
const char* thread_names__get(uint64_t koid);

void thread_names__free(void);

#endif /* FXTRACE_TRACE_THREAD_NAMES_H_ */
