/* COMMAND split like a shell command line, arguments quoted for a remote
 * shell (remote.h). */
#include <stdlib.h>
#include <string.h>

#include "remote/remote.h"

char** remote_words__split(const char* line, const char** error) {
  size_t n = strlen(line);
  /* at most n/2 + 1 words; their text at most n bytes plus a NUL each */
  size_t max_words = n / 2 + 2;
  char** words = malloc(max_words * sizeof(char*) + 2 * n + 2);
  if (!words) {
    *error = "out of memory";
    return NULL;
  }
  char* out = (char*)(words + max_words);
  size_t count = 0;
  const char* p = line;
  for (;;) {
    while (*p == ' ' || *p == '\t' || *p == '\n') p++;
    if (!*p) break;
    words[count++] = out;
    while (*p && *p != ' ' && *p != '\t' && *p != '\n') {
      if (*p == '\'') {
        const char* end = strchr(p + 1, '\'');
        if (!end) {
          free(words);
          *error = "an unterminated '";
          return NULL;
        }
        memcpy(out, p + 1, (size_t)(end - p - 1));
        out += end - p - 1;
        p = end + 1;
      } else if (*p == '"') {
        p++;
        while (*p && *p != '"') {
          if (*p == '\\' && p[1] && strchr("\"\\$`\n", p[1])) p++;
          *out++ = *p++;
        }
        if (!*p) {
          free(words);
          *error = "an unterminated \"";
          return NULL;
        }
        p++;
      } else if (*p == '\\' && p[1]) {
        *out++ = p[1];
        p += 2;
      } else {
        *out++ = *p++;
      }
    }
    *out++ = '\0';
  }
  words[count] = NULL;
  if (count == 0) {
    free(words);
    *error = "no command";
    return NULL;
  }
  return words;
}

char* remote_words__quote(const char* word) {
  static const char kSafe[] =
      "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-./=:,+@%";
  size_t n = strlen(word);
  if (n > 0 && strspn(word, kSafe) == n) return strdup(word);
  /* each ' becomes '\'' (4 bytes) */
  char* q = malloc(4 * n + 3);
  if (!q) return NULL;
  char* o = q;
  *o++ = '\'';
  for (const char* p = word; *p; p++) {
    if (*p == '\'') {
      memcpy(o, "'\\''", 4);
      o += 4;
    } else {
      *o++ = *p;
    }
  }
  *o++ = '\'';
  *o = '\0';
  return q;
}
