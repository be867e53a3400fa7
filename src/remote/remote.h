/* Not part of the public API: `trace record --host` (docs/multi-host.md),
 * several hosts recorded at once onto one timeline. Its parts:
 *   channel       the framed, versioned protocol on a host's stdin/stdout
 *   words         COMMAND split like a shell line; arguments quoted
 *   clock         the clock exchange: round trips, offsets, the linear map
 *   agent         `trace remote`, the far end: records through that host's
 *                 trace manager with a `trace record` of its own
 *   host          the near end of one host's channel, on a thread of its own
 *   record        the command: every host started and stopped together,
 *                 their archives merged (src/merge) with the measured clocks
 * Thread-safety: per part. */
#ifndef FXTRACE_REMOTE_REMOTE_H_
#define FXTRACE_REMOTE_REMOTE_H_

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* ---- channel (remote_channel.c): one direction of a channel ----
 * Each direction is a sequence of frames: type (u32 little-endian), length
 * of the payload (u32 little-endian, at most REMOTE_MAX_PAYLOAD), payload.
 * The far end's first frame is HELLO. */
#define REMOTE_PROTOCOL_VERSION 1u
#define REMOTE_HELLO_MAGIC "fxtrace-remote"
#define REMOTE_MAX_PAYLOAD (256u << 10)
#define REMOTE_MAX_OPTIONS 16

enum remote_frame_type {
  REMOTE_HELLO = 1,       /* far: magic NUL, u32 version, hostname NUL */
  REMOTE_CLOCK = 2,       /* near: u64 sequence */
  REMOTE_CLOCK_REPLY = 3, /* far: u64 sequence, u64 its trace clock (ns) */
  REMOTE_START = 4,       /* near: `trace record` options, each NUL-terminated */
  REMOTE_STARTED = 5,     /* far: the manager's socket path NUL */
  REMOTE_STOP = 6,        /* near: empty */
  REMOTE_DATA = 7,        /* far: the next bytes of its archive */
  REMOTE_END = 8,         /* far: i32 `trace record`'s exit status; the last frame */
  REMOTE_ERROR = 9,       /* far: a message NUL; the last frame */
};

typedef struct remote_frame {
  uint32_t type;
  uint32_t length;
  const unsigned char* payload; /* valid until the next remote_reader__next() */
} remote_frame_t;

/* Frames out of a byte stream read from a descriptor. */
typedef struct remote_reader {
  int fd;
  unsigned char* buf; /* REMOTE_MAX_PAYLOAD + 8 */
  size_t at, have;
  bool eof;
  int error; /* errno of a failed read, or EPROTO for a bad frame */
} remote_reader_t;

bool remote_reader__init(remote_reader_t* r, int fd);
void remote_reader__free(remote_reader_t* r);
/* 1: a frame in *f; 0: none complete yet (call remote_reader__fill() when
 * the descriptor is readable); -1: the end (r->eof) or an error
 * (r->error). */
int remote_reader__next(remote_reader_t* r, remote_frame_t* f);
/* One read(2) into the buffer. false at the end or on an error. */
bool remote_reader__fill(remote_reader_t* r);

/* Writes one whole frame (blocking, EINTR retried). false with errno. */
bool remote_channel__write(int fd, uint32_t type, const void* payload, size_t length);

static inline uint32_t remote__get32(const unsigned char* p) {
  return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}
static inline uint64_t remote__get64(const unsigned char* p) {
  return (uint64_t)remote__get32(p) | (uint64_t)remote__get32(p + 4) << 32;
}
static inline void remote__put32(unsigned char* p, uint32_t v) {
  for (int i = 0; i < 4; i++) p[i] = (unsigned char)(v >> (8 * i));
}
static inline void remote__put64(unsigned char* p, uint64_t v) {
  remote__put32(p, (uint32_t)v);
  remote__put32(p + 4, (uint32_t)(v >> 32));
}

