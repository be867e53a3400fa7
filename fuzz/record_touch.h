/* Not part of the public API: reads every byte a decoded record borrows
 * (strings with their NUL, argument names and values, blob payloads, the
 * provider's name), so that a sanitizer catches a pointer the reader got
 * wrong. Shared by the fuzz target and tests/reader/test_robustness.c. */
#ifndef FXTRACE_FUZZ_RECORD_TOUCH_H_
#define FXTRACE_FUZZ_RECORD_TOUCH_H_

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "trace-reader/reader.h"

static inline uint64_t touch_bytes(const void* data, size_t size) {
  const unsigned char* p = (const unsigned char*)data;
  uint64_t sum = 0;
  for (size_t i = 0; i < size; i++) sum = sum * 31u + p[i];
  return sum;
}

/* A broken promise of the API aborts: the fuzzer and the tests both see
 * that as a failure. */
static inline void touch_check(int ok, const char* what) {
  if (ok) return;
  fprintf(stderr, "record_touch: %s\n", what);
  abort();
}

/* Strings promise a NUL after `length` bytes: read it too. */
static inline uint64_t touch_string(trace_reader_string_t s) {
  touch_check(s.data != NULL, "string with a NULL data pointer");
  touch_check(s.data[s.length] == '\0', "string without its terminating NUL");
  return touch_bytes(s.data, s.length);
}

static inline uint64_t touch_args(const trace_reader_args_t* args) {
  uint64_t sum = args->count;
  touch_check(args->count <= TRACE_READER_MAX_ARGS, "more arguments than the array holds");
  for (size_t i = 0; i < args->count; i++) {
    const trace_reader_arg_t* a = &args->items[i];
    sum += touch_string(a->name);
    if (a->type == 6) sum += touch_string(a->string_value);
    if (a->type == 10) sum += touch_bytes(a->blob_value.data, a->blob_value.size);
  }
  return sum;
}

/* Only for a TRACE_READ_RECORD result: the union member of the record's type. */
static inline uint64_t touch_record(const trace_record_t* rec) {
  uint64_t sum = rec->type + rec->size_words;
  if (rec->provider) sum += touch_string(rec->provider->name);
  switch (rec->type) {
    case 0: sum += touch_string(rec->metadata.provider_name); break;
    case 2: sum += touch_string(rec->string.value); break;
    case 4:
      sum += touch_string(rec->event.category) + touch_string(rec->event.name) +
             touch_args(&rec->event.args);
      break;
    case 5: sum += touch_string(rec->blob.name) + touch_bytes(rec->blob.data, rec->blob.size); break;
    case 6: sum += touch_string(rec->userspace_object.name) + touch_args(&rec->userspace_object.args); break;
    case 7: sum += touch_string(rec->kernel_object.name) + touch_args(&rec->kernel_object.args); break;
    case 8: sum += touch_args(&rec->scheduling.args); break;
    case 9: sum += touch_string(rec->log.message); break;
    case 15:
      sum += touch_string(rec->large.category) + touch_string(rec->large.name) +
             touch_args(&rec->large.args) + touch_bytes(rec->large.data, rec->large.size);
      break;
    default: break;
  }
  return sum;
}

#endif /* FXTRACE_FUZZ_RECORD_TOUCH_H_ */
