/* String arguments on the event macros' inline record path
 * (include/trace/internal/event_record.h), through the engine and back
 * through the reader:
 *
 *   - every macro that writes inline (instant, counter, duration begin /
 *     end, async, flow, TRACE_DURATION) with literal, dynamic, empty and
 *     NULL string values, alone, several per record and mixed with
 *     scalars; each call site runs several times, so its first record goes
 *     out of line (and fills the thread's cache) and the others inline;
 *     every record is checked, in order, against what was emitted;
 *   - lengths around each copy's boundaries (0-3, 4-7, 8-15, 16-32, over
 *     32), the inline limit (32000 bytes) and past it (truncated to 32000,
 *     as TA_STRING does), a record over FXT's size limit (dropped and
 *     counted), TA_CHAR_ARRAY (never read past its length);
 *   - the same record written out of line and inline is the same bytes but
 *     its timestamps;
 *   - a literal value not yet registered on the thread at a cached site
 *     (the inline path falls back, the record is right);
 *   - a record from a signal handler: one that interrupts another record
 *     does not fill the thread's cache, and a handler firing at random
 *     points of a loop whose site shares the handler's cache slot never
 *     mixes the two sites' names or values (the second look at the slot's
 *     key), and loses no record it does not count.
 *
 * With an argument, the first trace's archive is also written to that file
 * for the independent decoder (test_string_args_decode.py). */
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <time.h>
#include <unistd.h>

#include "engine/harness.h"
#include "test.h"
#include "trace-reader/reader.h"
#include "trace/event.h"

enum { BIG = 40000, LIMIT = TRACE_ENCODED_STRING_REF_MAX_LENGTH, MAX_EXPECTED = 1024 };

/* 'a' + i % 26: the bytes every dynamic string is made of. */
static char g_pattern[BIG + 1];

/* A NUL-terminated copy of the pattern's first n bytes (freed by the test). */
static char* pattern(size_t n) {
  char* s = (char*)malloc(n + 1);
  ASSERT_TRUE(s != NULL);
  memcpy(s, g_pattern, n);
  s[n] = '\0';
  return s;
}

/* ---- what was emitted, in order ---- */

typedef struct exp_arg {
  const char* name;
  unsigned type;
  const char* str; /* string: the expected bytes (length `len`) */
  size_t len;
  uint64_t bits; /* scalars */
} exp_arg_t;

typedef struct exp_event {
  const char* name;
  unsigned event_type;
  uint64_t payload; /* counter / async / flow id; not for instants and durations */
  size_t num_args;
  exp_arg_t args[TRACE_MAX_ARGS];
} exp_event_t;

static exp_event_t g_expected[MAX_EXPECTED];
static size_t g_expected_count;

static exp_event_t* expect(const char* name, unsigned event_type, uint64_t payload) {
  ASSERT_TRUE(g_expected_count < MAX_EXPECTED);
  exp_event_t* e = &g_expected[g_expected_count++];
  memset(e, 0, sizeof(*e));
  e->name = name;
  e->event_type = event_type;
  e->payload = payload;
  return e;
}

/* A string argument as the record must hold it: at most LIMIT bytes. */
static void expect_str(exp_event_t* e, const char* name, const char* s, size_t len) {
  exp_arg_t* a = &e->args[e->num_args++];
  a->name = name;
  a->type = TRACE_ARG_STRING;
  a->str = s ? s : "";
  a->len = len < LIMIT ? len : LIMIT;
}

static void expect_scalar(exp_event_t* e, const char* name, unsigned type, uint64_t bits) {
  exp_arg_t* a = &e->args[e->num_args++];
  a->name = name;
  a->type = type;
  a->bits = bits;
}

/* ---- the instrumented code ---- */

static const size_t k_lengths[] = {0,  1,  2,  3,  4,  5,   7,    8,    9,     15,    16,    17, 24,
                                   31, 32, 33, 63, 64, 100, 1000, 4088, 31999, 32000, 32001, BIG};
enum { NUM_LENGTHS = sizeof(k_lengths) / sizeof(k_lengths[0]), REPEAT = 3 };

/* One site, every length, REPEAT times: the site's first record is written
 * out of line, all the others inline, whatever their length. */
