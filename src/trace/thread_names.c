/* Thread names for `trace dump` and `trace convert` (see thread_names.h): koid -> name, open
 * addressing; the last name recorded for a koid wins. */
#include "trace/thread_names.h"

#include <stdlib.h>
#include <string.h>

typedef struct entry {
  uint64_t koid; /* 0: free */
  char* name;
} entry_t;

static entry_t* table;
static size_t capacity, used;

static size_t slot_of(uint64_t koid, size_t cap) {
  return (size_t)((koid * UINT64_C(0x9E3779B97F4A7C15)) >> 20) & (cap - 1);
}

static entry_t* find(uint64_t koid, bool insert) {
  if (insert && (used + 1) * 2 > capacity) {
    size_t cap = capacity ? capacity * 2 : 256;
    entry_t* t = calloc(cap, sizeof(*t));
    if (!t) return NULL;
    for (size_t i = 0; i < capacity; i++) {
      if (!table[i].koid) continue;
      size_t j = slot_of(table[i].koid, cap);
      while (t[j].koid) j = (j + 1) & (cap - 1);
      t[j] = table[i];
    }
    free(table);
    table = t;
    capacity = cap;
  }
  if (!capacity) return NULL;
  size_t j = slot_of(koid, capacity);
  while (table[j].koid && table[j].koid != koid) j = (j + 1) & (capacity - 1);
  if (!table[j].koid) {
    if (!insert) return NULL;
    table[j].koid = koid;
    used++;
  }
  return &table[j];
}

void thread_names__note(const trace_record_t* r) {
  if (r->type != 7 || r->kernel_object.object_type != 2 || r->kernel_object.koid == 0) return;
  entry_t* e = find(r->kernel_object.koid, true);
  if (!e) return;
  char* name = malloc(r->kernel_object.name.length + 1);
  if (!name) return;
  memcpy(name, r->kernel_object.name.data, r->kernel_object.name.length);
  name[r->kernel_object.name.length] = '\0';
  free(e->name);
  e->name = name;
}

static void put_name(FILE* out, const char* label, uint64_t koid) {
  entry_t* e = koid ? find(koid, false) : NULL;
  if (koid == 0) {
    fprintf(out, " %s=idle", label);
  } else if (e && e->name) {
    fprintf(out, " %s=\"", label);
    for (const char* p = e->name; *p; p++) {
      unsigned char c = (unsigned char)*p;
      if (c == '"' || c == '\\')
        fprintf(out, "\\%c", c);
      else if (c < 0x20 || c == 0x7f)
        fprintf(out, "\\x%02x", c);
      else
        fputc(c, out);
    }
    fputc('"', out);
  }
}

static const char* const kStates[] = {"new/preempted", "running", "suspended",
                                      "blocked",       "dying",   "dead"};

void thread_names__switch(FILE* out, const trace_record_t* r) {
  const __typeof__(r->scheduling)* s = &r->scheduling;
  if (r->type != 8 || s->sched_type > 1) return;
  put_name(out, "out-name", s->outgoing_thread_koid);
  fprintf(out, " out-state=%s", s->outgoing_state < 6 ? kStates[s->outgoing_state] : "?");
  put_name(out, "in-name", s->incoming_thread_koid);
}

const char* thread_names__get(uint64_t koid) {
  entry_t* e = koid ? find(koid, false) : NULL;
  return e ? e->name : NULL;
}

void thread_names__free(void) {
  for (size_t i = 0; i < capacity; i++) free(table[i].name);
  free(table);
  table = NULL;
  capacity = used = 0;
}
