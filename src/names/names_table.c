/* The names table (names.h): (process or thread, koid) -> the strongest
 * name known, open addressing. */
#include <stdlib.h>
#include <string.h>

#include "names/names_internal.h"

names_t* names__create(void) { return calloc(1, sizeof(names_t)); }

void names__free(names_t* n) {
  if (!n) return;
  for (size_t i = 0; i < n->capacity; i++) free(n->slots[i].name);
  free(n->slots);
  free(n);
}

static size_t slot_of(bool thread, uint64_t koid, size_t capacity) {
  uint64_t key = koid * 2 + (thread ? 1 : 0);
  return (size_t)((key * UINT64_C(0x9E3779B97F4A7C15)) >> 24) & (capacity - 1);
}

names_entry_t* names__lookup(const names_t* n, bool thread, uint64_t koid) {
  if (!n->capacity) return NULL;
  size_t j = slot_of(thread, koid, n->capacity);
  while (n->slots[j].used) {
    if (n->slots[j].koid == koid && n->slots[j].thread == thread) return &n->slots[j];
    j = (j + 1) & (n->capacity - 1);
  }
  return NULL;
}

static bool grow(names_t* n) {
  size_t capacity = n->capacity ? n->capacity * 2 : 512;
  names_entry_t* slots = calloc(capacity, sizeof(*slots));
  if (!slots) return false;
  for (size_t i = 0; i < n->capacity; i++) {
    if (!n->slots[i].used) continue;
    size_t j = slot_of(n->slots[i].thread, n->slots[i].koid, capacity);
    while (slots[j].used) j = (j + 1) & (capacity - 1);
    slots[j] = n->slots[i];
  }
  free(n->slots);
  n->slots = slots;
  n->capacity = capacity;
  return true;
}

names_entry_t* names__entry(names_t* n, bool thread, uint64_t koid) {
  names_entry_t* e = names__lookup(n, thread, koid);
  if (e) return e;
  if (n->used >= NAMES_MAX_ENTRIES || ((n->used + 1) * 2 > n->capacity && !grow(n))) {
    n->not_kept++;
    return NULL;
  }
  size_t j = slot_of(thread, koid, n->capacity);
  while (n->slots[j].used) j = (j + 1) & (n->capacity - 1);
  e = &n->slots[j];
  memset(e, 0, sizeof(*e));
  e->used = 1;
  e->thread = thread;
  e->koid = koid;
  n->used++;
  if (thread)
    n->threads++;
  else
    n->processes++;
  return e;
}

size_t names__bound(const char* name, size_t length) {
  size_t kept = 0;
  while (kept < length && name[kept] != '\0' && name[kept] != '\n') kept++;
  if (kept > NAMES_MAX_LENGTH) {
    kept = NAMES_MAX_LENGTH;
    /* not inside a UTF-8 sequence: back off its continuation bytes, then
     * its lead byte */
    while (kept > 0 && ((unsigned char)name[kept] & 0xc0) == 0x80) kept--;
  }
  return kept;
}

static uint64_t changed_at(const names_t* n, bool thread, const names_entry_t* e) {
  if (thread) return e->changed_at;
  const names_entry_t* main_thread = names__lookup(n, true, e->koid);
  uint64_t t = main_thread ? main_thread->changed_at : 0;
  return e->changed_at > t ? e->changed_at : t;
}

void names__entry_changed(names_entry_t* e, uint64_t ts) {
  if (!e) return;
  if (ts > e->changed_at) e->changed_at = ts;
  if (e->rank == NAMES_RANK_EXPLICIT && e->ts < ts) e->rank = NAMES_RANK_OWN_RECORD;
}

void names__program_changed(names_t* n, uint64_t koid, uint64_t ts) {
  if (koid == 0) return;
  names__entry_changed(names__entry(n, true, koid), ts); /* first: it may grow the table */
  names__entry_changed(names__lookup(n, false, koid), ts);
}

void names__set(names_t* n, bool thread, uint64_t koid, uint64_t process_koid, const char* name,
                size_t length, int rank, uint64_t ts) {
  if (koid == 0) return;
  names_entry_t* e = names__entry(n, thread, koid);
  if (!e) return;
  /* a provider of ours about itself, /proc, the kernel: our pid namespace */
  if (rank >= NAMES_RANK_OWN_RECORD) e->local = 1;
  /* a name the program gave before the koid became another program or
   * task: only as strong as any record of its own */
  if (rank == NAMES_RANK_EXPLICIT && ts < changed_at(n, thread, e)) rank = NAMES_RANK_OWN_RECORD;
  /* its process, as its name: from the strongest source (a kernel provider
   * that guessed a gone thread's process must not move a provider's own);
   * a program's explicit name says nothing surer about a thread's process
   * than its other records (it may name any tid) */
  int process_rank = rank == NAMES_RANK_EXPLICIT ? NAMES_RANK_OWN_RECORD : rank;
  if (thread && process_koid != 0 && process_rank >= e->process_rank) {
    e->process_koid = process_koid;
    e->process_rank = (uint8_t)process_rank;
  }
  length = names__bound(name, length);
  if (length == 0) return; /* nothing to name it with */
  /* a stronger source wins; within a source, the latest (by time where
   * names have one, else in the order read) */
  bool timed = rank == NAMES_RANK_TASK_EVENT || rank == NAMES_RANK_EXPLICIT;
  if (rank < e->rank || (rank == e->rank && timed && ts < e->ts)) return;
  char* copy = malloc(length + 1);
  if (!copy) return;
  memcpy(copy, name, length);
  copy[length] = '\0';
  free(e->name);
  e->name = copy;
  e->rank = (uint8_t)rank;
  e->ts = ts;
}

void names__mark_local(names_t* n, bool thread, uint64_t koid) {
  names_entry_t* e = names__lookup(n, thread, koid);
  if (e) e->local = 1;
}

const char* names__get(const names_t* n, bool thread, uint64_t koid) {
  const names_entry_t* e = names__lookup(n, thread, koid);
  return e ? e->name : NULL;
}

names_stats_t names__stats(const names_t* n) {
  names_stats_t s = {n->processes, n->threads, n->not_kept};
  return s;
}