static void emit_lengths(void) {
  for (int r = 0; r < REPEAT; r++)
    for (size_t i = 0; i < NUM_LENGTHS; i++) {
      size_t n = k_lengths[i];
      char* s = pattern(n);
      TRACE_INSTANT("cat", "len", TRACE_SCOPE_PROCESS, "n", TA_UINT32((uint32_t)n), "s",
                    TA_STRING(s));
      exp_event_t* e = expect("len", 0, 0);
      expect_scalar(e, "n", TRACE_ARG_UINT32, n);
      expect_str(e, "s", g_pattern, n);
      free(s);
      /* read up to n only: the pattern goes on past it */
      TRACE_INSTANT("cat", "chars", TRACE_SCOPE_THREAD, "ca", TA_CHAR_ARRAY(g_pattern, n));
      e = expect("chars", 0, 0);
      expect_str(e, "ca", g_pattern, n);
    }
}

/* Empty and NULL values, literals (explicit, inferred, empty), and a value
 * that is neither NUL-terminated nor read past its length. */
static void emit_special_values(void) {
  const char* null_string = NULL;
  char* dynamic = pattern(20);
  char unterminated[8];
  memcpy(unterminated, g_pattern, sizeof(unterminated));
  for (int r = 0; r < REPEAT; r++) {
    TRACE_INSTANT("cat", "special", TRACE_SCOPE_THREAD, "empty", TA_STRING(""), "null",
                  TA_STRING(NULL), "null_inferred", null_string, "lit",
                  TA_STRING_LITERAL("a-literal-value"), "lit_inferred", "inferred-literal",
                  "lit_empty", TA_STRING_LITERAL(""), "dyn", TA_STRING(dynamic), "dyn_inferred",
                  dynamic, "chars0", TA_CHAR_ARRAY(dynamic, 0), "chars5",
                  TA_CHAR_ARRAY(unterminated, 5), "chars8", TA_CHAR_ARRAY(unterminated, 8));
    exp_event_t* e = expect("special", 0, 0);
    expect_str(e, "empty", "", 0);
    expect_str(e, "null", "", 0);
    expect_str(e, "null_inferred", "", 0);
    expect_str(e, "lit", "a-literal-value", 15);
    expect_str(e, "lit_inferred", "inferred-literal", 16);
    expect_str(e, "lit_empty", "", 0);
    expect_str(e, "dyn", g_pattern, 20);
    expect_str(e, "dyn_inferred", g_pattern, 20);
    expect_str(e, "chars0", "", 0);
    expect_str(e, "chars5", g_pattern, 5);
    expect_str(e, "chars8", g_pattern, 8);
  }
  free(dynamic);
}

/* 15 string arguments of different lengths and kinds, and strings among
 * every scalar type. */
