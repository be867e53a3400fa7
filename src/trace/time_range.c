/* --time-range=START,END (see time_range.h). */
#include "trace/time_range.h"

#include <string.h>

#include "ordered/ordered.h"
#include "trace/timestamp.h"

/* Decimal seconds ("12", "0.25", "3.") into ns, exactly; false if malformed
 * or beyond 2^64 ns. */
static bool parse_seconds(const char* s, const char* end, uint64_t* ns) {
  if (s == end) return false;
  uint64_t whole = 0;
  const char* p = s;
  for (; p < end && *p >= '0' && *p <= '9'; p++) {
    if (whole > (UINT64_MAX / 1000000000u - 9) / 10) return false;
    whole = whole * 10 + (uint64_t)(*p - '0');
  }
  bool digits = p > s;
  uint64_t frac = 0;
  int decimals = 0;
  if (p < end && *p == '.') {
    for (p++; p < end && *p >= '0' && *p <= '9'; p++, decimals++) {
      if (decimals == 9) return false;
      frac = frac * 10 + (uint64_t)(*p - '0');
      digits = true;
    }
  }
  if (p != end || !digits) return false;
  for (; decimals < 9; decimals++) frac *= 10;
  *ns = whole * 1000000000u + frac;
  return true;
}

int time_range__parse(const char* text, time_range_t* out) {
  memset(out, 0, sizeof(*out));
  const char* comma = strchr(text, ',');
  if (!comma || strchr(comma + 1, ',')) return -1;
  const char* end = text + strlen(text);
  out->start_ns = 0;
  out->end_ns = UINT64_MAX;
  if (comma > text && !parse_seconds(text, comma, &out->start_ns)) return -1;
  if (end > comma + 1 && !parse_seconds(comma + 1, end, &out->end_ns)) return -1;
  if (out->start_ns > out->end_ns) return -1;
  out->active = true;
  return 0;
}

bool time_range__keep(time_range_t* t, const trace_record_t* r) {
  uint64_t ns;
  if (!ordered__record_ns(r, &ns)) return true;
  if (!t->have_origin) {
    t->have_origin = true;
    t->origin_ns = ns;
  }
  return time_range__contains(t, ns);
}

bool time_range__contains(const time_range_t* t, uint64_t ns) {
  if (!t->active) return true;
  uint64_t offset = ns < t->origin_ns ? 0 : ns - t->origin_ns;
  return offset >= t->start_ns && offset <= t->end_ns;
}
