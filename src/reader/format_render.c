/* <trace-reader/formats.h>: rendering a typed event through its print
 * format. The print format is tracefs's: a C string literal, then the
 * argument expressions. This evaluates the subset that describes fields
 * without running code (REC->field, integer literals, casts, the framework
 * helpers); anything else makes the whole event fall back to
 * "field=value ...", as a tool without the kernel's parser would. Nothing
 * here trusts the format or the record: every read is bounded, and so is
 * the work: a field width or precision counts as at most
 * TRACE_FORMAT_MAX_WIDTH (printf pads in time linear in it, and the
 * archive chooses it), and one event's text stops at TRACE_FORMAT_MAX_TEXT
 * bytes, so an event costs at most a few times that whatever its format
 * says. */
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "trace-reader/formats.h"

enum { MAX_PRINT_ARGS = 32, MAX_DEPTH = 8, MAX_SYMBOLS = 256 };

/* The marker that ends a text cut at TRACE_FORMAT_MAX_TEXT. */
static const char kCut[] = "[...]";

/* A bounded output string. len counts every byte put, also those past
 * cap - 1 that were dropped (saturating): len >= cap means truncated.
 * Invariant: p[min(len, cap - 1)] == '\0' when cap > 0. Each put costs the
 * bytes it stores, not the bytes it is given. */
typedef struct out {
  char* p;
  size_t cap, len;
} out_t;

static void put(out_t* o, const char* s, size_t n) {
  if (o->cap == 0) return;
  size_t room = o->len + 1 < o->cap ? o->cap - 1 - o->len : 0;
  size_t k = n < room ? n : room;
  if (k) memcpy(o->p + o->len, s, k);
  o->len = n > SIZE_MAX - o->len ? SIZE_MAX : o->len + n;
  o->p[o->len < o->cap ? o->len : o->cap - 1] = '\0';
}

static void putf(out_t* o, const char* fmt, ...) __attribute__((format(printf, 2, 3)));
static void putf(out_t* o, const char* fmt, ...) {
  char buf[512];
  va_list ap;
  va_start(ap, fmt);
  int n = vsnprintf(buf, sizeof(buf), fmt, ap);
  va_end(ap);
  if (n > 0) put(o, buf, (size_t)n < sizeof(buf) ? (size_t)n : sizeof(buf) - 1);
}

/* ---- values ---- */

typedef enum { V_INT, V_UINT, V_DOUBLE, V_STRING, V_BYTES } vkind_t;

typedef struct value {
  vkind_t kind;
  int64_t i;
  uint64_t u;
  double d;
  const char* s; /* V_STRING, V_BYTES: not NUL-terminated */
  size_t n;
  char buf[256]; /* a string made by a helper */
} value_t;

typedef struct ctx {
  const trace_event_format_t* format;
  const trace_reader_args_t* args;
} ctx_t;

static const trace_reader_arg_t* find_arg(const ctx_t* c, const char* name, size_t n) {
  for (size_t i = 0; i < c->args->count; i++) {
    const trace_reader_arg_t* a = &c->args->items[i];
    if (a->name.length == n && memcmp(a->name.data, name, n) == 0) return a;
  }
  return NULL;
}

static bool arg_value(const trace_reader_arg_t* a, value_t* v) {
  switch (a->type) {
    case 1:
      v->kind = V_INT, v->i = a->int32_value;
      return true;
    case 2:
      v->kind = V_UINT, v->u = a->uint32_value;
      return true;
    case 3:
      v->kind = V_INT, v->i = a->int64_value;
      return true;
    case 4:
      v->kind = V_UINT, v->u = a->uint64_value;
      return true;
    case 5:
      v->kind = V_DOUBLE, v->d = a->double_value;
      return true;
    case 6:
      v->kind = V_STRING, v->s = a->string_value.data, v->n = a->string_value.length;
      return true;
    case 7:
      v->kind = V_UINT, v->u = a->pointer_value;
      return true;
    case 8:
      v->kind = V_UINT, v->u = a->koid_value;
      return true;
    case 9:
      v->kind = V_UINT, v->u = a->bool_value ? 1 : 0;
      return true;
    default:
      return false;
  }
}

static bool as_u64(const value_t* v, uint64_t* out) {
  switch (v->kind) {
    case V_INT:
      *out = (uint64_t)v->i;
      return true;
    case V_UINT:
      *out = v->u;
      return true;
    default:
      return false;
  }
}

/* ---- a tiny scanner over the print format ---- */

