/* The ordered view (src/ordered, docs/ordered-view.md) against a reference
 * computed here from the same archive read in file order:
 *   - every record comes out once, with every field as the reader gave it in
 *     file order (strings resolved where the record stood, its provider as
 *     it was then), including after a string or thread index was redefined
 *     and across a provider's change of tick rate;
 *   - timestamped records in (ns, input, seq) order: ties keep file order;
 *   - an untimed record right before the first record of its input that
 *     follows it in file order (so before every record that may use it);
 * in memory, spilled to the temporary file with a tiny buffer, with merge
 * passes (fan-in 2), from a pipe, and with two inputs; the memory bound of
 * ordered.h holds; skips, a cut input, an unusable TMPDIR, nothing left in
 * TMPDIR. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "ordered/fxt_build.h"
#include "ordered/ordered.h"
#include "test.h"
#include "trace/sample.h"

/* ---- a record as text: every field the reader fills ---- */

static void put_bytes(FILE* f, const void* data, size_t n) {
  const unsigned char* p = data;
  fprintf(f, "[%zu:", n);
  for (size_t i = 0; i < n; i++) fprintf(f, "%02x", p[i]);
  fputc(']', f);
}

static void put_str(FILE* f, const trace_reader_string_t* s) {
  put_bytes(f, s->data, s->length);
  if (s->data[s->length] != '\0') fputs("(not NUL-terminated)", f);
}

static void put_args(FILE* f, const trace_reader_args_t* a) {
  fprintf(f, " args=%zu", a->count);
  for (size_t i = 0; i < a->count; i++) {
    const trace_reader_arg_t* arg = &a->items[i];
    fprintf(f, " (%u ", arg->type);
    put_str(f, &arg->name);
    if (arg->type == 6)
      put_str(f, &arg->string_value);
    else if (arg->type == 10)
      put_bytes(f, arg->blob_value.data, arg->blob_value.size);
    else if (arg->type != 0)
      fprintf(f, " %016llx", (unsigned long long)arg->uint64_value);
    fputc(')', f);
  }
}

static char* describe(const trace_record_t* r) {
  char* text = NULL;
  size_t size = 0;
  FILE* f = open_memstream(&text, &size);
  ASSERT_TRUE(f != NULL);
  fprintf(f, "@%llu t%u w%llu p%u:", (unsigned long long)r->offset, r->type,
          (unsigned long long)r->size_words, r->provider->id);
  put_str(f, &r->provider->name);
  fprintf(f, "/%llu ", (unsigned long long)r->provider->ticks_per_second);
  switch (r->type) {
    case 0: /* the reader sets the fields of the metadata type only */
      fprintf(f, "meta %u %u ", r->metadata.type, r->metadata.provider_id);
      put_str(f, &r->metadata.provider_name);
      if (r->metadata.type == 3) fprintf(f, " event %u", r->metadata.event_id);
      if (r->metadata.type == 4)
        fprintf(f, " info %u %llx", r->metadata.trace_info_type,
                (unsigned long long)r->metadata.magic);
      break;
    case 1:
      fprintf(f, "init %llu", (unsigned long long)r->initialization.ticks_per_second);
      break;
    case 2:
      fprintf(f, "string %u ", r->string.index);
      put_str(f, &r->string.value);
      break;
    case 3:
      fprintf(f, "thread %u %llu %llu", r->thread.index, (unsigned long long)r->thread.process_koid,
              (unsigned long long)r->thread.thread_koid);
      break;
    case 4:
      fprintf(f, "event %u %llu %llu %llu ", r->event.event_type,
              (unsigned long long)r->event.ticks, (unsigned long long)r->event.process_koid,
              (unsigned long long)r->event.thread_koid);
      put_str(f, &r->event.category);
      put_str(f, &r->event.name);
      put_args(f, &r->event.args);
      fprintf(f, " %d %u %llu", r->event.has_scope, r->event.scope,
              (unsigned long long)r->event.payload);
      break;
    case 5:
      fprintf(f, "blob %u ", r->blob.blob_type);
      put_str(f, &r->blob.name);
      put_bytes(f, r->blob.data, r->blob.size);
      break;
    case 6:
      fprintf(f, "uobj %llx %llu ", (unsigned long long)r->userspace_object.pointer,
              (unsigned long long)r->userspace_object.process_koid);
      put_str(f, &r->userspace_object.name);
      put_args(f, &r->userspace_object.args);
      break;
    case 7:
      fprintf(f, "kobj %llu %u ", (unsigned long long)r->kernel_object.koid,
              r->kernel_object.object_type);
      put_str(f, &r->kernel_object.name);
      put_args(f, &r->kernel_object.args);
      break;
    case 8: {
      const __typeof__(r->scheduling)* s = &r->scheduling;
      fprintf(
          f, "sched %u %llu %u %u %llu %llu %llu %llu %u %u", s->sched_type,
          (unsigned long long)s->ticks, s->cpu, s->outgoing_state,
          (unsigned long long)s->outgoing_process_koid, (unsigned long long)s->outgoing_thread_koid,
          (unsigned long long)s->incoming_process_koid, (unsigned long long)s->incoming_thread_koid,
          s->outgoing_priority, s->incoming_priority);
      put_args(f, &s->args);
      break;
    }
    case 9:
      fprintf(f, "log %llu %llu %llu ", (unsigned long long)r->log.ticks,
              (unsigned long long)r->log.process_koid, (unsigned long long)r->log.thread_koid);
      put_str(f, &r->log.message);
      break;
    case 15: {
      const __typeof__(r->large)* l = &r->large;
      fprintf(f, "large %u %u %llu %llu %llu ", l->large_type, l->blob_format,
              (unsigned long long)l->ticks, (unsigned long long)l->process_koid,
              (unsigned long long)l->thread_koid);
      put_str(f, &l->category);
      put_str(f, &l->name);
      put_args(f, &l->args);
      put_bytes(f, l->data, l->size);
      break;
    }
    default:
      fprintf(f, "other");
  }
  fclose(f);
  return text;
}

