/* Tick → time conversions with exact integer arithmetic. */
#include "trace/timestamp.h"

#include <stdio.h>

int64_t __ticks_to_ns(uint64_t ticks, uint64_t ticks_per_second) {
  if (ticks_per_second == 0 || ticks_per_second == 1000000000u)
    return ticks > INT64_MAX ? INT64_MAX : (int64_t)ticks;
  unsigned __int128 ns = (unsigned __int128)ticks * 1000000000u / ticks_per_second;
  return ns > INT64_MAX ? INT64_MAX : (int64_t)ns;
}

static size_t format_fixed(char* buf, int64_t value, uint64_t unit, int digits) {
  const char* sign = value < 0 ? "-" : "";
  uint64_t magnitude = value < 0 ? (uint64_t)0 - (uint64_t)value : (uint64_t)value;
  return (size_t)snprintf(buf, 32, "%s%llu.%0*llu", sign, (unsigned long long)(magnitude / unit),
                          digits, (unsigned long long)(magnitude % unit));
}

size_t __format_us(char* buf, int64_t ns) { return format_fixed(buf, ns, 1000u, 3); }

size_t __format_seconds(char* buf, int64_t ns) { return format_fixed(buf, ns, 1000000000u, 9); }
