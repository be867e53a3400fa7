/* Snapshot file names beside the output (src/snapshot/snapshot_name.h). */
#include "snapshot/snapshot_name.h"
#include "test.h"

static void expect(const char* path, unsigned n, const char* want) {
  char out[256];
  ASSERT_MSG(snapshot_name__format(path, n, out, sizeof(out)), "%s: does not fit", path);
  ASSERT_STREQ(out, want);
}

int main(void) {
  expect("out.fxt", 1, "out.1.fxt");
  expect("out.fxt", 12, "out.12.fxt");
  expect("out.fxt.zst", 2, "out.2.fxt.zst");
  expect("out.fxt.gz", 3, "out.3.fxt.gz");
  expect("out.zst", 1, "out.1.zst");
  expect("trace", 1, "trace.1");
  expect("trace.json", 1, "trace.json.1");
  expect("/tmp/a.b/out.fxt", 4, "/tmp/a.b/out.4.fxt");
  expect("/tmp/a.fxt/out", 1, "/tmp/a.fxt/out.1");
  expect("dir/.fxt", 1, "dir/.fxt.1"); /* nothing before the extension: not one */
  /* too long: refused, never cut */
  char small[10];
  ASSERT_TRUE(!snapshot_name__format("out.fxt", 1, small, 9));
  ASSERT_TRUE(snapshot_name__format("out.fxt", 1, small, 10));
  ASSERT_STREQ(small, "out.1.fxt");
  puts("snapshot names: ok");
  return 0;
}