/* ---- the reference: file order, then the documented order ---- */

typedef struct ref_record {
  char* text;
  bool timed;
  uint64_t ns;
  size_t input;
  uint64_t seq;
  /* sort key: timed (ns, input, seq, 1, seq); untimed (the key of the
   * earliest timed record after it in its file, 0, seq), or the end */
  uint64_t k_ns, k_seq;
  int k_kind;
} ref_record_t;

typedef struct ref {
  ref_record_t* items;
  size_t count, capacity;
} ref_t;

static uint64_t ns_of(const trace_record_t* r, bool* timed) {
  uint64_t ticks = 0;
  *timed = true;
  switch (r->type) {
    case 4:
      ticks = r->event.ticks;
      break;
    case 8:
      ticks = r->scheduling.ticks;
      break;
    case 9:
      ticks = r->log.ticks;
      break;
    case 15:
      *timed = r->large.blob_format == 0;
      ticks = r->large.ticks;
      break;
    default:
      *timed = false;
  }
  if (!*timed) return 0;
  return (uint64_t)((unsigned __int128)ticks * 1000000000u / r->provider->ticks_per_second);
}

/* Reads one input in file order into ref (records only; skips ignored). */
static void ref_read(ref_t* ref, const void* data, size_t size, size_t input) {
  trace_reader_t* reader = trace_reader_open_memory(data, size, NULL);
  ASSERT_TRUE(reader != NULL);
  trace_record_t r;
  int rc;
  size_t first = ref->count;
  uint64_t seq = 0;
  while ((rc = trace_reader_next(reader, &r)) != TRACE_READ_END && rc != TRACE_READ_ERROR) {
    if (rc != TRACE_READ_RECORD) continue;
    if (ref->count == ref->capacity) {
      ref->capacity = ref->capacity ? 2 * ref->capacity : 256;
      ref->items = realloc(ref->items, ref->capacity * sizeof(*ref->items));
      ASSERT_TRUE(ref->items != NULL);
    }
    ref_record_t* x = &ref->items[ref->count++];
    memset(x, 0, sizeof(*x));
    x->text = describe(&r);
    x->ns = ns_of(&r, &x->timed);
    x->input = input;
    x->seq = seq++;
  }
  trace_reader_close(reader);
  /* from the end: the earliest (ns, seq) of the timed records after each */
  bool have = false;
  uint64_t min_ns = 0, min_seq = 0;
  for (size_t i = ref->count; i-- > first;) {
    ref_record_t* x = &ref->items[i];
    if (x->timed) {
      x->k_ns = x->ns;
      x->k_seq = x->seq;
      x->k_kind = 1;
      if (!have || x->ns < min_ns || (x->ns == min_ns && x->seq < min_seq)) {
        have = true;
        min_ns = x->ns;
        min_seq = x->seq;
      }
    } else {
      x->k_ns = have ? min_ns : UINT64_MAX;
      x->k_seq = have ? min_seq : UINT64_MAX;
      x->k_kind = 0;
    }
  }
}

