/* Not part of the public API: the count limit on alerts (docs/flight-recorder.md),
 * shared by the engine (per provider process) and the trace manager (per
 * provider, again). At most ALERT_LIMIT_PER_WINDOW alerts are admitted in each
 * window of ALERT_LIMIT_WINDOW_NS on the monotonic clock; the rest are
 * refused, and their callers count them as dropped. A count per window, not a
 * token rate: what is admitted never depends on how fast anything runs inside
 * one window. Lock-free: one CAS on one word. */
#ifndef FXTRACE_ALERT_ALERT_LIMIT_H_
#define FXTRACE_ALERT_ALERT_LIMIT_H_

#include <stdbool.h>
#include <stdint.h>

enum { ALERT_LIMIT_PER_WINDOW = 16 };
#define ALERT_LIMIT_WINDOW_NS UINT64_C(1000000000)
/* PROTOCOL.md §2: an alert's name is at most 14 bytes. */
enum { ALERT_NAME_MAX = 14 };

typedef struct alert_limit {
  uint64_t word; /* atomic: window index << 8 | alerts admitted in it (0..per_window) */
} alert_limit_t;

/* True if one more alert may go at now_ns (then it is counted). Any thread. */
bool alert_limit__admit(alert_limit_t* limit, uint64_t now_ns);

/* Forgets every window: a new trace starts with a full allowance. */
void alert_limit__reset(alert_limit_t* limit);

#endif /* FXTRACE_ALERT_ALERT_LIMIT_H_ */
