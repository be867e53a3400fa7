/* Public API: the engine lifecycle, used by provider libraries (API.md §8,
 * PROTOCOL.md §7-§9). One engine per process, recording into up to
 * TRACE_ENGINE_MAX_SESSIONS sessions (below). Status codes are 0 or a
 * negative errno: -EINVAL (bad argument), -EBUSY (wrong state: Zircon's
 * BAD_STATE), -ENODEV (not initialized: INTERNAL), -ENOMEM.
 *
 * The engine runs one thread of its own while initialized. Every handler
 * callback runs on that thread, never on a writer's thread, so a handler may
 * block briefly and make syscalls; it must not call trace_engine_terminate()
 * from inside a callback other than trace_stopped. */
#ifndef TRACE_ENGINE_HANDLER_H_
#define TRACE_ENGINE_HANDLER_H_

#include "trace-engine/instrumentation.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum {
  TRACE_START_CLEAR_ENTIRE_BUFFER = 1,
  TRACE_START_CLEAR_NONDURABLE_BUFFER = 2,
  TRACE_START_RETAIN_BUFFER = 3,
} trace_start_mode_t;

typedef struct trace_handler trace_handler_t;

typedef struct trace_handler_ops {
  /* Any thread; the engine caches the answer per call site and per trace. */
  bool (*is_category_enabled)(trace_handler_t* handler, const char* category);
  /* Tracing started and every observer has caught up. */
  void (*trace_started)(trace_handler_t* handler);
  /* Every writer has left the buffer and the header is final. disposition is
   * 0, or -ENOMEM if any record was dropped, or what trace_engine_stop got. */
  void (*trace_stopped)(trace_handler_t* handler, int disposition);
  /* After trace_engine_terminate(); the buffer is no longer touched. */
  void (*trace_terminated)(trace_handler_t* handler);
  /* Streaming: the rolling segment of switch count wrapped_count is full
   * (segment wrapped_count % segment_count, docs/buffer-layout.md), every
   * writer has left it and the durable buffer is committed up to
   * durable_data_end. Save them, then call
   * trace_engine_mark_buffer_saved(wrapped_count, durable_data_end) (from
   * any thread). Segments are reported in switch order, the next without
   * waiting for the previous one's mark. */
  void (*notify_buffer_full)(trace_handler_t* handler, uint32_t wrapped_count,
                             uint64_t durable_data_end);
  /* An alert (<= 14 characters); may be NULL. */
  void (*send_alert)(trace_handler_t* handler, const char* alert_name);
} trace_handler_ops_t;

struct trace_handler {
  const trace_handler_ops_t* ops;
};

/* buffer: size bytes, a multiple of 4096 in [4096, 4 GiB], zero-filled or
 * not (the engine clears what it needs), mapped shared if another process is
 * to read it. The engine writes its header and an initialization record;
 * the state stays STOPPED. -EINVAL, -EBUSY (not terminated), -ENOMEM. */
TRACE_EXPORT int trace_engine_initialize(trace_handler_t* handler, trace_buffering_mode_t mode,
                                         void* buffer, size_t size);

/* -EINVAL (bad mode), -ENODEV (not initialized), -EBUSY (not stopped). */
TRACE_EXPORT int trace_engine_start(trace_start_mode_t start_mode);

/* Begins stopping (nothing if not started); trace_stopped reports the end.
 * disposition 0 is normal. */
TRACE_EXPORT void trace_engine_stop(int disposition);

/* Stops if needed, then frees the engine; trace_terminated reports it. */
TRACE_EXPORT void trace_engine_terminate(void);

/* Streaming: the segment reported by notify_buffer_full as wrapped_count
 * has been saved, and every one reported before it (the mark is
 * cumulative). -EBUSY if no trace is active, -EINVAL if wrapped_count was not
 * reported or is marked already. */
TRACE_EXPORT int trace_engine_mark_buffer_saved(uint32_t wrapped_count, uint64_t durable_data_end);