static int ref_compare(const void* pa, const void* pb) {
  const ref_record_t *a = pa, *b = pb;
#define CMP(x)                   \
  if (a->x != b->x) {            \
    return a->x < b->x ? -1 : 1; \
  }
  /* every untimed record at the end (no timed record after it) comes after
   * all timed ones, input by input */
  CMP(k_ns);
  CMP(input);
  CMP(k_seq);
  CMP(k_kind);
  CMP(seq);
#undef CMP
  return 0;
}

static void ref_free(ref_t* ref) {
  for (size_t i = 0; i < ref->count; i++) free(ref->items[i].text);
  free(ref->items);
  memset(ref, 0, sizeof(*ref));
}

/* ---- running the view ---- */

typedef struct input_spec {
  const void* data;
  size_t size;
  bool pipe; /* fed through a pipe by a child process */
} input_spec_t;

typedef struct run_result {
  ordered_stats_t stats;
  size_t records;
  int skips;
} run_result_t;

static void count_skip(void* context, size_t input, const trace_reader_error_t* e) {
  (void)input;
  (void)e;
  ((run_result_t*)context)->skips++;
}

static pid_t feed_pipe(const void* data, size_t size, int* read_fd) {
  int fds[2];
  ASSERT_TRUE(pipe(fds) == 0);
  pid_t pid = fork();
  ASSERT_TRUE(pid >= 0);
  if (pid == 0) {
    close(fds[0]);
    const char* p = data;
    while (size) {
      ssize_t w = write(fds[1], p, size > 4096 ? 4096 : size); /* many small reads */
      if (w <= 0) _exit(1);
      p += w;
      size -= (size_t)w;
    }
    _exit(0);
  }
  close(fds[1]);
  *read_fd = fds[0];
  return pid;
}

/* Runs the view over the inputs and checks its output against the reference
 * record by record. */
static run_result_t check_view(const char* what, const input_spec_t* inputs, size_t n,
                               const ordered_options_t* options) {
  ref_t ref = {0};
  for (size_t i = 0; i < n; i++) ref_read(&ref, inputs[i].data, inputs[i].size, i);
  qsort(ref.items, ref.count, sizeof(*ref.items), ref_compare);

  run_result_t result = {0};
  ordered_options_t opt = options ? *options : (ordered_options_t){0};
  opt.on_skip = count_skip;
  opt.context = &result;
  ordered_t* o = ordered__open(&opt);
  ASSERT_TRUE(o != NULL);
  trace_reader_t* readers[4];
  int fds[4];
  pid_t children[4];
  ASSERT_TRUE(n <= 4);
  for (size_t i = 0; i < n; i++) {
    fds[i] = -1;
    children[i] = -1;
    if (inputs[i].pipe) {
      children[i] = feed_pipe(inputs[i].data, inputs[i].size, &fds[i]);
      readers[i] = trace_reader_open_fd(fds[i], NULL);
    } else {
      readers[i] = trace_reader_open_memory(inputs[i].data, inputs[i].size, NULL);
    }
    ASSERT_TRUE(readers[i] != NULL);
    ASSERT_TRUE(ordered__add_input(o, readers[i]));
  }
  ordered_record_t r;
  int rc;
  size_t k = 0;
  while ((rc = ordered__next(o, &r)) == ORDERED_RECORD) {
    ASSERT_MSG(k < ref.count, "%s: more records than the %zu read in file order", what, ref.count);
    const ref_record_t* want = &ref.items[k];
    char* got = describe(&r.record);
    ASSERT_MSG(strcmp(got, want->text) == 0 && r.input == want->input && r.seq == want->seq,
               "%s: record %zu is input %zu seq %llu %s\n  expected input %zu seq %llu %s", what, k,
               r.input, (unsigned long long)r.seq, got, want->input, (unsigned long long)want->seq,
               want->text);
    ASSERT_MSG(r.timed == want->timed && r.ns == want->ns, "%s: record %zu: timed %d ns %llu", what,
               k, r.timed, (unsigned long long)r.ns);
    free(got);
    k++;
  }
  ASSERT_MSG(rc == ORDERED_END, "%s: %s", what, ordered__error(o));
  ASSERT_MSG(k == ref.count, "%s: %zu records, expected %zu", what, k, ref.count);
  ASSERT_EQ(ordered__next(o, &r), ORDERED_END); /* and stays at the end */
  result.stats = ordered__stats(o);
  result.records = k;
  ASSERT_EQ(result.stats.records, k);
  for (size_t i = 0; i < n; i++) ASSERT_TRUE(!ordered__input_failed(o, i));
  ordered__close(o);
  for (size_t i = 0; i < n; i++) {
    trace_reader_close(readers[i]);
    if (fds[i] >= 0) close(fds[i]);
    if (children[i] > 0) {
      int status;
      ASSERT_TRUE(waitpid(children[i], &status, 0) == children[i] && WIFEXITED(status) &&
                  WEXITSTATUS(status) == 0);
    }
  }
  ref_free(&ref);
  return result;
}

