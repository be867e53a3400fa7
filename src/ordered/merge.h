/* Not part of the public API: the ordered view's merges.
 *
 * Passes: while more than fan_in runs are in the temporary file, the oldest
 * fan_in are merged into one new run at the file's end (their space is then
 * given back), so the final merge reads at most fan_in runs from the file
 * (plus the run left in memory).
 *
 * The final merge is a k-way merge of every run by (ns, input, seq) through
 * a binary heap of cursors, with each input's untimed records put in place:
 * before a timestamped record of input i comes out, every untimed record of
 * input i that precedes it in file order does. An untimed record therefore
 * comes out right before the first record of its input that follows it in
 * file order, which is the place a sort with, as its key, the smallest
 * timestamp after it in the file would give it; the untimed records left
 * after an input's last timestamped record come out at the very end.
 * Thread-safety: as ordered.h. */
#ifndef FXTRACE_ORDERED_MERGE_H_
#define FXTRACE_ORDERED_MERGE_H_

#include <stdbool.h>

#include "ordered/ordered_internal.h"

/* Merges runs in the temporary file until at most fan_in are there. */
bool ordered__merge_passes(ordered_t* o);

/* Opens the final merge. */
bool ordered__merge_start(ordered_t* o);

/* The next record of the final merge, valid until the next call; NULL at
 * the end or when the view failed (o->state says which). */
const ordered_rec_t* ordered__merge_next(ordered_t* o);

/* Closes the final merge's cursors. */
void ordered__merge_end(ordered_t* o);

#endif /* FXTRACE_ORDERED_MERGE_H_ */
