/* Round trip: archives built with the FXT encoder are read back by
 * libtrace-reader, and every decoded field is compared with what was
 * encoded. Each archive is read four ways (memory, a pipe fed in odd-sized
 * chunks by a child process, a file descriptor and a FILE*), since each
 * input path frames records differently.
 *
 * The main archive holds every record type and every argument type, inline
 * and indexed strings and threads, and two providers whose string and thread
 * tables give different values to the same indexes, so that a reader that
 * shared or failed to switch tables would decode wrong strings and koids.
 *
 * Then the reader's handling of input FXT.md §9 says it must survive: an
 * instant without its scope word, unknown record and argument types,
 * undefined string and thread indexes, a size-0 header, a missing magic
 * record and a truncated last record. */
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "fxt/fxt_buffer.h"
#include "fxt/fxt_encode.h"
#include "test.h"
#include "trace-reader/reader.h"

/* ---- fixtures ---- */

/* One provider's tables. Both providers use the same indexes for different
 * values. */
typedef struct provider_fixture {
  uint32_t id;
  const char* name;
  uint64_t ticks_per_second;
  const char* strings[5]; /* by index; [0] unused */
  uint64_t threads[3][2]; /* by index: process koid, thread koid */
} provider_fixture_t;

static const provider_fixture_t P1 = {
    1, "alpha", 19200000, {"", "cat", "event", "arg", "value"}, {{0, 0}, {100, 101}, {100, 102}}};
static const provider_fixture_t P2 = {
    2, "beta", 1000, {"", "cat2", "event2", "arg2", "value2"}, {{0, 0}, {200, 201}, {200, 202}}};

enum { BIG_BLOB_SIZE = 40000 }; /* more than a normal record's 4095 words */
static unsigned char big_blob[BIG_BLOB_SIZE];
static unsigned char small_blob[100];

static void fill_payloads(void) {
  for (size_t i = 0; i < sizeof big_blob; i++) big_blob[i] = (unsigned char)(i * 13u + 5u);
  for (size_t i = 0; i < sizeof small_blob; i++) small_blob[i] = (unsigned char)(255u - i);
}

static trace_string_ref_t idx(trace_string_index_t i) { return trace_make_indexed_string_ref(i); }
static trace_string_ref_t lit(const char* s) { return trace_make_inline_c_string_ref(s); }
static trace_thread_ref_t tidx(trace_thread_index_t i) { return trace_make_indexed_thread_ref(i); }
static trace_thread_ref_t tlit(uint64_t pid, uint64_t tid) {
  return trace_make_inline_thread_ref(pid, tid);
}

/* ---- building archives; every record's offset and size is kept so that
 * the reader's offsets and sizes can be checked too ---- */

enum { MAX_RECORDS = 128 };

typedef struct builder {
  fxt_buffer_t b;
  size_t count;
  uint64_t offsets[MAX_RECORDS]; /* bytes */
  uint64_t sizes[MAX_RECORDS];   /* words */
} builder_t;

static uint64_t* reserve(builder_t* bl, size_t words) {
  ASSERT_TRUE(bl->count < MAX_RECORDS);
  bl->offsets[bl->count] = bl->b.count * 8u;
  bl->sizes[bl->count++] = words;
  uint64_t* p = fxt_buffer_reserve(&bl->b, words);
  ASSERT_TRUE(p != NULL);
  return p;
}

/* Appends a record of `words` words, written by `call`, which sees the
 * destination as `p` and the size as `n`. */
#define APPEND(bl, words, call)          \
  do {                                   \
    size_t n = (words);                  \
    uint64_t* p = reserve((bl), n);      \
    ASSERT_TRUE((call) == p + n);        \
  } while (0)

static void append_raw(builder_t* bl, const uint64_t* words, size_t n) {
  memcpy(reserve(bl, n), words, n * sizeof(uint64_t));
}

static void builder_free(builder_t* bl) { fxt_buffer_free(&bl->b); }

/* ---- reading from each kind of input ---- */

typedef enum { FROM_MEMORY, FROM_PIPE, FROM_FD, FROM_FILE, SOURCE_KINDS } source_kind_t;
static const char* const SOURCE_NAMES[] = {"memory", "pipe", "fd", "FILE*"};

typedef struct source {
  source_kind_t kind;
  void* copy; /* memory: an exactly-sized copy, so ASan sees overreads */
  FILE* file;
  int pipe_fd;
  pid_t child;
} source_t;

/* The child writes in 1001-byte pieces, so reads end mid-word and
 * mid-record. It ignores SIGPIPE: the reader may stop early on an error. */
static void feed_pipe(int fd, const unsigned char* data, size_t size) {
  signal(SIGPIPE, SIG_IGN);
  while (size > 0) {
    size_t step = size < 1001 ? size : 1001;
    ssize_t n = write(fd, data, step);
    if (n <= 0) break;
    data += n;
    size -= (size_t)n;
  }
  close(fd);
  _exit(0);
}

static void open_pipe(source_t* s, const void* data, size_t size) {
  int fds[2];
  ASSERT_EQ(pipe(fds), 0);
  fflush(NULL); /* the child must not flush our buffered output again */
  s->child = fork();
  ASSERT_TRUE(s->child >= 0);
  if (s->child == 0) {
    close(fds[0]);
    feed_pipe(fds[1], data, size);
  }
  close(fds[1]);
  s->pipe_fd = fds[0];
}

static void open_tmpfile(source_t* s, const void* data, size_t size) {
  s->file = tmpfile();
  ASSERT_TRUE(s->file != NULL);
  ASSERT_EQ(fwrite(data, 1, size, s->file), size);
  ASSERT_EQ(fflush(s->file), 0);
  rewind(s->file);
}

static trace_reader_t* source_open(source_t* s, source_kind_t kind, const void* data, size_t size,
                                   const trace_reader_options_t* options) {
  memset(s, 0, sizeof(*s));
  s->kind = kind;
  trace_reader_t* r = NULL;
  switch (kind) {
    case FROM_MEMORY:
      s->copy = malloc(size ? size : 1);
      ASSERT_TRUE(s->copy != NULL);
      if (size) memcpy(s->copy, data, size);
      r = trace_reader_open_memory(s->copy, size, options);
      break;
    case FROM_PIPE:
      open_pipe(s, data, size);
      r = trace_reader_open_fd(s->pipe_fd, options);
      break;
    case FROM_FD:
      open_tmpfile(s, data, size);
      r = trace_reader_open_fd(fileno(s->file), options);
      break;
    default:
      open_tmpfile(s, data, size);
      r = trace_reader_open_file(s->file, options);
      break;
  }
  ASSERT_TRUE(r != NULL);
  return r;
}

