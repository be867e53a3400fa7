/* Streaming JSON output with string escaping and UTF-8 repair. */
#include "trace/json_writer.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

void json_writer__init(json_writer_t* j, FILE* out) {
  j->out = out;
  j->archive = NULL;
  j->failed = false;
  j->error = 0;
  j->handed = 0;
  j->used = 0;
  j->mark_count = 0;
}

void json_writer__init_archive(json_writer_t* j, archive_writer_t* archive) {
  json_writer__init(j, NULL);
  j->archive = archive;
}

/* Hands `length` bytes on; `marks` (of `text`, ascending) are where a cut
 * may come. */
static void drain(json_writer_t* j, const char* text, size_t length, const size_t* marks,
                  size_t mark_count) {
  if (j->failed || length == 0) return;
  if (!j->archive) {
    /* One thread owns the stream, so the per-call stdio lock is not needed. */
    if (fwrite_unlocked(text, 1, length, j->out) != length) {
      j->failed = true;
      j->error = errno ? errno : EIO;
    }
    return;
  }
  bool ok = archive_writer__write(j->archive, text, length);
  /* plain: the last mark whose text reached the file, even after a failure */
  uint64_t in_file = archive_writer__in_file(j->archive);
  for (size_t i = mark_count; i-- > 0;)
    if (j->handed + marks[i] <= in_file) {
      archive_writer__boundary(j->archive, j->handed + marks[i]);
      break;
    }
  j->handed += length;
  if (!ok) {
    j->failed = true;
    j->error = j->archive->error;
  }
}

static void drain_buffer(json_writer_t* j) {
  drain(j, j->buffer, j->used, j->marks, j->mark_count);
  j->used = 0;
  j->mark_count = 0;
}

void json__raw(json_writer_t* j, const char* text, size_t length) {
  if (sizeof(j->buffer) - j->used < length) {
    drain_buffer(j);
    if (length > sizeof(j->buffer)) {
      drain(j, text, length, NULL, 0);
      return;
    }
  }
  memcpy(j->buffer + j->used, text, length);
  j->used += length;
}

void json__boundary(json_writer_t* j) {
  if (!j->archive || j->failed) return;
  if (j->archive->codec) { /* a frame may end here: only at the end of what was handed */
    if (archive_writer__frame_due(j->archive, j->used)) {
      drain_buffer(j);
      if (!j->failed && !archive_writer__boundary(j->archive, j->handed)) {
        j->failed = true;
        j->error = j->archive->error;
      }
    }
    return;
  }
  if (j->mark_count > 0 && j->marks[j->mark_count - 1] == j->used) return;
  if (j->mark_count == JSON_MARKS) j->mark_count--; /* keep the latest */
  j->marks[j->mark_count++] = j->used;
}

void json__text(json_writer_t* j, const char* text) { json__raw(j, text, strlen(text)); }

/* Length of the valid UTF-8 sequence at s (1-4), or 0 if it is invalid:
 * no overlong forms, no surrogates, nothing above U+10FFFF. */
static size_t utf8_sequence(const unsigned char* s, size_t avail) {
  unsigned char c = s[0];
  size_t n;
  unsigned char lo = 0x80, hi = 0xbf; /* bounds of the second byte */
  if (c >= 0xc2 && c <= 0xdf)
    n = 2;
  else if (c >= 0xe0 && c <= 0xef) {
    n = 3;
    if (c == 0xe0) lo = 0xa0;
    if (c == 0xed) hi = 0x9f;
  } else if (c >= 0xf0 && c <= 0xf4) {
    n = 4;
    if (c == 0xf0) lo = 0x90;
    if (c == 0xf4) hi = 0x8f;
  } else
    return 0;
  if (avail < n || s[1] < lo || s[1] > hi) return 0;
  for (size_t i = 2; i < n; i++)
    if ((s[i] & 0xc0) != 0x80) return 0;
  return n;
}

static const char* short_escape(unsigned char c) {
  switch (c) {
    case '"':
      return "\\\"";
    case '\\':
      return "\\\\";
    case '\b':
      return "\\b";
    case '\f':
      return "\\f";
    case '\n':
      return "\\n";
    case '\r':
      return "\\r";
    case '\t':
      return "\\t";
    default:
      return NULL;
  }
}

