/* The names section (names.h): kernel-object records, names inline, as
 * FXT.md §8.8 defines them (threads with their `process` koid argument,
 * which Perfetto requires). */
#include <stdlib.h>
#include <string.h>

#include "fxt/fxt_encode.h"
#include "names/names_internal.h"

/* Records are gathered in a small buffer, handed on when it is nearly full. */
enum { SECTION_BUFFER_WORDS = 4096 };

typedef struct section {
  uint64_t words[SECTION_BUFFER_WORDS];
  size_t used;
  names_sink_t sink;
  void* arg;
  bool failed;
} section_t;

static void flush(section_t* s) {
  if (s->used && !s->failed && !s->sink(s->arg, s->words, s->used * 8)) s->failed = true;
  s->used = 0;
}

static bool put(section_t* s, const names_entry_t* e, uint64_t* records) {
  trace_string_ref_t name = trace_make_inline_c_string_ref(e->name);
  trace_arg_t process = trace_make_arg(trace_make_inline_c_string_ref("process"),
                                       trace_make_koid_arg_value(e->process_koid));
  size_t count = e->thread ? 1 : 0;
  size_t words = fxt_kernel_object_record_words(&name, &process, count);
  if (s->used + words > SECTION_BUFFER_WORDS) flush(s);
  if (s->failed) return false;
  fxt_write_kernel_object_record(s->words + s->used, words, e->koid,
                                 e->thread ? FXT_KOBJ_THREAD : FXT_KOBJ_PROCESS, &name, &process,
                                 count);
  s->used += words;
  if (records) (*records)++;
  return true;
}

/* A process known only from someone else's record whose koid is a thread
 * of another process: the kernel provider, not finding a gone thread's
 * process, names the thread as a process of its own. Not a process. */
static bool is_thread_of_another(const names_t* n, const names_entry_t* e) {
  if (e->rank > NAMES_RANK_OTHERS_RECORD) return false;
  const names_entry_t* t = names__lookup(n, true, e->koid);
  return t && t->process_koid != 0 && t->process_koid != e->koid &&
         t->process_rank > NAMES_RANK_OTHERS_RECORD;
}

bool names__write_section(const names_t* n, names_sink_t sink, void* arg, uint64_t* records) {
  section_t* s = malloc(sizeof(*s)); /* 32 KiB: not on the stack */
  if (!s) return false;
  s->used = 0;
  s->sink = sink;
  s->arg = arg;
  s->failed = false;
  /* processes first: a reader may want a thread's process named before it */
  for (int thread = 0; thread < 2; thread++)
    for (size_t i = 0; i < n->capacity; i++) {
      const names_entry_t* e = &n->slots[i];
      if (!e->used || e->thread != thread || !e->name) continue;
      if (e->thread && e->process_koid == 0) continue; /* Perfetto needs its process */
      if (!e->thread && is_thread_of_another(n, e)) continue;
      if (!put(s, e, records)) break;
    }
  flush(s);
  bool ok = !s->failed;
  free(s);
  return ok;
}
