/* Wall-clock anchors (docs/merge.md#anchors): CLOCK_REALTIME paired with the
 * trace clock, written into an archive at the start and at the stop of a
 * recording so that `trace merge` can put archives of different hosts on one
 * timeline.
 *
 * The record: a provider-info record for the reserved provider id
 * 0xffffffff named "fxtrace", an
 * initialization record (1 tick = 1 ns), then an instant event (thread
 * scope) in category "fxtrace:clock" named "start" or "stop", whose
 * timestamp is the trace clock's reading and whose arguments are
 * `realtime_ns` (uint64, CLOCK_REALTIME in ns since the epoch at that same
 * instant), `uncertainty_ns` (uint64, the width of the window the pair was
 * taken in) and `hostname` (string). Instant events with arguments are kept
 * by every reader (Perfetto's FXT importer makes them 0-length slices with
 * their args; Catapult JSON keeps them as "i" events). The writer of the
 * following records must re-select its own provider (provider-section
 * record) after an anchor.
 *
 * Taking the pair: trace clock, realtime, trace clock, CLOCK_ANCHOR_TRIES
 * times; the narrowest window wins, its midpoint is the trace time.
 * Header-only: the manager and the file-mode provider both use it.
 * Thread-safety: pure, apart from the clocks read. */
#ifndef FXTRACE_ANCHOR_CLOCK_ANCHOR_H_
#define FXTRACE_ANCHOR_CLOCK_ANCHOR_H_

#include <stdint.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "fxt/fxt_encode.h"

/* Reserved: the manager numbers providers from 1 and names its own section
 * 0; file mode uses 1. */
#define CLOCK_ANCHOR_PROVIDER_ID 0xffffffffu
#define CLOCK_ANCHOR_PROVIDER_NAME "fxtrace"
#define CLOCK_ANCHOR_CATEGORY "fxtrace:clock"
#define CLOCK_ANCHOR_TRIES 8
/* The most words an anchor takes: provider info (2), initialization (2),
 * the event (2 + 2 thread + 2 category + 1 name + args 2+1, 2+1, 1+1+32
 * + scope word). */
#define CLOCK_ANCHOR_MAX_WORDS 64

typedef struct clock_anchor {
  uint64_t trace_ns;       /* the trace clock at the pairing */
  uint64_t realtime_ns;    /* CLOCK_REALTIME at the same instant */
  uint64_t uncertainty_ns; /* the window the pair was taken in */
} clock_anchor_t;

static inline uint64_t clock_anchor__realtime_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static inline uint64_t clock_anchor__monotonic_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* trace_now: the clock the archive's timestamps are in (ns). */
static inline clock_anchor_t clock_anchor__take(uint64_t (*trace_now)(void)) {
  clock_anchor_t best = {0, 0, UINT64_MAX};
  for (int i = 0; i < CLOCK_ANCHOR_TRIES; i++) {
    uint64_t a = trace_now();
    uint64_t r = clock_anchor__realtime_ns();
    uint64_t b = trace_now();
    if (b < a) continue;
    if (b - a < best.uncertainty_ns) {
      best.trace_ns = a + (b - a) / 2;
      best.realtime_ns = r;
      best.uncertainty_ns = b - a;
    }
  }
  if (best.uncertainty_ns == UINT64_MAX) best.uncertainty_ns = 0;
  return best;
}

/* Encodes the anchor records into `words` (CLOCK_ANCHOR_MAX_WORDS); returns
 * the number of bytes. `stop`: the "stop" anchor, else "start". */
static inline size_t clock_anchor__encode(uint64_t* words, const clock_anchor_t* a, int stop) {
  static const char kName[] = CLOCK_ANCHOR_PROVIDER_NAME;
  char host[65];
  if (gethostname(host, sizeof(host)) != 0) host[0] = '\0';
  host[sizeof(host) - 1] = '\0';
  uint64_t* p =
      fxt_write_provider_info_record(words, CLOCK_ANCHOR_PROVIDER_ID, kName, sizeof(kName) - 1);
  p = fxt_write_initialization_record(p, 1000000000u);
  trace_thread_ref_t thread =
      trace_make_inline_thread_ref((trace_koid_t)getpid(), (trace_koid_t)getpid());
  trace_string_ref_t category = trace_make_inline_c_string_ref(CLOCK_ANCHOR_CATEGORY);
  trace_string_ref_t name = trace_make_inline_c_string_ref(stop ? "stop" : "start");
  trace_arg_t args[3] = {
      trace_make_arg(trace_make_inline_c_string_ref("realtime_ns"),
                     trace_make_uint64_arg_value(a->realtime_ns)),
      trace_make_arg(trace_make_inline_c_string_ref("uncertainty_ns"),
                     trace_make_uint64_arg_value(a->uncertainty_ns)),
      trace_make_arg(trace_make_inline_c_string_ref("hostname"),
                     trace_make_string_arg_value(trace_make_inline_c_string_ref(host))),
  };
  size_t n = host[0] ? 3 : 2;
  size_t w = fxt_event_record_words(FXT_EVENT_INSTANT, &thread, &category, &name, args, n);
  p = fxt_write_event_record(p, w, FXT_EVENT_INSTANT, a->trace_ns, &thread, &category, &name, args,
                             n, TRACE_SCOPE_THREAD);
  return (size_t)(p - words) * 8;
}

#endif /* FXTRACE_ANCHOR_CLOCK_ANCHOR_H_ */