typedef struct scan {
  const char* p;
  const char* end;
} scan_t;

static void skip_space(scan_t* s) {
  while (s->p < s->end && (*s->p == ' ' || *s->p == '\t')) s->p++;
}

static bool eat(scan_t* s, char c) {
  skip_space(s);
  if (s->p < s->end && *s->p == c) {
    s->p++;
    return true;
  }
  return false;
}

static bool is_ident(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
}

static size_t ident(scan_t* s, const char** start) {
  skip_space(s);
  *start = s->p;
  while (s->p < s->end && is_ident(*s->p)) s->p++;
  return (size_t)(s->p - *start);
}

static bool ident_is(const char* p, size_t n, const char* word) {
  return strlen(word) == n && memcmp(p, word, n) == 0;
}

/* A C string literal, unescaped into out (at most cap - 1 bytes). */
static bool string_literal(scan_t* s, char* out, size_t cap, size_t* len) {
  if (!eat(s, '"')) return false;
  size_t n = 0;
  while (s->p < s->end && *s->p != '"') {
    char c = *s->p++;
    if (c == '\\') {
      if (s->p >= s->end) return false;
      char e = *s->p++;
      c = e == 'n'    ? '\n'
          : e == 't'  ? '\t'
          : e == '\\' ? '\\'
          : e == '"'  ? '"'
          : e == '0'  ? '\0'
                      : e;
      if (e != 'n' && e != 't' && e != '\\' && e != '"' && e != '\'' && e != '0') return false;
    }
    if (n + 1 >= cap) return false;
    out[n++] = c;
  }
  if (!eat(s, '"')) return false;
  out[n] = '\0';
  *len = n;
  return true;
}

static bool integer_literal(scan_t* s, value_t* v) {
  skip_space(s);
  bool neg = false;
  if (s->p < s->end && *s->p == '-') {
    neg = true;
    s->p++;
  }
  const char* start = s->p;
  uint64_t x = 0;
  if (s->end - s->p > 2 && s->p[0] == '0' && (s->p[1] == 'x' || s->p[1] == 'X')) {
    s->p += 2;
    const char* digits = s->p;
    while (s->p < s->end) {
      char c = *s->p;
      int d = c >= '0' && c <= '9'   ? c - '0'
              : c >= 'a' && c <= 'f' ? c - 'a' + 10
              : c >= 'A' && c <= 'F' ? c - 'A' + 10
                                     : -1;
      if (d < 0) break;
      if (s->p - digits >= 16) return false;
      x = x * 16 + (uint64_t)d;
      s->p++;
    }
    if (s->p == digits) return false;
  } else {
    while (s->p < s->end && *s->p >= '0' && *s->p <= '9') {
      uint64_t d = (uint64_t)(*s->p - '0');
      if (x > (UINT64_MAX - d) / 10) return false; /* past 64 bits */
      x = x * 10 + d;
      s->p++;
    }
    if (s->p == start) return false;
  }
  while (s->p < s->end && (*s->p == 'u' || *s->p == 'U' || *s->p == 'l' || *s->p == 'L')) s->p++;
  if (neg) {
    v->kind = V_INT;
    v->i = (int64_t)(0 - x); /* no signed overflow for any x */
  } else {
    v->kind = V_UINT;
    v->u = x;
  }
  return true;
}

static bool expr(const ctx_t* c, scan_t* s, value_t* v, int depth);

/* A field reference: REC->name, or the argument of __get_str(name) and the
 * like. Arrays keep their bytes. */
static bool field_value(const ctx_t* c, const char* name, size_t n, value_t* v) {
  const trace_reader_arg_t* a = find_arg(c, name, n);
  if (!a || !arg_value(a, v)) return false;
  const trace_format_field_t* f = trace_event_format_field(c->format, name, n);
  if (v->kind == V_STRING && f && !(f->count > 0 && strcmp(f->type, "char") == 0) &&
      !(f->is_data_loc && strcmp(f->type, "char") == 0))
    v->kind = V_BYTES;
  return true;
}

/* {value, "name"} pairs until ')'. */
typedef struct symbol {
  uint64_t value;
  char name[64];
} symbol_t;

static bool symbols(const ctx_t* c, scan_t* s, symbol_t* out, size_t* count, int depth) {
  *count = 0;
  while (eat(s, ',')) {
    if (!eat(s, '{')) return false;
    value_t v;
    uint64_t u;
    if (!expr(c, s, &v, depth + 1) || !as_u64(&v, &u) || !eat(s, ',')) return false;
    size_t len;
    if (*count == MAX_SYMBOLS) return false;
    if (!string_literal(s, out[*count].name, sizeof(out[*count].name), &len) || !eat(s, '}'))
      return false;
    out[*count].value = u;
    (*count)++;
  }
  return eat(s, ')');
}

