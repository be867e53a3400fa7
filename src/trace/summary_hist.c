/* Log-linear histogram (see summary_hist.h). */
#include "trace/summary_hist.h"

#include <stdlib.h>
#include <string.h>

enum { MANTISSA_BITS = 7, SUB_BUCKETS = 1 << MANTISSA_BITS };

/* For v >= 2^(M+1): shift = floor(log2 v) - M, q = v >> shift in
 * [2^M, 2^(M+1)), index = shift * 2^M + q. For v < 2^(M+1) this formula
 * with shift 0 gives index = v, so the two ranges join without a gap. */
uint32_t summary_hist__index(uint64_t v) {
  if (v < 2 * SUB_BUCKETS) return (uint32_t)v;
  unsigned shift = (unsigned)(63 - __builtin_clzll(v)) - MANTISSA_BITS;
  return (uint32_t)(shift * SUB_BUCKETS + (v >> shift));
}

static unsigned index_shift(uint32_t index) {
  return index < 2 * SUB_BUCKETS ? 0 : index / SUB_BUCKETS - 1;
}

uint64_t summary_hist__bucket_low(uint32_t index) {
  unsigned shift = index_shift(index);
  uint64_t q = index - (uint64_t)shift * SUB_BUCKETS;
  return q << shift;
}

uint64_t summary_hist__bucket_width(uint32_t index) { return (uint64_t)1 << index_shift(index); }

bool summary_hist__add(summary_hist_t* h, uint64_t v) {
  uint32_t i = summary_hist__index(v);
  if (i >= h->size) {
    uint32_t size = h->size ? h->size : 512;
    while (size <= i) size *= 2;
    uint64_t* counts = realloc(h->counts, (size_t)size * sizeof(*counts));
    if (!counts) return false;
    memset(counts + h->size, 0, (size_t)(size - h->size) * sizeof(*counts));
    h->counts = counts;
    h->size = size;
  }
  h->counts[i]++;
  if (h->count == 0 || v < h->min) h->min = v;
  if (h->count == 0 || v > h->max) h->max = v;
  h->count++;
  return true;
}

uint64_t summary_hist__percentile(const summary_hist_t* h, unsigned percent) {
  if (h->count == 0) return 0;
  if (percent > 100) percent = 100;
  /* ceil(percent × count / 100) in integers (no rounding surprise), at least 1 */
  unsigned __int128 r = ((unsigned __int128)percent * h->count + 99) / 100;
  uint64_t rank = r < 1 ? 1 : (uint64_t)r;
  uint64_t seen = 0;
  for (uint32_t i = 0; i < h->size; i++) {
    seen += h->counts[i];
    if (seen < rank) continue;
    uint64_t v = summary_hist__bucket_low(i) + (summary_hist__bucket_width(i) - 1) / 2;
    return v < h->min ? h->min : v > h->max ? h->max : v;
  }
  return h->max;
}

void summary_hist__free(summary_hist_t* h) {
  free(h->counts);
  memset(h, 0, sizeof(*h));
}
