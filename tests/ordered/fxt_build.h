/* Not part of the public API: helpers for tests that build FXT archives in
 * memory record by record (tests/ordered). Each appends one record to an
 * fxt_buffer_t and exits the test when out of memory.
 * Thread-safety: one buffer per thread. */
#ifndef FXTRACE_TESTS_ORDERED_FXT_BUILD_H_
#define FXTRACE_TESTS_ORDERED_FXT_BUILD_H_

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fxt/fxt_buffer.h"
#include "fxt/fxt_encode.h"

static inline uint64_t* build_reserve(fxt_buffer_t* b, size_t words) {
  uint64_t* p = fxt_buffer_reserve(b, words);
  if (!p) {
    fprintf(stderr, "out of memory building an archive\n");
    exit(1);
  }
  return p;
}

static inline void build_magic(fxt_buffer_t* b) { fxt_write_magic_record(build_reserve(b, 1)); }

static inline void build_provider(fxt_buffer_t* b, uint32_t id, const char* name) {
  size_t n = strlen(name);
  fxt_write_provider_info_record(build_reserve(b, fxt_provider_info_words(n)), id, name, n);
}

static inline void build_section(fxt_buffer_t* b, uint32_t id) {
  fxt_write_provider_section_record(build_reserve(b, 1), id);
}

static inline void build_init(fxt_buffer_t* b, uint64_t ticks_per_second) {
  fxt_write_initialization_record(build_reserve(b, 2), ticks_per_second);
}

static inline void build_string(fxt_buffer_t* b, uint16_t index, const char* s) {
  size_t n = strlen(s);
  fxt_write_string_record(build_reserve(b, fxt_string_record_words(n)), index, s, n);
}

static inline void build_thread(fxt_buffer_t* b, uint8_t index, uint64_t pid, uint64_t tid) {
  fxt_write_thread_record(build_reserve(b, 3), index, pid, tid);
}

static inline void build_event(fxt_buffer_t* b, unsigned type, uint64_t ticks,
                               trace_thread_ref_t thread, trace_string_ref_t category,
                               trace_string_ref_t name, const trace_arg_t* args, size_t n,
                               uint64_t payload) {
  size_t words = fxt_event_record_words(type, &thread, &category, &name, args, n);
  fxt_write_event_record(build_reserve(b, words), words, type, ticks, &thread, &category, &name,
                         args, n, payload);
}

/* An event with inline strings and thread. */
static inline void build_simple_event(fxt_buffer_t* b, unsigned type, uint64_t ticks, uint64_t pid,
                                      uint64_t tid, const char* category, const char* name,
                                      uint64_t payload) {
  build_event(b, type, ticks, trace_make_inline_thread_ref(pid, tid),
              trace_make_inline_c_string_ref(category), trace_make_inline_c_string_ref(name), NULL,
              0, payload);
}

static inline void build_kernel_object(fxt_buffer_t* b, uint64_t koid, unsigned type,
                                       const char* name, uint64_t process) {
  trace_string_ref_t ref = trace_make_inline_c_string_ref(name);
  trace_arg_t arg =
      trace_make_arg(trace_make_inline_c_string_ref("process"), trace_make_koid_arg_value(process));
  size_t n = process ? 1 : 0;
  size_t words = fxt_kernel_object_record_words(&ref, &arg, n);
  fxt_write_kernel_object_record(build_reserve(b, words), words, koid, type, &ref, &arg, n);
}

/* The archive's bytes: the buffer's words. */
static inline const void* build_bytes(const fxt_buffer_t* b, size_t* size) {
  *size = b->count * sizeof(uint64_t);
  return b->words;
}

#endif /* FXTRACE_TESTS_ORDERED_FXT_BUILD_H_ */