static void set_string(value_t* v, out_t* o) {
  v->kind = V_STRING;
  v->s = v->buf;
  v->n = o->len < sizeof(v->buf) ? o->len : sizeof(v->buf) - 1;
}

static bool print_flags(const ctx_t* c, scan_t* s, value_t* v, int depth) {
  value_t x;
  uint64_t flags;
  char delim[32];
  size_t delim_len;
  static __thread symbol_t table[MAX_SYMBOLS];
  size_t count;
  if (!expr(c, s, &x, depth + 1) || !as_u64(&x, &flags) || !eat(s, ',') ||
      !string_literal(s, delim, sizeof(delim), &delim_len) || !symbols(c, s, table, &count, depth))
    return false;
  out_t o = {v->buf, sizeof(v->buf), 0};
  put(&o, "", 0);
  bool first = true;
  for (size_t i = 0; i < count && flags; i++) { /* the kernel's trace_print_flags_seq */
    uint64_t mask = table[i].value;
    if ((flags & mask) != mask) continue;
    flags &= ~mask;
    if (!first) put(&o, delim, delim_len);
    first = false;
    put(&o, table[i].name, strlen(table[i].name));
  }
  if (flags) {
    if (!first) put(&o, delim, delim_len);
    putf(&o, "0x%" PRIx64, flags);
  }
  set_string(v, &o);
  return true;
}

static bool print_symbolic(const ctx_t* c, scan_t* s, value_t* v, int depth) {
  value_t x;
  uint64_t value;
  static __thread symbol_t table[MAX_SYMBOLS];
  size_t count;
  if (!expr(c, s, &x, depth + 1) || !as_u64(&x, &value) || !symbols(c, s, table, &count, depth))
    return false;
  out_t o = {v->buf, sizeof(v->buf), 0};
  put(&o, "", 0);
  size_t i = 0;
  while (i < count && table[i].value != value) i++;
  if (i < count)
    put(&o, table[i].name, strlen(table[i].name));
  else
    putf(&o, "0x%" PRIx64, value);
  set_string(v, &o);
  return true;
}

/* __print_hex(buf, len): bytes as "%02x" separated by spaces (the kernel's
 * %*ph); __print_hex_str: without separators. */
static bool print_hex(const ctx_t* c, scan_t* s, value_t* v, int depth, bool concatenate) {
  value_t buf, len;
  uint64_t n;
  if (!expr(c, s, &buf, depth + 1) || (buf.kind != V_BYTES && buf.kind != V_STRING) ||
      !eat(s, ',') || !expr(c, s, &len, depth + 1) || !as_u64(&len, &n) || !eat(s, ')'))
    return false;
  if (n > buf.n) n = buf.n;
  out_t o = {v->buf, sizeof(v->buf), 0};
  put(&o, "", 0);
  for (uint64_t i = 0; i < n; i++) {
    if (i && !concatenate) put(&o, " ", 1);
    putf(&o, "%02x", (unsigned char)buf.s[i]);
  }
  if (o.len >= sizeof(v->buf)) return false; /* would be truncated: fall back */
  set_string(v, &o);
  return true;
}

/* A parenthesized type name: a cast, which keeps the value (the conversion
 * decides how it prints). */
static bool is_cast(scan_t* s) {
  static const char* const kWords[] = {
      "unsigned", "signed",    "long",     "int",      "short",    "char",   "bool",    "u8",
      "u16",      "u32",       "u64",      "s8",       "s16",      "s32",    "s64",     "size_t",
      "ssize_t",  "uint8_t",   "uint16_t", "uint32_t", "uint64_t", "int8_t", "int16_t", "int32_t",
      "int64_t",  "uintptr_t", "void",     "const",    "double",   "float"};
  scan_t t = *s;
  if (!eat(&t, '(')) return false;
  bool any = false;
  for (;;) {
    const char* w;
    size_t n = ident(&t, &w);
    if (n == 0) break;
    bool known = false;
    for (size_t i = 0; i < sizeof(kWords) / sizeof(kWords[0]); i++)
      known |= ident_is(w, n, kWords[i]);
    if (!known) return false;
    any = true;
  }
  while (eat(&t, '*')) any = true;
  if (!any || !eat(&t, ')')) return false;
  *s = t;
  return true;
}

