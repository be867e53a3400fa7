/* What the names collection learns from a provider's records (names.h):
 * its string records (the table its references index), its process and
 * thread kernel-object records, and the kernel provider's kernel:task
 * instants. Records reach here whole and checked against their size field
 * (the archive's emit path); every field read is bounded by that size. */
#include <stdlib.h>
#include <string.h>

#include "engine/explicit_name.h"
#include "engine/stop_names.h"
#include "fxt/fxt_format.h"
#include "names/names_internal.h"

typedef struct source_string {
  char* data; /* NULL: never defined */
  uint16_t length;
  bool is_task; /* "kernel:task": names__note_run's shortcut */
} source_string_t;

struct names_source {
  uint64_t pid;
  bool foreign;             /* another pid namespace (names__source_create_foreign) */
  source_string_t* strings; /* `capacity` entries: grown to the highest index defined */
  size_t capacity;
  bool has_task; /* some index was ever defined as "kernel:task" */
};

names_source_t* names__source_create(uint64_t pid) {
  names_source_t* s = calloc(1, sizeof(*s));
  if (s) s->pid = pid;
  return s;
}

names_source_t* names__source_create_foreign(void) {
  names_source_t* s = names__source_create(0);
  if (s) s->foreign = true;
  return s;
}

void names__source_free(names_source_t* s) {
  if (!s) return;
  for (size_t i = 0; i < s->capacity; i++) free(s->strings[i].data);
  free(s->strings);
  free(s);
}

/* A record's words, read without assuming alignment. */
typedef struct cursor {
  const uint8_t* p;
  size_t words; /* left */
} cursor_t;

static bool take(cursor_t* c, uint64_t* word) {
  if (c->words == 0) return false;
  memcpy(word, c->p, 8);
  c->p += 8;
  c->words--;
  return true;
}

typedef struct str {
  const char* data;
  size_t length;
} str_t;

/* A string reference: inline (its bytes follow, padded to words), indexed
 * (the source's table), or empty. false if the record is too short. */
static bool take_string(cursor_t* c, const names_source_t* s, uint32_t ref, str_t* out) {
  out->data = "";
  out->length = 0;
  if (ref == 0) return true;
  if (ref & 0x8000) {
    size_t length = ref & 0x7fff, words = (length + 7) / 8;
    if (words > c->words) return false;
    out->data = (const char*)c->p;
    out->length = length;
    c->p += words * 8;
    c->words -= words;
    return true;
  }
  if (ref < s->capacity && s->strings[ref].data) {
    out->data = s->strings[ref].data;
    out->length = s->strings[ref].length;
  }
  return true;
}

static bool str_is(str_t s, const char* literal) {
  size_t length = strlen(literal);
  return s.length == length && memcmp(s.data, literal, length) == 0;
}

static void note_string(names_source_t* s, uint64_t header, cursor_t* c) {
  uint32_t index = (uint32_t)FXT_GET(header, 16, 30);
  size_t length = (size_t)FXT_GET(header, 32, 46);
  if (index == 0 || (length + 7) / 8 > c->words) return;
  if (index >= s->capacity) { /* most providers use a few hundred indexes */
    size_t capacity = s->capacity ? s->capacity : 256;
    while (capacity <= index) capacity *= 2;
    source_string_t* grown = realloc(s->strings, capacity * sizeof(*grown));
    if (!grown) return;
    memset(grown + s->capacity, 0, (capacity - s->capacity) * sizeof(*grown));
    s->strings = grown;
    s->capacity = capacity;
  }
  char* copy = malloc(length + 1);
  if (!copy) return;
  memcpy(copy, c->p, length);
  copy[length] = '\0';
  free(s->strings[index].data);
  s->strings[index].data = copy;
  s->strings[index].length = (uint16_t)length;
  s->strings[index].is_task = strcmp(copy, "kernel:task") == 0;
  if (s->strings[index].is_task) s->has_task = true;
}

/* ---- arguments ---- */

typedef struct arg {
  str_t name;
  unsigned type;
  bool is_int;
  int64_t value; /* integer and koid types */
  str_t string;  /* string type */
} arg_t;