static void emit_many(void) {
  char* s[8];
  static const size_t n[8] = {1, 8, 16, 17, 33, 0, 7, 300};
  for (int i = 0; i < 8; i++) s[i] = pattern(n[i]);
  for (int r = 0; r < REPEAT; r++) {
    TRACE_INSTANT("cat", "fifteen", TRACE_SCOPE_GLOBAL, "s0", TA_STRING(s[0]), "l0",
                  TA_STRING_LITERAL("L0"), "s1", TA_STRING(s[1]), "l1", TA_STRING_LITERAL("L-1"),
                  "s2", TA_STRING(s[2]), "l2", TA_STRING_LITERAL("L--2"), "s3", TA_STRING(s[3]),
                  "l3", TA_STRING_LITERAL("L---3"), "s4", TA_STRING(s[4]), "s5", TA_STRING(s[5]),
                  "s6", TA_STRING(s[6]), "l4", TA_STRING_LITERAL("L----4"), "s7", TA_STRING(s[7]),
                  "e", TA_STRING(""), "l5", "L-----5");
    exp_event_t* e = expect("fifteen", 0, 0);
    static const char* const lits[6] = {"L0", "L-1", "L--2", "L---3", "L----4", "L-----5"};
    expect_str(e, "s0", g_pattern, n[0]);
    expect_str(e, "l0", lits[0], 2);
    expect_str(e, "s1", g_pattern, n[1]);
    expect_str(e, "l1", lits[1], 3);
    expect_str(e, "s2", g_pattern, n[2]);
    expect_str(e, "l2", lits[2], 4);
    expect_str(e, "s3", g_pattern, n[3]);
    expect_str(e, "l3", lits[3], 5);
    expect_str(e, "s4", g_pattern, n[4]);
    expect_str(e, "s5", g_pattern, n[5]);
    expect_str(e, "s6", g_pattern, n[6]);
    expect_str(e, "l4", lits[4], 6);
    expect_str(e, "s7", g_pattern, n[7]);
    expect_str(e, "e", "", 0);
    expect_str(e, "l5", lits[5], 7);

    TRACE_INSTANT("cat", "mixed", TRACE_SCOPE_THREAD, "i32", TA_INT32(-r), "s", TA_STRING(s[2]),
                  "u32", TA_UINT32(7), "b", TA_BOOL(r & 1), "i64", TA_INT64(-5000000000), "lit",
                  TA_STRING_LITERAL("mid"), "u64", TA_UINT64(UINT64_MAX), "d", TA_DOUBLE(0.25), "p",
                  TA_POINTER(0x1234), "k", TA_KOID(99), "nul", TA_NULL(), "t", TA_STRING(s[7]));
    e = expect("mixed", 0, 0);
    expect_scalar(e, "i32", TRACE_ARG_INT32, (uint64_t)(int64_t)-r);
    expect_str(e, "s", g_pattern, n[2]);
    expect_scalar(e, "u32", TRACE_ARG_UINT32, 7);
    expect_scalar(e, "b", TRACE_ARG_BOOL, (uint64_t)(r & 1));
    expect_scalar(e, "i64", TRACE_ARG_INT64, (uint64_t)INT64_C(-5000000000));
    expect_str(e, "lit", "mid", 3);
    expect_scalar(e, "u64", TRACE_ARG_UINT64, UINT64_MAX);
    double d = 0.25;
    uint64_t bits;
    memcpy(&bits, &d, 8);
    expect_scalar(e, "d", TRACE_ARG_DOUBLE, bits);
    expect_scalar(e, "p", TRACE_ARG_POINTER, 0x1234);
    expect_scalar(e, "k", TRACE_ARG_KOID, 99);
    expect_scalar(e, "nul", TRACE_ARG_NULL, 0);
    expect_str(e, "t", g_pattern, n[7]);
  }
  for (int i = 0; i < 8; i++) free(s[i]);
}

/* Two strings of the inline limit: 2 x 4001 argument words, over FXT's
 * 4095-word record. Dropped and counted, every time, inline or not. */
static void emit_too_big(void) {
  char* s = pattern(LIMIT);
  for (int r = 0; r < REPEAT; r++)
    TRACE_INSTANT("cat", "too_big", TRACE_SCOPE_THREAD, "a", TA_STRING(s), "b", TA_STRING(s));
  free(s);
}

