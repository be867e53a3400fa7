/* Writing a trace buffer's pages once before the records do (issue 20, item 3).
 *
 * On some virtual machines (this project's CI kind among them: a PVM guest)
 * the first write by a process through each page of a mapping is expensive
 * even when the page is already allocated and mapped writable
 * (MAP_POPULATE, MADV_POPULATE_WRITE): most likely the hypervisor fills its
 * shadow page tables on a process's first real write. Measured here: a 2-int
 * instant costs 35 ns through a freshly mapped buffer and 18 ns through one
 * the process has written once, in-process buffer or shared memfd alike. So
 * the provider writes every page of its mapping once itself, at about 1.4 µs a
 * page where the effect exists (64 MiB: under 0.1 s) and far less elsewhere. */
#ifndef FXTRACE_PROVIDER_BUFFER_TOUCH_H_
#define FXTRACE_PROVIDER_BUFFER_TOUCH_H_

#include <stddef.h>

/* Writes one word of every 4 KiB page of [base + from, base + to) with an
 * atomic OR of zero: a real write that never changes the contents, so it is
 * safe while the engine's writers use the same pages. Stops early once
 * *stop (when not NULL) reads non-zero. The pages must be allocated (a
 * memfd or an fallocated file): touching allocates nothing new. */
void provider__touch_pages(void* base, size_t from, size_t to, const int* stop);

#endif /* FXTRACE_PROVIDER_BUFFER_TOUCH_H_ */