static void source_close(source_t* s, trace_reader_t* r) {
  trace_reader_close(r);
  free(s->copy);
  if (s->file) fclose(s->file);
  if (s->kind == FROM_PIPE) {
    close(s->pipe_fd);
    int status = 0;
    ASSERT_EQ(waitpid(s->child, &status, 0), s->child);
    ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  }
}

/* ---- stepping through the records of a builder ---- */

typedef struct reading {
  trace_reader_t* r;
  const builder_t* built;
  size_t index; /* of the next record in built */
  size_t records, skipped;
  trace_record_t rec;
} reading_t;

static const trace_record_t* next_record(reading_t* rd, uint32_t type) {
  int rc = trace_reader_next(rd->r, &rd->rec);
  if (rc != TRACE_READ_RECORD)
    TEST_FAIL("record %zu: result %d, not a record (%s)", rd->index, rc,
              trace_reader_error(rd->r).message);
  ASSERT_TRUE(rd->index < rd->built->count);
  ASSERT_EQ(rd->rec.offset, rd->built->offsets[rd->index]);
  ASSERT_EQ(rd->rec.size_words, rd->built->sizes[rd->index]);
  ASSERT_EQ(rd->rec.type, type);
  ASSERT_TRUE(rd->rec.provider != NULL);
  rd->index++;
  rd->records++;
  return &rd->rec;
}

/* The next record must be skipped, with the error at its own offset. */
static void next_skipped(reading_t* rd) {
  int rc = trace_reader_next(rd->r, &rd->rec);
  if (rc != TRACE_READ_SKIPPED) TEST_FAIL("record %zu: result %d, not SKIPPED", rd->index, rc);
  trace_reader_error_t e = trace_reader_error(rd->r);
  ASSERT_EQ(e.offset, rd->built->offsets[rd->index]);
  ASSERT_TRUE(e.message != NULL && e.message[0] != '\0');
  rd->index++;
  rd->skipped++;
}

/* Clean end: every record consumed, stats agree, END is sticky. */
static void expect_end(reading_t* rd) {
  ASSERT_EQ(trace_reader_next(rd->r, &rd->rec), TRACE_READ_END);
  ASSERT_EQ(trace_reader_next(rd->r, &rd->rec), TRACE_READ_END);
  ASSERT_EQ(rd->index, rd->built->count);
  ASSERT_TRUE(!trace_reader_truncated(rd->r));
  trace_reader_stats_t st = trace_reader_stats(rd->r);
  ASSERT_EQ(st.records, rd->records);
  ASSERT_EQ(st.records_skipped, rd->skipped);
  ASSERT_EQ(st.bytes_read, rd->built->b.count * 8u);
}

/* ---- field expectations ---- */

static void expect_str(trace_reader_string_t got, const char* want) {
  size_t n = strlen(want);
  if (got.length != n || memcmp(got.data, want, n) != 0)
    TEST_FAIL("string \"%.*s\" (%zu bytes), expected \"%s\"", (int)got.length, got.data,
              got.length, want);
  ASSERT_EQ(got.data[n], '\0');
}

/* What an encoded string ref must decode to under provider fx. Inline refs
 * here are always made from whole C strings. */
static const char* ref_string(const provider_fixture_t* fx, const trace_string_ref_t* ref) {
  if (trace_is_inline_string_ref(ref)) return ref->inline_string;
  if (trace_is_empty_string_ref(ref)) return "";
  ASSERT_TRUE(ref->encoded_value < 5);
  return fx->strings[ref->encoded_value];
}

static void expect_thread(const provider_fixture_t* fx, const trace_thread_ref_t* ref,
                          uint64_t pid, uint64_t tid) {
  if (trace_is_inline_thread_ref(ref)) {
    ASSERT_EQ(pid, ref->inline_process_koid);
    ASSERT_EQ(tid, ref->inline_thread_koid);
  } else {
    ASSERT_TRUE(ref->encoded_value < 3);
    ASSERT_EQ(pid, fx->threads[ref->encoded_value][0]);
    ASSERT_EQ(tid, fx->threads[ref->encoded_value][1]);
  }
}

static void expect_provider(const trace_record_t* rec, const provider_fixture_t* fx) {
  ASSERT_EQ(rec->provider->id, fx->id);
  expect_str(rec->provider->name, fx->name);
  ASSERT_EQ(rec->provider->ticks_per_second, fx->ticks_per_second);
}

static void expect_arg(const provider_fixture_t* fx, const trace_reader_arg_t* got,
                       const trace_arg_t* want) {
  const trace_arg_value_t* v = &want->value;
  ASSERT_EQ(got->type, v->type);
  expect_str(got->name, ref_string(fx, &want->name_ref));
  switch (v->type) {
    case TRACE_ARG_NULL: break;
    case TRACE_ARG_INT32: ASSERT_EQ(got->int32_value, v->int32_value); break;
    case TRACE_ARG_UINT32: ASSERT_EQ(got->uint32_value, v->uint32_value); break;
    case TRACE_ARG_INT64: ASSERT_EQ(got->int64_value, v->int64_value); break;
    case TRACE_ARG_UINT64: ASSERT_EQ(got->uint64_value, v->uint64_value); break;
    case TRACE_ARG_DOUBLE: ASSERT_BYTES_EQ(&got->double_value, &v->double_value, 8); break;
    case TRACE_ARG_STRING:
      expect_str(got->string_value, ref_string(fx, &v->string_value_ref));
      break;
    case TRACE_ARG_POINTER: ASSERT_EQ(got->pointer_value, v->pointer_value); break;
    case TRACE_ARG_KOID: ASSERT_EQ(got->koid_value, v->koid_value); break;
    case TRACE_ARG_BOOL: ASSERT_EQ(got->bool_value, v->bool_value); break;
    case TRACE_ARG_BLOB:
      ASSERT_EQ(got->blob_value.size, v->blob_value.size);
      ASSERT_BYTES_EQ(got->blob_value.data, v->blob_value.data, v->blob_value.size);
      break;
  }
}

static void expect_args(const provider_fixture_t* fx, const trace_reader_args_t* got,
                        const trace_arg_t* want, size_t n) {
  ASSERT_EQ(got->count, n);
  for (size_t i = 0; i < n; i++) expect_arg(fx, &got->items[i], &want[i]);
}

/* ---- provider set-up: info, initialization, strings, threads ---- */

