/* Merge passes and the final k-way merge (see merge.h). */
#include "ordered/merge.h"

#include <stdlib.h>
#include <string.h>

#include "ordered/cursor.h"
#include "ordered/spill.h"

/* ---- the heap: cursors by their current record, earliest first ---- */

static bool before(const ordered_cursor_t* a, const ordered_cursor_t* b) {
  return ordered__rec_before(a->rec, b->rec);
}

static void sift_down(ordered_cursor_t** h, size_t n, size_t i) {
  for (;;) {
    size_t l = 2 * i + 1, m = i;
    if (l < n && before(h[l], h[m])) m = l;
    if (l + 1 < n && before(h[l + 1], h[m])) m = l + 1;
    if (m == i) return;
    ordered_cursor_t* t = h[i];
    h[i] = h[m];
    h[m] = t;
    i = m;
  }
}

static void heapify(ordered_cursor_t** h, size_t n) {
  for (size_t i = n / 2; i-- > 0;) sift_down(h, n, i);
}

/* The top cursor advanced: drop it if it ended, and restore the order. */
static void top_advanced(ordered_cursor_t** h, size_t* n) {
  if (!h[0]->rec) h[0] = h[--*n];
  if (*n) sift_down(h, *n, 0);
}

/* Opens a cursor per source; those with a record join the heap. */
static bool open_all(ordered_t* o, const ordered_source_t* src, size_t k, ordered_cursor_t* cur,
                     ordered_cursor_t** heap, size_t* n) {
  *n = 0;
  for (size_t i = 0; i < k; i++) {
    if (!ordered__cursor_open(o, &cur[i], &src[i])) return false;
    if (cur[i].rec) heap[(*n)++] = &cur[i];
  }
  heapify(heap, *n);
  return true;
}

/* ---- passes ---- */

static bool merge_into_file(ordered_t* o, const ordered_source_t* src, size_t k,
                            ordered_source_t* out) {
  ordered_cursor_t* cur = calloc(k, sizeof(*cur));
  ordered_cursor_t** heap = calloc(k, sizeof(*heap));
  bool ok = cur && heap;
  if (!ok) ordered__fail(o, "out of memory");
  size_t n = 0;
  *out = (ordered_source_t){.off = ordered__spill_end(o)};
  if (ok) ok = open_all(o, src, k, cur, heap, &n);
  while (ok && n) {
    const ordered_rec_t* rec = heap[0]->rec;
    ok = ordered__spill_append(o, rec, rec->size) && ordered__cursor_advance(o, heap[0]);
    if (ok) top_advanced(heap, &n);
  }
  out->len = ordered__spill_end(o) - out->off;
  for (size_t i = 0; cur && i < k; i++) ordered__cursor_close(o, &cur[i]);
  free(cur);
  free(heap);
  return ok;
}

bool ordered__merge_passes(ordered_t* o) {
  size_t k = o->opt.fan_in;
  ordered_source_t* picked = malloc(k * sizeof(*picked));
  if (!picked) return ordered__fail(o, "out of memory");
  bool ok = true;
  for (;;) {
    size_t in_file = 0;
    for (size_t i = 0; i < o->runs.count; i++) in_file += !o->runs.items[i].in_memory;
    if (in_file <= k) break;
    /* The oldest k runs in the file leave the list (the others keep their
     * order) and come back as one. */
    size_t taken = 0, kept = 0;
    for (size_t i = 0; i < o->runs.count; i++) {
      if (taken < k && !o->runs.items[i].in_memory)
        picked[taken++] = o->runs.items[i];
      else
        o->runs.items[kept++] = o->runs.items[i];
    }
    o->runs.count = kept;
    ordered_source_t merged;
    if (!(ok =
              merge_into_file(o, picked, k, &merged) && ordered__sources_add(o, &o->runs, &merged)))
      break;
    for (size_t i = 0; i < k; i++) ordered__spill_discard(o, picked[i].off, picked[i].len);
    o->stats.merge_passes++;
  }
  free(picked);
  return ok;
}

/* ---- the final merge ---- */

bool ordered__merge_start(ordered_t* o) {
  size_t k = o->runs.count;
  o->cursors = calloc(k ? k : 1, sizeof(*o->cursors));
  o->heap = calloc(k ? k : 1, sizeof(*o->heap));
  if (!o->cursors || !o->heap) return ordered__fail(o, "out of memory");
  return open_all(o, o->runs.items, k, o->cursors, o->heap, &o->heap_count);
}

/* The input's next untimed record, opening its next stretch as needed. */
static const ordered_rec_t* untimed_head(ordered_t* o, ordered_input_t* in) {
  while (!in->cursor.rec && in->untimed_next < in->untimed.count) {
    ordered__cursor_close(o, &in->cursor);
    if (!ordered__cursor_open(o, &in->cursor, &in->untimed.items[in->untimed_next++])) return NULL;
  }
  return in->cursor.rec;
}

const ordered_rec_t* ordered__merge_next(ordered_t* o) {
  if (o->pending) {
    ordered_cursor_t* p = o->pending;
    o->pending = NULL;
    if (!ordered__cursor_advance(o, p)) return NULL;
    if (o->pending_in_heap) top_advanced(o->heap, &o->heap_count);
  }
  if (o->heap_count) {
    ordered_cursor_t* top = o->heap[0];
    ordered_input_t* in = &o->inputs[top->rec->input];
    const ordered_rec_t* u = untimed_head(o, in);
    if (o->state == ORDERED_FAILED) return NULL;
    /* seqs of one input are distinct: < is "earlier in its file" */
    if (u && u->seq < top->rec->seq) {
      o->pending = &in->cursor;
      o->pending_in_heap = false;
      return u;
    }
    o->pending = top;
    o->pending_in_heap = true;
    return top->rec;
  }
  for (size_t i = 0; i < o->input_count; i++) { /* what follows every timestamped record */
    const ordered_rec_t* u = untimed_head(o, &o->inputs[i]);
    if (o->state == ORDERED_FAILED) return NULL;
    if (u) {
      o->pending = &o->inputs[i].cursor;
      o->pending_in_heap = false;
      return u;
    }
  }
  return NULL;
}

void ordered__merge_end(ordered_t* o) {
  for (size_t i = 0; o->cursors && i < o->runs.count; i++) ordered__cursor_close(o, &o->cursors[i]);
  for (size_t i = 0; i < o->input_count; i++) ordered__cursor_close(o, &o->inputs[i].cursor);
  free(o->cursors);
  free(o->heap);
  o->cursors = NULL;
  o->heap = NULL;
  o->heap_count = 0;
  o->pending = NULL;
}
