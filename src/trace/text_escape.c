/* Text from an archive, made safe for a terminal (see text_escape.h). */
#include "trace/text_escape.h"

#include <string.h>

/* How many bytes at p (of n) form a control character a terminal acts on:
 * a C0 control or DEL (1), or a C1 control written in UTF-8, U+0080 to
 * U+009F (2: 0xc2 0x80..0x9f; CSI is U+009B); 0 for anything else. */
static size_t control_at(const unsigned char* p, size_t n) {
  if (p[0] < 0x20 || p[0] == 0x7f) return 1;
  if (p[0] == 0xc2 && n > 1 && p[1] >= 0x80 && p[1] <= 0x9f) return 2;
  return 0;
}

const char* text__escaped(const char* in, char* out, size_t size) {
  const unsigned char* p = (const unsigned char*)in;
  size_t left = strlen(in), n = 0;
  while (left && n + 1 < size) {
    size_t k = control_at(p, left);
    if (k == 0) {
      out[n++] = (char)*p;
      k = 1;
    } else {
      if (n + 4 * k + 1 > size) break;
      for (size_t i = 0; i < k; i++, n += 4) snprintf(out + n, 5, "\\x%02x", p[i]);
    }
    p += k;
    left -= k;
  }
  out[n] = '\0';
  return out;
}

void text__put_escaped(FILE* out, const char* data, size_t length, const char* keep, bool quoted) {
  const unsigned char* p = (const unsigned char*)data;
  for (size_t i = 0; i < length;) {
    size_t k = control_at(p + i, length - i);
    if (quoted && (p[i] == '"' || p[i] == '\\')) {
      fprintf(out, "\\%c", p[i]);
      k = 1;
    } else if (k == 0 || (k == 1 && p[i] && keep && strchr(keep, p[i]))) {
      fputc(p[i], out);
      k = 1;
    } else {
      for (size_t j = 0; j < k; j++) fprintf(out, "\\x%02x", p[i + j]);
    }
    i += k;
  }
}
