/* Natural merge sort of a run's entries (see entry_sort.h). */
#include "ordered/entry_sort.h"

static int before(const ordered_entry_t* a, const ordered_entry_t* b) {
  return a->ns != b->ns ? a->ns < b->ns : a->seq < b->seq;
}

/* The end of the ascending stretch that starts at i. */
static size_t stretch_end(const ordered_entry_t* a, size_t i, size_t n) {
  while (i + 1 < n && !before(&a[i + 1], &a[i])) i++;
  return i + 1;
}

/* Merges a[lo, mid) and a[mid, hi) into out[lo, hi); the left side wins
 * ties, which keeps the sort stable. */
static void merge(const ordered_entry_t* a, ordered_entry_t* out, size_t lo, size_t mid,
                  size_t hi) {
  size_t i = lo, j = mid, k = lo;
  while (i < mid && j < hi) out[k++] = before(&a[j], &a[i]) ? a[j++] : a[i++];
  while (i < mid) out[k++] = a[i++];
  while (j < hi) out[k++] = a[j++];
}

ordered_entry_t* ordered__sort_entries(ordered_entry_t* a, ordered_entry_t* scratch, size_t n) {
  if (n < 2) return a;
  for (;;) {
    /* One pass: merge neighbouring stretches pairwise into the other array.
     * Each pass at least halves the number of stretches. */
    size_t lo = 0, stretches = 0;
    while (lo < n) {
      size_t mid = stretch_end(a, lo, n);
      size_t hi = mid < n ? stretch_end(a, mid, n) : n;
      stretches++;
      if (lo == 0 && hi == n && mid == n) return a; /* one stretch: sorted */
      merge(a, scratch, lo, mid, hi);
      lo = hi;
    }
    ordered_entry_t* t = a;
    a = scratch;
    scratch = t;
    if (stretches <= 1) return a;
  }
}