/* The next argument; false at the end or on a malformed one. */
static bool take_arg(cursor_t* c, const names_source_t* s, arg_t* a) {
  uint64_t header;
  if (!take(c, &header)) return false;
  size_t size = (size_t)FXT_GET(header, 4, 15);
  if (size == 0 || size - 1 > c->words) return false;
  cursor_t body = {c->p, size - 1};
  c->p += (size - 1) * 8;
  c->words -= size - 1;
  memset(a, 0, sizeof(*a));
  a->type = (unsigned)FXT_GET(header, 0, 3);
  if (!take_string(&body, s, (uint32_t)FXT_GET(header, 16, 31), &a->name)) return false;
  uint64_t word;
  switch (a->type) {
    case 1: /* int32 */
      a->is_int = true;
      a->value = (int32_t)(uint32_t)FXT_GET(header, 32, 63);
      break;
    case 2: /* uint32 */
      a->is_int = true;
      a->value = (int64_t)FXT_GET(header, 32, 63);
      break;
    case 9: /* bool */
      a->value = (int64_t)FXT_GET(header, 32, 32);
      break;
    case 3: /* int64 */
    case 4: /* uint64 */
    case 8: /* koid */
      if (!take(&body, &word)) return false;
      a->is_int = true;
      a->value = (int64_t)word;
      break;
    case 6: /* string */
      if (!take_string(&body, s, (uint32_t)FXT_GET(header, 32, 47), &a->string)) return false;
      break;
    default:
      break;
  }
  return true;
}

/* ---- kernel objects ---- */

static void note_kernel_object(names_t* n, const names_source_t* s, uint64_t header, cursor_t* c) {
  unsigned type = (unsigned)FXT_GET(header, 16, 23);
  if (type != FXT_KOBJ_PROCESS && type != FXT_KOBJ_THREAD) return;
  uint64_t koid;
  str_t name;
  if (!take(c, &koid) || !take_string(c, s, (uint32_t)FXT_GET(header, 24, 39), &name)) return;
  uint64_t process = 0, name_at = 0, explicit_at = 0;
  bool at = false, explicit_name = false;
  unsigned count = (unsigned)FXT_GET(header, 40, 43);
  arg_t a;
  for (unsigned i = 0; i < count && take_arg(c, s, &a); i++) {
    if (a.type == 8 && str_is(a.name, "process")) process = (uint64_t)a.value;
    if (a.type == 4 && str_is(a.name, STOP_NAMES_ARG)) {
      name_at = (uint64_t)a.value;
      at = true;
    }
    /* uint64: when; bool (archives before the time was added): no time */
    if ((a.type == 4 || (a.type == 9 && a.value != 0)) && str_is(a.name, EXPLICIT_NAME_ARG)) {
      explicit_name = true;
      explicit_at = a.type == 4 ? (uint64_t)a.value : 0;
    }
  }
  bool thread = type == FXT_KOBJ_THREAD;
  /* the provider's own process and threads, or someone else's */
  bool own = s->pid != 0 && (thread ? process == s->pid : koid == s->pid);
  if (own && explicit_name) /* the program's own word for its own: above /proc */
    names__set(n, thread, koid, process, name.data, name.length, NAMES_RANK_EXPLICIT, explicit_at);
  else if (own && thread &&
           at) /* its engine's name at the stop: a name at a time, as a task event */
    names__set(n, true, koid, process, name.data, name.length, NAMES_RANK_TASK_EVENT, name_at);
  else
    names__set(n, thread, koid, process, name.data, name.length,
               own ? NAMES_RANK_OWN_RECORD : NAMES_RANK_OTHERS_RECORD, 0);
  if (!s->foreign) names__mark_local(n, thread, koid);
}

/* ---- kernel:task instants (docs/kernel-provider.md) ---- */

static str_t base_name(str_t path) {
  const char* slash = memrchr(path.data, '/', path.length);
  if (slash) {
    path.length -= (size_t)(slash + 1 - path.data);
    path.data = slash + 1;
  }
  return path;
}

enum { COMM_LENGTH = 15 }; /* TASK_COMM_LEN less its NUL */