void json__string(json_writer_t* j, const char* data, size_t length) {
  const unsigned char* s = (const unsigned char*)data;
  size_t run = 0; /* start of the pending run of bytes copied verbatim */
  json__raw(j, "\"", 1);
  for (size_t i = 0; i < length;) {
    unsigned char c = s[i];
    size_t n = 1;
    if (c >= 0x20 && c != '"' && c != '\\' && c != 0x7f) {
      if (c < 0x80 || (n = utf8_sequence(s + i, length - i)) != 0) {
        i += n;
        continue;
      }
      n = 1;
    }
    json__raw(j, data + run, i - run);
    char escape[8];
    const char* e = short_escape(c);
    if (!e && c < 0x80) {
      snprintf(escape, sizeof(escape), "\\u%04x", c);
      e = escape;
    }
    json__text(j, e ? e : "\xef\xbf\xbd"); /* U+FFFD for a bad byte */
    i += n;
    run = i;
  }
  json__raw(j, data + run, length - run);
  json__raw(j, "\"", 1);
}

/* Decimal digits of v, right-aligned ending at `end`; returns the start. */
static char* u64_digits(char* end, uint64_t v) {
  do {
    *--end = (char)('0' + v % 10);
    v /= 10;
  } while (v);
  return end;
}

void json__u64(json_writer_t* j, uint64_t v) {
  char buf[24];
  char* start = u64_digits(buf + sizeof(buf), v);
  json__raw(j, start, (size_t)(buf + sizeof(buf) - start));
}

void json__i64(json_writer_t* j, int64_t v) {
  char buf[24];
  char* start = u64_digits(buf + sizeof(buf), v < 0 ? (uint64_t)0 - (uint64_t)v : (uint64_t)v);
  if (v < 0) *--start = '-';
  json__raw(j, start, (size_t)(buf + sizeof(buf) - start));
}

void json__double(json_writer_t* j, double v) {
  if (isnan(v) || isinf(v)) {
    json__text(j, isnan(v) ? "\"NaN\"" : v > 0 ? "\"Infinity\"" : "\"-Infinity\"");
    return;
  }
  char fixed[32], mantissa[40], exponent[40];
  int precision = 15; /* the fewest of 15, 16, 17 digits that read back exactly */
  for (;; precision++) {
    snprintf(fixed, sizeof(fixed), "%.*g", precision, v);
    if (precision == 17 || strtod(fixed, NULL) == v) break;
  }
  /* the same digits in exponent form: 1.25e-4, not 1.2500e-04 */
  snprintf(mantissa, sizeof(mantissa), "%.*e", precision - 1, v);
  char* e = strchr(mantissa, 'e');
  char* end = e;
  while (end[-1] == '0') end--;
  if (end[-1] == '.') end--;
  int n =
      snprintf(exponent, sizeof(exponent), "%.*se%d", (int)(end - mantissa), mantissa, atoi(e + 1));
  /* Perfetto's parser sums a fraction's digits in an int64: past 19 of them (0.000123… with 17
   * significant digits has 20) it reads garbage, so small values take the exponent form */
  bool small = v != 0 && fabs(v) < 1e-3;
  if (small || (size_t)n < strlen(fixed))
    json__raw(j, exponent, (size_t)n);
  else
    json__text(j, fixed);
}

void json__hex_string(json_writer_t* j, uint64_t v) {
  char buf[24];
  json__raw(j, buf, (size_t)snprintf(buf, sizeof(buf), "\"0x%" PRIx64 "\"", v));
}

void json__base64_string(json_writer_t* j, const void* data, size_t length) {
  static const char kDigits[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  const unsigned char* s = (const unsigned char*)data;
  json__raw(j, "\"", 1);
  for (size_t i = 0; i < length; i += 3) {
    uint32_t v = (uint32_t)s[i] << 16;
    if (i + 1 < length) v |= (uint32_t)s[i + 1] << 8;
    if (i + 2 < length) v |= s[i + 2];
    char out[4] = {kDigits[v >> 18], kDigits[(v >> 12) & 63],
                   i + 1 < length ? kDigits[(v >> 6) & 63] : '=',
                   i + 2 < length ? kDigits[v & 63] : '='};
    json__raw(j, out, 4);
  }
  json__raw(j, "\"", 1);
}

bool json__flush(json_writer_t* j) {
  drain_buffer(j);
  if (!j->failed && j->out && fflush(j->out) != 0) {
    j->failed = true;
    j->error = errno ? errno : EIO;
  }
  return !j->failed;
}
