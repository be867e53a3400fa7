/* tid -> tgid and naming state (see kthreads.h): open addressing, linear probing. */
#include "kernel/kthreads.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <tracefs.h>

void kthreads__free(kthreads_t* t) {
  free(t->slots);
  free(t->saved);
  memset(t, 0, sizeof(*t));
}

void kthreads__clear(kthreads_t* t) {
  if (t->slots) memset(t->slots, 0, t->capacity * sizeof(*t->slots));
  t->used = 0;
}

static size_t slot_of(uint32_t tid, size_t capacity) {
  return (size_t)(tid * 2654435761u) & (capacity - 1);
}

static bool grow(kthreads_t* t) {
  size_t capacity = t->capacity ? t->capacity * 2 : 1024;
  kthread_entry_t* slots = calloc(capacity, sizeof(*slots));
  if (!slots) return false;
  for (size_t i = 0; i < t->capacity; i++) {
    if (!t->slots[i].tid) continue;
    size_t j = slot_of(t->slots[i].tid, capacity);
    while (slots[j].tid) j = (j + 1) & (capacity - 1);
    slots[j] = t->slots[i];
  }
  free(t->slots);
  t->slots = slots;
  t->capacity = capacity;
  return true;
}

kthread_entry_t* kthreads__get(kthreads_t* t, uint32_t tid) {
  if ((t->used + 1) * 2 > t->capacity && !grow(t)) return NULL;
  size_t j = slot_of(tid, t->capacity);
  while (t->slots[j].tid && t->slots[j].tid != tid) j = (j + 1) & (t->capacity - 1);
  if (!t->slots[j].tid) {
    t->slots[j].tid = tid;
    t->used++;
  }
  return &t->slots[j];
}

/* A read costs about 3 ms of CPU (20,000 lines here), so at most 5 a second;
 * a copy that old cannot hold a recycled pid's process unless the kernel
 * handed out every pid (32,768 by default) in that time. */
enum { KTHREADS_SAVED_TGIDS_MS = 200 };

static uint64_t now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static int by_pid(const void* a, const void* b) {
  uint32_t x = ((const uint32_t*)a)[0], y = ((const uint32_t*)b)[0];
  return x < y ? -1 : x > y;
}

/* Reads the kernel's own pid -> tgid map (tracefs saved_tgids, "PID TGID"
 * lines), kept for the tasks of an instance with the record-tgid option: it
 * still knows a thread that has exited. False when read too recently to read
 * again, or unreadable. */
static bool load_saved_tgids(kthreads_t* t) {
  uint64_t now = now_ns();
  if (t->saved_ns && now - t->saved_ns < KTHREADS_SAVED_TGIDS_MS * 1000000ull) return false;
  t->saved_ns = now ? now : 1;
  const char* dir = tracefs_tracing_dir();
  if (!dir) return false;
  char path[512], line[64];
  snprintf(path, sizeof(path), "%s/saved_tgids", dir);
  FILE* f = fopen(path, "re");
  if (!f) return false;
  size_t count = 0, capacity = t->saved_count + 1024;
  uint32_t(*pairs)[2] = malloc(capacity * sizeof(*pairs));
  bool sorted = true;
  while (pairs && fgets(line, sizeof(line), f)) {
    char* end;
    unsigned long pid = strtoul(line, &end, 10);
    unsigned long group = strtoul(end, NULL, 10);
    if (pid == 0 || pid > UINT32_MAX || group == 0 || group > UINT32_MAX) continue;
    if (count == capacity) {
      uint32_t(*grown)[2] = realloc(pairs, 2 * capacity * sizeof(*pairs));
      if (!grown) break;
      pairs = grown;
      capacity *= 2;
    }
    sorted &= count == 0 || pairs[count - 1][0] < pid;
    pairs[count][0] = (uint32_t)pid;
    pairs[count++][1] = (uint32_t)group;
  }
  fclose(f);
  if (!pairs) return false;
  if (!sorted) qsort(pairs, count, sizeof(*pairs), by_pid);
  free(t->saved);
  t->saved = pairs;
  t->saved_count = count;
  return true;
}

static uint32_t saved_tgid(const kthreads_t* t, uint32_t tid) {
  uint32_t key[2] = {tid, 0};
  const uint32_t* hit =
      t->saved ? bsearch(key, t->saved, t->saved_count, sizeof(*t->saved), by_pid) : NULL;
  return hit ? hit[1] : 0;
}

uint32_t kthreads__proc_tgid(uint32_t tid) {
  uint32_t tgid = 0;
  char path[64], line[128];
  snprintf(path, sizeof(path), "/proc/%u/status", tid);
  FILE* f = fopen(path, "re");
  if (!f) return 0;
  while (fgets(line, sizeof(line), f))
    if (strncmp(line, "Tgid:", 5) == 0) {
      unsigned long v = strtoul(line + 5, NULL, 10);
      if (v > 0 && v <= UINT32_MAX) tgid = (uint32_t)v;
      break;
    }
  fclose(f);
  return tgid;
}

/* kthreads__tgid, `depth` creators deep: a thread whose creator's process
 * was unknown at its birth shares its creator's, looked up the same way. */
static uint32_t tgid_of(kthreads_t* t, uint32_t tid, int depth) {
  kthread_entry_t* e = kthreads__get(t, tid);
  if (e && e->tgid) return e->tgid;
  uint32_t tgid = kthreads__proc_tgid(tid), creator = 0;
  /* gone already: its birth in this trace, read ahead if need be */
  if (tgid == 0 && t->births) tgid = kbirths__find(t->births, tid, true, &creator);
  if (tgid == 0 && creator != 0 && creator != tid && depth < 4)
    tgid = tgid_of(t, creator, depth + 1);
  if (tgid == 0) { /* born before the trace: the kernel's map, as fresh as the rate allows (an
                    * older one may hold a recycled pid's process) */
    load_saved_tgids(t);
    tgid = saved_tgid(t, tid);
  }
  if (tgid == 0) tgid = tid;
  e = kthreads__get(t, tid); /* (the creator's lookup may have grown the table) */
  if (e) e->tgid = tgid;
  return tgid;
}

uint32_t kthreads__tgid(kthreads_t* t, uint32_t tid) { return tgid_of(t, tid, 0); }

void kthreads__set_name(kthread_entry_t* e, const char* name, size_t length, uint64_t ts) {
  if (length > sizeof(e->name)) length = sizeof(e->name);
  memcpy(e->name, name, length);
  e->name_length = (uint8_t)length;
  if (ts > e->name_ts) e->name_ts = ts;
}

bool kthreads__has_name(const kthread_entry_t* e, const char* name, size_t length) {
  return length == e->name_length && memcmp(e->name, name, length) == 0;
}

bool kthreads__read_comm(uint32_t pid, uint32_t tid, char* name, size_t size) {
  char path[96];
  if (tid)
    snprintf(path, sizeof(path), "/proc/%u/task/%u/comm", pid, tid);
  else
    snprintf(path, sizeof(path), "/proc/%u/comm", pid);
  FILE* f = fopen(path, "re");
  if (!f) return false;
  bool ok = fgets(name, (int)size, f) != NULL;
  fclose(f);
  if (ok) name[strcspn(name, "\n")] = '\0';
  return ok;
}
