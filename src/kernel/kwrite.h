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
#include "kernel/kthreads.h"
#include "trace-engine/context.h"

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

typedef struct kwriter {
  kev_table_t* table;
  bool tsc; /* ftrace on x86-tsc: convert with the engine's line */
  /* kernel:sched-legacy: legacy context switches (sub-type 0) and wakeups as
   * instant events, for readers that know only the legacy layout; else
   * context switches (sub-type 1) with weights and wakeup records (sub-type
   * 2) with the waker (docs/kernel-provider.md) */
  bool legacy_sched;
  /* argument names of the scheduling records, registered on first use
   * (valid for the trace: the writer lives as long as the session) */
  bool sched_refs;
  trace_string_ref_t outgoing_weight_ref, incoming_weight_ref, waker_ref;
  kthreads_t threads;
  kirq_cpu_t* irq;
  /* per CPU: the thread the last context switch brought in (-1: none yet).
   * Each CPU's events arrive in the order the kernel recorded them, so a
   * switch whose outgoing thread is another one shows that the kernel did
   * not record a switch between them (a lane gap: counted and written) */
  int64_t* lane;
  uint64_t lane_gaps;
  uint32_t cpus;
  trace_context_t* ctx; /* held while a page is written */
  uint64_t written, truncated;
} kwriter_t;

int kwriter__init(kwriter_t* w, kev_table_t* table, bool tsc, bool legacy_sched, uint32_t cpus);
void kwriter__free(kwriter_t* w);

/* kconv_sink_t: writes one event (w->ctx must be held). */
void kwriter__event(void* w, const kconv_event_t* event);

/* One process and one thread kernel-object record per live thread in /proc. */
void kwriter__snapshot(kwriter_t* w);

/* The format record of each generic (and kernel:task) event in the table
 * (docs/event-formats.md), in the durable buffer. */
void kwriter__formats(kwriter_t* w, const char* tracing_dir);

/* Acquire / release the engine context around a batch; false when not tracing. */
bool kwriter__begin(kwriter_t* w);
void kwriter__end(kwriter_t* w);

#endif /* FXTRACE_KERNEL_KWRITE_H_ */
