/* Reader behaviour the review asked for: bounded table memory, a provider
 * event named after the provider it is about, and unknown argument types
 * skipped without resolving their names. */
#include "fxt/fxt_buffer.h"
#include "fxt/fxt_encode.h"
#include "test.h"
#include "trace-reader/reader.h"

static void provider_info(fxt_buffer_t* b, uint32_t id, const char* name) {
  uint64_t* p = fxt_buffer_reserve(b, fxt_provider_info_words(strlen(name)));
  fxt_write_provider_info_record(p, id, name, strlen(name));
}

/* Strings past the memory limit are skipped with a message; the reader goes
 * on and its tables stay within the limit. */
static void test_string_budget(void) {
  static char big[32000];
  memset(big, 'x', sizeof(big));
  fxt_buffer_t b = {0};
  fxt_write_magic_record(fxt_buffer_reserve(&b, 1));
  provider_info(&b, 1, "p");
  for (unsigned i = 1; i <= 200; i++)
    fxt_write_string_record(fxt_buffer_reserve(&b, fxt_string_record_words(sizeof(big))),
                            (trace_string_index_t)i, big, sizeof(big));
  trace_reader_options_t options = {true, 1u << 20};
  trace_reader_t* r = trace_reader_open_memory(b.words, b.count * 8, &options);
  trace_record_t rec;
  int rc, strings = 0, skipped = 0;
  while ((rc = trace_reader_next(r, &rec)) != TRACE_READ_END) {
    ASSERT_TRUE(rc != TRACE_READ_ERROR);
    if (rc == TRACE_READ_RECORD && rec.type == 2) strings++;
    if (rc == TRACE_READ_SKIPPED) {
      skipped++;
      ASSERT_TRUE(strstr(trace_reader_error(r).message, "memory limit") != NULL);
    }
  }
  ASSERT_TRUE(strings > 10 && strings < 33); /* 1 MiB holds about 32 such strings */
  ASSERT_EQ(strings + skipped, 200);
  trace_reader_close(r);
  fxt_buffer_free(&b);
}

/* Providers past the memory limit are a fatal, reported error. */
static void test_provider_budget(void) {
  fxt_buffer_t b = {0};
  fxt_write_magic_record(fxt_buffer_reserve(&b, 1));
  for (uint32_t id = 1; id <= 5000; id++) provider_info(&b, id, "");
  trace_reader_options_t options = {true, 1u << 20};
  trace_reader_t* r = trace_reader_open_memory(b.words, b.count * 8, &options);
  trace_record_t rec;
  int rc, providers = 0;
  while ((rc = trace_reader_next(r, &rec)) == TRACE_READ_RECORD) providers++;
  ASSERT_EQ(rc, TRACE_READ_ERROR);
  ASSERT_TRUE(strstr(trace_reader_error(r).message, "memory limit") != NULL);
  ASSERT_TRUE(providers > 100 && providers < 5000);
  trace_reader_close(r);
  fxt_buffer_free(&b);
}

/* An overflow event standing in provider 1's section, about provider 2. */
static void test_overflow_names_its_provider(void) {
  fxt_buffer_t b = {0};
  fxt_write_magic_record(fxt_buffer_reserve(&b, 1));
  provider_info(&b, 2, "beta");
  provider_info(&b, 1, "alpha");
  fxt_write_provider_event_record(fxt_buffer_reserve(&b, 1), 2, 0);
  fxt_write_provider_event_record(fxt_buffer_reserve(&b, 1), 9, 0);
  trace_reader_t* r = trace_reader_open_memory(b.words, b.count * 8, NULL);
  trace_record_t rec;
  for (int i = 0; i < 4; i++) ASSERT_EQ(trace_reader_next(r, &rec), TRACE_READ_RECORD);
  ASSERT_EQ(rec.metadata.provider_id, 2);
  ASSERT_STREQ(rec.metadata.provider_name.data, "beta");
  ASSERT_EQ(rec.provider->id, 1); /* the current section does not change */
  ASSERT_EQ(trace_reader_next(r, &rec), TRACE_READ_RECORD);
  ASSERT_STREQ(rec.metadata.provider_name.data, ""); /* never announced */
  trace_reader_close(r);
  fxt_buffer_free(&b);
}

/* An argument of unknown type is skipped by its size even when its name
 * refers to a string index nobody defined (FXT.md §9). */
static void test_unknown_arg_with_undefined_name(void) {
  fxt_buffer_t b = {0};
  fxt_write_magic_record(fxt_buffer_reserve(&b, 1));
  trace_thread_ref_t thread = trace_make_inline_thread_ref(1, 2);
  trace_string_ref_t cat = trace_make_inline_c_string_ref("c");
  trace_string_ref_t name = trace_make_inline_c_string_ref("n");
  trace_arg_t arg = trace_make_arg(trace_make_inline_c_string_ref("a"),
                                   trace_make_int32_arg_value(5));
  size_t words = fxt_event_record_words(FXT_EVENT_INSTANT, &thread, &cat, &name, &arg, 1) + 1;
  uint64_t* p = fxt_buffer_reserve(&b, words);
  uint64_t* end = fxt_write_event_record(p, words, FXT_EVENT_INSTANT, 7, &thread, &cat, &name,
                                         &arg, 1, 0);
  /* Re-point the scope word's slot: move the scope down one word and put an
   * unknown-type (13) argument of size 1 with name index 77 before it. */
  end[0] = end[-1];
  end[-1] = FXT_FIELD(13, 0, 3) | FXT_FIELD(1, 4, 15) | FXT_FIELD(77, 16, 31);
  p[0] = (p[0] & ~FXT_FIELD(0xf, 20, 23)) | FXT_FIELD(2, 20, 23);
  trace_reader_t* r = trace_reader_open_memory(b.words, b.count * 8, NULL);
  trace_record_t rec;
  ASSERT_EQ(trace_reader_next(r, &rec), TRACE_READ_RECORD); /* magic */
  ASSERT_EQ(trace_reader_next(r, &rec), TRACE_READ_RECORD);
  ASSERT_EQ(rec.event.args.count, 1);
  ASSERT_EQ(rec.event.args.items[0].int32_value, 5);
  ASSERT_TRUE(rec.event.has_scope);
  trace_reader_close(r);
  fxt_buffer_free(&b);
}

int main(void) {
  test_string_budget();
  test_provider_budget();
  test_overflow_names_its_provider();
  test_unknown_arg_with_undefined_name();
  return 0;
}
