/* Not part of the public API: for the tests in tests/event. Reads an FXT
 * archive through libtrace-reader into copies of the records the macro tests
 * look at (reader strings are borrowed until the next record), with lookups
 * that fail the test unless exactly one record matches. C and C++. */
#ifndef FXTRACE_TESTS_EVENT_RECORD_COPY_H_
#define FXTRACE_TESTS_EVENT_RECORD_COPY_H_

#include <stdbool.h>
#include <stdint.h>

#include "test.h"
#include "trace-engine/types.h"
#include "trace-reader/reader.h"

enum { MAX_RECORDS = 512, STR = 64 };

typedef struct arg_copy {
  uint32_t type;
  char name[STR];
  uint64_t bits; /* int/uint/koid/pointer/bool value, or double bits */
  double d;
  char str[STR];
  size_t str_length;
} arg_copy_t;

typedef struct rec_copy {
  uint32_t type; /* FXT record type */
  uint32_t event_type;
  uint64_t ticks, pid, tid, payload;
  bool has_scope;
  uint32_t scope;
  char category[STR], name[STR];
  size_t num_args;
  arg_copy_t args[TRACE_READER_MAX_ARGS];
  /* kernel object / thread / blob / large */
  uint64_t koid;
  uint32_t object_type, blob_type, blob_format;
  uint8_t data[64];
  size_t size;
} rec_copy_t;

static rec_copy_t g_records[MAX_RECORDS];
static size_t g_count;
static char g_strings[MAX_RECORDS][STR]; /* string records' values */
static size_t g_string_count;

static void copy_str(char* out, trace_reader_string_t s) {
  size_t n = s.length < STR - 1 ? s.length : STR - 1;
  memcpy(out, s.data, n);
  out[n] = '\0';
}

static void copy_args(rec_copy_t* c, const trace_reader_args_t* args) {
  c->num_args = args->count;
  for (size_t i = 0; i < args->count; i++) {
    const trace_reader_arg_t* a = &args->items[i];
    arg_copy_t* o = &c->args[i];
    o->type = a->type;
    copy_str(o->name, a->name);
    switch (a->type) {
      case TRACE_ARG_INT32: o->bits = (uint64_t)(int64_t)a->int32_value; break;
      case TRACE_ARG_UINT32: o->bits = a->uint32_value; break;
      case TRACE_ARG_INT64: o->bits = (uint64_t)a->int64_value; break;
      case TRACE_ARG_UINT64: o->bits = a->uint64_value; break;
      case TRACE_ARG_DOUBLE: o->d = a->double_value; memcpy(&o->bits, &o->d, 8); break;
      case TRACE_ARG_STRING:
        copy_str(o->str, a->string_value);
        o->str_length = a->string_value.length;
        break;
      case TRACE_ARG_POINTER: o->bits = a->pointer_value; break;
      case TRACE_ARG_KOID: o->bits = a->koid_value; break;
      case TRACE_ARG_BOOL: o->bits = a->bool_value; break;
      default: break;
    }
  }
}