/* Every other macro of the inline path, with string arguments. */
static void emit_kinds(void) {
  char* s9 = pattern(9);
  char* s40 = pattern(40);
  for (int r = 0; r < REPEAT; r++) {
    TRACE_COUNTER("cat", "counter", 77, "v", TA_INT64(r), "unit", TA_STRING_LITERAL("ms"), "tag",
                  TA_STRING(s9));
    exp_event_t* e = expect("counter", 1, 77);
    expect_scalar(e, "v", TRACE_ARG_INT64, (uint64_t)r);
    expect_str(e, "unit", "ms", 2);
    expect_str(e, "tag", g_pattern, 9);

    TRACE_DURATION_BEGIN("cat", "begin_end", "s", TA_STRING(s40), "l", TA_STRING_LITERAL("lit"));
    e = expect("begin_end", 2, 0);
    expect_str(e, "s", g_pattern, 40);
    expect_str(e, "l", "lit", 3);
    TRACE_DURATION_END("cat", "begin_end", "s", TA_STRING(s9));
    e = expect("begin_end", 3, 0);
    expect_str(e, "s", g_pattern, 9);

    static const char* const names[6] = {"async", "async", "async", "flow", "flow", "flow"};
    TRACE_ASYNC_BEGIN("cat", "async", 5, "s", TA_STRING(s9));
    TRACE_ASYNC_INSTANT("cat", "async", 5, "s", TA_STRING(s40));
    TRACE_ASYNC_END("cat", "async", 5, "s", TA_STRING_LITERAL("done"));
    TRACE_FLOW_BEGIN("cat", "flow", 6, "s", TA_STRING(s9));
    TRACE_FLOW_STEP("cat", "flow", 6, "s", TA_STRING(""));
    TRACE_FLOW_END("cat", "flow", 6, "s", TA_STRING_LITERAL("done"));
    for (int k = 0; k < 6; k++) {
      e = expect(names[k], (unsigned)(5 + k), k < 3 ? 5 : 6);
      if (k == 2 || k == 5) {
        expect_str(e, "s", "done", 4);
      } else if (k == 4) {
        expect_str(e, "s", "", 0);
      } else {
        expect_str(e, "s", g_pattern, k == 1 ? 40 : 9);
      }
    }

    {
      TRACE_DURATION("cat", "scope", "s", TA_STRING(s40), "l", TA_STRING_LITERAL("scoped"), "n",
                     TA_INT32(r));
      TRACE_DURATION("cat", "scope_empty", "s", TA_STRING(NULL));
    }
    /* inner first (reverse order of the declarations) */
    e = expect("scope_empty", 4, 0);
    expect_str(e, "s", "", 0);
    e = expect("scope", 4, 0);
    expect_str(e, "s", g_pattern, 40);
    expect_str(e, "l", "scoped", 6);
    expect_scalar(e, "n", TRACE_ARG_INT32, (uint64_t)(int64_t)r);
  }
  free(s9);
  free(s40);
}

/* ---- the same record out of line and inline (hand-expanded sites) ---- */

/* TRACE_INSTANT's expansion with a given site (event_internal.h). */
static void instant_at(trace_site_t* site, const char* name, trace_arg_t* args, size_t n) {
  uint64_t state;
  if (trace_site_is_enabled("cat", site, &state))
    trace_internal_instant(site, state, "cat", name, TRACE_SCOPE_THREAD, args, n);
}

static trace_site_t g_fresh[NUM_LENGTHS];

/* Each length twice at a fresh site: out of line, then inline. */
static void emit_twice_per_site(void) {
  for (size_t i = 0; i < NUM_LENGTHS; i++) {
    size_t n = k_lengths[i];
    char* s = pattern(n);
    for (int r = 0; r < 2; r++) {
      trace_arg_t args[3] = {
          trace_make_arg(trace_internal_make_literal_ref("s"),
                         trace_make_string_arg_value(trace_make_inline_c_string_ref(s))),
          trace_make_arg(trace_internal_make_literal_ref("lit"),
                         trace_make_string_arg_value(trace_internal_make_literal_ref("twice"))),
          trace_make_arg(trace_internal_make_literal_ref("n"), trace_make_uint64_arg_value(n))};
      instant_at(&g_fresh[i], "twice", args, 3);
      exp_event_t* e = expect("twice", 0, 0);
      expect_str(e, "s", g_pattern, n);
      expect_str(e, "lit", "twice", 5);
      expect_scalar(e, "n", TRACE_ARG_UINT64, n);
    }
    free(s);
  }
}

/* One site whose literal value changes: each new literal is not in the
 * thread's table yet when the site's record is already cached. */
static void emit_new_literals(void) {
  static trace_site_t site;
  static const char* const lits[4] = {"first-literal", "second-literal", "first-literal",
                                      "third-literal"};
  for (int k = 0; k < 4; k++) {
    trace_arg_t args[1] = {
        trace_make_arg(trace_internal_make_literal_ref("v"),
                       trace_make_string_arg_value(trace_internal_make_literal_ref(lits[k])))};
    instant_at(&site, "new_literal", args, 1);
    exp_event_t* e = expect("new_literal", 0, 0);
    expect_str(e, "v", lits[k], strlen(lits[k]));
  }
}

/* A record inside another (what a signal handler's is): written, but it
 * does not fill the cache; the next one outside does, the one after is
 * inline. */