static void write_provider(builder_t* bl, const provider_fixture_t* fx) {
  size_t len = strlen(fx->name);
  APPEND(bl, fxt_provider_info_words(len), fxt_write_provider_info_record(p, fx->id, fx->name, len));
  APPEND(bl, 2, fxt_write_initialization_record(p, fx->ticks_per_second));
  for (unsigned i = 1; i < 5; i++) {
    len = strlen(fx->strings[i]);
    APPEND(bl, fxt_string_record_words(len),
           fxt_write_string_record(p, (trace_string_index_t)i, fx->strings[i], len));
  }
  for (unsigned i = 1; i < 3; i++)
    APPEND(bl, 3, fxt_write_thread_record(p, i, fx->threads[i][0], fx->threads[i][1]));
}

static void verify_provider(reading_t* rd, const provider_fixture_t* fx) {
  const trace_record_t* rec = next_record(rd, FXT_RECORD_METADATA);
  ASSERT_EQ(rec->metadata.type, FXT_METADATA_PROVIDER_INFO);
  ASSERT_EQ(rec->metadata.provider_id, fx->id);
  expect_str(rec->metadata.provider_name, fx->name);
  ASSERT_EQ(rec->provider->id, fx->id);
  ASSERT_EQ(rec->provider->ticks_per_second, 1000000000u); /* until initialization */
  rec = next_record(rd, FXT_RECORD_INITIALIZATION);
  ASSERT_EQ(rec->initialization.ticks_per_second, fx->ticks_per_second);
  for (unsigned i = 1; i < 5; i++) {
    rec = next_record(rd, FXT_RECORD_STRING);
    ASSERT_EQ(rec->string.index, i);
    expect_str(rec->string.value, fx->strings[i]);
    expect_provider(rec, fx);
  }
  for (unsigned i = 1; i < 3; i++) {
    rec = next_record(rd, FXT_RECORD_THREAD);
    ASSERT_EQ(rec->thread.index, i);
    ASSERT_EQ(rec->thread.process_koid, fx->threads[i][0]);
    ASSERT_EQ(rec->thread.thread_koid, fx->threads[i][1]);
  }
}

/* ---- the 11 event types, with a mix of inline and indexed refs ---- */

static trace_thread_ref_t event_thread(unsigned et) {
  return et % 2 ? tlit(300 + et, 400 + et) : tidx(1 + (et / 2) % 2);
}
static trace_string_ref_t event_category(unsigned et) { return et % 3 ? idx(1) : lit("icat"); }
static trace_string_ref_t event_name(unsigned et) { return et % 2 ? idx(2) : lit("iname"); }
static uint64_t event_payload(unsigned et) {
  return et == FXT_EVENT_INSTANT ? TRACE_SCOPE_PROCESS : 0x5000u + et;
}

static void write_events(builder_t* bl) {
  for (unsigned et = 0; et <= FXT_EVENT_FLOW_END; et++) {
    trace_thread_ref_t th = event_thread(et);
    trace_string_ref_t cat = event_category(et), name = event_name(et);
    APPEND(bl, fxt_event_record_words(et, &th, &cat, &name, NULL, 0),
           fxt_write_event_record(p, n, et, 1000 + et, &th, &cat, &name, NULL, 0,
                                  event_payload(et)));
  }
}

static void verify_events(reading_t* rd) {
  for (unsigned et = 0; et <= FXT_EVENT_FLOW_END; et++) {
    const trace_record_t* rec = next_record(rd, FXT_RECORD_EVENT);
    trace_thread_ref_t th = event_thread(et);
    trace_string_ref_t cat = event_category(et), name = event_name(et);
    expect_provider(rec, &P1);
    ASSERT_EQ(rec->event.event_type, et);
    ASSERT_EQ(rec->event.ticks, 1000 + et);
    expect_thread(&P1, &th, rec->event.process_koid, rec->event.thread_koid);
    expect_str(rec->event.category, ref_string(&P1, &cat));
    expect_str(rec->event.name, ref_string(&P1, &name));
    ASSERT_EQ(rec->event.args.count, 0);
    bool instant = et == FXT_EVENT_INSTANT;
    ASSERT_EQ(rec->event.has_scope, instant);
    if (instant) ASSERT_EQ(rec->event.scope, TRACE_SCOPE_PROCESS);
    bool no_payload = et == FXT_EVENT_DURATION_BEGIN || et == FXT_EVENT_DURATION_END;
    if (!instant) ASSERT_EQ(rec->event.payload, no_payload ? 0 : event_payload(et));
  }
}

/* ---- every argument type in one event ---- */

enum { ALL_ARGS = 14 };
static const unsigned char ARG_BLOB[13] = "blob\0payload"; /* a NUL inside */

static void make_all_args(trace_arg_t a[ALL_ARGS]) {
  a[0] = trace_make_arg(idx(3), trace_make_null_arg_value());
  a[1] = trace_make_arg(lit("i32"), trace_make_int32_arg_value(-42));
  a[2] = trace_make_arg(idx(3), trace_make_uint32_arg_value(0xFFFFFFFFu));
  a[3] = trace_make_arg(lit("i64"), trace_make_int64_arg_value(INT64_MIN));
  a[4] = trace_make_arg(idx(3), trace_make_uint64_arg_value(UINT64_MAX));
  a[5] = trace_make_arg(lit("dbl"), trace_make_double_arg_value(-0.1));
  a[6] = trace_make_arg(idx(3), trace_make_string_arg_value(idx(4)));
  a[7] = trace_make_arg(lit("s"), trace_make_string_arg_value(lit("an inline string value")));
  a[8] = trace_make_arg(idx(3), trace_make_string_arg_value(trace_make_empty_string_ref()));
  a[9] = trace_make_arg(lit("ptr"), trace_make_pointer_arg_value(0xDEADBEEFu));
  a[10] = trace_make_arg(idx(3), trace_make_koid_arg_value(UINT64_C(0x123456789)));
  a[11] = trace_make_arg(lit("yes"), trace_make_bool_arg_value(true));
  a[12] = trace_make_arg(idx(3), trace_make_bool_arg_value(false));
  a[13] = trace_make_arg(lit("blob"), trace_make_blob_arg_value(ARG_BLOB, sizeof ARG_BLOB));
}

static void write_args_event(builder_t* bl) {
  trace_arg_t args[ALL_ARGS];
  make_all_args(args);
  trace_thread_ref_t th = tidx(2);
  trace_string_ref_t cat = idx(1), name = lit("args");
  APPEND(bl, fxt_event_record_words(FXT_EVENT_INSTANT, &th, &cat, &name, args, ALL_ARGS),
         fxt_write_event_record(p, n, FXT_EVENT_INSTANT, 2000, &th, &cat, &name, args, ALL_ARGS,
                                TRACE_SCOPE_GLOBAL));
}

