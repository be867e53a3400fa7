/* Text from an archive, made safe for a terminal (see text_escape.h). */
#include "trace/text_escape.h"

#include <string.h>

const char* text__escaped(const char* in, char* out, size_t size) {
  size_t n = 0;
  for (; *in && n + 1 < size; in++) {
    unsigned char c = (unsigned char)*in;
    if (c < 0x20 || c == 0x7f) {
      if (n + 5 > size) break;
      snprintf(out + n, 5, "\\x%02x", c);
      n += 4;
    } else {
      out[n++] = (char)c;
    }
  }
  out[n] = '\0';
  return out;
}

void text__put_escaped(FILE* out, const char* data, size_t length, const char* keep, bool quoted) {
  for (size_t i = 0; i < length; i++) {
    unsigned char c = (unsigned char)data[i];
    if (quoted && (c == '"' || c == '\\'))
      fprintf(out, "\\%c", c);
    else if ((c < 0x20 || c == 0x7f) && !(c && keep && strchr(keep, c)))
      fprintf(out, "\\x%02x", c);
    else
      fputc(c, out);
  }
}
