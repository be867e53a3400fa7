/* <trace-reader/formats.h>: the renderer's bounds (issue 18). A print
 * format comes from the archive, so its field widths and precisions do
 * too: "%2147483647d" made glibc's snprintf count two billion columns of
 * padding per event (seconds of CPU each). Widths and precisions count as
 * at most TRACE_FORMAT_MAX_WIDTH and an event's text stops at
 * TRACE_FORMAT_MAX_TEXT; a text holds NUL bytes where the format prints
 * them, and says how long it is.
 *
 * The cost check compares CPU time, not wall-clock time, with a generous
 * bound: rendering an archive of crafted formats costs at most 100 times
 * the same archive with plain ones, plus one second; unbounded, one event
 * alone costs several seconds. */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "fxt/fxt_buffer.h"
#include "fxt/fxt_encode.h"
#include "test.h"
#include "trace-reader/formats.h"
#include "trace-reader/reader.h"

enum { EVENTS = 200 };

static const char kFields[] =
    "\tfield:int fd;\toffset:8;\tsize:4;\tsigned:1;\n"
    "\tfield:__data_loc char[] s;\toffset:12;\tsize:4;\tsigned:0;\n"
    "\tfield:double d;\toffset:16;\tsize:8;\tsigned:1;\n";

static const char kCrafted[] =
    "\"fd=%2147483647d p=%.2147483647d s=%-2147483647s t=%.999999999s "
    "f=%2147483647.2147483647f x=%99999999999999999999x\", REC->fd, REC->fd, __get_str(s), "
    "__get_str(s), REC->d, REC->fd";
static const char kPlain[] =
    "\"fd=%d p=%d s=%s t=%s f=%f x=%x\", REC->fd, REC->fd, __get_str(s), __get_str(s), REC->d, "
    "REC->fd";

static trace_arg_t arg(const char* name, trace_arg_value_t v) {
  return trace_make_arg(trace_make_inline_c_string_ref(name), v);
}

/* An archive: magic, provider 1, the format of c:n with `print_fmt`, then
 * `events` events of c:n. */
static void build(fxt_buffer_t* b, const char* print_fmt, size_t events) {
  fxt_write_magic_record(fxt_buffer_reserve(b, 1));
  size_t words = fxt_provider_info_words(1);
  fxt_write_provider_info_record(fxt_buffer_reserve(b, words), 1, "p", 1);
  char text[4096];
  int n = snprintf(text, sizeof(text), "category: c\nname: n\nID: 1\nformat:\n%s\nprint fmt: %s\n",
                   kFields, print_fmt);
  ASSERT_TRUE(n > 0 && (size_t)n < sizeof(text));
  trace_string_ref_t blob_name = trace_make_inline_c_string_ref("trace_event_format");
  words = fxt_blob_record_words(&blob_name, (size_t)n);
  fxt_write_blob_record(fxt_buffer_reserve(b, words), words, 1, &blob_name, text, (size_t)n);
  trace_thread_ref_t thread = trace_make_inline_thread_ref(10, 11);
  trace_string_ref_t cat = trace_make_inline_c_string_ref("c");
  trace_string_ref_t name = trace_make_inline_c_string_ref("n");
  trace_arg_t args[] = {
      arg("fd", trace_make_int32_arg_value(3)),
      arg("s", trace_make_string_arg_value(trace_make_inline_c_string_ref("hello"))),
      arg("d", trace_make_double_arg_value(1.5)),
  };
  for (size_t i = 0; i < events; i++) {
    words = fxt_event_record_words(0, &thread, &cat, &name, args, 3);
    fxt_write_event_record(fxt_buffer_reserve(b, words), words, 0, 1000 + i, &thread, &cat, &name,
                           args, 3, 0);
  }
}

