/* Records waiting in memory, and their runs (see slab.h). */
#include "ordered/slab.h"

#include <stdlib.h>
#include <string.h>

#include "ordered/entry_sort.h"
#include "ordered/spill.h"

enum { FIRST_CAPACITY = 64 << 10 };

/* What one record costs in the buffer besides its bytes: its entry and the
 * scratch entry the sort needs for it. */
#define ENTRY_COST (2 * sizeof(ordered_entry_t))

static ordered_entry_t* entries(const ordered_slab_t* s) { return (ordered_entry_t*)s->base; }

const ordered_rec_t* ordered__slab_record(const ordered_t* o, uint64_t off) {
  return (const ordered_rec_t*)(o->slab.base + o->slab.capacity - (off & ~ORDERED_ENTRY_UNTIMED));
}

/* Room for `need` bytes: double up to the budget (or exactly `need` when
 * one record is larger), moving the records to the new end. Entries keep
 * their offsets, which count from the end. */
static bool grow(ordered_t* o, size_t need) {
  ordered_slab_t* s = &o->slab;
  size_t cap = s->capacity ? 2 * s->capacity : FIRST_CAPACITY;
  if (cap > o->opt.memory_bytes) cap = o->opt.memory_bytes;
  if (cap < need) cap = need;
  cap = (cap + 7) & ~(size_t)7; /* records stay 8-byte aligned at the end */
  unsigned char* base = realloc(s->base, cap);
  if (!base) return ordered__fail(o, "out of memory");
  memmove(base + cap - s->records, base + s->capacity - s->records, s->records);
  ordered__hold(o, cap - s->capacity, 0);
  s->base = base;
  s->capacity = cap;
  return true;
}

bool ordered__slab_add(ordered_t* o, size_t input, const trace_record_t* r, ordered_rec_t* header) {
  ordered_slab_t* s = &o->slab;
  size_t size = ordered__rec_size(r);
  header->size = (uint32_t)size; /* at most about 1.1 MiB: 32 strings of 32 KiB */
  size_t need = (s->count + 1) * ENTRY_COST + s->records + size;
  if (need > o->opt.memory_bytes && s->count > 0) {
    if (!ordered__slab_spill(o, input)) return false;
    need = ENTRY_COST + size;
  }
  if (need > s->capacity && !grow(o, need)) return false;
  s->records += size;
  ordered__rec_write(s->base + s->capacity - s->records, header, r);
  uint64_t untimed = header->flags & ORDERED_REC_TIMED ? 0 : ORDERED_ENTRY_UNTIMED;
  entries(s)[s->count++] = (ordered_entry_t){header->ns, header->seq, s->records | untimed};
  return true;
}

/* Moves the untimed entries to the start, in file order (*untimed of them),
 * and the timed ones into the free space after the entries, where they are
 * sorted; returns the sorted timed entries (*timed of them). The free space
 * holds at least one entry per record (ENTRY_COST), and once the untimed
 * entries are packed, the rest of the entry array is exactly the scratch the
 * sort needs for the timed ones. */
static ordered_entry_t* sort_run(ordered_t* o, size_t* untimed, size_t* timed) {
  ordered_slab_t* s = &o->slab;
  ordered_entry_t* e = entries(s);
  ordered_entry_t* t = e + s->count;
  size_t u = 0, n = 0;
  for (size_t i = 0; i < s->count; i++) {
    if (!(e[i].off & ORDERED_ENTRY_UNTIMED))
      t[n++] = e[i];
    else
      e[u++] = e[i]; /* u <= i: packs in place */
  }
  *untimed = u;
  *timed = n;
  return ordered__sort_entries(t, e + u, n);
}

/* Appends the records of entries[0, count) to the temporary file as one
 * source. */
static bool write_source(ordered_t* o, const ordered_entry_t* list, size_t count,
                         ordered_source_t* out) {
  *out = (ordered_source_t){.off = ordered__spill_end(o)};
  for (size_t i = 0; i < count; i++) {
    const ordered_rec_t* rec = ordered__slab_record(o, list[i].off);
    if (!ordered__spill_append(o, rec, rec->size)) return false;
  }
  out->len = ordered__spill_end(o) - out->off;
  return true;
}

bool ordered__slab_spill(ordered_t* o, size_t input) {
  ordered_slab_t* s = &o->slab;
  size_t untimed, timed;
  ordered_entry_t* sorted = sort_run(o, &untimed, &timed);
  ordered_source_t src;
  if (untimed && (!write_source(o, entries(s), untimed, &src) ||
                  !ordered__sources_add(o, &o->inputs[input].untimed, &src)))
    return false;
  if (timed && (!write_source(o, sorted, timed, &src) || !ordered__sources_add(o, &o->runs, &src)))
    return false;
  o->stats.runs++;
  s->count = 0;
  s->records = 0;
  return true;
}

bool ordered__slab_keep(ordered_t* o, size_t input) {
  size_t untimed, timed;
  ordered_entry_t* sorted = sort_run(o, &untimed, &timed);
  ordered_source_t src = {.in_memory = true, .entries = entries(&o->slab), .count = untimed};
  if (untimed && !ordered__sources_add(o, &o->inputs[input].untimed, &src)) return false;
  src.entries = sorted;
  src.count = timed;
  return !timed || ordered__sources_add(o, &o->runs, &src);
}

void ordered__slab_free(ordered_t* o) {
  ordered__hold(o, 0, o->slab.capacity);
  free(o->slab.base);
  memset(&o->slab, 0, sizeof(o->slab));
}
