/* JSON values for the raw-byte fields of typed events (json_typed.h). */
#include "trace/json_typed.h"

#include <string.h>

/* The element at p (size bytes, little-endian, as the format says). */
static uint64_t element(const unsigned char* p, unsigned size) {
  uint64_t x = 0;
  for (unsigned k = 0; k < size; k++) x |= (uint64_t)p[k] << (8 * k);
  return x;
}

static void integers(json_writer_t* j, const trace_format_field_t* f, unsigned size,
                     const unsigned char* p, size_t n) {
  json__raw(j, "[", 1);
  for (size_t i = 0; i < n; i += size) {
    uint64_t x = element(p + i, size);
    if (i) json__raw(j, ",", 1);
    if (f->is_signed) {
      if (size < 8 && ((x >> (8 * size - 1)) & 1)) x |= ~UINT64_C(0) << (8 * size);
      json__i64(j, (int64_t)x);
    } else {
      json__u64(j, x);
    }
  }
  json__raw(j, "]", 1);
}

/* float and double elements; json__double writes a non-finite one as a
 * string ("NaN", "Infinity"), JSON having no such number. */
static void floats(json_writer_t* j, unsigned size, const unsigned char* p, size_t n) {
  json__raw(j, "[", 1);
  for (size_t i = 0; i < n; i += size) {
    uint64_t x = element(p + i, size);
    double v;
    if (size == 4) {
      uint32_t w = (uint32_t)x;
      float f;
      memcpy(&f, &w, sizeof(f));
      v = f;
    } else {
      memcpy(&v, &x, sizeof(v));
    }
    if (i) json__raw(j, ",", 1);
    json__double(j, v);
  }
  json__raw(j, "]", 1);
}

static void hex(json_writer_t* j, const unsigned char* p, size_t n) {
  static const char kDigits[] = "0123456789abcdef";
  json__raw(j, "\"", 1);
  for (size_t i = 0; i < n; i++) {
    char two[2] = {kDigits[p[i] >> 4], kDigits[p[i] & 15]};
    json__raw(j, two, 2);
  }
  json__raw(j, "\"", 1);
}

bool json_typed__field_value(json_writer_t* j, const trace_event_format_t* format,
                             const trace_reader_arg_t* arg) {
  if (!format || arg->type != 6) return false;
  const trace_format_field_t* f =
      trace_event_format_field(format, arg->name.data, arg->name.length);
  if (!f || strcmp(f->type, "char") == 0) return false; /* text: a string */
  const unsigned char* p = (const unsigned char*)arg->string_value.data;
  size_t n = arg->string_value.length;
  bool array = f->count > 0 || f->is_data_loc;
  unsigned size = trace_format_field_element_size(f);
  if (array && size > 0 && n % size == 0) {
    integers(j, f, size, p, n);
  } else if (array && strcmp(f->type, "float") == 0 && n % 4 == 0) {
    floats(j, 4, p, n);
  } else if (array && strcmp(f->type, "double") == 0 && n % 8 == 0) {
    floats(j, 8, p, n);
  } else if (!array && f->size != n) {
    return false; /* not the field's raw bytes */
  } else {
    hex(j, p, n); /* a struct, or elements of a type of unknown layout */
  }
  return true;
}
