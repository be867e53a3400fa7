/* tid -> tgid and naming state (see kthreads.h): open addressing, linear probing. */
#include "kernel/kthreads.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <tracefs.h>

void kthreads__free(kthreads_t* t) {
  free(t->slots);
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

/* The kernel's own pid -> tgid map (tracefs saved_tgids, "PID TGID" lines),
 * kept for the tasks of an instance with the record-tgid option: it still
 * knows a thread that has exited. 0 when it does not know tid. */
static uint32_t saved_tgid(uint32_t tid) {
  const char* dir = tracefs_tracing_dir();
  if (!dir) return 0;
  char path[512], line[64];
  snprintf(path, sizeof(path), "%s/saved_tgids", dir);
  FILE* f = fopen(path, "re");
  if (!f) return 0;
  uint32_t tgid = 0;
  while (fgets(line, sizeof(line), f)) {
    unsigned long pid, group;
    if (sscanf(line, "%lu %lu", &pid, &group) == 2 && pid == tid && group > 0 &&
        group <= UINT32_MAX) {
      tgid = (uint32_t)group;
      break;
    }
  }
  fclose(f);
  return tgid;
}

uint32_t kthreads__tgid(kthreads_t* t, uint32_t tid) {
  kthread_entry_t* e = kthreads__get(t, tid);
  if (e && e->tgid) return e->tgid;
  uint32_t tgid = 0;
  char path[64], line[128];
  snprintf(path, sizeof(path), "/proc/%u/status", tid);
  FILE* f = fopen(path, "re");
  if (f) {
    while (fgets(line, sizeof(line), f))
      if (strncmp(line, "Tgid:", 5) == 0) {
        unsigned long v = strtoul(line + 5, NULL, 10);
        if (v > 0 && v <= UINT32_MAX) tgid = (uint32_t)v;
        break;
      }
    fclose(f);
  }
  if (tgid == 0) tgid = saved_tgid(tid); /* gone already */
  if (tgid == 0) tgid = tid;
  if (e) e->tgid = tgid;
  return tgid;
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