static double cpu_seconds(void) {
  struct timespec ts;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static char text[TRACE_FORMAT_MAX_TEXT + 1024];

/* Reads the archive and renders every event; checks each text against the
 * bounds. Stops (failing) once the CPU time spent passes `budget`, so that
 * an unbounded renderer fails in seconds, not hours. Returns the CPU time. */
static double render_all(const fxt_buffer_t* b, double budget, size_t* total_text) {
  trace_reader_t* r = trace_reader_open_memory(b->words, b->count * 8, NULL);
  trace_format_set_t* set = trace_format_set_new();
  trace_record_t rec;
  size_t events = 0;
  *total_text = 0;
  double start = cpu_seconds();
  while (trace_reader_next(r, &rec) == TRACE_READ_RECORD) {
    trace_reader_error_t err;
    ASSERT_TRUE(trace_format_set_add_record(set, &rec, &err) >= 0);
    const trace_event_format_t* f = trace_format_set_find_event(set, &rec);
    if (!f) continue;
    size_t length = SIZE_MAX;
    ASSERT_EQ(trace_format_render_text(f, &rec, text, sizeof(text), &length), 1);
    ASSERT_TRUE(length <= TRACE_FORMAT_MAX_TEXT && text[length] == '\0');
    *total_text += length;
    events++;
    double spent = cpu_seconds() - start;
    ASSERT_MSG(spent <= budget, "rendering %zu events took %.3f s of CPU, more than %.3f s", events,
               spent, budget);
  }
  ASSERT_EQ(events, EVENTS);
  trace_format_set_free(set);
  trace_reader_close(r);
  return cpu_seconds() - start;
}

static void check_cost(void) {
  fxt_buffer_t plain = {0}, crafted = {0};
  build(&plain, kPlain, EVENTS);
  build(&crafted, kCrafted, EVENTS);
  size_t plain_text, crafted_text;
  double plain_cpu = render_all(&plain, 60.0, &plain_text);
  double crafted_cpu = render_all(&crafted, 100 * plain_cpu + 1.0, &crafted_text);
  /* the output too is bounded per event: at most TRACE_FORMAT_MAX_TEXT */
  ASSERT_TRUE(crafted_text <= (size_t)EVENTS * TRACE_FORMAT_MAX_TEXT);
  ASSERT_TRUE(crafted_text > plain_text);
  printf("render: plain %.4f s (%zu bytes of text), crafted %.4f s (%zu bytes)\n", plain_cpu,
         plain_text, crafted_cpu, crafted_text);
  fxt_buffer_free(&plain);
  fxt_buffer_free(&crafted);
}

/* Renders the first event of an archive with `print_fmt` into text. */
static size_t render_one(const char* print_fmt, int* used) {
  fxt_buffer_t b = {0};
  build(&b, print_fmt, 1);
  trace_reader_t* r = trace_reader_open_memory(b.words, b.count * 8, NULL);
  trace_format_set_t* set = trace_format_set_new();
  trace_record_t rec;
  size_t length = SIZE_MAX;
  bool rendered = false;
  while (trace_reader_next(r, &rec) == TRACE_READ_RECORD) {
    trace_format_set_add_record(set, &rec, NULL);
    const trace_event_format_t* f = trace_format_set_find_event(set, &rec);
    if (!f) continue;
    *used = trace_format_render_text(f, &rec, text, sizeof(text), &length);
    rendered = true;
  }
  ASSERT_TRUE(rendered);
  trace_format_set_free(set);
  trace_reader_close(r);
  fxt_buffer_free(&b);
  return length;
}

static bool all_are(const char* p, size_t n, char c) {
  for (size_t i = 0; i < n; i++)
    if (p[i] != c) return false;
  return true;
}

static void check_caps(void) {
  int used;
  /* a width: 4096 columns */
  size_t n = render_one("\"fd=%2147483647d|\", REC->fd", &used);
  ASSERT_EQ(used, 1);
  ASSERT_EQ(n, 3 + TRACE_FORMAT_MAX_WIDTH + 1);
  ASSERT_TRUE(memcmp(text, "fd=", 3) == 0 && all_are(text + 3, TRACE_FORMAT_MAX_WIDTH - 1, ' '));
  ASSERT_STREQ(text + 3 + TRACE_FORMAT_MAX_WIDTH - 1, "3|");
  /* a precision: 4096 digits; a width past 64 bits: 4096 columns */
  n = render_one("\"%.99999999999999999999999d|\", REC->fd", &used);
  ASSERT_EQ(used, 1);
  ASSERT_EQ(n, TRACE_FORMAT_MAX_WIDTH + 1);
  ASSERT_TRUE(all_are(text, TRACE_FORMAT_MAX_WIDTH - 1, '0'));
  ASSERT_STREQ(text + TRACE_FORMAT_MAX_WIDTH - 1, "3|");
  n = render_one("\"%-99999999999999999999999x|\", REC->fd", &used);
  ASSERT_EQ(used, 1);
  ASSERT_EQ(n, TRACE_FORMAT_MAX_WIDTH + 1);
  ASSERT_TRUE(text[0] == '3' && all_are(text + 1, TRACE_FORMAT_MAX_WIDTH - 1, ' '));
  /* a string's width and a double's precision */
  n = render_one("\"[%5000s]\", __get_str(s)", &used);
  ASSERT_EQ(used, 1);
  ASSERT_EQ(n, 1 + TRACE_FORMAT_MAX_WIDTH + 1);
  ASSERT_STREQ(text + TRACE_FORMAT_MAX_WIDTH - 4, "hello]");
  n = render_one("\"[%.5000f]\", REC->d", &used);
  ASSERT_EQ(used, 1);
  ASSERT_EQ(n, 1 + 2 + TRACE_FORMAT_MAX_WIDTH + 1);
  ASSERT_TRUE(memcmp(text, "[1.5000", 7) == 0 &&
              all_are(text + 4, TRACE_FORMAT_MAX_WIDTH - 1, '0'));
  /* past TRACE_FORMAT_MAX_TEXT: cut there, and the cut shows */
  n = render_one(kCrafted, &used);
  ASSERT_EQ(used, 1);
  ASSERT_EQ(n, TRACE_FORMAT_MAX_TEXT);
  ASSERT_STREQ(text + TRACE_FORMAT_MAX_TEXT - 5, "[...]");
  /* a caller's smaller buffer: cut to it, no marker (as before) */
  {
    fxt_buffer_t b = {0};
    build(&b, kCrafted, 1);
    trace_reader_t* r = trace_reader_open_memory(b.words, b.count * 8, NULL);
    trace_format_set_t* set = trace_format_set_new();
    trace_record_t rec;
    while (trace_reader_next(r, &rec) == TRACE_READ_RECORD) {
      trace_format_set_add_record(set, &rec, NULL);
      const trace_event_format_t* f = trace_format_set_find_event(set, &rec);
      if (!f) continue;
      char small[16];
      ASSERT_EQ(trace_format_render_text(f, &rec, small, sizeof(small), &n), 1);
      ASSERT_EQ(n, sizeof(small) - 1);
      ASSERT_TRUE(memcmp(small, "fd=", 3) == 0 && all_are(small + 3, 12, ' '));
    }
    trace_format_set_free(set);
    trace_reader_close(r);
    fxt_buffer_free(&b);
  }
  /* malformed conversions fall back to field=value */
  static const char* const odd[] = {"\"%1.2.3d\", REC->fd", "\"%5-d\", REC->fd",
                                    "\"%.5.d\", REC->fd", "\"%l5d\", REC->fd"};
  for (size_t i = 0; i < sizeof(odd) / sizeof(odd[0]); i++) {
    render_one(odd[i], &used);
    ASSERT_MSG(used == 0, "'%s' was printed: %s", odd[i], text);
    ASSERT_STREQ(text, "fd=3 s=hello d=1.5");
  }
}

/* A NUL the format prints is part of the text, which goes on after it. */
static void check_nul(void) {
  int used;
  size_t n = render_one("\"x=%c|y%cz\", REC->fd - 3, 27", &used);
  ASSERT_EQ(used, 0); /* "REC->fd - 3" is an expression: the fallback */
  n = render_one("\"x=%c|y%c|z\", 0, 27", &used);
  ASSERT_EQ(used, 1);
  ASSERT_EQ(n, 8);
  ASSERT_TRUE(memcmp(text, "x=\0|y\x1b|z", 9) == 0);
  /* "\0" in the format's literal: also kept */
  n = render_one("\"a\\0b\"", &used);
  ASSERT_EQ(used, 1);
  ASSERT_EQ(n, 3);
  ASSERT_TRUE(memcmp(text, "a\0b", 4) == 0);
}

int main(void) {
  check_caps();
  check_nul();
  check_cost();
  printf("ok\n");
  return 0;
}