static void verify_args_event(reading_t* rd) {
  trace_arg_t args[ALL_ARGS];
  make_all_args(args);
  const trace_record_t* rec = next_record(rd, FXT_RECORD_EVENT);
  ASSERT_EQ(rec->event.event_type, FXT_EVENT_INSTANT);
  ASSERT_EQ(rec->event.ticks, 2000);
  ASSERT_EQ(rec->event.process_koid, 100);
  ASSERT_EQ(rec->event.thread_koid, 102);
  expect_str(rec->event.category, "cat");
  expect_str(rec->event.name, "args");
  expect_args(&P1, &rec->event.args, args, ALL_ARGS);
  ASSERT_TRUE(rec->event.has_scope);
  ASSERT_EQ(rec->event.scope, TRACE_SCOPE_GLOBAL);
}

/* ---- instants without the scope word (FXT.md §8.5: the doc's form),
 * hand-written since the encoder always emits the scope ---- */

static void write_scopeless_instants(builder_t* bl) {
  /* type 4, size 2, instant, thread 1, category 1, name 2 */
  const uint64_t bare[] = {0x0002000101000024, 3000};
  /* size 3, one argument: int32 named by index 3, value 7 */
  const uint64_t with_arg[] = {0x0002000101100034, 3001, 0x0000000700030011};
  append_raw(bl, bare, 2);
  append_raw(bl, with_arg, 3);
}

static void verify_scopeless_instants(reading_t* rd) {
  for (unsigned i = 0; i < 2; i++) {
    const trace_record_t* rec = next_record(rd, FXT_RECORD_EVENT);
    ASSERT_EQ(rec->event.event_type, FXT_EVENT_INSTANT);
    ASSERT_EQ(rec->event.ticks, 3000 + i);
    ASSERT_EQ(rec->event.thread_koid, 101);
    expect_str(rec->event.name, "event");
    ASSERT_TRUE(!rec->event.has_scope);
    ASSERT_EQ(rec->event.scope, TRACE_SCOPE_THREAD);
    ASSERT_EQ(rec->event.args.count, i);
  }
  ASSERT_EQ(rd->rec.event.args.items[0].int32_value, 7);
  expect_str(rd->rec.event.args.items[0].name, "arg");
}

/* ---- blobs, userspace and kernel objects ---- */

static const char SMALL_BLOB_TEXT[] = "small blob payload";

static void write_objects(builder_t* bl) {
  trace_string_ref_t name = lit("blobname");
  size_t len = strlen(SMALL_BLOB_TEXT);
  APPEND(bl, fxt_blob_record_words(&name, len),
         fxt_write_blob_record(p, n, TRACE_BLOB_TYPE_DATA, &name, SMALL_BLOB_TEXT, len));
  name = idx(2);
  APPEND(bl, fxt_blob_record_words(&name, 8),
         fxt_write_blob_record(p, n, TRACE_BLOB_TYPE_PERFETTO, &name, "ABCDEFGH", 8));

  trace_thread_ref_t proc = tlit(555, 556);
  trace_arg_t uarg = trace_make_arg(idx(3), trace_make_int32_arg_value(7));
  name = lit("uobj");
  APPEND(bl, fxt_userspace_object_record_words(&proc, &name, &uarg, 1),
         fxt_write_userspace_object_record(p, n, 0xABCDEF, &proc, &name, &uarg, 1));
  proc = tidx(2);
  name = idx(2);
  APPEND(bl, fxt_userspace_object_record_words(&proc, &name, NULL, 0),
         fxt_write_userspace_object_record(p, n, 0x1000, &proc, &name, NULL, 0));

  trace_arg_t karg = trace_make_arg(lit("process"), trace_make_koid_arg_value(100));
  name = lit("worker");
  APPEND(bl, fxt_kernel_object_record_words(&name, &karg, 1),
         fxt_write_kernel_object_record(p, n, 101, FXT_KOBJ_THREAD, &name, &karg, 1));
  name = idx(2);
  APPEND(bl, fxt_kernel_object_record_words(&name, NULL, 0),
         fxt_write_kernel_object_record(p, n, 100, FXT_KOBJ_PROCESS, &name, NULL, 0));
}

static void verify_blobs(reading_t* rd) {
  const trace_record_t* rec = next_record(rd, FXT_RECORD_BLOB);
  ASSERT_EQ(rec->blob.blob_type, TRACE_BLOB_TYPE_DATA);
  expect_str(rec->blob.name, "blobname");
  ASSERT_EQ(rec->blob.size, strlen(SMALL_BLOB_TEXT));
  ASSERT_BYTES_EQ(rec->blob.data, SMALL_BLOB_TEXT, rec->blob.size);
  rec = next_record(rd, FXT_RECORD_BLOB);
  ASSERT_EQ(rec->blob.blob_type, TRACE_BLOB_TYPE_PERFETTO);
  expect_str(rec->blob.name, "event");
  ASSERT_EQ(rec->blob.size, 8);
  ASSERT_BYTES_EQ(rec->blob.data, "ABCDEFGH", 8);
}

static void verify_objects(reading_t* rd) {
  verify_blobs(rd);
  trace_arg_t uarg = trace_make_arg(idx(3), trace_make_int32_arg_value(7));
  const trace_record_t* rec = next_record(rd, FXT_RECORD_USERSPACE_OBJECT);
  ASSERT_EQ(rec->userspace_object.pointer, 0xABCDEF);
  ASSERT_EQ(rec->userspace_object.process_koid, 555); /* one koid word only */
  expect_str(rec->userspace_object.name, "uobj");
  expect_args(&P1, &rec->userspace_object.args, &uarg, 1);
  rec = next_record(rd, FXT_RECORD_USERSPACE_OBJECT);
  ASSERT_EQ(rec->userspace_object.pointer, 0x1000);
  ASSERT_EQ(rec->userspace_object.process_koid, 100); /* thread 2's process */
  expect_str(rec->userspace_object.name, "event");
  ASSERT_EQ(rec->userspace_object.args.count, 0);

  trace_arg_t karg = trace_make_arg(lit("process"), trace_make_koid_arg_value(100));
  rec = next_record(rd, FXT_RECORD_KERNEL_OBJECT);
  ASSERT_EQ(rec->kernel_object.koid, 101);
  ASSERT_EQ(rec->kernel_object.object_type, FXT_KOBJ_THREAD);
  expect_str(rec->kernel_object.name, "worker");
  expect_args(&P1, &rec->kernel_object.args, &karg, 1);
  rec = next_record(rd, FXT_RECORD_KERNEL_OBJECT);
  ASSERT_EQ(rec->kernel_object.koid, 100);
  ASSERT_EQ(rec->kernel_object.object_type, FXT_KOBJ_PROCESS);
  expect_str(rec->kernel_object.name, "event");
  ASSERT_EQ(rec->kernel_object.args.count, 0);
}

