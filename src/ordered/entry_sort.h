/* Not part of the public API: the sort of a run's entries by (ns, seq), in
 * the ordered view. A natural merge sort: it merges the ascending stretches
 * the input already has, so a run that is in order costs one comparison per
 * entry, and one whose records come from a few interleaved threads costs
 * log2(stretches) passes. Stable, and with no memory of its own: the
 * caller's scratch holds n entries.
 * Thread-safety: pure. */
#ifndef FXTRACE_ORDERED_ENTRY_SORT_H_
#define FXTRACE_ORDERED_ENTRY_SORT_H_

#include <stddef.h>

#include "ordered/ordered_internal.h"

/* Sorts the n entries of `a`, using `scratch` (n entries, not overlapping);
 * returns whichever of the two holds the result. */
ordered_entry_t* ordered__sort_entries(ordered_entry_t* a, ordered_entry_t* scratch, size_t n);

#endif /* FXTRACE_ORDERED_ENTRY_SORT_H_ */