/* ordered.h's bound: memory_bytes + (fan_in + inputs + 1) I/O buffers, for
 * archives whose records are all far smaller than the buffers. */
static void check_bound(const char* what, const run_result_t* r, size_t memory, unsigned fan_in,
                        size_t inputs) {
  size_t bound = memory + (fan_in + inputs + 1) * ORDERED_IO_BYTES;
  ASSERT_MSG(r->stats.peak_bytes <= bound, "%s: peak %zu bytes, bound %zu", what,
             r->stats.peak_bytes, bound);
}

/* ---- archives ---- */

static uint64_t g_seed;

static uint64_t next_random(void) { /* xorshift64 */
  g_seed ^= g_seed << 13;
  g_seed ^= g_seed >> 7;
  g_seed ^= g_seed << 17;
  return g_seed;
}
static uint64_t below(uint64_t n) { return next_random() % n; }

enum { PROVIDERS = 2, STRINGS = 6, THREADS = 3 };

typedef struct gen_provider {
  bool string_defined[STRINGS + 1];
  bool thread_defined[THREADS + 1];
} gen_provider_t;

static trace_string_ref_t random_string_ref(const gen_provider_t* p, char* scratch) {
  uint16_t i = (uint16_t)(1 + below(STRINGS));
  if (p->string_defined[i] && below(3)) return trace_make_indexed_string_ref(i);
  snprintf(scratch, 32, "inline-%u", (unsigned)below(5));
  return trace_make_inline_c_string_ref(scratch);
}

/* A varied archive whose file order is not time order: two providers with
 * different tick rates (one changes its rate and its name midway), string
 * and thread indexes defined, used and redefined, events of every type with
 * timestamps that wander backwards and repeat (ties), kernel objects, logs
 * and context switches. */
