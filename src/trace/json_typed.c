/* JSON arrays for the array fields of typed events (json_typed.h). */
#include "trace/json_typed.h"

#include <string.h>

/* Bytes of the element types arrays use in practice; 0 for others. */
static unsigned element_size(const char* type) {
  static const struct {
    const char* name;
    unsigned size;
  } kTypes[] = {{"signed char", 1},
                {"unsigned char", 1},
                {"u8", 1},
                {"s8", 1},
                {"uint8_t", 1},
                {"int8_t", 1},
                {"bool", 1},
                {"short", 2},
                {"unsigned short", 2},
                {"u16", 2},
                {"s16", 2},
                {"uint16_t", 2},
                {"int16_t", 2},
                {"int", 4},
                {"unsigned int", 4},
                {"unsigned", 4},
                {"u32", 4},
                {"s32", 4},
                {"uint32_t", 4},
                {"int32_t", 4},
                {"long", 8},
                {"unsigned long", 8},
                {"long long", 8},
                {"unsigned long long", 8},
                {"u64", 8},
                {"s64", 8},
                {"uint64_t", 8},
                {"int64_t", 8},
                {"size_t", 8},
                {"pid_t", 4}};
  for (size_t i = 0; i < sizeof(kTypes) / sizeof(kTypes[0]); i++)
    if (strcmp(type, kTypes[i].name) == 0) return kTypes[i].size;
  return 0;
}

bool json_typed__array_value(json_writer_t* j, const trace_event_format_t* format,
                             const trace_reader_arg_t* arg) {
  if (!format || arg->type != 6) return false;
  const trace_format_field_t* f =
      trace_event_format_field(format, arg->name.data, arg->name.length);
  if (!f || (f->count == 0 && !f->is_data_loc) || strcmp(f->type, "char") == 0) return false;
  unsigned size = element_size(f->type);
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