/* ---- scheduling: legacy context switch both ways round, context switch,
 * wakeup ---- */

static void make_sched_args(trace_arg_t cs[2], trace_arg_t* wake) {
  cs[0] = trace_make_arg(lit("outgoing_weight"), trace_make_int32_arg_value(5));
  cs[1] = trace_make_arg(lit("incoming_weight"), trace_make_int32_arg_value(6));
  *wake = trace_make_arg(idx(3), trace_make_int32_arg_value(3));
}

static void write_scheduling(builder_t* bl) {
  trace_thread_ref_t out = tidx(1), in = tlit(300, 301);
  APPEND(bl, fxt_legacy_context_switch_record_words(&out, &in),
         fxt_write_legacy_context_switch_record(p, n, 5000, 3, FXT_THREAD_BLOCKED, &out, &in, 10,
                                                20));
  out = tlit(302, 303);
  in = tidx(2);
  APPEND(bl, fxt_legacy_context_switch_record_words(&out, &in),
         fxt_write_legacy_context_switch_record(p, n, 5001, 255, FXT_THREAD_SUSPENDED, &out, &in,
                                                0, 255));
  trace_arg_t cs[2], wake;
  make_sched_args(cs, &wake);
  APPEND(bl, fxt_context_switch_record_words(cs, 2),
         fxt_write_context_switch_record(p, n, 5002, 0x1234, FXT_THREAD_DEAD, 101, 102, cs, 2));
  APPEND(bl, fxt_thread_wakeup_record_words(&wake, 1),
         fxt_write_thread_wakeup_record(p, n, 5003, 9, 102, &wake, 1));
}

static void verify_legacy_switch(reading_t* rd, uint64_t ticks, uint32_t cpu, uint32_t state,
                                 const uint64_t out[2], const uint64_t in[2], uint32_t out_prio,
                                 uint32_t in_prio) {
  const trace_record_t* rec = next_record(rd, FXT_RECORD_SCHEDULING);
  ASSERT_EQ(rec->scheduling.sched_type, FXT_SCHED_LEGACY_CONTEXT_SWITCH);
  ASSERT_EQ(rec->scheduling.ticks, ticks);
  ASSERT_EQ(rec->scheduling.cpu, cpu);
  ASSERT_EQ(rec->scheduling.outgoing_state, state);
  ASSERT_EQ(rec->scheduling.outgoing_process_koid, out[0]);
  ASSERT_EQ(rec->scheduling.outgoing_thread_koid, out[1]);
  ASSERT_EQ(rec->scheduling.incoming_process_koid, in[0]);
  ASSERT_EQ(rec->scheduling.incoming_thread_koid, in[1]);
  ASSERT_EQ(rec->scheduling.outgoing_priority, out_prio);
  ASSERT_EQ(rec->scheduling.incoming_priority, in_prio);
}

static void verify_scheduling(reading_t* rd) {
  static const uint64_t inline_in[2] = {300, 301}, inline_out[2] = {302, 303};
  verify_legacy_switch(rd, 5000, 3, FXT_THREAD_BLOCKED, P1.threads[1], inline_in, 10, 20);
  verify_legacy_switch(rd, 5001, 255, FXT_THREAD_SUSPENDED, inline_out, P1.threads[2], 0, 255);
  trace_arg_t cs[2], wake;
  make_sched_args(cs, &wake);
  const trace_record_t* rec = next_record(rd, FXT_RECORD_SCHEDULING);
  ASSERT_EQ(rec->scheduling.sched_type, FXT_SCHED_CONTEXT_SWITCH);
  ASSERT_EQ(rec->scheduling.ticks, 5002);
  ASSERT_EQ(rec->scheduling.cpu, 0x1234);
  ASSERT_EQ(rec->scheduling.outgoing_state, FXT_THREAD_DEAD);
  ASSERT_EQ(rec->scheduling.outgoing_thread_koid, 101);
  ASSERT_EQ(rec->scheduling.incoming_thread_koid, 102);
  expect_args(&P1, &rec->scheduling.args, cs, 2);
  rec = next_record(rd, FXT_RECORD_SCHEDULING);
  ASSERT_EQ(rec->scheduling.sched_type, FXT_SCHED_THREAD_WAKEUP);
  ASSERT_EQ(rec->scheduling.ticks, 5003);
  ASSERT_EQ(rec->scheduling.cpu, 9);
  ASSERT_EQ(rec->scheduling.incoming_thread_koid, 102);
  expect_args(&P1, &rec->scheduling.args, &wake, 1);
}

/* ---- logs ---- */

static void write_logs(builder_t* bl) {
  trace_thread_ref_t th = tlit(400, 401);
  APPEND(bl, fxt_log_record_words(&th, 10), fxt_write_log_record(p, n, 6000, &th, "hello, log", 10));
  th = tidx(1);
  APPEND(bl, fxt_log_record_words(&th, 1), fxt_write_log_record(p, n, 6001, &th, "x", 1));
  th = tidx(2);
  APPEND(bl, fxt_log_record_words(&th, 0), fxt_write_log_record(p, n, 6002, &th, "", 0));
}

static void verify_logs(reading_t* rd) {
  static const struct {
    uint64_t pid, tid;
    const char* message;
  } want[] = {{400, 401, "hello, log"}, {100, 101, "x"}, {100, 102, ""}};
  for (unsigned i = 0; i < 3; i++) {
    const trace_record_t* rec = next_record(rd, FXT_RECORD_LOG);
    ASSERT_EQ(rec->log.ticks, 6000 + i);
    ASSERT_EQ(rec->log.process_koid, want[i].pid);
    ASSERT_EQ(rec->log.thread_koid, want[i].tid);
    expect_str(rec->log.message, want[i].message);
  }
}

/* ---- large blobs: format 0 (indexed and inline thread) and format 1, the
 * last bigger than a normal record can be ---- */