static void random_archive(fxt_buffer_t* b, uint64_t seed, size_t records) {
  g_seed = seed;
  gen_provider_t prov[PROVIDERS + 1];
  memset(prov, 0, sizeof(prov));
  build_magic(b);
  build_provider(b, 1, "one");
  build_provider(b, 2, "two");
  build_init(b, 3000000); /* provider 2: 3 MHz, so ns are rounded */
  build_section(b, 1);
  uint32_t current = 1;
  uint64_t clock = 1000000;
  for (size_t i = 0; i < records; i++) {
    gen_provider_t* p = &prov[current];
    char s1[32], s2[32], s3[32];
    clock += below(50);
    /* later in the file but earlier in time, often by a lot; sometimes the
     * same time as another record */
    uint64_t ts = below(4) == 0 ? clock - below(clock / 2) : below(8) == 0 ? 1000000 : clock;
    switch (below(12)) {
      case 0:
        current = (uint32_t)(1 + below(PROVIDERS));
        build_section(b, current);
        break;
      case 1: {
        uint16_t idx = (uint16_t)(1 + below(STRINGS));
        snprintf(s1, sizeof(s1), "s%u-%u", idx, (unsigned)below(1000)); /* redefinitions */
        build_string(b, idx, s1);
        p->string_defined[idx] = true;
        break;
      }
      case 2: {
        uint8_t idx = (uint8_t)(1 + below(THREADS));
        build_thread(b, idx, 100 + below(3), 1000 + below(1000));
        p->thread_defined[idx] = true;
        break;
      }
      case 3:
        build_kernel_object(b, 1000 + below(1000), 2, below(2) ? "worker" : "main", 100);
        break;
      case 4: {
        trace_thread_ref_t t = trace_make_inline_thread_ref(100, 1000 + below(10));
        size_t words = fxt_log_record_words(&t, 5);
        fxt_write_log_record(build_reserve(b, words), words, ts, &t, "hello", 5);
        break;
      }
      case 5: {
        trace_thread_ref_t out = trace_make_inline_thread_ref(100, 1000 + below(10));
        trace_thread_ref_t in = trace_make_inline_thread_ref(100, 1000 + below(10));
        size_t words = fxt_legacy_context_switch_record_words(&out, &in);
        fxt_write_legacy_context_switch_record(build_reserve(b, words), words, ts,
                                               (uint16_t)below(4), 1, &out, &in, 20, 20);
        break;
      }
      case 6:
        if (i > records / 2 && current == 2 && below(4) == 0) {
          /* provider 2 renamed, and another tick rate */
          build_provider(b, 2, "two-renamed");
          memset(p, 0, sizeof(*p)); /* a provider-info record resets its tables */
          build_init(b, 7000000);
          break;
        }
        /* fall through */
      default: {
        uint8_t ti = (uint8_t)(1 + below(THREADS));
        trace_thread_ref_t t = p->thread_defined[ti] ? trace_make_indexed_thread_ref(ti)
                                                     : trace_make_inline_thread_ref(100, 1001);
        trace_arg_t args[3];
        char s4[32];
        size_t n = (size_t)below(4);
        for (size_t a = 0; a < n; a++) {
          if (a == 0)
            args[a] = trace_make_arg(random_string_ref(p, s3),
                                     trace_make_string_arg_value(random_string_ref(p, s4)));
          else if (a == 1)
            args[a] = trace_make_arg(trace_make_inline_c_string_ref("n"),
                                     trace_make_int32_arg_value(-(int32_t)i));
          else
            args[a] = trace_make_arg(trace_make_inline_c_string_ref("m"),
                                     trace_make_double_arg_value((double)i / 3));
        }
        unsigned type = (unsigned)below(11);
        build_event(b, type, ts, t, random_string_ref(p, s1), random_string_ref(p, s2), args, n,
                    type == 4 ? ts + below(1000) : below(8));
        break;
      }
    }
  }
}

/* ---- tests ---- */

static void test_random_archives(void) {
  fxt_buffer_t a = {0}, b = {0};
  random_archive(&a, 0x1234567887654321u, 3000);
  random_archive(&b, 0x0badc0ffee123457u, 2000);
  input_spec_t one = {a.words, a.count * 8, false};
  run_result_t r = check_view("in memory", &one, 1, NULL);
  ASSERT_EQ(r.stats.runs, 0);
  ASSERT_EQ(r.stats.spilled_bytes, 0);
  ASSERT_EQ(r.skips, 0);

  ordered_options_t small = {.memory_bytes = 16 << 10}; /* fewer runs than the fan-in */
  r = check_view("spilled", &one, 1, &small);
  ASSERT_MSG(r.stats.runs > 10, "spilled: only %llu runs", (unsigned long long)r.stats.runs);
  ASSERT_EQ(r.stats.merge_passes, 0);
  check_bound("spilled", &r, 16 << 10, ORDERED_DEFAULT_FAN_IN, 1);

  ordered_options_t passes = {.memory_bytes = ORDERED_MIN_MEMORY, .fan_in = 2};
  r = check_view("merge passes", &one, 1, &passes);
  ASSERT_MSG(r.stats.merge_passes > 10, "merge passes: %llu",
             (unsigned long long)r.stats.merge_passes);
  check_bound("merge passes", &r, ORDERED_MIN_MEMORY, 2, 1);

  input_spec_t piped = {a.words, a.count * 8, true};
  ordered_options_t three = {.memory_bytes = 8192, .fan_in = 3};
  r = check_view("pipe", &piped, 1, &three);
  ASSERT_TRUE(r.stats.runs > 1 && r.stats.merge_passes > 0);
  check_bound("pipe", &r, 8192, 3, 1);

  input_spec_t two[2] = {{a.words, a.count * 8, false}, {b.words, b.count * 8, true}};
  check_view("two inputs in memory", two, 2, NULL);
  r = check_view("two inputs", two, 2, &passes);
  ASSERT_TRUE(r.stats.merge_passes > 0);
  check_bound("two inputs", &r, ORDERED_MIN_MEMORY, 2, 2);
  fxt_buffer_free(&a);
  fxt_buffer_free(&b);
}