static bool expr(const ctx_t* c, scan_t* s, value_t* v, int depth) {
  if (depth > MAX_DEPTH) return false;
  memset(v, 0, sizeof(*v) - sizeof(v->buf));
  v->buf[0] = '\0';
  skip_space(s);
  if (s->p >= s->end) return false;
  if (is_cast(s)) return expr(c, s, v, depth + 1);
  if (*s->p == '(') {
    s->p++;
    return expr(c, s, v, depth + 1) && eat(s, ')');
  }
  if (*s->p == '-' || (*s->p >= '0' && *s->p <= '9')) return integer_literal(s, v);
  if (*s->p == '"') {
    size_t len;
    if (!string_literal(s, v->buf, sizeof(v->buf), &len)) return false;
    v->kind = V_STRING, v->s = v->buf, v->n = len;
    return true;
  }
  const char* w;
  size_t n = ident(s, &w);
  if (n == 0) return false;
  if (ident_is(w, n, "REC")) {
    skip_space(s);
    if (s->end - s->p < 2 || s->p[0] != '-' || s->p[1] != '>') return false;
    s->p += 2;
    const char* f;
    size_t fn = ident(s, &f);
    return fn > 0 && field_value(c, f, fn, v);
  }
  if (!eat(s, '(')) return false;
  if (ident_is(w, n, "__get_str") || ident_is(w, n, "__get_dynamic_array") ||
      ident_is(w, n, "__get_dynamic_array_len")) {
    const char* f;
    size_t fn = ident(s, &f);
    if (fn == 0 || !eat(s, ')') || !field_value(c, f, fn, v)) return false;
    if (ident_is(w, n, "__get_dynamic_array_len")) {
      if (v->kind != V_BYTES && v->kind != V_STRING) return false;
      v->u = v->n;
      v->kind = V_UINT;
    }
    return true;
  }
  if (ident_is(w, n, "__print_flags")) return print_flags(c, s, v, depth);
  if (ident_is(w, n, "__print_symbolic")) return print_symbolic(c, s, v, depth);
  if (ident_is(w, n, "__print_hex")) return print_hex(c, s, v, depth, false);
  if (ident_is(w, n, "__print_hex_str")) return print_hex(c, s, v, depth, true);
  return false;
}

/* ---- printf ---- */

/* c is one of the characters of set (never NUL, which strchr would find). */
static bool in_set(char c, const char* set) { return c != '\0' && strchr(set, c) != NULL; }

/* A decimal width or precision, saturating at TRACE_FORMAT_MAX_WIDTH. */
static size_t spec_number(const char* spec, size_t i, size_t end, unsigned* out) {
  unsigned v = 0;
  while (i < end && spec[i] >= '0' && spec[i] <= '9') {
    v = v * 10 + (unsigned)(spec[i] - '0');
    if (v > TRACE_FORMAT_MAX_WIDTH) v = TRACE_FORMAT_MAX_WIDTH;
    i++;
  }
  *out = v;
  return i;
}

/* One conversion of `spec` (from '%' to the conversion character) applied
 * to v; false when the value does not suit it. The flags are kept, the
 * width and precision cut to TRACE_FORMAT_MAX_WIDTH, and the length
 * modifier replaced by the one the value needs. */
