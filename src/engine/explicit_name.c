/* Names a program gave its own process and threads (explicit_name.h).
 * Noted from TRACE_KERNEL_OBJECT, which any thread may call between start
 * and stop: no lock, no system call, no allocation. The slots form sets of
 * EXPLICIT_NAME_WAYS, a koid always in the same set; each slot is taken
 * with a compare-and-swap that never waits (a slot in use is passed over),
 * and its fields are read and written only while taken. */
#include "engine/explicit_name.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

enum {
  EXPLICIT_NAME_WAYS = 4,
  EXPLICIT_NAME_SETS = EXPLICIT_NAMES_MAX / EXPLICIT_NAME_WAYS,
  EXPLICIT_NAME_TRIES = 64
};

typedef struct explicit_name {
  uint32_t busy;  /* atomic: a note or the reader is in it */
  uint64_t order; /* when noted (0: empty); the latest for a koid wins */
  bool thread;
  uint64_t pid, koid, ns;
  uint64_t ended_ns; /* threads: when it ended (0: running, or not known to have ended) */
  char name[EXPLICIT_NAME_BYTES];
} explicit_name_t;

static explicit_name_t names[EXPLICIT_NAMES_MAX];
static uint64_t noted;   /* atomic */
static uint64_t own_pid; /* written at load and in a fork child only */

static void set_own_pid(void) { own_pid = (uint64_t)getpid(); }

__attribute__((constructor)) static void explicit_name_init(void) {
  set_own_pid();
  pthread_atfork(NULL, NULL, set_own_pid);
}

uint64_t explicit_name__own_pid(void) { return own_pid; }

static bool take(explicit_name_t* e) {
  uint32_t free_slot = 0;
  return __atomic_compare_exchange_n(&e->busy, &free_slot, 1, false, __ATOMIC_ACQUIRE,
                                     __ATOMIC_RELAXED);
}

static void give_back(explicit_name_t* e) { __atomic_store_n(&e->busy, 0, __ATOMIC_RELEASE); }

static explicit_name_t* set_of(bool thread, uint64_t koid) {
  uint64_t key = koid * 2 + thread;
  return &names[((key * UINT64_C(0x9E3779B97F4A7C15)) >> 40) % EXPLICIT_NAME_SETS *
                EXPLICIT_NAME_WAYS];
}

/* Which held slot a note takes: the koid's own, else an empty one, else
 * the one whose loss matters least (a thread that ended, then another
 * thread, then the process or its main thread: named once at the start,
 * they are the oldest), the oldest first within each. */
static int keep_rank(const explicit_name_t* e, uint64_t pid, bool thread, uint64_t koid) {
  if (e->order == 0) return 4;
  if (e->pid == pid && e->thread == thread && e->koid == koid) return 5;
  if (e->thread && e->ended_ns != 0) return 3;
  if (e->thread && e->koid != e->pid) return 2;
  return 1;
}

void explicit_name__note(uint64_t pid, bool thread, uint64_t koid, const char* name, size_t length,
                         uint64_t ns) {
  if (length >= EXPLICIT_NAME_BYTES) length = EXPLICIT_NAME_BYTES - 1;
  uint64_t order = __atomic_add_fetch(&noted, 1, __ATOMIC_RELAXED);
  explicit_name_t* set = set_of(thread, koid);
  bool held[EXPLICIT_NAME_WAYS];
  explicit_name_t* pick = NULL;
  int pick_rank = 0;
  /* another note may hold the whole set for a moment: a few more tries
   * (bounded; never a wait for it) */
  for (int tries = 0; !pick && tries < EXPLICIT_NAME_TRIES; tries++)
    for (int i = 0; i < EXPLICIT_NAME_WAYS; i++) {
      explicit_name_t* e = &set[i];
      held[i] = take(e);
      if (!held[i]) continue;
      int rank = keep_rank(e, pid, thread, koid);
      if (rank > pick_rank || (rank == pick_rank && rank <= 3 && e->order < pick->order)) {
        pick = e;
        pick_rank = rank;
      }
    }
  /* a later note of the same koid, which met this one's slot held and got
   * in first, keeps its name */
  if (pick && !(pick_rank == 5 && pick->order > order)) {
    pick->thread = thread;
    pick->pid = pid;
    pick->koid = koid;
    pick->ns = ns;
    pick->ended_ns = 0;
    memcpy(pick->name, name, length);
    pick->name[length] = '\0';
    pick->order = order;
  }
  for (int i = 0; i < EXPLICIT_NAME_WAYS; i++)
    if (held[i]) give_back(&set[i]);
}

void explicit_name__ended(uint64_t pid, uint64_t tid, uint64_t ns) {
  explicit_name_t* set = set_of(true, tid);
  for (int i = 0; i < EXPLICIT_NAME_WAYS; i++) {
    explicit_name_t* e = &set[i];
    if (!take(e)) continue; /* a note in it: it names a thread still running */
    if (e->order != 0 && e->thread && e->pid == pid && e->koid == tid) e->ended_ns = ns ? ns : 1;
    give_back(e);
  }
}

static int by_order(const void* a, const void* b) {
  uint64_t x = ((const explicit_name_t*)a)->order, y = ((const explicit_name_t*)b)->order;
  return x < y ? -1 : x > y;
}

void explicit_name__each(uint64_t pid, uint64_t since_ns, explicit_name_fn fn, void* arg) {
  explicit_name_t* copy = malloc(sizeof(names));
  if (!copy) return;
  size_t count = 0;
  for (size_t i = 0; i < EXPLICIT_NAMES_MAX; i++) {
    explicit_name_t* e = &names[i];
    if (!take(e)) continue; /* a note in it right now */
    /* not a thread that ended before `since_ns`: it is not in that trace */
    if (e->order != 0 && e->pid == pid && !(e->ended_ns != 0 && e->ended_ns < since_ns)) {
      /* field by field: `busy` is read only atomically */
      explicit_name_t* c = &copy[count++];
      c->order = e->order;
      c->thread = e->thread;
      c->koid = e->koid;
      c->ns = e->ns;
      c->ended_ns = e->ended_ns;
      memcpy(c->name, e->name, sizeof(c->name));
    }
    give_back(e);
  }
  qsort(copy, count, sizeof(copy[0]), by_order); /* oldest first: the latest wins */
  for (size_t i = 0; i < count; i++)
    fn(arg, copy[i].thread, copy[i].koid, copy[i].name, copy[i].ns, copy[i].ended_ns);
  free(copy);
}
