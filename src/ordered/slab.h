/* Not part of the public API: the memory the ordered view's records wait in
 * while an input is read, and its sorted runs. Records (in their stored
 * form) fill the buffer from its end, their sort entries from its start;
 * each record also reserves one entry of free space between the two for the
 * sort's scratch. The buffer grows by doubling up to options.memory_bytes;
 * a record that would take it past that first sends the waiting records to
 * the temporary file as one run (a record larger than the whole budget gets
 * a buffer of its own size). All records in the buffer belong to one input.
 *
 * A run has two parts: the timestamped records sorted by (ns, seq), which
 * join the view's runs, and the untimed ones in file order, which join
 * their input's untimed stretches (merge.c puts them in place).
 * Thread-safety: as ordered.h. */
#ifndef FXTRACE_ORDERED_SLAB_H_
#define FXTRACE_ORDERED_SLAB_H_

#include <stdbool.h>
#include <stddef.h>

#include "ordered/ordered_internal.h"

/* Stores record r of input `input` with the given header (its size is set
 * here), first writing the waiting records as a run when they would not
 * leave room. false: the view failed. */
bool ordered__slab_add(ordered_t* o, size_t input, const trace_record_t* r, ordered_rec_t* header);

/* Writes the waiting records (all of `input`) as one run to the temporary
 * file and empties the buffer. */
bool ordered__slab_spill(ordered_t* o, size_t input);

/* The last run stays in memory: sorted in place, its two parts added as
 * in-memory sources. Nothing may be added afterwards. */
bool ordered__slab_keep(ordered_t* o, size_t input);

/* The stored record of an entry's `off`. */
const ordered_rec_t* ordered__slab_record(const ordered_t* o, uint64_t off);

void ordered__slab_free(ordered_t* o);

#endif /* FXTRACE_ORDERED_SLAB_H_ */
