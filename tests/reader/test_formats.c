/* <trace-reader/formats.h>: the typed sample archive (src/reader/typed_sample.h)
 * read back (formats parsed, events rendered through their print formats
 * or the fallback), a later format replacing an earlier one, and bad input:
 * malformed formats are rejected with a reason, every truncation of a good
 * format parses or is rejected, odd print formats fall back; nothing
 * crashes or reads out of bounds (the ASan rerun checks). */
#include <stdlib.h>
#include <string.h>

#include "reader/typed_sample.h"
#include "test.h"
#include "trace-reader/formats.h"
#include "trace-reader/reader.h"

static void check_sample(void) {
  fxt_buffer_t b = {0};
  ASSERT_EQ(typed_sample__build(&b), 0);
  trace_reader_t* r = trace_reader_open_memory(b.words, b.count * 8, NULL);
  trace_format_set_t* set = trace_format_set_new();
  static const char* const expected[] = {
      "fd=3 peer=10.0.0.1 len=100",
      "prev_comm=swapper/0 prev_state=1",
      "flags=A|B|0x4 state=one buf=01 02 ff q=3",
  };
  static const int printed[] = {1, 0, 1};
  size_t events = 0;
  trace_record_t rec;
  int rc;
  char text[512];
  while ((rc = trace_reader_next(r, &rec)) == TRACE_READ_RECORD) {
    trace_reader_error_t err;
    ASSERT_TRUE(trace_format_set_add_record(set, &rec, &err) >= 0);
    if (rec.type != 4) continue;
    const trace_event_format_t* f = trace_format_set_find_event(set, &rec);
    ASSERT_TRUE(f != NULL && events < 3);
    ASSERT_EQ(trace_format_render(f, &rec, text, sizeof(text)), printed[events]);
    ASSERT_STREQ(text, expected[events]);
    events++;
  }
  ASSERT_EQ(rc, TRACE_READ_END);
  ASSERT_EQ(events, 3);
  ASSERT_EQ(trace_format_set_count(set), 3);
  const trace_event_format_t* f =
      trace_format_set_find(set, 1, "kernel:sched", 12, "sched_switch", 12);
  ASSERT_TRUE(f != NULL);
  ASSERT_EQ(f->id, 316);
  const trace_format_field_t* comm = trace_event_format_field(f, "prev_comm", 9);
  ASSERT_TRUE(comm && comm->count == 16 && comm->offset == 8 && !comm->is_common);
  ASSERT_STREQ(comm->type, "char");
  ASSERT_TRUE(trace_event_format_field(f, "common_type", 11)->is_common);
  /* the fallback splits a fixed array into elements */
  trace_reader_arg_t quad = {0};
  quad.type = 6;
  static const char q[8] = {1, 0, 0, 0, (char)0xfe, (char)0xff, (char)0xff, (char)0xff};
  quad.string_value.data = q;
  quad.string_value.length = 8;
  f = trace_format_set_find(set, 1, "net", 3, "net_flags", 9);
  trace_format_value(trace_event_format_field(f, "quad", 4), &quad, text, sizeof(text));
  ASSERT_STREQ(text, "{1,-2}");
  /* a later format with the same key replaces the earlier */
  const char* reason = NULL;
  const char* again = "category: net\nname: net_send\nID: 9\nformat:\nprint fmt: \"x\"\n";
  ASSERT_EQ(trace_format_set_add_text(set, 1, again, strlen(again), &reason), 1);
  ASSERT_EQ(trace_format_set_count(set), 3);
  ASSERT_EQ(trace_format_set_find(set, 1, "net", 3, "net_send", 8)->id, 9);
  /* another provider: another format */
  ASSERT_EQ(trace_format_set_add_text(set, 2, again, strlen(again), &reason), 1);
  ASSERT_EQ(trace_format_set_count(set), 4);
  trace_format_set_free(set);
  trace_reader_close(r);
  fxt_buffer_free(&b);
}