static void read_archive(const uint8_t* data, size_t length) {
  g_count = 0;
  g_string_count = 0;
  trace_reader_t* r = trace_reader_open_memory(data, length, NULL);
  ASSERT_TRUE(r != NULL);
  trace_record_t rec;
  int status;
  while ((status = trace_reader_next(r, &rec)) != TRACE_READ_END) {
    if (status != TRACE_READ_RECORD)
      TEST_FAIL("reader: status %d at %llu: %s", status,
                (unsigned long long)trace_reader_error(r).offset, trace_reader_error(r).message);
    if (rec.type == 2) {
      ASSERT_TRUE(g_string_count < MAX_RECORDS);
      copy_str(g_strings[g_string_count++], rec.string.value);
      continue;
    }
    if (rec.type != 3 && rec.type != 4 && rec.type != 5 && rec.type != 7 && rec.type != 15)
      continue;
    ASSERT_TRUE(g_count < MAX_RECORDS);
    rec_copy_t* c = &g_records[g_count++];
    memset(c, 0, sizeof(*c));
    c->type = rec.type;
    switch (rec.type) {
      case 3:
        c->pid = rec.thread.process_koid;
        c->tid = rec.thread.thread_koid;
        break;
      case 4:
        c->event_type = rec.event.event_type;
        c->ticks = rec.event.ticks;
        c->pid = rec.event.process_koid;
        c->tid = rec.event.thread_koid;
        c->payload = rec.event.payload;
        c->has_scope = rec.event.has_scope;
        c->scope = rec.event.scope;
        copy_str(c->category, rec.event.category);
        copy_str(c->name, rec.event.name);
        copy_args(c, &rec.event.args);
        break;
      case 5:
        c->blob_type = rec.blob.blob_type;
        copy_str(c->name, rec.blob.name);
        c->size = rec.blob.size;
        memcpy(c->data, rec.blob.data, rec.blob.size < 64 ? rec.blob.size : 64);
        break;
      case 7:
        c->koid = rec.kernel_object.koid;
        c->object_type = rec.kernel_object.object_type;
        copy_str(c->name, rec.kernel_object.name);
        copy_args(c, &rec.kernel_object.args);
        break;
      case 15:
        ASSERT_EQ(rec.large.large_type, 0u);
        c->blob_format = rec.large.blob_format;
        copy_str(c->category, rec.large.category);
        copy_str(c->name, rec.large.name);
        c->ticks = rec.large.ticks;
        c->pid = rec.large.process_koid;
        c->tid = rec.large.thread_koid;
        copy_args(c, &rec.large.args);
        c->size = rec.large.size;
        memcpy(c->data, rec.large.data, rec.large.size < 64 ? rec.large.size : 64);
        break;
    }
  }
  trace_reader_close(r);
}

/* Index of the only record of `type` (and event type, for events) named
 * `name`; fails if there is not exactly one. */
static size_t find_one(uint32_t type, int event_type, const char* name) {
  size_t found = 0, index = 0;
  for (size_t i = 0; i < g_count; i++) {
    const rec_copy_t* c = &g_records[i];
    if (c->type != type || strcmp(c->name, name) != 0) continue;
    if (type == 4 && event_type >= 0 && c->event_type != (uint32_t)event_type) continue;
    found++;
    index = i;
  }
  if (found != 1)
    TEST_FAIL("%zu records of type %u/%d named \"%s\", expected 1", found, type, event_type,
              name);
  return index;
}

static size_t count_named(const char* name) {
  size_t n = 0;
  for (size_t i = 0; i < g_count; i++) n += strcmp(g_records[i].name, name) == 0;
  return n;
}

static bool have_string_record(const char* value) {
  for (size_t i = 0; i < g_string_count; i++)
    if (strcmp(g_strings[i], value) == 0) return true;
  return false;
}

static const arg_copy_t* arg_at(const rec_copy_t* c, size_t i, const char* name,
                                uint32_t type) {
  if (i >= c->num_args) TEST_FAIL("\"%s\": no argument %zu (%s)", c->name, i, name);
  ASSERT_STREQ(c->args[i].name, name);
  if (c->args[i].type != type)
    TEST_FAIL("\"%s\" arg %s: type %u, expected %u", c->name, name, c->args[i].type, type);
  return &c->args[i];
}

static void assert_same_args(const rec_copy_t* a, const rec_copy_t* b) {
  ASSERT_EQ(a->num_args, b->num_args);
  for (size_t i = 0; i < a->num_args; i++) {
    ASSERT_STREQ(a->args[i].name, b->args[i].name);
    ASSERT_EQ(a->args[i].type, b->args[i].type);
    ASSERT_EQ(a->args[i].bits, b->args[i].bits);
    ASSERT_EQ(a->args[i].str_length, b->args[i].str_length);
    ASSERT_STREQ(a->args[i].str, b->args[i].str);
  }
}

#endif /* FXTRACE_TESTS_EVENT_RECORD_COPY_H_ */
