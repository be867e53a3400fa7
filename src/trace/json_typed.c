/* JSON arrays for the array fields of typed events (json_typed.h). */
#include "trace/json_typed.h"

#include <string.h>

bool json_typed__array_value(json_writer_t* j, const trace_event_format_t* format,
                             const trace_reader_arg_t* arg) {
  if (!format || arg->type != 6) return false;
  const trace_format_field_t* f =
      trace_event_format_field(format, arg->name.data, arg->name.length);
  if (!f || (f->count == 0 && !f->is_data_loc) || strcmp(f->type, "char") == 0) return false;
  unsigned size = trace_format_field_element_size(f);
  const unsigned char* p = (const unsigned char*)arg->string_value.data;
  size_t n = arg->string_value.length;
  if (size == 0 || n % size) return false;
  json__raw(j, "[", 1);
  for (size_t i = 0; i < n; i += size) {
    uint64_t x = 0;
    for (unsigned k = 0; k < size; k++) x |= (uint64_t)p[i + k] << (8 * k);
    if (i) json__raw(j, ",", 1);
    if (f->is_signed) {
      if (size < 8 && ((x >> (8 * size - 1)) & 1)) x |= ~UINT64_C(0) << (8 * size);
      json__i64(j, (int64_t)x);
    } else {
      json__u64(j, x);
    }
  }
  json__raw(j, "]", 1);
  return true;
}
