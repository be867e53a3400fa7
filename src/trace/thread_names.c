/* Thread names for `trace dump` and `trace convert` (see thread_names.h): koid -> name, open
 * addressing; the last name recorded for a koid wins. Each thread also keeps the names known at
 * a time (the kernel's task events, the engine's names at a stop), for thread_names__at(). */
#include "trace/thread_names.h"

#include <stdlib.h>
#include <string.h>

#include "engine/stop_names.h"

typedef struct named_at {
  uint64_t ns;
  char* name;
} named_at_t;

typedef struct entry {
  uint64_t koid; /* 0: free */
  char* name;
  char* before;       /* the name before its first task event (task_rename's oldcomm) */
  uint64_t before_ns; /* ... that event's time */
  named_at_t* events; /* names at a time (task events, names at a stop), in the order read */
  size_t count, capacity;
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

static char* copy_of(const char* data, size_t length) {
  char* name = malloc(length + 1);
  if (!name) return NULL;
  memcpy(name, data, length);
  name[length] = '\0';
  return name;
}

static const trace_reader_arg_t* arg_of(const trace_reader_args_t* args, const char* name,
                                        uint32_t type) {
  for (size_t i = 0; i < args->count; i++) {
    const trace_reader_arg_t* a = &args->items[i];
    if (strcmp(a->name.data, name) == 0 && a->type == type) return a;
  }
  return NULL;
}

static bool int_arg(const trace_record_t* r, const char* name, uint64_t* value) {
  /* int64, as the kernel provider writes */
  const trace_reader_arg_t* a = arg_of(&r->event.args, name, 3);
  if (a && a->int64_value > 0) *value = (uint64_t)a->int64_value;
  if (!a) {
    a = arg_of(&r->event.args, name, 1); /* int32 */
    if (a && a->int32_value > 0) *value = (uint64_t)a->int32_value;
  }
  return a != NULL && *value != 0;
}

static void add_event(uint64_t tid, uint64_t ns, const char* data, size_t length,
                      const trace_reader_arg_t* old) {
  if (length == 0) return;
  entry_t* e = find(tid, true);
  if (!e) return;
  if (e->count == e->capacity) {
    size_t capacity = e->capacity ? e->capacity * 2 : 4;
    named_at_t* grown = realloc(e->events, capacity * sizeof(*grown));
    if (!grown) return;
    e->events = grown;
    e->capacity = capacity;
  }
  char* name = copy_of(data, length);
  if (!name) return;
  e->events[e->count++] = (named_at_t){ns, name};
  if (old && old->string_value.length && (!e->before || ns < e->before_ns)) {
    char* before = copy_of(old->string_value.data, old->string_value.length);
    if (before) {
      free(e->before);
      e->before = before;
      e->before_ns = ns;
    }
  }
}

void thread_names__note(const trace_record_t* r) {
  const __typeof__(r->kernel_object)* k = &r->kernel_object;
  if (r->type != 7 || k->object_type != 2 || k->koid == 0) return;
  entry_t* e = find(k->koid, true);
  if (!e) return;
  char* name = copy_of(k->name.data, k->name.length);
  if (!name) return;
  free(e->name);
  e->name = name;
  /* an engine's name at a stop (src/engine/stop_names.h): the name the thread had at `name_at`
   * (trace clock ns), a name at a time as a task event's; an archive without a names section
   * (one `trace recover` made) has no other word of a rename the kernel did not record */
  const trace_reader_arg_t* at = arg_of(&k->args, STOP_NAMES_ARG, 4); /* uint64 */
  if (at) add_event(k->koid, at->uint64_value, k->name.data, k->name.length, NULL);
}

void thread_names__note_task(const trace_record_t* r, uint64_t ns) {
  if (r->type != 4 || r->event.event_type != 0 || r->event.category.length != 11 ||
      memcmp(r->event.category.data, "kernel:task", 11) != 0)
    return;
  const char* event = r->event.name.data;
  uint64_t tid = 0;
  const trace_reader_arg_t* name = NULL;
  if (strcmp(event, "task_rename") == 0 && int_arg(r, "pid", &tid)) {
    name = arg_of(&r->event.args, "newcomm", 6);
    if (name)
      add_event(tid, ns, name->string_value.data, name->string_value.length,
                arg_of(&r->event.args, "oldcomm", 6));
  } else if (strcmp(event, "sched_process_exit") == 0 && int_arg(r, "pid", &tid)) {
    name = arg_of(&r->event.args, "comm", 6);
    if (name) add_event(tid, ns, name->string_value.data, name->string_value.length, NULL);
  } else if (strcmp(event, "sched_process_fork") == 0 && int_arg(r, "child_pid", &tid)) {
    name = arg_of(&r->event.args, "child_comm", 6);
    if (name) add_event(tid, ns, name->string_value.data, name->string_value.length, NULL);
  } else if (strcmp(event, "sched_process_exec") == 0 && int_arg(r, "pid", &tid)) {
    name = arg_of(&r->event.args, "filename", 6);
    if (name) { /* the new comm: the file's base name, cut as the kernel cuts it */
      const char* base = name->string_value.data;
      size_t length = name->string_value.length;
      const char* slash = memrchr(base, '/', length);
      if (slash) {
        length -= (size_t)(slash + 1 - base);
        base = slash + 1;
      }
      add_event(tid, ns, base, length < 15 ? length : 15, NULL);
    }
  }
}

const char* thread_names__at(uint64_t koid, uint64_t ns) {
  entry_t* e = koid ? find(koid, false) : NULL;
  if (!e) return NULL;
  const named_at_t* best = NULL;
  for (size_t i = 0; i < e->count; i++)
    if (e->events[i].ns <= ns && (!best || e->events[i].ns >= best->ns)) best = &e->events[i];
  if (best) return best->name;
  if (e->before && ns < e->before_ns) return e->before;
  return e->name; /* the last name the archive gives it */
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
  for (size_t i = 0; i < capacity; i++) {
    free(table[i].name);
    free(table[i].before);
    for (size_t j = 0; j < table[i].count; j++) free(table[i].events[j].name);
    free(table[i].events);
  }
  free(table);
  table = NULL;
  capacity = used = 0;
}
