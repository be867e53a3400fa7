/* The names of the engine's threads at the stop (stop_names.h). */
#include "engine/stop_names.h"

#include <string.h>

#include "engine/engine_internal.h"
#include "engine/explicit_name.h"
#include "engine/thread_exits.h"
#include "fxt/fxt_encode.h"

/* Where the records go: [base + pos, base + end). */
typedef struct region {
  engine_t* e; /* the session whose stop this is */
  uint8_t* base;
  uint64_t pos, end;
  bool durable; /* reserve from the header's durable_alloc */
  /* the threads that kept their names: only below this (a record that does
   * not fit then is not a drop: the thread's own record says the same) */
  uint64_t kept_end;
  bool kept;
  uint64_t written, dropped;
  uint64_t now_ns; /* the stop's time */
} region_t;

/* Room for `bytes` at the region's next free place, or NULL. */
static uint64_t* reserve(region_t* r, uint64_t bytes) {
  uint64_t end = r->kept ? r->kept_end : r->end;
  if (!r->durable) {
    if (r->pos + bytes > end) return NULL;
    uint64_t* p = (uint64_t*)(r->base + r->pos);
    r->pos += bytes;
    return p;
  }
  /* a writer stuck past the stop's bounded wait may still reserve here:
   * never move the allocation past the end (that would mark the buffer
   * full, and the stop would then lose its last records) */
  trace_buffer_header_t* h = r->e->header;
  uint64_t at = ATOMIC_LOAD(&h->durable_alloc);
  do
    if (at > end || bytes > end - at) return NULL;
  while (!__atomic_compare_exchange_n(&h->durable_alloc, &at, at + bytes, true, __ATOMIC_ACQ_REL,
                                      __ATOMIC_RELAXED));
  return (uint64_t*)(r->base + at);
}

static void put(void* arg, uint64_t tid, const char* name, uint64_t ns) {
  region_t* r = arg;
  trace_string_ref_t name_ref = trace_make_inline_c_string_ref(name);
  trace_arg_t args[2] = {
      trace_make_arg(trace_make_inline_c_string_ref("process"),
                     trace_make_koid_arg_value(r->e->pid)),
      trace_make_arg(trace_make_inline_c_string_ref(STOP_NAMES_ARG),
                     trace_make_uint64_arg_value(ns)),
  };
  size_t words = fxt_kernel_object_record_words(&name_ref, args, 2);
  uint64_t* p = reserve(r, words * 8);
  if (!p) {
    if (!r->kept) r->dropped++;
    return;
  }
  fxt_write_kernel_object_record(p, words, tid, FXT_KOBJ_THREAD, &name_ref, args, 2);
  r->written++;
}

/* A name the program gave its own process or thread (explicit_name.h),
 * again: in circular mode the record that gave it may have wrapped away.
 * Its time is when the program last said it, that is now (the table holds
 * its latest name), or for a thread that ended, its end: a manager that saw
 * the pid register again or be given out (names.h) before now takes it
 * again, while a program that exec'd has no table to say it. */
static void put_explicit(void* arg, bool thread, uint64_t koid, const char* name, uint64_t ns,
                         uint64_t ended_ns) {
  region_t* r = arg;
  (void)ns;
  ns = ended_ns != 0 ? ended_ns : r->now_ns;
  trace_string_ref_t name_ref = trace_make_inline_c_string_ref(name);
  trace_arg_t args[2];
  size_t n = 0;
  if (thread)
    args[n++] = trace_make_arg(trace_make_inline_c_string_ref("process"),
                               trace_make_koid_arg_value(r->e->pid));
  args[n++] = trace_make_arg(trace_make_inline_c_string_ref(EXPLICIT_NAME_ARG),
                             trace_make_uint64_arg_value(ns));
  size_t words = fxt_kernel_object_record_words(&name_ref, args, n);
  uint64_t* p = reserve(r, words * 8);
  if (!p) return; /* kept: the program's own record says the same */
  fxt_write_kernel_object_record(p, words, koid, thread ? FXT_KOBJ_THREAD : FXT_KOBJ_PROCESS,
                                 &name_ref, args, n);
  r->written++;
}

void stop_names__write(engine_t* e) {
  region_t r = {.e = e, .now_ns = trace_clock__now_ns()};
  if (e->mode == TRACE_BUFFERING_MODE_ONESHOT) {
    /* chunk 0: writers never get it; after the records already there (the
     * start's, and earlier stops' when the buffer was retained) */
    r.base = e->rolling;
    r.end = e->chunk_size < e->rolling_size ? e->chunk_size : e->rolling_size;
    while (r.pos + 8 <= r.end) {
      uint64_t header = ATOMIC_ACQUIRE((uint64_t*)(r.base + r.pos));
      uint64_t bytes = fxt_record_words(header) * 8;
      if (header == 0 || bytes == 0 || bytes > r.end - r.pos) break;
      r.pos += bytes;
    }
  } else {
    r.base = e->durable;
    r.end = e->durable_size;
    r.durable = true;
  }
  /* the renamed threads first: their own records' names are stale */
  thread_exits__each_at_end(e, true, put, &r);
  /* then, in oneshot mode in the rest of chunk 0 (the engine's alone),
   * otherwise in at most half of the durable buffer's room (the next trace
   * may keep it): the names the program gave (explicit_name.h), and the
   * others, whose names the kernel's task events kept from before (an exec,
   * when the rename came before the thread first wrote but after the
   * kernel provider's buffer filled) would otherwise outrank */
  r.kept = true;
  if (r.durable) {
    uint64_t at = ATOMIC_LOAD(&e->header->durable_alloc);
    r.kept_end = at < r.end ? at + (r.end - at) / 2 : 0;
  } else {
    r.kept_end = r.end;
  }
  explicit_name__each(e->pid, e->started_ns, put_explicit, &r);
  thread_exits__each_at_end(e, false, put, &r);
  pthread_mutex_lock(&e->lock);
  e->engine_written += r.written;
  pthread_mutex_unlock(&e->lock);
  if (r.dropped) engine__add_dropped(e->session, r.dropped);
}