/* Every record and argument type (the sample archive), stored and read back
 * field for field, in memory and through the temporary file. */
static void test_every_record_type(void) {
  fxt_buffer_t s = {0};
  ASSERT_EQ(sample_archive__build(&s, 3), 0);
  input_spec_t in = {s.words, s.count * 8, false};
  check_view("sample archive", &in, 1, NULL);
  ordered_options_t tiny = {.memory_bytes = ORDERED_MIN_MEMORY, .fan_in = 2};
  run_result_t r = check_view("sample archive spilled", &in, 1, &tiny);
  ASSERT_TRUE(r.stats.runs > 1);
  fxt_buffer_free(&s);
}

/* Records with equal timestamps come out in file order, whatever lies
 * between them. */
static void test_ties_keep_file_order(void) {
  fxt_buffer_t b = {0};
  build_magic(&b);
  build_provider(&b, 1, "p");
  static const uint64_t ts[] = {50, 30, 50, 10, 30, 50, 30, 10};
  for (size_t i = 0; i < sizeof(ts) / sizeof(ts[0]); i++) {
    char name[8];
    snprintf(name, sizeof(name), "e%zu", i);
    build_simple_event(&b, 0, ts[i], 1, 2 + i % 3, "c", name, 0);
  }
  ordered_t* o = ordered__open(NULL);
  trace_reader_t* reader = trace_reader_open_memory(b.words, b.count * 8, NULL);
  ASSERT_TRUE(o && reader && ordered__add_input(o, reader));
  static const char* const want[] = {"e3", "e7", "e1", "e4", "e6", "e0", "e2", "e5"};
  ordered_record_t r;
  size_t k = 0;
  while (ordered__next(o, &r) == ORDERED_RECORD) {
    if (r.record.type != 4) continue;
    ASSERT_TRUE(k < 8);
    ASSERT_STREQ(r.record.event.name.data, want[k]);
    k++;
  }
  ASSERT_EQ(k, 8);
  ordered__close(o);
  trace_reader_close(reader);
  fxt_buffer_free(&b);
}

/* A string index defined late in the file and used by an event earlier in
 * time than records before the definition: the string record still comes
 * before that event, and each event names what its index meant where it
 * stood in the file (index 1 is redefined). */
static void test_metadata_before_users(void) {
  fxt_buffer_t b = {0};
  build_magic(&b);              /* seq 0 */
  build_provider(&b, 1, "p");   /* 1 */
  build_string(&b, 1, "first"); /* 2 */
  build_event(&b, 0, 100, trace_make_inline_thread_ref(1, 2), trace_make_indexed_string_ref(1),
              trace_make_indexed_string_ref(1), NULL, 0, 0); /* 3: ts 100 "first" */
  build_string(&b, 1, "second");                             /* 4: redefines index 1 */
  build_thread(&b, 1, 7, 8);                                 /* 5 */
  build_event(&b, 0, 50, trace_make_indexed_thread_ref(1), trace_make_indexed_string_ref(1),
              trace_make_indexed_string_ref(1), NULL, 0, 0); /* 6: ts 50 "second" */
  build_kernel_object(&b, 8, 2, "late name", 7);             /* 7: after every timed record */
  ordered_t* o = ordered__open(NULL);
  trace_reader_t* reader = trace_reader_open_memory(b.words, b.count * 8, NULL);
  ASSERT_TRUE(o && reader && ordered__add_input(o, reader));
  static const uint64_t want_seq[] = {0, 1, 2, 4, 5, 6, 3, 7};
  ordered_record_t r;
  size_t k = 0;
  while (ordered__next(o, &r) == ORDERED_RECORD) {
    ASSERT_TRUE(k < 8);
    ASSERT_EQ(r.seq, want_seq[k]);
    if (r.seq == 6) {
      ASSERT_STREQ(r.record.event.name.data, "second");
      ASSERT_EQ(r.record.event.thread_koid, 8);
    }
    if (r.seq == 3) ASSERT_STREQ(r.record.event.category.data, "first");
    k++;
  }
  ASSERT_EQ(k, 8);
  uint64_t first;
  ASSERT_TRUE(ordered__input_first_ns(o, 0, &first));
  ASSERT_EQ(first, 100); /* the first in file order, not the earliest */
  ordered__close(o);
  trace_reader_close(reader);
  fxt_buffer_free(&b);
}

