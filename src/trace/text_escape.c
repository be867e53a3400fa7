/* Text from an archive, made safe for a terminal (see text_escape.h). */
#include "trace/text_escape.h"

#include <string.h>

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