static void emit_nested(void) {
  static trace_site_t site;
  char* s = pattern(23);
  trace_context_t* outer = trace_acquire_context();
  ASSERT_TRUE(outer != NULL);
  const trace_engine_site_record_t* slot = trace_engine__site_record(outer, &site);
  for (int k = 0; k < 3; k++) {
    if (k == 1) trace_release_context(outer);
    trace_arg_t args[2] = {
        trace_make_arg(trace_internal_make_literal_ref("s"),
                       trace_make_string_arg_value(trace_make_inline_c_string_ref(s))),
        trace_make_arg(trace_internal_make_literal_ref("l"),
                       trace_make_string_arg_value(trace_internal_make_literal_ref("nest")))};
    instant_at(&site, "nested", args, 2);
    ASSERT_EQ(slot->key == &site, k >= 1); /* filled only outside the outer record */
    exp_event_t* e = expect("nested", 0, 0);
    expect_str(e, "s", g_pattern, 23);
    expect_str(e, "l", "nest", 4);
  }
  free(s);
}

/* ---- reading back ---- */

static void check_string(const trace_reader_arg_t* a, const exp_arg_t* x, const char* event) {
  if (a->string_value.length != x->len || memcmp(a->string_value.data, x->str, x->len) != 0)
    TEST_FAIL("\"%s\" arg %s: a string of %zu bytes, expected %zu (\"%.20s...\")", event, x->name,
              a->string_value.length, x->len, x->str);
}

static void check_event(const trace_record_t* rec, const exp_event_t* x, size_t index) {
  if (strcmp(rec->event.name.data, x->name) != 0 || rec->event.event_type != x->event_type)
    TEST_FAIL("event %zu: \"%s\" of type %u, expected \"%s\" of type %u", index,
              rec->event.name.data, rec->event.event_type, x->name, x->event_type);
  ASSERT_STREQ(rec->event.category.data, "cat");
  if (x->event_type != 0 && x->event_type != 2 && x->event_type != 3 && x->event_type != 4)
    ASSERT_EQ(rec->event.payload, x->payload);
  if (x->event_type == 4) ASSERT_TRUE(rec->event.ticks <= rec->event.payload);
  ASSERT_EQ(rec->event.args.count, x->num_args);
  for (size_t i = 0; i < x->num_args; i++) {
    const trace_reader_arg_t* a = &rec->event.args.items[i];
    const exp_arg_t* e = &x->args[i];
    ASSERT_STREQ(a->name.data, e->name);
    if (a->type != e->type)
      TEST_FAIL("\"%s\" arg %s: type %u, expected %u", x->name, e->name, a->type, e->type);
    switch (a->type) {
      case TRACE_ARG_STRING:
        check_string(a, e, x->name);
        break;
      case TRACE_ARG_INT32:
        ASSERT_EQ((int64_t)a->int32_value, (int64_t)e->bits);
        break;
      case TRACE_ARG_UINT32:
        ASSERT_EQ(a->uint32_value, e->bits);
        break;
      case TRACE_ARG_BOOL:
        ASSERT_EQ(a->bool_value, e->bits);
        break;
      case TRACE_ARG_NULL:
        break;
      default:
        ASSERT_EQ(a->uint64_value, e->bits);
        break;
    }
  }
}

/* The words of two records, but their timestamps (word 1). */
static void assert_same_but_time(const uint8_t* fxt, const trace_record_t* a,
                                 const trace_record_t* b) {
  ASSERT_EQ(a->size_words, b->size_words);
  ASSERT_BYTES_EQ(fxt + a->offset, fxt + b->offset, 8);
  ASSERT_BYTES_EQ(fxt + a->offset + 16, fxt + b->offset + 16, (a->size_words - 2) * 8);
}