static void write_large_blobs(builder_t* bl) {
  trace_string_ref_t cat = idx(1), name = lit("lb");
  trace_thread_ref_t th = tidx(1);
  trace_arg_t arg = trace_make_arg(idx(3), trace_make_uint64_arg_value(42));
  APPEND(bl, fxt_large_blob_event_record_words(&cat, &name, &th, &arg, 1, sizeof small_blob),
         fxt_write_large_blob_event_record(p, n, &cat, &name, 7000, &th, &arg, 1, small_blob,
                                           sizeof small_blob));
  cat = lit("lcat");
  name = idx(2);
  th = tlit(500, 501);
  APPEND(bl, fxt_large_blob_event_record_words(&cat, &name, &th, NULL, 0, 3),
         fxt_write_large_blob_event_record(p, n, &cat, &name, 7001, &th, NULL, 0, "xyz", 3));
  cat = lit("att");
  APPEND(bl, fxt_large_blob_attachment_record_words(&cat, &name, BIG_BLOB_SIZE),
         fxt_write_large_blob_attachment_record(p, n, &cat, &name, big_blob, BIG_BLOB_SIZE));
}

static const trace_record_t* next_large(reading_t* rd, uint32_t format, const char* cat,
                                        const char* name, size_t size) {
  const trace_record_t* rec = next_record(rd, FXT_RECORD_LARGE);
  ASSERT_EQ(rec->large.large_type, FXT_LARGE_BLOB);
  ASSERT_EQ(rec->large.blob_format, format);
  expect_str(rec->large.category, cat);
  expect_str(rec->large.name, name);
  ASSERT_EQ(rec->large.size, size);
  return rec;
}

static void verify_large_blobs(reading_t* rd) {
  trace_arg_t arg = trace_make_arg(idx(3), trace_make_uint64_arg_value(42));
  const trace_record_t* rec = next_large(rd, TRACE_BLOB_FORMAT_EVENT, "cat", "lb", sizeof small_blob);
  ASSERT_EQ(rec->large.ticks, 7000);
  ASSERT_EQ(rec->large.process_koid, 100);
  ASSERT_EQ(rec->large.thread_koid, 101);
  expect_args(&P1, &rec->large.args, &arg, 1);
  ASSERT_BYTES_EQ(rec->large.data, small_blob, sizeof small_blob);
  rec = next_large(rd, TRACE_BLOB_FORMAT_EVENT, "lcat", "event", 3);
  ASSERT_EQ(rec->large.ticks, 7001);
  ASSERT_EQ(rec->large.process_koid, 500);
  ASSERT_EQ(rec->large.thread_koid, 501);
  ASSERT_EQ(rec->large.args.count, 0);
  ASSERT_BYTES_EQ(rec->large.data, "xyz", 3);
  rec = next_large(rd, TRACE_BLOB_FORMAT_ATTACHMENT, "att", "event", BIG_BLOB_SIZE);
  ASSERT_TRUE(rec->size_words > 0xfff);
  ASSERT_BYTES_EQ(rec->large.data, big_blob, BIG_BLOB_SIZE);
}

/* ---- provider sections: tables are per provider (FXT.md §9) ---- */

/* A duration begin that resolves all its refs through the tables. */
static void write_probe(builder_t* bl) {
  trace_thread_ref_t th = tidx(1);
  trace_string_ref_t cat = idx(1), name = idx(2);
  trace_arg_t arg = trace_make_arg(idx(3), trace_make_string_arg_value(idx(4)));
  APPEND(bl, fxt_event_record_words(FXT_EVENT_DURATION_BEGIN, &th, &cat, &name, &arg, 1),
         fxt_write_event_record(p, n, FXT_EVENT_DURATION_BEGIN, 8000, &th, &cat, &name, &arg, 1,
                                0));
}

static void verify_probe(reading_t* rd, const provider_fixture_t* fx) {
  const trace_record_t* rec = next_record(rd, FXT_RECORD_EVENT);
  expect_provider(rec, fx);
  ASSERT_EQ(rec->event.event_type, FXT_EVENT_DURATION_BEGIN);
  ASSERT_EQ(rec->event.process_koid, fx->threads[1][0]);
  ASSERT_EQ(rec->event.thread_koid, fx->threads[1][1]);
  expect_str(rec->event.category, fx->strings[1]);
  expect_str(rec->event.name, fx->strings[2]);
  ASSERT_EQ(rec->event.args.count, 1);
  expect_str(rec->event.args.items[0].name, fx->strings[3]);
  expect_str(rec->event.args.items[0].string_value, fx->strings[4]);
}

static void write_provider_switches(builder_t* bl) {
  write_provider(bl, &P2);
  write_probe(bl);
  APPEND(bl, 1, fxt_write_provider_section_record(p, P1.id));
  write_probe(bl);
  APPEND(bl, 1, fxt_write_provider_event_record(p, P2.id, FXT_PROVIDER_EVENT_BUFFER_OVERFLOW));
  write_probe(bl);
  APPEND(bl, 1, fxt_write_provider_section_record(p, P2.id));
  write_probe(bl);
  /* announcing provider 1 again starts it afresh: its tables are empty */
  APPEND(bl, fxt_provider_info_words(11), fxt_write_provider_info_record(p, P1.id, "alpha-again", 11));
  write_probe(bl);
}

static void verify_section(reading_t* rd, const provider_fixture_t* fx) {
  const trace_record_t* rec = next_record(rd, FXT_RECORD_METADATA);
  ASSERT_EQ(rec->metadata.type, FXT_METADATA_PROVIDER_SECTION);
  ASSERT_EQ(rec->metadata.provider_id, fx->id);
  expect_str(rec->metadata.provider_name, fx->name);
  expect_provider(rec, fx);
}

static void verify_provider_switches(reading_t* rd) {
  verify_provider(rd, &P2);
  verify_probe(rd, &P2);
  verify_section(rd, &P1);
  verify_probe(rd, &P1);
  const trace_record_t* rec = next_record(rd, FXT_RECORD_METADATA);
  ASSERT_EQ(rec->metadata.type, FXT_METADATA_PROVIDER_EVENT);
  ASSERT_EQ(rec->metadata.provider_id, P2.id);
  ASSERT_EQ(rec->metadata.event_id, FXT_PROVIDER_EVENT_BUFFER_OVERFLOW);
  ASSERT_EQ(rec->provider->id, P1.id); /* an event does not switch sections */
  verify_probe(rd, &P1);
  verify_section(rd, &P2);
  verify_probe(rd, &P2);
  rec = next_record(rd, FXT_RECORD_METADATA);
  ASSERT_EQ(rec->metadata.type, FXT_METADATA_PROVIDER_INFO);
  expect_str(rec->provider->name, "alpha-again");
  ASSERT_EQ(rec->provider->ticks_per_second, 1000000000u);
  next_skipped(rd); /* string index 1 is gone with the old tables */
}

