/* Names a program gave its own process and threads (explicit_name.h).
 * Noted from TRACE_KERNEL_OBJECT, which any thread may call between start
 * and stop: no lock, no system call, no allocation. A ring of slots, each
 * taken with a compare-and-swap; a note that finds its slot taken (another
 * note or the reader in it at that moment) is not kept. */
#include "engine/explicit_name.h"

#include <stdlib.h>
#include <string.h>

typedef struct explicit_name {
  uint32_t busy;  /* atomic: a note or the reader is in it */
  uint64_t order; /* when noted (0: empty); the latest for a koid wins */
  bool thread;
  uint64_t pid, koid;
  char name[EXPLICIT_NAME_BYTES];
} explicit_name_t;

static explicit_name_t names[EXPLICIT_NAMES_MAX];
static uint64_t noted; /* atomic */

void explicit_name__note(uint64_t pid, bool thread, uint64_t koid, const char* name,
                         size_t length) {
  if (length >= EXPLICIT_NAME_BYTES) length = EXPLICIT_NAME_BYTES - 1;
  uint64_t order = __atomic_add_fetch(&noted, 1, __ATOMIC_RELAXED);
  explicit_name_t* e = &names[order % EXPLICIT_NAMES_MAX];
  uint32_t free_slot = 0;
  if (!__atomic_compare_exchange_n(&e->busy, &free_slot, 1, false, __ATOMIC_ACQUIRE,
                                   __ATOMIC_RELAXED))
    return;
  e->thread = thread;
  e->pid = pid;
  e->koid = koid;
  memcpy(e->name, name, length);
  e->name[length] = '\0';
  e->order = order;
  __atomic_store_n(&e->busy, 0, __ATOMIC_RELEASE);
}

static int by_order(const void* a, const void* b) {
  uint64_t x = ((const explicit_name_t*)a)->order, y = ((const explicit_name_t*)b)->order;
  return x < y ? -1 : x > y;
}

void explicit_name__each(uint64_t pid,
                         void (*fn)(void* arg, bool thread, uint64_t koid, const char* name),
                         void* arg) {
  explicit_name_t* copy = malloc(sizeof(names));
  if (!copy) return;
  size_t count = 0;
  for (size_t i = 0; i < EXPLICIT_NAMES_MAX; i++) {
    explicit_name_t* e = &names[i];
    uint32_t free_slot = 0;
    if (!__atomic_compare_exchange_n(&e->busy, &free_slot, 1, false, __ATOMIC_ACQUIRE,
                                     __ATOMIC_RELAXED))
      continue; /* a note in it right now */
    if (e->order != 0 && e->pid == pid) copy[count++] = *e;
    __atomic_store_n(&e->busy, 0, __ATOMIC_RELEASE);
  }
  qsort(copy, count, sizeof(copy[0]), by_order); /* oldest first: the latest wins */
  for (size_t i = 0; i < count; i++) fn(arg, copy[i].thread, copy[i].koid, copy[i].name);
  free(copy);
}
