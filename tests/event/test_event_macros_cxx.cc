// The macros in C++, through the engine and the reader: OVERVIEW.md's C++
// example (std::string inferred), TRACE_DURATION as an RAII object (two in
// one block, early return, exception unwinding), C++ inference (enums,
// nullptr, std::string temporaries in statement macros, string_view, char
// arrays) giving the same records as the TA_* forms, std::string and
// string_view values on the inline record path (each site run three times:
// out of line, then inline; up to and past the 32000-byte limit), and
// nothing evaluated for a disabled category.
#include <sys/syscall.h>
#include <unistd.h>

#include <stdexcept>
#include <string>
#include <string_view>

extern "C" {
#include "engine/harness.h"
}
#include "record_copy.h"
#include "test.h"
#include "trace/event.h"

namespace {

int g_evaluations = 0;
int Evaluated(int v) {
  g_evaluations++;
  return v;
}

// OVERVIEW.md's C++ example, unchanged.
void DoSomething(int a, std::string b) { TRACE_DURATION("example", "DoSomething", "a", a, "b", b); }

int EarlyReturn(bool early) {
  TRACE_DURATION("cat", "early_return", "early", early);
  if (early) return 1;
  TRACE_INSTANT("cat", "not_early", TRACE_SCOPE_THREAD);
  return 0;
}

void Throws() {
  TRACE_DURATION("cat", "unwound");
  throw std::runtime_error("unwind");
}

enum class Mode : uint8_t { kFast = 2 };
enum class Big : int64_t { kLarge = -(INT64_C(1) << 40) };

void EmitAll() {
  DoSomething(5, "bee");
  {
    TRACE_DURATION("cat", "outer_cxx", "x", 1);
    TRACE_DURATION("cat", "inner_cxx");
  }
  EarlyReturn(true);
  bool caught = false;
  try {
    Throws();
  } catch (const std::runtime_error&) {
    caught = true;
  }
  ASSERT_TRUE(caught);

  std::string s = "std-string";
  std::string_view sv = "string-view";
  char buf[8] = "buf";
  TRACE_INSTANT("cat", "inferred_cxx", TRACE_SCOPE_THREAD, "mode", Mode::kFast, "big", Big::kLarge,
                "null", nullptr, "s", s, "tmp", std::string("temporary"), "sv", sv, "buf", buf,
                "lit", "literal-cxx", "b", 1 < 2, "u8", uint8_t{200}, "l", 5L);
  TRACE_INSTANT("cat", "explicit_cxx", TRACE_SCOPE_THREAD, "mode", TA_UINT32(2), "big",
                TA_INT64(-(INT64_C(1) << 40)), "null", TA_NULL(), "s", TA_STRING(s), "tmp",
                TA_STRING("temporary"), "sv", TA_STRING(sv), "buf", TA_STRING(buf), "lit",
                TA_STRING_LITERAL("literal-cxx"), "b", TA_BOOL(true), "u8", TA_UINT32(200), "l",
                TA_INT64(5));

  g_evaluations = 0;
  TRACE_INSTANT("off", "off_cxx", TRACE_SCOPE_THREAD, "v", Evaluated(1), "s",
                std::to_string(Evaluated(2)));
  { TRACE_DURATION("off", "off_scope_cxx", "v", Evaluated(1)); }
  ASSERT_EQ(g_evaluations, 0);
}

// The inline record path with C++ strings: the first record of each site
// out of line, the next two inline.
std::string Letters(size_t n) {
  std::string out(n, 'x');
  for (size_t i = 0; i < n; i++) out[i] = static_cast<char>('a' + i % 26);
  return out;
}

void EmitRepeated() {
  const std::string s100 = Letters(100), big = Letters(40000);
  const std::string s17 = Letters(17);
  const std::string_view sv(s17);
  for (int k = 0; k < 3; k++) {
    TRACE_INSTANT("cat", "cxx_str", TRACE_SCOPE_THREAD, "s", s100, "sv", sv, "big", big, "k", k);
    TRACE_ASYNC_INSTANT("cat", "cxx_async", 9, "s", s100, "k", k);
    TRACE_COUNTER("cat", "cxx_counter", 3, "k", k, "unit", TA_STRING(sv));
    { TRACE_DURATION("cat", "cxx_scope", "s", s100, "k", k); }
  }
}

void CheckRepeated() {
  const std::string letters = Letters(64);
  const struct {
    const char* name;
    uint32_t event_type;
    const char* arg;
    size_t index, length;
  } expected[] = {{"cxx_str", 0, "s", 0, 100},       {"cxx_str", 0, "sv", 1, 17},
                  {"cxx_str", 0, "big", 2, 32000},   {"cxx_async", 6, "s", 0, 100},
                  {"cxx_counter", 1, "unit", 1, 17}, {"cxx_scope", 4, "s", 0, 100}};
  for (const auto& e : expected) {
    int seen = 0;
    for (size_t i = 0; i < g_count; i++) {
      const rec_copy_t* c = &g_records[i];
      if (c->type != 4 || strcmp(c->name, e.name) != 0) continue;
      ASSERT_EQ(c->event_type, e.event_type);
      const arg_copy_t* a = arg_at(c, e.index, e.arg, TRACE_ARG_STRING);
      ASSERT_EQ(a->str_length, e.length);
      ASSERT_TRUE(letters.compare(0, strlen(a->str), a->str) == 0);
      seen++;
    }
    ASSERT_EQ(seen, 3);
  }
}

}  // namespace