static void check_archive(const uint8_t* fxt, size_t length) {
  trace_reader_t* r = trace_reader_open_memory(fxt, length, NULL);
  ASSERT_TRUE(r != NULL);
  trace_record_t rec;
  int status;
  size_t events = 0;
  trace_record_t twice_first = {0};
  while ((status = trace_reader_next(r, &rec)) != TRACE_READ_END) {
    if (status != TRACE_READ_RECORD)
      TEST_FAIL("reader: status %d at %llu: %s", status,
                (unsigned long long)trace_reader_error(r).offset, trace_reader_error(r).message);
    if (rec.type != 4) continue;
    ASSERT_TRUE(events < g_expected_count);
    check_event(&rec, &g_expected[events], events);
    if (strcmp(rec.event.name.data, "twice") == 0) { /* out of line, then inline */
      if (twice_first.size_words == 0) {
        twice_first = rec;
      } else {
        assert_same_but_time(fxt, &twice_first, &rec);
        twice_first.size_words = 0;
      }
    }
    events++;
  }
  ASSERT_EQ(events, g_expected_count);
  trace_reader_close(r);
}

static void write_file(const char* path, const uint8_t* data, size_t length) {
  FILE* f = fopen(path, "wb");
  ASSERT_TRUE(f != NULL);
  ASSERT_EQ(fwrite(data, 1, length, f), length);
  ASSERT_EQ(fclose(f), 0);
}

static void test_records(const char* out_path) {
  harness_t h;
  ASSERT_EQ(harness_start(&h, TRACE_BUFFERING_MODE_ONESHOT, 16 << 20, "cat"), 0);
  emit_lengths();
  emit_special_values();
  emit_many();
  emit_too_big();
  emit_kinds();
  emit_twice_per_site();
  emit_new_literals();
  emit_nested();
  harness_stop(&h);
  ASSERT_EQ(h.stats.records_dropped, (uint64_t)REPEAT); /* the too_big ones, no other */
  size_t length;
  const uint8_t* fxt = harness_archive(&h, &length);
  check_archive(fxt, length);
  if (out_path) write_file(out_path, fxt, length);
  harness_free(&h);
  printf("ok: %zu events with string arguments checked\n", g_expected_count);
}

/* ---- a signal handler against the loop it interrupts ---- */

/* At least LOOP_EVENTS loop records, and on until the handler has run
 * MIN_SIGNALS times (a loaded machine may schedule the sender late), at
 * most MAX_LOOP_EVENTS (what the 64 MiB buffer holds with room to spare). */
enum { LOOP_EVENTS = 500000, MIN_SIGNALS = 100, MAX_LOOP_EVENTS = 800000 };

static trace_site_t g_sites[256];
static trace_site_t* g_loop_site;
static trace_site_t* g_handler_site; /* the same cache slot as g_loop_site */
static uint64_t g_handler_events;    /* atomic; written by the handler only */
static int g_stop_signals;           /* atomic */

static void handler_event(void) {
  static const char text[] = "from the signal handler";
  trace_arg_t args[2] = {
      trace_make_arg(trace_internal_make_literal_ref("hx"),
                     trace_make_string_arg_value(trace_make_inline_string_ref(text, 23))),
      trace_make_arg(
          trace_internal_make_literal_ref("hy"),
          trace_make_uint64_arg_value(__atomic_load_n(&g_handler_events, __ATOMIC_RELAXED)))};
  instant_at(g_handler_site, "handler", args, 2);
}

static void on_signal(int sig) {
  (void)sig;
  handler_event();
  __atomic_store_n(&g_handler_events, g_handler_events + 1, __ATOMIC_RELAXED);
}

static void* send_signals(void* arg) {
  pthread_t target = *(pthread_t*)arg;
  while (!__atomic_load_n(&g_stop_signals, __ATOMIC_ACQUIRE)) {
    pthread_kill(target, SIGUSR1);
    nanosleep(&(struct timespec){0, 20000}, NULL);
  }
  return NULL;
}

static uint64_t home_slot(const void* key) {
  return ((uint64_t)(uintptr_t)key * UINT64_C(0x9E3779B97F4A7C15)) >> 58;
}