/* A memory budget far below the archive: the peak stays within the bound;
 * with the default budget the same archive is sorted in memory. */
static void test_memory_bound(void) {
  fxt_buffer_t s = {0};
  ASSERT_EQ(sample_archive__build(&s, 400), 0);
  size_t memory = 64 << 10;
  for (int pass = 0; pass < 2; pass++) {
    ordered_options_t opt = {.memory_bytes = pass ? 0 : memory};
    ordered_t* o = ordered__open(&opt);
    trace_reader_t* reader = trace_reader_open_memory(s.words, s.count * 8, NULL);
    ASSERT_TRUE(o && reader && ordered__add_input(o, reader));
    ordered_record_t r;
    uint64_t n = 0, last = 0;
    while (ordered__next(o, &r) == ORDERED_RECORD) {
      if (r.timed) {
        ASSERT_TRUE(r.ns >= last);
        last = r.ns;
      }
      n++;
    }
    ordered_stats_t st = ordered__stats(o);
    ASSERT_EQ(st.records, n);
    ASSERT_TRUE(trace_reader_stats(reader).records == n);
    if (pass == 0) {
      size_t bound = memory + (ORDERED_DEFAULT_FAN_IN + 2) * ORDERED_IO_BYTES;
      ASSERT_MSG(st.peak_bytes <= bound, "peak %zu, bound %zu", st.peak_bytes, bound);
      /* the records did not fit: runs of at most `memory` bytes each */
      ASSERT_TRUE(st.spilled_bytes > 4 * memory);
      ASSERT_TRUE(st.runs >= st.spilled_bytes / memory);
    } else {
      ASSERT_EQ(st.runs, 0);
      ASSERT_TRUE(st.peak_bytes > s.count * 8); /* held them all */
    }
    ordered__close(o);
    trace_reader_close(reader);
  }
  fxt_buffer_free(&s);
}

/* Skipped records reach the callback; a cut input gives the records before
 * the cut, in order, and says it failed. */
static void test_damage(void) {
  fxt_buffer_t b = {0};
  random_archive(&b, 42, 500);
  /* an event naming string index 0x7ff0, never defined: skipped */
  build_event(&b, 0, 5, trace_make_inline_thread_ref(1, 2), trace_make_indexed_string_ref(0x7ff0),
              trace_make_inline_c_string_ref("x"), NULL, 0, 0);
  size_t cut = b.count * 8 - 4;
  ordered_options_t opt = {.memory_bytes = ORDERED_MIN_MEMORY};
  run_result_t result = {0};
  opt.on_skip = count_skip;
  opt.context = &result;
  ordered_t* o = ordered__open(&opt);
  trace_reader_t* reader = trace_reader_open_memory(b.words, b.count * 8, NULL);
  ASSERT_TRUE(o && reader && ordered__add_input(o, reader));
  ASSERT_EQ(ordered__load(o), ORDERED_END);
  ASSERT_EQ(result.skips, 1);
  ASSERT_TRUE(!ordered__input_failed(o, 0));
  ordered__close(o);
  trace_reader_close(reader);

  o = ordered__open(&opt);
  reader = trace_reader_open_memory(b.words, cut, NULL);
  ASSERT_TRUE(o && reader && ordered__add_input(o, reader));
  ordered_record_t r;
  uint64_t n = 0, last = 0;
  while (ordered__next(o, &r) == ORDERED_RECORD) {
    if (r.timed) {
      ASSERT_TRUE(r.ns >= last);
      last = r.ns;
    }
    n++;
  }
  ASSERT_TRUE(ordered__input_failed(o, 0));
  ASSERT_TRUE(trace_reader_truncated(reader));
  ASSERT_EQ(n, trace_reader_stats(reader).records);
  ASSERT_TRUE(n > 400);
  ordered__close(o);
  trace_reader_close(reader);
  fxt_buffer_free(&b);
}

