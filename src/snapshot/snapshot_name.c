/* Snapshot file names (see snapshot_name.h). */
#include "snapshot/snapshot_name.h"

#include <stdio.h>
#include <string.h>

/* Whether `name` (of `length` bytes) ends with `suffix` and has something
 * before it. */
static bool ends_with(const char* name, size_t length, const char* suffix) {
  size_t n = strlen(suffix);
  return length > n && memcmp(name + length - n, suffix, n) == 0;
}

bool snapshot_name__format(const char* path, unsigned n, char* out, size_t size) {
  const char* slash = strrchr(path, '/');
  const char* base = slash ? slash + 1 : path;
  size_t length = strlen(base);
  size_t stem = length; /* where ".N" goes in the last component */
  static const char* const kCompressed[] = {".zst", ".gz"};
  for (size_t i = 0; i < sizeof(kCompressed) / sizeof(kCompressed[0]); i++)
    if (ends_with(base, stem, kCompressed[i])) {
      stem -= strlen(kCompressed[i]);
      break;
    }
  if (ends_with(base, stem, ".fxt")) stem -= strlen(".fxt");
  size_t head = (size_t)(base - path) + stem;
  int written = snprintf(out, size, "%.*s.%u%s", (int)head, path, n, path + head);
  return written > 0 && (size_t)written < size;
}