static void check_bad_formats(void) {
  static const char* const bad[] = {
      "",
      "name: x\nprint fmt: \"\"\n",                       /* no category */
      "category: c\nprint fmt: \"\"\n",                   /* no name */
      "category: c\nname: n\n",                           /* no print fmt */
      "category: c\nname: n\nID: 12x\nprint fmt: \"\"\n", /* bad ID */
      "category: c\nname: n\nID: 99999999999\nprint fmt: \"\"\n",
      "category: c\nname: n\n\tfield:int a\toffset:0;\tsize:4;\tsigned:1;\nprint fmt: \"\"\n",
      "category: c\nname: n\n\tfield:int a;\tsize:4;\tsigned:1;\nprint fmt: \"\"\n",
      "category: c\nname: n\n\tfield:int a;\toffset:0;\tsize:4;\tsigned:2;\nprint fmt: \"\"\n",
      "category: c\nname: n\n\tfield:int a[x];\toffset:0;\tsize:4;\tsigned:1;\nprint fmt: \"\"\n",
      "category: c\nname: n\n\tfield:a;\toffset:0;\tsize:4;\tsigned:1;\nprint fmt: \"\"\n",
      "category: c\nname: n\n\tfield:;\toffset:0;\tsize:4;\tsigned:1;\nprint fmt: \"\"\n",
      "category: c\nname: n\n\tfield:int [4];\toffset:0;\tsize:4;\tsigned:1;\nprint fmt: \"\"\n",
      ("category: c\nname: n\n\tfield:__data_loc char x;\toffset:0;\tsize:4;\tsigned:0;\n"
       "print fmt: \"\"\n"),
  };
  trace_format_set_t* set = trace_format_set_new();
  for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
    const char* reason = NULL;
    ASSERT_MSG(trace_format_set_add_text(set, 1, bad[i], strlen(bad[i]), &reason) == -1,
               "bad format %zu was taken", i);
    ASSERT_MSG(reason && reason[0], "bad format %zu: no reason", i);
  }
  const char nul[] = "category: c\nname: n\0\nprint fmt: \"\"\n";
  const char* reason = NULL;
  ASSERT_EQ(trace_format_set_add_text(set, 1, nul, sizeof(nul) - 1, &reason), -1);
  ASSERT_STREQ(reason, "a NUL byte in a format");
  ASSERT_EQ(trace_format_set_count(set), 0);
  /* every prefix of every good format: taken or rejected, never more */
  for (size_t i = 0; i < sizeof(typed_sample__formats) / sizeof(typed_sample__formats[0]); i++) {
    const char* text = typed_sample__formats[i];
    for (size_t n = 0; n <= strlen(text); n++) {
      char* copy = (char*)malloc(n ? n : 1); /* exact size: ASan sees overreads */
      memcpy(copy, text, n);
      int rc = trace_format_set_add_text(set, 1, copy, n, &reason);
      ASSERT_TRUE(rc == 1 || rc == -1);
      free(copy);
    }
  }
  trace_format_set_free(set);
}

/* Print formats the renderer must refuse (fallback), on a record with one
 * int32 argument "v" = 5. */
static void check_odd_print_formats(void) {
  static const char* const fmts[] = {
      "\"v=%d\", REC->v * 2",
      "\"v=%*d\", 3, REC->v",
      "\"v=%s\", REC->v",
      "\"v=%d %d\", REC->v",
      "\"v=%d\", REC->v, REC->v",
      "\"v=%d\", REC->w",
      "\"unterminated",
      "\"v=%d\" REC->v",
      "\"v=%q\", REC->v",
      "\"v=%d\", ((((((((((REC->v))))))))))",
      "\"v=%s\", __print_flags(REC->v, \"|\", {1, \"A\"}",
      "\"v=%s\", __print_symbolic(REC->v, {x, \"a\"})",
      "\"v=%s\", __print_hex(REC->v, 2)",
      "\"%\"",
      "\"v=%d\", REC->",
  };
  trace_record_t rec;
  memset(&rec, 0, sizeof(rec));
  rec.type = 4;
  rec.event.args.count = 1;
  rec.event.args.items[0].type = 1;
  rec.event.args.items[0].name.data = "v";
  rec.event.args.items[0].name.length = 1;
  rec.event.args.items[0].int32_value = 5;
  char text[256];
  for (size_t i = 0; i < sizeof(fmts) / sizeof(fmts[0]); i++) {
    char format[512];
    snprintf(format, sizeof(format),
             "category: c\nname: n\n\tfield:int v;\toffset:8;\tsize:4;\tsigned:1;\nprint fmt: %s\n",
             fmts[i]);
    trace_format_set_t* set = trace_format_set_new();
    const char* reason;
    ASSERT_EQ(trace_format_set_add_text(set, 0, format, strlen(format), &reason), 1);
    const trace_event_format_t* f = trace_format_set_at(set, 0);
    ASSERT_MSG(trace_format_render(f, &rec, text, sizeof(text)) == 0, "format %zu printed", i);
    ASSERT_STREQ(text, "v=5");
    trace_format_set_free(set);
  }
  /* literals at the edges of 64 bits (%d keeps the low 32 bits, as printf of an int would) */
  {
    trace_format_set_t* lit = trace_format_set_new();
    const char* t =
        "category: c\nname: n\nprint fmt: \"%lld %llu %d\", -9223372036854775808, "
        "18446744073709551615, -9999999999999999999\n";
    const char* why;
    ASSERT_EQ(trace_format_set_add_text(lit, 0, t, strlen(t), &why), 1);
    ASSERT_EQ(trace_format_render(trace_format_set_at(lit, 0), &rec, text, sizeof(text)), 1);
    ASSERT_STREQ(text, "-9223372036854775808 18446744073709551615 1981284353");
    trace_format_set_free(lit);
  }
  /* a tiny output buffer: truncated, NUL-terminated */
  trace_format_set_t* set = trace_format_set_new();
  const char* ok = "category: c\nname: n\nprint fmt: \"value is %d\", REC->v\n";
  const char* reason;
  ASSERT_EQ(trace_format_set_add_text(set, 0, ok, strlen(ok), &reason), 1);
  char small[6];
  trace_format_render(trace_format_set_at(set, 0), &rec, small, sizeof(small));
  ASSERT_STREQ(small, "value");
  ASSERT_EQ(trace_format_render(trace_format_set_at(set, 0), &rec, text, sizeof(text)), 1);
  ASSERT_STREQ(text, "value is 5");
  trace_format_set_free(set);
}

int main(void) {
  check_sample();
  check_bad_formats();
  check_odd_print_formats();
  printf("ok\n");
  return 0;
}