static size_t entries_in(const char* dir) {
  DIR* d = opendir(dir);
  ASSERT_TRUE(d != NULL);
  size_t n = 0;
  struct dirent* e;
  while ((e = readdir(d)))
    if (strcmp(e->d_name, ".") && strcmp(e->d_name, "..")) n++;
  closedir(d);
  return n;
}

/* The temporary file goes to TMPDIR and has no name there even while in
 * use; a TMPDIR that cannot take it fails the view with a message. */
static void test_tmpdir(void) {
  char dir[] = "/tmp/fxtrace-ordered-test-XXXXXX";
  ASSERT_TRUE(mkdtemp(dir) != NULL);
  fxt_buffer_t b = {0};
  random_archive(&b, 7, 2000);
  ASSERT_TRUE(setenv("TMPDIR", dir, 1) == 0);
  ordered_options_t opt = {.memory_bytes = ORDERED_MIN_MEMORY};
  ordered_t* o = ordered__open(&opt);
  trace_reader_t* reader = trace_reader_open_memory(b.words, b.count * 8, NULL);
  ASSERT_TRUE(o && reader && ordered__add_input(o, reader));
  ordered_record_t r;
  ASSERT_EQ(ordered__next(o, &r), ORDERED_RECORD);
  ASSERT_TRUE(ordered__stats(o).spilled_bytes > 0);
  ASSERT_EQ(entries_in(dir), 0);
  ordered__close(o);
  trace_reader_close(reader);
  unsetenv("TMPDIR");
  ASSERT_TRUE(rmdir(dir) == 0);

  opt.tmpdir = "/nonexistent/fxtrace-ordered";
  o = ordered__open(&opt);
  reader = trace_reader_open_memory(b.words, b.count * 8, NULL);
  ASSERT_TRUE(o && reader && ordered__add_input(o, reader));
  ASSERT_EQ(ordered__next(o, &r), ORDERED_ERROR);
  ASSERT_MSG(strstr(ordered__error(o), "/nonexistent/fxtrace-ordered") != NULL &&
                 strstr(ordered__error(o), "TMPDIR") != NULL,
             "error: %s", ordered__error(o));
  ASSERT_EQ(ordered__next(o, &r), ORDERED_ERROR);
  ASSERT_TRUE(!ordered__add_input(o, reader)); /* too late */
  ordered__close(o);
  trace_reader_close(reader);
  fxt_buffer_free(&b);
}

/* Nothing to order: an archive of the magic record alone, and an input that
 * is not an archive at all. */
static void test_empty(void) {
  static const uint64_t magic = FXT_MAGIC_RECORD;
  static const char junk[] = "not a trace, not at all";
  ordered_t* o = ordered__open(NULL);
  trace_reader_t* a = trace_reader_open_memory(&magic, sizeof(magic), NULL);
  trace_reader_t* b = trace_reader_open_memory(junk, sizeof(junk), NULL);
  ASSERT_TRUE(o && a && b && ordered__add_input(o, a) && ordered__add_input(o, b));
  ordered_record_t r;
  ASSERT_EQ(ordered__next(o, &r), ORDERED_RECORD);
  ASSERT_EQ(r.record.type, 0);
  ASSERT_EQ(ordered__next(o, &r), ORDERED_END);
  uint64_t ns;
  ASSERT_TRUE(!ordered__input_first_ns(o, 0, &ns));
  ASSERT_TRUE(!ordered__input_failed(o, 0) && ordered__input_failed(o, 1));
  ordered__close(o);
  trace_reader_close(a);
  trace_reader_close(b);
}

int main(void) {
  test_ties_keep_file_order();
  test_metadata_before_users();
  test_every_record_type();
  test_random_archives();
  test_memory_bound();
  test_damage();
  test_tmpdir();
  test_empty();
  printf("ordered view: all tests passed\n");
  return 0;
}