/* Streaming: true while a full rolling buffer waits for its save, so that
 * records go into the other one and are dropped once it fills too. A writer
 * that can wait without losing anything (a converter reading from a buffer
 * of its own, like the kernel provider) waits for false instead of losing
 * records. False in the other modes and when no trace is active. */
TRACE_EXPORT bool trace_engine_save_pending(void);

typedef struct trace_engine_stats {
  uint64_t records_written; /* committed records, all kinds */
  uint64_t records_dropped; /* discarded records, all kinds */
  uint32_t wrapped_count;
  uint32_t threads; /* writers registered in this trace */
} trace_engine_stats_t;

/* Exact once stopped; a snapshot while tracing. -ENODEV if not initialized. */
TRACE_EXPORT int trace_engine_get_stats(trace_engine_stats_t* out);

/* ---- sessions (docs/sessions.md) ----
 * The engine records into up to TRACE_ENGINE_MAX_SESSIONS traces at once,
 * each with its own handler, buffer, buffering mode and categories: an
 * event goes into every started session whose handler enables its
 * category, and each session counts its own drops (its buffer header's
 * num_records_dropped). The functions above are session 0's; these take
 * the session (0 .. TRACE_ENGINE_MAX_SESSIONS - 1; -EINVAL, NULL or
 * nothing for another) and otherwise behave the same, for that session
 * alone. Each initialized session runs an engine thread of its own, and
 * the process holds its buffer: at most TRACE_ENGINE_MAX_SESSIONS buffers.
 * Which caller uses which index is the caller's business (the provider
 * library maps the manager's session ids onto them). */
TRACE_EXPORT int trace_engine_session_initialize(unsigned session, trace_handler_t* handler,
                                                 trace_buffering_mode_t mode, void* buffer,
                                                 size_t size);
TRACE_EXPORT int trace_engine_session_start(unsigned session, trace_start_mode_t start_mode);
TRACE_EXPORT void trace_engine_session_stop(unsigned session, int disposition);
/* The session's own state (trace_state() is the process's: started while
 * any session is); TRACE_STOPPED for a bad index. */
TRACE_EXPORT trace_state_t trace_engine_session_state(unsigned session);
TRACE_EXPORT void trace_engine_session_terminate(unsigned session);
TRACE_EXPORT int trace_engine_session_mark_buffer_saved(unsigned session, uint32_t wrapped_count,
                                                        uint64_t durable_data_end);
TRACE_EXPORT bool trace_engine_session_save_pending(unsigned session);
TRACE_EXPORT int trace_engine_session_get_stats(unsigned session, trace_engine_stats_t* out);
/* The calling thread's context in one session (for a writer that splits
 * its records between sessions itself, like the kernel provider): NULL
 * unless that session is started and, when category_literal is not NULL,
 * enables it; *out_ref (if out_ref is not NULL) is then the category's ref
 * (empty without a category). Release with trace_release_context(). */
TRACE_EXPORT trace_context_t* trace_engine_session_acquire_context_for_category(
    unsigned session, const char* category_literal, trace_string_ref_t* out_ref);

/* TRACE_ALERT in this process, this trace (docs/flight-recorder.md). */
typedef struct trace_engine_alert_stats {
  uint64_t alerts_sent;      /* handed to the handler (the manager) */
  uint64_t alerts_dropped;   /* refused: over the limit of 16 a second, or no name */
  uint64_t alerts_truncated; /* names cut to 14 bytes (sent or not) */
} trace_engine_alert_stats_t;

/* A snapshot while tracing, exact once stopped. Always 0. */
TRACE_EXPORT int trace_engine_get_alert_stats(trace_engine_alert_stats_t* out);
/* The same for one session (each session's alerts are counted and limited
 * on their own); -EINVAL for a bad index. */
TRACE_EXPORT int trace_engine_session_get_alert_stats(unsigned session,
                                                      trace_engine_alert_stats_t* out);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* TRACE_ENGINE_HANDLER_H_ */