static bool convert(out_t* o, const char* spec, size_t spec_len, const value_t* v) {
  char conv = spec[spec_len - 1];
  size_t end = spec_len - 1;
  char fmt[64];
  size_t n = 0;
  size_t i = 1;
  fmt[n++] = '%';
  while (i < end && in_set(spec[i], "-+ #0")) {
    if (n + 24 >= sizeof(fmt)) return false; /* room for width, precision, length, conv */
    fmt[n++] = spec[i++];
  }
  unsigned width = 0, precision = 0;
  bool has_width = i < end && spec[i] >= '1' && spec[i] <= '9';
  if (has_width) i = spec_number(spec, i, end, &width);
  bool has_precision = i < end && spec[i] == '.';
  if (has_precision) i = spec_number(spec, i + 1, end, &precision);
  if (has_width) n += (size_t)snprintf(fmt + n, sizeof(fmt) - n, "%u", width);
  if (has_precision) n += (size_t)snprintf(fmt + n, sizeof(fmt) - n, ".%u", precision);
  const char* length = spec + i;
  size_t length_len = end - i;
  for (size_t k = 0; k < length_len; k++)
    if (!in_set(length[k], "hlLqjzt")) return false; /* a second '.', digits after the length */
  /* the longest conversion: a width, or a precision of digits after up to
   * 309 integer digits of a double */
  char buf[TRACE_FORMAT_MAX_WIDTH + 400];
  int r;
  switch (conv) {
    case 'd':
    case 'i': {
      int64_t x;
      if (v->kind == V_INT)
        x = v->i;
      else if (v->kind == V_UINT)
        x = (int64_t)v->u;
      else
        return false;
      if (length_len == 2 && length[0] == 'h' && length[1] == 'h')
        x = (signed char)x;
      else if (length_len == 1 && length[0] == 'h')
        x = (short)x;
      else if (length_len == 0)
        x = (int)x;
      memcpy(fmt + n, "lld", 4);
      r = snprintf(buf, sizeof(buf), fmt, (long long)x);
      break;
    }
    case 'u':
    case 'x':
    case 'X':
    case 'o': {
      uint64_t x;
      if (!as_u64(v, &x)) return false;
      if (length_len == 2 && length[0] == 'h' && length[1] == 'h')
        x = (unsigned char)x;
      else if (length_len == 1 && length[0] == 'h')
        x = (unsigned short)x;
      else if (length_len == 0)
        x = (unsigned)x;
      fmt[n] = 'l', fmt[n + 1] = 'l', fmt[n + 2] = conv, fmt[n + 3] = '\0';
      r = snprintf(buf, sizeof(buf), fmt, (unsigned long long)x);
      break;
    }
    case 'c': {
      uint64_t x;
      if (!as_u64(v, &x)) return false;
      fmt[n] = 'c', fmt[n + 1] = '\0';
      r = snprintf(buf, sizeof(buf), fmt, (int)(unsigned char)x);
      break;
    }
    case 'p': {
      uint64_t x;
      if (!as_u64(v, &x) || length_len) return false;
      fmt[n] = 'p', fmt[n + 1] = '\0';
      r = snprintf(buf, sizeof(buf), fmt, (void*)(uintptr_t)x);
      break;
    }
    case 'f':
    case 'F':
    case 'e':
    case 'E':
    case 'g':
    case 'G':
    case 'a':
    case 'A': {
      double x;
      if (v->kind == V_DOUBLE)
        x = v->d;
      else
        return false;
      fmt[n] = conv, fmt[n + 1] = '\0';
      r = snprintf(buf, sizeof(buf), fmt, x);
      break;
    }
    case 's': {
      if (v->kind != V_STRING || length_len) return false;
      size_t len = strnlen(v->s, v->n); /* C strings stop at the first NUL */
      char tmp[TRACE_FORMAT_MAX_WIDTH];
      if (len >= sizeof(tmp)) len = sizeof(tmp) - 1;
      memcpy(tmp, v->s, len);
      tmp[len] = '\0';
      fmt[n] = 's', fmt[n + 1] = '\0';
      r = snprintf(buf, sizeof(buf), fmt, tmp);
      break;
    }
    default:
      return false;
  }
  if (r < 0 || r >= (int)sizeof(buf)) return false; /* cannot happen with the caps above */
  put(o, buf, (size_t)r);
  return true;
}

static bool render_print_fmt(const ctx_t* c, out_t* o) {
  const char* p = c->format->print_fmt;
  scan_t s = {p, p + strlen(p)};
  static __thread char fmt[4096];
  size_t fmt_len;
  if (!string_literal(&s, fmt, sizeof(fmt), &fmt_len)) return false;
  static __thread value_t values[MAX_PRINT_ARGS];
  size_t count = 0;
  while (eat(&s, ',')) {
    if (count == MAX_PRINT_ARGS || !expr(c, &s, &values[count], 0)) return false;
    count++;
  }
  skip_space(&s);
  if (s.p != s.end) return false;
  size_t used = 0;
  for (size_t i = 0; i < fmt_len;) {
    if (fmt[i] != '%') {
      size_t j = i;
      while (j < fmt_len && fmt[j] != '%') j++;
      put(o, fmt + i, j - i);
      i = j;
      continue;
    }
    if (i + 1 < fmt_len && fmt[i + 1] == '%') {
      put(o, "%", 1);
      i += 2;
      continue;
    }
    /* cut already: what follows would only be counted, never shown, and a
     * crafted format could make each conversion cost thousands of bytes */
    if (o->len >= o->cap) return true;
    size_t j = i + 1;
    while (j < fmt_len && in_set(fmt[j], "-+ #0123456789.hlLqjzt")) j++;
    if (j >= fmt_len || used == count) return false; /* '*' widths land here too */
    if (!convert(o, fmt + i, j + 1 - i, &values[used++])) return false;
    i = j + 1;
  }
  return used == count;
}

