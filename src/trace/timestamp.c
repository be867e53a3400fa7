/* Tick → time conversions with exact integer arithmetic. */
#include "trace/timestamp.h"

#include <string.h>

uint64_t timestamp__ticks_to_ns(uint64_t ticks, uint64_t ticks_per_second) {
  if (ticks_per_second == 0 || ticks_per_second == 1000000000u) return ticks;
  unsigned __int128 ns = (unsigned __int128)ticks * 1000000000u / ticks_per_second;
  return ns > UINT64_MAX ? UINT64_MAX : (uint64_t)ns;
}

/* magnitude / unit, '.', then `digits` decimals of magnitude % unit, without
 * stdio (this runs once per JSON event). */
static size_t format_fixed(char* buf, bool negative, uint64_t magnitude, uint64_t unit,
                           int digits) {
  char tmp[32];
  char* p = tmp + sizeof(tmp);
  uint64_t frac = magnitude % unit, whole = magnitude / unit;
  for (int i = 0; i < digits; i++, frac /= 10) *--p = (char)('0' + frac % 10);
  *--p = '.';
  do {
    *--p = (char)('0' + whole % 10);
    whole /= 10;
  } while (whole);
  if (negative) *--p = '-';
  size_t n = (size_t)(tmp + sizeof(tmp) - p);
  memcpy(buf, p, n);
  buf[n] = '\0';
  return n;
}

size_t timestamp__format_us(char* buf, bool negative, uint64_t ns) {
  return format_fixed(buf, negative, ns, 1000u, 3);
}

size_t timestamp__format_seconds(char* buf, uint64_t ns) {
  return format_fixed(buf, false, ns, 1000000000u, 9);
}