/* ---- the whole archive ---- */

static void build_main_archive(builder_t* bl) {
  APPEND(bl, 1, fxt_write_magic_record(p));
  write_provider(bl, &P1);
  write_events(bl);
  write_args_event(bl);
  write_scopeless_instants(bl);
  write_objects(bl);
  write_scheduling(bl);
  write_logs(bl);
  write_large_blobs(bl);
  write_provider_switches(bl);
}

static void verify_main_archive(reading_t* rd) {
  const trace_record_t* rec = next_record(rd, FXT_RECORD_METADATA);
  ASSERT_EQ(rec->metadata.type, FXT_METADATA_TRACE_INFO);
  ASSERT_EQ(rec->metadata.trace_info_type, FXT_TRACE_INFO_MAGIC_NUMBER);
  ASSERT_EQ(rec->metadata.magic, FXT_MAGIC_VALUE);
  ASSERT_EQ(rec->provider->id, 0); /* before any provider-info record */
  verify_provider(rd, &P1);
  verify_events(rd);
  verify_args_event(rd);
  verify_scopeless_instants(rd);
  verify_objects(rd);
  verify_scheduling(rd);
  verify_logs(rd);
  verify_large_blobs(rd);
  verify_provider_switches(rd);
  expect_end(rd);
}

/* Reads `bl` from every kind of source with `check`. */
static void read_each_way(const builder_t* bl, void (*check)(reading_t*)) {
  for (int kind = 0; kind < SOURCE_KINDS; kind++) {
    source_t src;
    reading_t rd = {0};
    rd.built = bl;
    rd.r = source_open(&src, (source_kind_t)kind, bl->b.words, bl->b.count * 8u, NULL);
    check(&rd);
    source_close(&src, rd.r);
  }
}

static void test_main_archive(void) {
  builder_t bl = {0};
  build_main_archive(&bl);
  read_each_way(&bl, verify_main_archive);
  builder_free(&bl);
}

/* ---- unknown record types 10..14 and an unknown argument type: skipped by
 * their size, and what follows still decodes ---- */

static void build_unknown_types(builder_t* bl) {
  APPEND(bl, 1, fxt_write_magic_record(p));
  for (uint64_t type = 10; type <= 14; type++) {
    /* size 3 in bits 4..15; arbitrary bits above */
    const uint64_t rec[] = {UINT64_C(0xDEAD000000000030) | type, 0x1111, 0x2222};
    append_raw(bl, rec, 3);
  }
  const uint64_t event[] = {
      0x00000000003000A4, /* instant, size 10, 3 args, inline thread, empty strings */
      5, 1, 2,            /* timestamp, pid, tid */
      0x0000000100000011, /* int32 = 1 */
      0x000000008002003D, /* type 13, size 3, inline name "zz" */
      0x0000000000007A7A, 0x2222,
      0x0000000100000019, /* bool = true */
      TRACE_SCOPE_GLOBAL,
  };
  append_raw(bl, event, 10);
  APPEND(bl, 2, fxt_write_initialization_record(p, 12345));
}

static void verify_unknown_types(reading_t* rd) {
  next_record(rd, FXT_RECORD_METADATA);
  for (int i = 0; i < 5; i++) next_skipped(rd);
  const trace_record_t* rec = next_record(rd, FXT_RECORD_EVENT);
  ASSERT_EQ(rec->event.args.count, 2); /* the type-13 argument is left out */
  ASSERT_EQ(rec->event.args.items[0].type, TRACE_ARG_INT32);
  ASSERT_EQ(rec->event.args.items[0].int32_value, 1);
  ASSERT_EQ(rec->event.args.items[1].type, TRACE_ARG_BOOL);
  ASSERT_TRUE(rec->event.args.items[1].bool_value);
  ASSERT_TRUE(rec->event.has_scope);
  ASSERT_EQ(rec->event.scope, TRACE_SCOPE_GLOBAL);
  ASSERT_EQ(rec->event.process_koid, 1);
  ASSERT_EQ(rec->event.thread_koid, 2);
  rec = next_record(rd, FXT_RECORD_INITIALIZATION);
  ASSERT_EQ(rec->initialization.ticks_per_second, 12345);
  expect_end(rd);
}

static void test_unknown_types(void) {
  builder_t bl = {0};
  build_unknown_types(&bl);
  read_each_way(&bl, verify_unknown_types);
  builder_free(&bl);
}

/* ---- undefined string and thread indexes fail just their record ---- */

static void build_undefined_refs(builder_t* bl) {
  APPEND(bl, 1, fxt_write_magic_record(p));
  APPEND(bl, 2, fxt_write_provider_info_record(p, 1, "p", 1));
  APPEND(bl, 2, fxt_write_string_record(p, 1, "a", 1));
  APPEND(bl, 3, fxt_write_thread_record(p, 1, 10, 11));
  trace_thread_ref_t good_thread = tidx(1), bad_thread = tidx(9);
  trace_string_ref_t good = idx(1), bad = idx(5);
  trace_arg_t bad_arg = trace_make_arg(idx(6), trace_make_null_arg_value());
  APPEND(bl, 2, fxt_write_event_record(p, n, FXT_EVENT_DURATION_END, 1, &good_thread, &good, &bad,
                                       NULL, 0, 0));
  APPEND(bl, 2, fxt_write_event_record(p, n, FXT_EVENT_DURATION_END, 2, &bad_thread, &good, &good,
                                       NULL, 0, 0));
  APPEND(bl, 3, fxt_write_event_record(p, n, FXT_EVENT_DURATION_END, 3, &good_thread, &good, &good,
                                       &bad_arg, 1, 0));
  APPEND(bl, 2, fxt_write_event_record(p, n, FXT_EVENT_DURATION_END, 4, &good_thread, &good, &good,
                                       NULL, 0, 0));
  /* a section for a provider never announced: reported, and its (empty)
   * tables resolve nothing until provider 1 is switched back in */
  APPEND(bl, 1, fxt_write_provider_section_record(p, 99));
  APPEND(bl, 2, fxt_write_event_record(p, n, FXT_EVENT_DURATION_END, 5, &good_thread, &good, &good,
                                       NULL, 0, 0));
  APPEND(bl, 1, fxt_write_provider_section_record(p, 1));
  APPEND(bl, 2, fxt_write_event_record(p, n, FXT_EVENT_DURATION_END, 6, &good_thread, &good, &good,
                                       NULL, 0, 0));
}