/* ---- the fallback ---- */

void trace_format_value(const trace_format_field_t* field, const trace_reader_arg_t* a,
                        char* out_buf, size_t cap) {
  out_t o = {out_buf, cap, 0};
  put(&o, "", 0);
  value_t v;
  if (!arg_value(a, &v)) {
    put(&o, "?", 1);
    return;
  }
  switch (v.kind) {
    case V_INT:
      putf(&o, "%" PRId64, v.i);
      return;
    case V_UINT:
      if (a->type == 7)
        putf(&o, "0x%" PRIx64, v.u);
      else
        putf(&o, "%" PRIu64, v.u);
      return;
    case V_DOUBLE:
      putf(&o, "%g", v.d);
      return;
    default:
      break;
  }
  bool is_char = field && strcmp(field->type, "char") == 0;
  if (!field || is_char || (field->count == 0 && !field->is_data_loc)) {
    if (field && field->count == 0 && !field->is_data_loc && !is_char) { /* a struct */
      put(&o, "{", 1);
      for (size_t i = 0; i < v.n && o.len < cap; i++)
        putf(&o, i ? " %02x" : "%02x", (unsigned char)v.s[i]);
      put(&o, "}", 1);
      return;
    }
    size_t len = strnlen(v.s, v.n);
    put(&o, v.s, len);
    return;
  }
  unsigned es = trace_format_field_element_size(field);
  bool is_signed = field->is_signed;
  put(&o, "{", 1);
  if (es == 0 || v.n % es) {
    for (size_t i = 0; i < v.n && o.len < cap; i++)
      putf(&o, i ? " %02x" : "%02x", (unsigned char)v.s[i]);
  } else {
    for (size_t i = 0; i < v.n && o.len < cap; i += es) {
      uint64_t x = 0;
      for (unsigned k = 0; k < es; k++) x |= (uint64_t)(unsigned char)v.s[i + k] << (8 * k);
      if (i) put(&o, ",", 1);
      if (is_signed && es < 8 && (x >> (8 * es - 1)) & 1) x |= ~UINT64_C(0) << (8 * es);
      if (is_signed)
        putf(&o, "%" PRId64, (int64_t)x);
      else
        putf(&o, "%" PRIu64, x);
    }
  }
  put(&o, "}", 1);
}

int trace_format_render_text(const trace_event_format_t* format, const trace_record_t* record,
                             char* out_buf, size_t cap, size_t* length) {
  /* the caller's room, or TRACE_FORMAT_MAX_TEXT and the cut marker */
  size_t limit = cap < TRACE_FORMAT_MAX_TEXT + 1 ? cap : TRACE_FORMAT_MAX_TEXT + 1;
  out_t o = {out_buf, limit, 0};
  put(&o, "", 0);
  int used_print_fmt = 0;
  if (format && record && record->type == 4) {
    ctx_t c = {format, &record->event.args};
    used_print_fmt = format->print_fmt && render_print_fmt(&c, &o);
    if (!used_print_fmt) {
      o.len = 0;
      put(&o, "", 0);
      static __thread char value[1024];
      for (size_t i = 0; i < c.args->count && o.len < o.cap; i++) {
        const trace_reader_arg_t* a = &c.args->items[i];
        const trace_format_field_t* f =
            trace_event_format_field(format, a->name.data, a->name.length);
        trace_format_value(f, a, value, sizeof(value));
        if (i) put(&o, " ", 1);
        put(&o, a->name.data, a->name.length);
        put(&o, "=", 1);
        put(&o, value, strlen(value));
      }
    }
  }
  size_t n = o.len < o.cap ? o.len : (o.cap ? o.cap - 1 : 0);
  if (o.len >= o.cap &&
      limit == TRACE_FORMAT_MAX_TEXT + 1) { /* past TRACE_FORMAT_MAX_TEXT: say so */
    n = TRACE_FORMAT_MAX_TEXT - (sizeof(kCut) - 1);
    memcpy(out_buf + n, kCut, sizeof(kCut));
    n += sizeof(kCut) - 1;
  }
  if (length) *length = n;
  return used_print_fmt;
}

int trace_format_render(const trace_event_format_t* format, const trace_record_t* record,
                        char* out_buf, size_t cap) {
  return trace_format_render_text(format, record, out_buf, cap, NULL);
}
