/* Not part of the public API: the kernel provider's tracefs instance
 * (`instances/fxtrace-PID`): mounting tracefs, creating and removing the
 * instance, stale instances of dead providers, clock, buffer size, events,
 * and the per-CPU loss counters. Every tracefs access goes through libtracefs. */
#ifndef FXTRACE_KERNEL_KTRACEFS_H_
#define FXTRACE_KERNEL_KTRACEFS_H_

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct tracefs_instance;

/* Whether this process can trace the kernel: root (CAP_SYS_ADMIN in
 * practice) and a tracefs that is mounted or can be mounted. On false,
 * `reason` holds a short cause ("root", "tracefs") for the warning. */
bool ktracefs__available(char* reason, size_t reason_size);

/* Mounts tracefs at /sys/kernel/tracing if no tracefs is mounted. 0 or -errno. */
int ktracefs__ensure_mounted(void);

/* Whether a tracefs is mounted (never mounts one). */
bool ktracefs__is_mounted(void);

/* Removes every instances/fxtrace-PID whose PID is not a live process (a
 * provider that crashed). Returns how many were removed. */
int ktracefs__remove_stale(void);

/* Creates instances/fxtrace-<getpid()> (removing a leftover of the same
 * name first), tracing off, on `clock` ("mono" or "x86-tsc"), with
 * buffer_kb per CPU (0: the kernel's default). NULL with a message in error. */
struct tracefs_instance* ktracefs__create(const char* clock, size_t buffer_kb, char* error,
                                          size_t error_size);

/* Disables everything and removes the instance; frees it. */
void ktracefs__destroy(struct tracefs_instance* instance);

/* Frees the handle only: the instance is someone else's to remove (a
 * signal handler's, kcleanup.h). */
void ktracefs__forget(struct tracefs_instance* instance);

/* Enables system/event in the instance. 0 or -1. */
int ktracefs__enable(struct tracefs_instance* instance, const char* system, const char* event);

/* Disables system/event in the instance (no session needs it any more). 0 or -1. */
int ktracefs__disable(struct tracefs_instance* instance, const char* system, const char* event);

/* tracing_on. 0 or -1. */
int ktracefs__set_on(struct tracefs_instance* instance, bool on);

/* Sum over CPUs of per_cpu/cpuN/stats "overrun" and "dropped events": the
 * events the kernel lost before anyone could read them. */
uint64_t ktracefs__lost_events(struct tracefs_instance* instance, int cpus);

/* The clock the kernel provider puts ftrace on: "x86-tsc" when the engine's
 * clock source is the TSC, else "mono" (docs/clock.md). */
const char* ktracefs__clock_for_engine(void);

#endif /* FXTRACE_KERNEL_KTRACEFS_H_ */
