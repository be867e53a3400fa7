/* The kernel trace provider's engine side: installed in a process that is a
 * trace provider (trace_kernel_provider, or `trace record`'s in-process
 * one), it follows the engine's trace starts and stops and records the
 * enabled kernel:* categories from ftrace into the provider's buffer
 * (docs/kernel-provider.md). */
#ifndef FXTRACE_KERNEL_KPROVIDER_H_
#define FXTRACE_KERNEL_KPROVIDER_H_

#include <stdbool.h>
#include <stddef.h>

#include "trace-provider/provider.h"

/* Registers the engine observer and stop hook. Once per process; 0 or -errno. */
int kprovider__install(void);

/* Stops any kernel trace and removes the observer. */
void kprovider__uninstall(void);

/* A category the kernel provider declares, with its description. */
typedef struct kprovider_category {
  const char* name;
  const char* description;
} kprovider_category_t;

/* The kernel provider's categories, in the order it declares them:
 * kernel:sched, kernel:task, kernel:irq, kernel:SYSTEM/EVENT. Static; needs
 * no tracefs, no root and no installed provider. */
const kprovider_category_t* kprovider__known_categories(size_t* count);

/* Declares every category of kprovider__known_categories() to the manager. */
void kprovider__add_known_categories(trace_provider_t* provider);

/* True when `category` is one the kernel provider acts on (kernel:...). */
bool kprovider__is_kernel_category(const char* category);

/* The name a kernel provider registers with. */
#define KPROVIDER_NAME "trace_kernel_provider"
/* The category that asks for kernel:sched in the legacy-only form
 * (docs/kernel-provider.md); honoured only when named exactly. */
#define KPROVIDER_SCHED_LEGACY "kernel:sched-legacy"

#endif /* FXTRACE_KERNEL_KPROVIDER_H_ */
