/* Category matching rules of PROTOCOL.md §11 (numbered in categories.h). */
#include "engine/categories.h"
#include "test.h"

static bool enabled(const char* list, const char* category) {
  category_set_t set;
  ASSERT_EQ(categories__parse(&set, list), 0);
  bool result = categories__match(&set, category);
  categories__free(&set);
  return result;
}

int main(void) {
  /* Rule 1: the empty list enables everything (but rule 4 still holds). */
  ASSERT_TRUE(enabled("", "gfx"));
  ASSERT_TRUE(enabled(NULL, "anything:at:all"));
  ASSERT_TRUE(!enabled("", ""));
  ASSERT_TRUE(!enabled("", NULL));
  /* Rule 3: exact names. */
  ASSERT_TRUE(enabled("gfx,net", "net"));
  ASSERT_TRUE(!enabled("gfx,net", "ne"));
  ASSERT_TRUE(!enabled("gfx,net", "network"));
  ASSERT_TRUE(!enabled("gfx", "GFX"));
  /* Rule 2: prefix wildcards. */
  ASSERT_TRUE(enabled("kernel:*", "kernel:sched"));
  ASSERT_TRUE(enabled("kernel:*", "kernel:"));
  ASSERT_TRUE(!enabled("kernel:*", "kernel"));
  ASSERT_TRUE(enabled("*", "x"));
  ASSERT_TRUE(!enabled("*", ""));
  ASSERT_TRUE(!enabled("a*b", "aXb")); /* '*' is special only at the end */
  ASSERT_TRUE(enabled("a*b", "a*b"));
  /* Rule 4 and list parsing: empty entries and spaces. */
  ASSERT_TRUE(!enabled(",", "x")); /* two empty entries: a non-empty set matching nothing */
  ASSERT_TRUE(!enabled(" ", "x"));
  ASSERT_TRUE(enabled("a,", "a"));
  category_set_t set;
  ASSERT_EQ(categories__parse(&set, " gfx , ,net* "), 0);
  ASSERT_EQ(set.count, 3);
  ASSERT_STREQ(set.patterns[0], "gfx");
  ASSERT_STREQ(set.patterns[1], "");
  ASSERT_STREQ(set.patterns[2], "net*");
  ASSERT_TRUE(categories__match(&set, "network"));
  ASSERT_TRUE(!categories__match(&set, " gfx"));
  categories__free(&set);
  return 0;
}
