/* Tick → time conversions with exact integer arithmetic. */
#include "trace/timestamp.h"

#include <string.h>

int64_t __ticks_to_ns(uint64_t ticks, uint64_t ticks_per_second) {
  if (ticks_per_second == 0 || ticks_per_second == 1000000000u)
    return ticks > INT64_MAX ? INT64_MAX : (int64_t)ticks;
  unsigned __int128 ns = (unsigned __int128)ticks * 1000000000u / ticks_per_second;
  return ns > INT64_MAX ? INT64_MAX : (int64_t)ns;
}

/* value / unit, '.', then `digits` decimals of value % unit, without stdio
 * (this runs once per JSON event). */
static size_t format_fixed(char* buf, int64_t value, uint64_t unit, int digits) {
  uint64_t magnitude = value < 0 ? (uint64_t)0 - (uint64_t)value : (uint64_t)value;
  char tmp[32];
  char* p = tmp + sizeof(tmp);
  uint64_t frac = magnitude % unit, whole = magnitude / unit;
  for (int i = 0; i < digits; i++, frac /= 10) *--p = (char)('0' + frac % 10);
  *--p = '.';
  do {
    *--p = (char)('0' + whole % 10);
    whole /= 10;
  } while (whole);
  if (value < 0) *--p = '-';
  size_t n = (size_t)(tmp + sizeof(tmp) - p);
  memcpy(buf, p, n);
  buf[n] = '\0';
  return n;
}

size_t __format_us(char* buf, int64_t ns) { return format_fixed(buf, ns, 1000u, 3); }

size_t __format_seconds(char* buf, int64_t ns) { return format_fixed(buf, ns, 1000000000u, 9); }