static void test_signal_handler(void) {
  for (size_t i = 0; i < 256 && !g_handler_site; i++)
    for (size_t j = i + 1; j < 256 && !g_handler_site; j++)
      if (home_slot(&g_sites[i]) == home_slot(&g_sites[j])) {
        g_loop_site = &g_sites[i];
        g_handler_site = &g_sites[j];
      }
  ASSERT_TRUE(g_handler_site != NULL);

  harness_t h;
  ASSERT_EQ(harness_start(&h, TRACE_BUFFERING_MODE_ONESHOT, 64 << 20, "cat"), 0);
  struct sigaction sa;
  memset(&sa, 0, sizeof(sa));
  sa.sa_handler = on_signal;
  sigemptyset(&sa.sa_mask);
  ASSERT_EQ(sigaction(SIGUSR1, &sa, NULL), 0);
  on_signal(0); /* registers the handler's strings outside any record */
  static const char text[] = "written by the loop, a longer string";
  pthread_t self = pthread_self(), sender;
  ASSERT_EQ(pthread_create(&sender, NULL, send_signals, &self), 0);
  uint64_t emitted = 0;
  for (uint64_t k = 0; k < MAX_LOOP_EVENTS; k++) {
    if (k >= LOOP_EVENTS && __atomic_load_n(&g_handler_events, __ATOMIC_RELAXED) >= MIN_SIGNALS)
      break;
    trace_arg_t args[2] = {
        trace_make_arg(trace_internal_make_literal_ref("la"),
                       trace_make_string_arg_value(trace_make_inline_string_ref(text, 5 + k % 32))),
        trace_make_arg(trace_internal_make_literal_ref("lb"), trace_make_uint64_arg_value(k))};
    instant_at(g_loop_site, "loop", args, 2);
    emitted++;
  }
  __atomic_store_n(&g_stop_signals, 1, __ATOMIC_RELEASE);
  ASSERT_EQ(pthread_join(sender, NULL), 0);
  signal(SIGUSR1, SIG_IGN);
  harness_stop(&h);

  size_t length;
  const uint8_t* fxt = harness_archive(&h, &length);
  trace_reader_t* r = trace_reader_open_memory(fxt, length, NULL);
  ASSERT_TRUE(r != NULL);
  trace_record_t rec;
  int status;
  uint64_t loop = 0, handler = 0, next_k = 0;
  while ((status = trace_reader_next(r, &rec)) != TRACE_READ_END) {
    ASSERT_EQ(status, TRACE_READ_RECORD);
    if (rec.type != 4) continue;
    const trace_reader_args_t* a = &rec.event.args;
    ASSERT_EQ(a->count, 2u);
    if (strcmp(rec.event.name.data, "loop") == 0) {
      ASSERT_STREQ(a->items[0].name.data, "la");
      ASSERT_STREQ(a->items[1].name.data, "lb");
      uint64_t k = a->items[1].uint64_value;
      ASSERT_TRUE(k >= next_k && k < emitted); /* in order; a drop leaves a gap */
      next_k = k + 1;
      ASSERT_EQ(a->items[0].string_value.length, 5 + k % 32);
      ASSERT_BYTES_EQ(a->items[0].string_value.data, text, 5 + k % 32);
      loop++;
    } else {
      ASSERT_STREQ(rec.event.name.data, "handler");
      ASSERT_STREQ(a->items[0].name.data, "hx");
      ASSERT_STREQ(a->items[1].name.data, "hy");
      ASSERT_EQ(a->items[0].string_value.length, 23u);
      ASSERT_BYTES_EQ(a->items[0].string_value.data, "from the signal handler", 23);
      handler++;
    }
  }
  trace_reader_close(r);
  /* a handler inside a reservation drops its record and counts it */
  ASSERT_EQ(loop + handler + h.stats.records_dropped, emitted + g_handler_events);
  ASSERT_TRUE(g_handler_events > 1); /* the signals did arrive (MIN_SIGNALS unless the cap) */
  harness_free(&h);
  printf("ok: %llu loop and %llu handler records (%llu signals, %llu dropped)\n",
         (unsigned long long)loop, (unsigned long long)handler,
         (unsigned long long)g_handler_events, (unsigned long long)h.stats.records_dropped);
}

int main(int argc, char** argv) {
  (void)harness_release_saves; /* harness.h defines it static; unused here */
  for (size_t i = 0; i < BIG; i++) g_pattern[i] = (char)('a' + i % 26);
  test_records(argc > 1 ? argv[1] : NULL);
  test_signal_handler();
  return 0;
}