static void verify_undefined_refs(reading_t* rd) {
  static const uint32_t set_up[] = {FXT_RECORD_METADATA, FXT_RECORD_METADATA, FXT_RECORD_STRING,
                                    FXT_RECORD_THREAD};
  for (int i = 0; i < 4; i++) next_record(rd, set_up[i]);
  next_skipped(rd);
  ASSERT_TRUE(strstr(trace_reader_error(rd->r).message, "5") != NULL);
  next_skipped(rd);
  ASSERT_TRUE(strstr(trace_reader_error(rd->r).message, "9") != NULL);
  next_skipped(rd);
  ASSERT_TRUE(strstr(trace_reader_error(rd->r).message, "6") != NULL);
  const trace_record_t* rec = next_record(rd, FXT_RECORD_EVENT);
  ASSERT_EQ(rec->event.ticks, 4);
  expect_str(rec->event.name, "a");
  ASSERT_EQ(rec->event.thread_koid, 11);
  next_skipped(rd);
  ASSERT_TRUE(strstr(trace_reader_error(rd->r).message, "99") != NULL);
  next_skipped(rd);
  rec = next_record(rd, FXT_RECORD_METADATA);
  ASSERT_EQ(rec->provider->id, 1);
  expect_str(rec->metadata.provider_name, "p");
  rec = next_record(rd, FXT_RECORD_EVENT);
  ASSERT_EQ(rec->event.ticks, 6);
  expect_str(rec->event.category, "a");
  expect_end(rd);
}

static void test_undefined_refs(void) {
  builder_t bl = {0};
  build_undefined_refs(&bl);
  read_each_way(&bl, verify_undefined_refs);
  builder_free(&bl);
}

/* ---- fatal framing errors ---- */

/* Reads `bytes` bytes of bl: records [0, good) must decode, then ERROR at
 * byte `error_offset`, sticky, with trace_reader_truncated() == truncated. */
static void expect_fatal(const builder_t* bl, size_t bytes, size_t good, uint64_t error_offset,
                         bool truncated, const trace_reader_options_t* options) {
  for (int kind = 0; kind < SOURCE_KINDS; kind++) {
    source_t src;
    reading_t rd = {0};
    rd.built = bl;
    rd.r = source_open(&src, (source_kind_t)kind, bl->b.words, bytes, options);
    for (size_t i = 0; i < good; i++)
      next_record(&rd, (uint32_t)FXT_GET(bl->b.words[bl->offsets[i] / 8u], 0, 3));
    int rc = trace_reader_next(rd.r, &rd.rec);
    if (rc != TRACE_READ_ERROR) TEST_FAIL("%s: result %d, not ERROR", SOURCE_NAMES[kind], rc);
    trace_reader_error_t e = trace_reader_error(rd.r);
    ASSERT_EQ(e.offset, error_offset);
    ASSERT_TRUE(e.message[0] != '\0');
    ASSERT_EQ(trace_reader_truncated(rd.r), truncated);
    ASSERT_EQ(trace_reader_next(rd.r, &rd.rec), TRACE_READ_ERROR);
    ASSERT_EQ(trace_reader_stats(rd.r).records, good);
    source_close(&src, rd.r);
  }
}

static void test_size_zero_header(void) {
  builder_t bl = {0};
  APPEND(&bl, 1, fxt_write_magic_record(p));
  APPEND(&bl, 2, fxt_write_initialization_record(p, 1));
  const uint64_t zero_sized[] = {0x0000000100000004, 0}; /* an event of size 0 */
  append_raw(&bl, zero_sized, 2);
  expect_fatal(&bl, bl.b.count * 8u, 2, bl.offsets[2], false, NULL);
  builder_free(&bl);
  /* a large record (type 15) takes its size from bits 4..35, here 0 */
  builder_t large = {0};
  APPEND(&large, 1, fxt_write_magic_record(p));
  const uint64_t zero_large[] = {0x000000000000000F, 0};
  append_raw(&large, zero_large, 2);
  expect_fatal(&large, large.b.count * 8u, 1, 8, false, NULL);
  builder_free(&large);
}

static void test_missing_magic(void) {
  builder_t bl = {0};
  APPEND(&bl, 2, fxt_write_initialization_record(p, 777));
  APPEND(&bl, 1, fxt_write_magic_record(p));
  expect_fatal(&bl, bl.b.count * 8u, 0, 0, false, NULL);
  expect_fatal(&bl, 0, 0, 0, false, NULL); /* empty input */
  /* without require_magic the same bytes read fine */
  const trace_reader_options_t lax = {.require_magic = false};
  trace_reader_t* r = trace_reader_open_memory(bl.b.words, bl.b.count * 8u, &lax);
  reading_t rd = {.r = r, .built = &bl};
  ASSERT_EQ(next_record(&rd, FXT_RECORD_INITIALIZATION)->initialization.ticks_per_second, 777);
  next_record(&rd, FXT_RECORD_METADATA);
  expect_end(&rd);
  trace_reader_close(r);
  builder_free(&bl);
  /* the magic word in big-endian byte order is not accepted either */
  builder_t swapped = {0};
  const uint64_t big_endian_magic = 0x1000044678541600;
  append_raw(&swapped, &big_endian_magic, 1);
  expect_fatal(&swapped, 8, 0, 0, false, NULL);
  builder_free(&swapped);
}

static void test_truncated(void) {
  builder_t bl = {0};
  APPEND(&bl, 1, fxt_write_magic_record(p));
  APPEND(&bl, 2, fxt_write_initialization_record(p, 1));
  trace_thread_ref_t th = tlit(1, 2);
  trace_string_ref_t cat = lit("c"), name = lit("n");
  APPEND(&bl, fxt_event_record_words(FXT_EVENT_INSTANT, &th, &cat, &name, NULL, 0),
         fxt_write_event_record(p, n, FXT_EVENT_INSTANT, 1, &th, &cat, &name, NULL, 0, 0));
  th = tlit(3, 4);
  APPEND(&bl, fxt_log_record_words(&th, 20),
         fxt_write_log_record(p, n, 2, &th, "a twenty-byte string", 20));
  size_t full = bl.b.count * 8u;
  uint64_t last = bl.offsets[3];
  expect_fatal(&bl, full - 3, 3, last, true, NULL);  /* inside the last record */
  expect_fatal(&bl, last + 8, 3, last, true, NULL);  /* just its header */
  expect_fatal(&bl, last + 5, 3, last, true, NULL);  /* inside its header */
  builder_free(&bl);
}

int main(void) {
  fill_payloads();
  test_main_archive();
  test_unknown_types();
  test_undefined_refs();
  test_size_zero_header();
  test_missing_magic();
  test_truncated();
  puts("test_roundtrip: ok");
  return 0;
}
