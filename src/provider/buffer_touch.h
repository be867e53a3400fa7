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

/* How far ahead of the writers provider__touch_ahead resumes once they have
 * caught up with it: writers at full speed move about 1-2 MiB while a 1 MiB
 * batch is touched (3-6 GB/s against 1.3-1.9 µs per page on the development
 * VMs). Measured with 2 threads through a 4 GiB file-mode buffer, 2 MiB left
 * the writers the fewest page faults (64 and 512 MiB: more). */
#define PROVIDER_TOUCH_LEAD_BYTES ((size_t)2 << 20)

/* Writes one word of every 4 KiB page of [base + from, base + to) with an
 * atomic OR of zero: a real write that never changes the contents, so it is
 * safe while the engine's writers use the same pages. Stops early once
 * *stop (when not NULL) reads non-zero. The pages must be allocated (a
 * memfd or an fallocated file): touching allocates nothing new. */
void provider__touch_pages(void* base, size_t from, size_t to, const int* stop);

/* The background half of a large buffer's touch (file mode, up to 4 GiB):
 * touches [from, size) of a buffer whose engine has started (its header is
 * initialized), never on the record path. The rolling segments go first, in
 * the order writers fill them, and the touch stays ahead of the writers:
 * once per 1 MiB batch it reads the header's allocation word (relaxed; a
 * hint, so a wrong value costs only useless touches), and when the writers
 * have reached its position it resumes PROVIDER_TOUCH_LEAD_BYTES ahead of them, since the pages
 * they passed are written already (and touching next to them only contends
 * with their page faults). Stops once the writers have been through every
 * segment, then touches what lies beyond the rolling segments. Stops early
 * once *stop reads non-zero. */
void provider__touch_ahead(void* base, size_t size, size_t from, const int* stop);

#endif /* FXTRACE_PROVIDER_BUFFER_TOUCH_H_ */