static void note_task_event(names_t* n, const names_source_t* s, uint64_t ts, str_t event,
                            cursor_t* c, unsigned count) {
  int64_t pid = 0, child_pid = 0;
  str_t filename = {"", 0}, comm = {"", 0}, newcomm = {"", 0}, child_comm = {"", 0};
  arg_t a;
  for (unsigned i = 0; i < count && take_arg(c, s, &a); i++) {
    if (a.is_int && str_is(a.name, "pid")) pid = a.value;
    if (a.is_int && str_is(a.name, "child_pid")) child_pid = a.value;
    if (a.type == 6 && str_is(a.name, "filename")) filename = a.string;
    if (a.type == 6 && str_is(a.name, "comm")) comm = a.string;
    if (a.type == 6 && str_is(a.name, "newcomm")) newcomm = a.string;
    if (a.type == 6 && str_is(a.name, "child_comm")) child_comm = a.string;
  }
  if (str_is(event, "sched_process_exec") && pid > 0 && filename.length > 0) {
    /* the process is named after its program; its (only) thread's comm is
     * the program's base name cut as the kernel cuts it */
    names__program_changed(n, (uint64_t)pid, ts);
    str_t program = base_name(filename);
    names__set(n, false, (uint64_t)pid, 0, program.data, program.length, NAMES_RANK_TASK_EVENT, ts);
    names__set(n, true, (uint64_t)pid, (uint64_t)pid, program.data,
               program.length < COMM_LENGTH ? program.length : COMM_LENGTH, NAMES_RANK_TASK_EVENT,
               ts);
  } else if (str_is(event, "task_rename") && pid > 0) {
    names__set(n, true, (uint64_t)pid, 0, newcomm.data, newcomm.length, NAMES_RANK_TASK_EVENT, ts);
  } else if (str_is(event, "sched_process_exit") && pid > 0) {
    names__set(n, true, (uint64_t)pid, 0, comm.data, comm.length, NAMES_RANK_TASK_EVENT, ts);
  } else if (str_is(event, "sched_process_fork") && child_pid > 0) {
    /* a new task: the koid given out again. Only names given clearly
     * before (NAMES_CLOCK_MARGIN_NS): a thread names itself moments after
     * its birth, and the kernel's clock and a program's can differ by that
     * much (TSC lines calibrated apart) */
    names__program_changed(n, (uint64_t)child_pid,
                           ts > NAMES_CLOCK_MARGIN_NS ? ts - NAMES_CLOCK_MARGIN_NS : 0);
    names__set(n, true, (uint64_t)child_pid, 0, child_comm.data, child_comm.length,
               NAMES_RANK_TASK_EVENT, ts);
  }
}

static void note_event(names_t* n, const names_source_t* s, uint64_t header, cursor_t* c) {
  if (FXT_GET(header, 16, 19) != FXT_EVENT_INSTANT || s->foreign) return;
  uint64_t ts, word;
  if (!take(c, &ts)) return;
  if (FXT_GET(header, 24, 31) == 0 && !(take(c, &word) && take(c, &word))) return;
  str_t category, event;
  if (!take_string(c, s, (uint32_t)FXT_GET(header, 32, 47), &category) ||
      !str_is(category, "kernel:task") ||
      !take_string(c, s, (uint32_t)FXT_GET(header, 48, 63), &event))
    return;
  note_task_event(n, s, ts, event, c, (unsigned)FXT_GET(header, 20, 23));
}

void names__note(names_t* n, names_source_t* s, const void* record, size_t bytes) {
  if (!n || !s || bytes < 8) return;
  uint64_t header;
  memcpy(&header, record, 8);
  unsigned type = (unsigned)FXT_GET(header, 0, 3);
  if (type != FXT_RECORD_STRING && type != FXT_RECORD_KERNEL_OBJECT && type != FXT_RECORD_EVENT)
    return;
  cursor_t c = {(const uint8_t*)record + 8, bytes / 8 - 1};
  if (type == FXT_RECORD_STRING)
    note_string(s, header, &c);
  else if (type == FXT_RECORD_KERNEL_OBJECT)
    note_kernel_object(n, s, header, &c);
  else
    note_event(n, s, header, &c);
}

void names__note_run(names_t* n, names_source_t* s, const void* records, size_t bytes) {
  if (!n || !s) return;
  const uint8_t* p = records;
  size_t pos = 0;
  while (pos + 8 <= bytes) {
    uint64_t header;
    memcpy(&header, p + pos, 8);
    size_t size = (size_t)fxt_record_words(header) * 8;
    if (size == 0 || size > bytes - pos) return;
    unsigned type = (unsigned)FXT_GET(header, 0, 3);
    /* an event is learned from only if it is a kernel:task instant: one
     * whose category is indexed to another string (each thread may index
     * "kernel:task" on its own) is passed over here, without the string
     * comparison (most records of a run) */
    uint32_t category = (uint32_t)FXT_GET(header, 32, 47);
    bool other_event =
        type == FXT_RECORD_EVENT &&
        (s->foreign || FXT_GET(header, 16, 19) != FXT_EVENT_INSTANT ||
         (!(category & 0x8000) && (category >= s->capacity || !s->strings[category].is_task)));
    if (!other_event) names__note(n, s, p + pos, size);
    pos += size;
  }
}

bool names__run_may_teach(const names_source_t* s, uint64_t any, uint64_t all) {
  /* the type field (bits 0..3) is FXT_RECORD_EVENT in every header iff
   * its OR and its AND both are; bit 47 is an inline category's flag */
  bool only_events =
      FXT_GET(any, 0, 3) == FXT_RECORD_EVENT && FXT_GET(all, 0, 3) == FXT_RECORD_EVENT;
  return !s || !only_events || FXT_GET(any, 47, 47) != 0 || s->has_task;
}