/* ---- words (remote_words.c) ---- */
/* Splits `line` like a POSIX shell command line without expansions:
 * blanks separate words, '...' and "..." quote (\ escapes ", \, $, ` and a
 * newline inside "..."), \ escapes outside quotes. A NULL-terminated array
 * (one allocation, free() it), or NULL with *error set (an unterminated
 * quote, no word, out of memory). */
char** remote_words__split(const char* line, const char** error);
/* `word` as one word for a POSIX shell: itself when it holds only
 * characters no shell treats specially, else '...' quoted. malloc'd. */
char* remote_words__quote(const char* word);

/* ---- clock (remote_clock.c) ---- */
#define REMOTE_CLOCK_ROUNDS 32
/* A clock exchange whose best round trip is longer than 2 s (uncertainty
 * past 1 s), or whose far clock reads 0 or past INT64_MAX ns, is refused:
 * the host is reported and not merged (docs/multi-host.md#clocks). */
#define REMOTE_CLOCK_MAX_UNCERTAINTY_NS 1000000000u

/* One exchange's best round trip: the far clock read at far_ns while the
 * near clock read near_ns +- uncertainty_ns (half the round trip). */
typedef struct remote_clock_sample {
  bool valid;
  uint64_t near_ns, far_ns;
  uint64_t uncertainty_ns;
  unsigned rounds; /* round trips done */
} remote_clock_sample_t;

/* Keeps the round trip (sent at near_sent, answered with far_ns, received
 * at near_received) when it is the shortest so far. */
void remote_clock__note(remote_clock_sample_t* s, uint64_t near_sent, uint64_t far_ns,
                        uint64_t near_received);
/* far minus near at the sample. */
int64_t remote_clock__offset(const remote_clock_sample_t* s);

/* The map of far timestamps onto the near clock, from the start and end
 * samples (end may be invalid: no rate correction then). */
typedef struct remote_clock_map {
  int64_t shift_ns; /* added to a far timestamp: minus the start offset */
  uint64_t origin_ns;
  double drift_ppb;    /* the rate correction (ordered_clock_t), fractional */
  double measured_ppb; /* the far clock's rate against the near one */
  bool rate_used;      /* false: not significant or implausible, not applied */
} remote_clock_map_t;

remote_clock_map_t remote_clock__map(const remote_clock_sample_t* start,
                                     const remote_clock_sample_t* end);

/* CLOCK_MONOTONIC in ns: the trace clock (docs/clock.md). */
uint64_t remote_clock__now(void);

/* ---- agent (remote_agent.c) ---- */
int remote__agent_main(int argc, char** argv); /* `trace remote` */
int remote__hold_main(int argc, char** argv);  /* `trace remote-hold` */

/* ---- record (remote_record.c) ---- */
/* A host's NAME at most (a hostname's size, as gethostname() gives this
 * host's). */
#define REMOTE_MAX_HOST_NAME 255

typedef struct remote_host_spec {
  const char* name;    /* at most REMOTE_MAX_HOST_NAME bytes */
  const char* command; /* as given: split by remote_words__split() */
} remote_host_spec_t;

typedef struct remote_options {
  const remote_host_spec_t* hosts;
  size_t host_count;
  bool local;               /* the recording host takes part (no --no-local) */
  const char* remote_trace; /* the far `trace`: "trace" from PATH, or --remote-trace */
  /* `trace record` options every host records with ("--categories=..."...) */
  const char* record_options[REMOTE_MAX_OPTIONS];
  size_t record_option_count;
  double duration_s; /* 0: until stopped (a signal, the command's exit) */
  uint64_t stop_timeout_ms;
  const char* output;
  int codec;      /* compress_codec_t */
  char** command; /* run locally after every host started, or NULL */
} remote_options_t;

/* `trace record --host ...`: the exit status. */
int remote__record(const remote_options_t* o);

#endif /* FXTRACE_REMOTE_REMOTE_H_ */