int main() {
  (void)harness_release_saves; /* harness.h defines it static; unused here */
  const uint64_t pid = static_cast<uint64_t>(getpid());
  const uint64_t tid = static_cast<uint64_t>(syscall(SYS_gettid));
  harness_t h;
  ASSERT_EQ(harness_start(&h, TRACE_BUFFERING_MODE_ONESHOT, 1 << 20, "cat,example"), 0);
  EmitAll();
  EmitRepeated();
  harness_stop(&h);
  size_t length;
  const uint8_t* fxt = harness_archive(&h, &length);
  read_archive(fxt, length);

  const rec_copy_t* c = &g_records[find_one(4, 4, "DoSomething")];
  ASSERT_STREQ(c->category, "example");
  ASSERT_EQ(c->pid, pid);
  ASSERT_EQ(c->tid, tid);
  ASSERT_EQ(arg_at(c, 0, "a", TRACE_ARG_INT32)->bits, 5u);
  ASSERT_STREQ(arg_at(c, 1, "b", TRACE_ARG_STRING)->str, "bee");

  size_t oi = find_one(4, 4, "outer_cxx"), ii = find_one(4, 4, "inner_cxx");
  ASSERT_TRUE(ii < oi);
  ASSERT_TRUE(g_records[oi].ticks <= g_records[ii].ticks);
  ASSERT_TRUE(g_records[ii].payload <= g_records[oi].payload);
  c = &g_records[find_one(4, 4, "early_return")];
  ASSERT_EQ(arg_at(c, 0, "early", TRACE_ARG_BOOL)->bits, 1u);
  ASSERT_EQ(count_named("not_early"), 0u);
  find_one(4, 4, "unwound");

  const rec_copy_t* inferred = &g_records[find_one(4, 0, "inferred_cxx")];
  const rec_copy_t* explicit_ = &g_records[find_one(4, 0, "explicit_cxx")];
  ASSERT_EQ(inferred->num_args, 11u);
  assert_same_args(inferred, explicit_);
  ASSERT_STREQ(arg_at(inferred, 4, "tmp", TRACE_ARG_STRING)->str, "temporary");
  ASSERT_STREQ(arg_at(inferred, 6, "buf", TRACE_ARG_STRING)->str, "buf");
  ASSERT_TRUE(have_string_record("literal-cxx"));
  ASSERT_TRUE(!have_string_record("std-string"));

  CheckRepeated();
  ASSERT_EQ(h.stats.records_dropped, 0u);
  ASSERT_EQ(count_named("off_cxx") + count_named("off_scope_cxx"), 0u);
  harness_free(&h);
  printf("ok: %zu records checked\n", g_count);
  return 0;
}
