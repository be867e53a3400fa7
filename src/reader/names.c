/* Human-readable names of FXT record, event and argument types. */
#include "trace-reader/reader.h"

#define NAME_OR_UNKNOWN(table, i) \
  ((i) < sizeof(table) / sizeof(table[0]) && table[i] ? table[i] : "unknown")

const char* trace_record_type_name(uint32_t type) {
  static const char* const names[16] = {
      [0] = "metadata",       [1] = "initialization",   [2] = "string",
      [3] = "thread",         [4] = "event",            [5] = "blob",
      [6] = "userspace object", [7] = "kernel object",  [8] = "scheduling",
      [9] = "log",            [15] = "large",
  };
  return NAME_OR_UNKNOWN(names, type);
}

const char* trace_event_type_name(uint32_t type) {
  static const char* const names[] = {
      "instant",     "counter",       "duration begin", "duration end",
      "duration complete", "async begin", "async instant", "async end",
      "flow begin",  "flow step",     "flow end",
  };
  return NAME_OR_UNKNOWN(names, type);
}

const char* trace_arg_type_name(uint32_t type) {
  static const char* const names[] = {
      "null", "int32", "uint32", "int64", "uint64", "double",
      "string", "pointer", "koid", "bool", "blob",
  };
  return NAME_OR_UNKNOWN(names, type);
}
