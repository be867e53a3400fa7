/* Not part of the public API: the kernel provider's FXT side. Turns the
 * converted ftrace events into records through the engine (the provider's
 * buffer, any buffering mode), keeps every thread that appears named, and
 * writes the /proc snapshot and the format records of generic events.
 * The mapping is documented in docs/kernel-provider.md. */
#ifndef FXTRACE_KERNEL_KWRITE_H_
#define FXTRACE_KERNEL_KWRITE_H_

#include <stdbool.h>
#include <stdint.h>

#include "kernel/kconvert.h"
#include "kernel/kevents.h"
#include "kernel/kthreads.h"
#include "trace-engine/context.h"
#include "trace-engine/instrumentation.h"

/* The per-CPU IRQ tracks: pseudo-threads of one artificial process (bit 63
 * set, as FXT's artificial koids): process KIRQ_PROCESS_KOID "kernel irq",
 * thread KIRQ_PROCESS_KOID + 1 + cpu "irq/cpuN". The low 32 bits (0x7f000000
 * and up) lie above Linux's pid_max (2^22), so readers that keep only 32 bits
 * of a koid (Perfetto) do not merge them with real processes and threads. */
#define KIRQ_PROCESS_KOID ((UINT64_C(1) << 63) | UINT64_C(0x7f000000))

enum { KIRQ_DEPTH = 4 };

typedef struct kirq_cpu {
  bool named;
  unsigned depth;
  char names[KIRQ_DEPTH][32];
  uint64_t name_lengths[KIRQ_DEPTH];
} kirq_cpu_t;

/* What one session asked of the kernel provider (its kernel:* categories). */
typedef struct kwcats {
  bool sched; /* kernel:sched or kernel:sched-legacy */
  bool legacy_sched;
  bool task;
  bool irq;
  /* the generic events it names, "SYSTEM/EVENT" (kernel:SYSTEM/EVENT and
   * kernel:SYSTEM/ * expanded against tracefs) */
  char** generic;
  size_t generic_count;
} kwcats_t;

/* How a session records the events of one table descriptor. */
enum { KWMODE_UNKNOWN = 0, KWMODE_NONE, KWMODE_NATIVE, KWMODE_GENERIC };

/* One session's view of one table descriptor: its mode and the string refs
 * of its records in that session's string table (registered on first use). */
typedef struct kwdesc {
  uint8_t mode;
  bool refs;
  trace_string_ref_t category_ref, name_ref, field_refs[KEV_MAX_FIELDS];
} kwdesc_t;

/* The writer's state of one session: everything that names something in
 * that session's archive, so that each archive reads on its own (a session
 * started later gets its own snapshot, names, formats and IRQ tracks). */
typedef struct kwsession {
  unsigned session; /* the engine session */
  kwcats_t cats;
  trace_context_t* ctx; /* held while a page is written; NULL: not writing */
  /* argument names of the scheduling records, registered on first use
   * (valid for the session: this state lives as long as it takes part) */
  bool sched_refs;
  trace_string_ref_t outgoing_weight_ref, incoming_weight_ref, waker_ref;
  kthreads_t threads;
  kirq_cpu_t* irq;
  /* per CPU: the thread the last context switch this session recorded
   * brought in (-1: none yet). Each CPU's events arrive in the order the
   * kernel recorded them, so a switch whose outgoing thread is another one
   * shows that the kernel did not record a switch between them (a lane
   * gap: counted and written) */
  int64_t* lane;
  uint64_t lane_gaps;
  kwdesc_t* descs; /* by table index, grown as the table grows */
  size_t desc_count;
  uint64_t written, truncated;
} kwsession_t;

/* The writer: one shared event table, one kwsession per session taking part
 * (at most TRACE_ENGINE_MAX_SESSIONS). Each converted event is written once
 * into every session whose categories enable it. Used by the reader thread
 * only (and by whoever holds the reader's lock while it is paused). */
typedef struct kwriter {
  kev_table_t* table;
  bool tsc; /* ftrace on x86-tsc: convert with the engine's line */
  uint32_t cpus;
  kwsession_t* sessions[TRACE_ENGINE_MAX_SESSIONS]; /* by engine session; NULL: none */
  uint64_t written, truncated, lane_gaps;           /* over every session */
  kbirths_t births;    /* the tasks born during the trace, for every session's kthreads */
  bool births_scanned; /* the page being converted was read ahead: its births are noted */
} kwriter_t;

/* 0, or -1 when out of memory. */
int kwriter__init(kwriter_t* w, kev_table_t* table, bool tsc, uint32_t cpus);
void kwriter__free(kwriter_t* w); /* frees every session left too */

/* How a session with categories c records d's events (KWMODE_NONE,
 * _NATIVE or _GENERIC): kernel:sched (kernel:task, kernel:irq) wins over
 * naming one of its events as kernel:SYSTEM/EVENT, as with one session. */
uint8_t kwcats__mode(const kwcats_t* c, const kev_desc_t* d);

/* A new session's writer state, with its categories (moved in: freed with
 * it); NULL when out of memory. Added with kwriter__add_session(). */
kwsession_t* kwsession__create(unsigned session, kwcats_t* cats, uint32_t cpus);
void kwsession__free(kwsession_t* s);
void kwcats__free(kwcats_t* c);

/* Installs s (its slot must be free), then writes its /proc snapshot and
 * the format records of the events it records, through its own context:
 * its archive's names and formats. False (s not installed) when its
 * session is not started any more. */
bool kwriter__add_session(kwriter_t* w, kwsession_t* s, const char* tracing_dir);
/* Takes session `session` out and returns its state (NULL if none). */
kwsession_t* kwriter__remove_session(kwriter_t* w, unsigned session);

/* kconv_sink_t: writes one event into every session that records it
 * (between kwriter__begin and kwriter__end). */
void kwriter__event(void* w, const kconv_event_t* event);

/* Acquire / release each session's engine context around a batch; false
 * when none is tracing. */
bool kwriter__begin(kwriter_t* w);
void kwriter__end(kwriter_t* w);

#endif /* FXTRACE_KERNEL_KWRITE_H_ */
