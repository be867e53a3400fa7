/* Engine lifecycle (PROTOCOL.md §8, API.md §6 and §8): initialize, start,
 * stop, terminate, streaming saves, observers and the acquire/release of
 * contexts. The record path itself is in engine_internal.h and writer.c.
 *
 * Stopping without a shared reference count: every writer marks itself
 * inside a record (`nesting`, its own cache line) before it re-checks the
 * generation. The engine thread clears the generation (and epoch), then runs
 * membarrier(MEMBARRIER_CMD_PRIVATE_EXPEDITED), which executes a full fence
 * on every running thread of the process: a writer that read the old
 * generation had stored its mark before that fence, so the engine sees it and
 * waits; a writer that reads after the fence sees 0 and backs off. Without
 * membarrier, writers issue the fence themselves (fence_needed). Streaming
 * saves use the same argument with the epoch. */
#include <errno.h>
#include <linux/membarrier.h>
#include <poll.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "engine/engine_internal.h"
#include "engine/stop_names.h"
#include "engine/tracepoints.h"
#include "protocol/latency_hint.h"

#define SESSION(i)                                                                      \
  {                                                                                     \
    .hot = &trace_engine__hot[i], .current = &trace_engine__generation[i],              \
    .lock = PTHREAD_MUTEX_INITIALIZER, .cond = PTHREAD_COND_INITIALIZER, .wake_fd = -1, \
    .session = i,                                                                       \
  }
uint64_t trace_engine__generation[TRACE_ENGINE_MAX_SESSIONS];
trace_engine_hot_t trace_engine__hot[TRACE_ENGINE_MAX_SESSIONS];
bool trace_engine__fence_needed;
engine_t engine__sessions[TRACE_ENGINE_MAX_SESSIONS] = {SESSION(0), SESSION(1), SESSION(2),
                                                        SESSION(3)};
#undef SESSION
uint64_t trace_engine__sessions_epoch;
pthread_mutex_t engine__sessions_lock = PTHREAD_MUTEX_INITIALIZER;
/* Generations of every session from one counter: (count << 2) | session. */
static uint64_t generations;
/* Observers are the process's: their list under this lock. */
static pthread_mutex_t observers_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t observers_cond = PTHREAD_COND_INITIALIZER;

enum {
  QUIET_TIMEOUT_MS = 1000, /* PROTOCOL.md §8: how long writers get to leave */
  QUIET_YIELDS = 20,       /* sched_yield()s before sleeping 100 us at a time */
  OBSERVER_TIMEOUT_MS = 5000,
  MAX_OBSERVERS = 32,
};

typedef struct observer {
  trace_observer_callback_t callback; /* or NULL for an eventfd observer */
  void* arg;
  int fd;
  bool pending; /* eventfd observer not yet caught up */
} observer_t;

static observer_t observers[MAX_OBSERVERS];
static size_t observer_count;
static char process_name[17];

/* ---- small helpers ---- */

static uint64_t now_ms(void) { return trace_clock__monotonic_ns() / 1000000u; }

static void wake_engine_thread(engine_t* e) {
  uint64_t one = 1;
  if (write(e->wake_fd, &one, sizeof(one)) < 0) { /* EAGAIN: already awake */
  }
}

void engine__wake_thread(engine_t* e) { wake_engine_thread(e); }

static bool membarrier_registered;

static void after_fork_in_child(void);

/* Once per process: the clock, the name, membarrier, the fork guard. */
static void process_setup(void) {
  trace_clock__init();
  FILE* f = fopen("/proc/self/comm", "re");
  if (f) {
    if (fgets(process_name, sizeof(process_name), f)) process_name[strcspn(process_name, "\n")] = 0;
    fclose(f);
  }
  membarrier_registered =
      syscall(SYS_membarrier, MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED, 0, 0) == 0;
  /* once: writers of every session read it (they start after this) */
  trace_engine__fence_needed = !membarrier_registered;
  pthread_atfork(NULL, NULL, after_fork_in_child);
}

/* After this, every writer that will still write under the old generation
 * or epoch is visibly inside a record. */
static void asymmetric_fence(void) {
  if (membarrier_registered) syscall(SYS_membarrier, MEMBARRIER_CMD_PRIVATE_EXPEDITED, 0, 0);
  __atomic_thread_fence(__ATOMIC_SEQ_CST);
}

/* Waits until each writer has been seen outside a record once. Called
 * without engine.lock held by the engine thread; the writer list only grows,
 * and writers are never freed. With `bounded` (stop), gives up after
 * QUIET_TIMEOUT_MS (PROTOCOL.md §8) and returns false; otherwise (a streaming
 * save, which must never hand over a buffer someone still writes) it waits
 * as long as it takes, saying so once.
 *
 * A save of the segments of switch counts below `saving_below` (0 at a
 * stop: no exception) need not wait for a writer inside its outermost
 * record whose chunk is already in a later segment, if it claimed that
 * chunk at nesting 1 with nothing of its own left open (writer.c, claim,
 * writer__quiet_from): whatever it reserves from then on is in that chunk
 * or a later one. The common case is the writer that made the switch,
 * still inside the record that made it; waiting for it would let the
 * scheduler hold the save back for as long as it keeps that thread off its
 * CPU. Any other writer inside a record is waited for — one whose record
 * is open in an older chunk while a nested record (a signal handler's, or
 * traced code called inside a record) moved it to a new one, too — yielding
 * first, since it may be waiting for this thread's CPU. */
bool engine__wait_writers_quiet(engine_t* e, bool bounded, uint64_t saving_below) {
  asymmetric_fence();
  pthread_mutex_lock(&e->lock);
  trace_context_t* head = e->writers;
  pthread_mutex_unlock(&e->lock);
  uint64_t deadline = now_ms() + QUIET_TIMEOUT_MS;
  bool warned = false;
  for (trace_context_t* w = head; w; w = w->next) {
    for (unsigned tries = 0;; tries++) {
      uint32_t nesting = ATOMIC_ACQUIRE(&w->nesting);
      if (nesting == 0) break;
      if (nesting == 1 && saving_below != 0 && writer__quiet_from(e, w, saving_below)) break;
      if (!warned && now_ms() > deadline) {
        warned = true;
        fprintf(stderr, "fxtrace: a thread has held a trace context for over %d ms%s\n",
                QUIET_TIMEOUT_MS,
                bounded ? "; stopping without it (its last record may be missing)"
                        : "; the buffer save waits for it (records are dropped meanwhile)");
        if (bounded) return false;
      }
      if (tries < QUIET_YIELDS) {
        sched_yield();
        continue;
      }
      struct timespec ts = {0, 100000};
      nanosleep(&ts, NULL);
    }
  }
  return true;
}

void engine__totals(engine_t* e, uint64_t* written, uint64_t* dropped, uint32_t* threads) {
  uint64_t wr = 0, dr = 0;
  uint32_t n = 0;
  pthread_mutex_lock(&e->lock);
  uint64_t generation = e->generation;
  for (trace_context_t* w = e->writers; w; w = w->next) {
    if (ATOMIC_ACQUIRE(&w->generation) != generation) continue;
    wr += ATOMIC_LOAD(&w->records_written);
    dr += ATOMIC_LOAD(&w->records_dropped);
    n++;
  }
  wr += e->engine_written;
  dr += e->engine_dropped;
  pthread_mutex_unlock(&e->lock);
  *written = wr;
  *dropped = dr;
  if (threads) *threads = n;
}

/* The committed prefix of the durable buffer, waiting (bounded) for records
 * that are reserved but not yet committed below the allocation point. */
static uint64_t durable_committed_end(engine_t* e) {
  uint64_t alloc = ATOMIC_ACQUIRE(&e->header->durable_alloc);
  /* full: the record that crossed the end was never written; the data ends
   * where it would have started */
  if (alloc > e->durable_size) alloc = ATOMIC_LOAD(&e->header->durable_data_end);
  uint64_t deadline = now_ms() + QUIET_TIMEOUT_MS;
  uint64_t pos = 0;
  while (pos < alloc) {
    uint64_t header = ATOMIC_ACQUIRE((uint64_t*)(e->durable + pos));
    uint64_t words = fxt_record_words(header);
    if (header == 0) {
      if (now_ms() > deadline) break;
      sched_yield();
      continue;
    }
    if (words == 0 || pos + words * 8 > alloc) break;
    pos += words * 8;
  }
  return pos;
}

/* ---- buffer set-up ---- */

static void write_metadata_records(engine_t* e, uint64_t* p, size_t room_words);

static size_t metadata_words(void);

/* Clears the rolling buffers: allocation restarts at buffer 0. */
static void clear_rolling(engine_t* e) {
  trace_buffer_header_t* h = e->header;
  uint64_t alloc = h->rolling_alloc;
  uint64_t sw = alloc >> TRACE_BUFFER_ALLOC_OFFSET_BITS;
  uint64_t off = alloc & TRACE_BUFFER_ALLOC_OFFSET_MASK;
  /* every segment used so far: 0 .. sw, or all of them once it wrapped */
  if (sw > 0 || off > 0)
    for (uint64_t i = 0; i <= sw && i < e->segments; i++) e->dirty[i] = true;
  h->rolling_alloc = 0;
  h->wrapped_count = 0;
  h->rolling_data_end[0] = h->rolling_data_end[1] = 0;
  h->saves_done = 0;
  e->saves_done = 0;
  e->save_request = 0;
  e->next_save = 0;
}

/* Clears everything: tables restart, so every thread's caches are stale. */
static void clear_all(engine_t* e) {
  trace_buffer_header_t* h = e->header;
  clear_rolling(e);
  uint64_t used = h->durable_alloc < e->durable_size ? h->durable_alloc : e->durable_size;
  if (used) memset(e->durable, 0, used);
  h->durable_alloc = h->durable_data_end = 0;
  h->num_records_dropped = h->records_written = 0;
  h->streamed_bytes = h->saved_durable_end = 0;
  h->flags = 0;
  e->next_string_index = 1;
  e->next_thread_index = 1;
  e->engine_written = 0;
  ATOMIC_STORE(&e->cache_epoch, e->cache_epoch + 1);
  /* The initialization and process records: durable, or chunk 0 of the
   * oneshot buffer (which writers then never get). */
  if (e->mode == TRACE_BUFFERING_MODE_ONESHOT) {
    if (e->dirty[0]) memset(e->rolling, 0, e->chunk_size);
    write_metadata_records(e, (uint64_t*)e->rolling, e->chunk_size / 8);
    h->rolling_alloc = e->chunk_size;
  } else {
    size_t words = metadata_words();
    if (words * 8 <= e->durable_size) {
      write_metadata_records(e, (uint64_t*)e->durable, words);
      h->durable_alloc = words * 8;
    }
  }
}

static trace_string_ref_t process_name_ref(void) {
  return trace_make_inline_c_string_ref(process_name);
}

static size_t metadata_words(void) {
  trace_string_ref_t name = process_name_ref();
  return 2 + fxt_kernel_object_record_words(&name, NULL, 0);
}

static void write_metadata_records(engine_t* e, uint64_t* p, size_t room_words) {
  trace_string_ref_t name = process_name_ref();
  size_t kobj = fxt_kernel_object_record_words(&name, NULL, 0);
  if (room_words < 2 + kobj) return;
  p = fxt_write_initialization_record(p, trace_clock__ticks_per_second());
  fxt_write_kernel_object_record(p, kobj, e->pid, FXT_KOBJ_PROCESS, &name, NULL, 0);
  e->engine_written += 2;
}

/* ---- initialize / start / stop / terminate ---- */

static void* engine_thread_main(void* arg);

static void after_fork_in_child(void) {
  /* The child shares the parent's buffer mappings: it must never write. */
  for (unsigned i = 0; i < TRACE_ENGINE_MAX_SESSIONS; i++) {
    engine_t* e = &engine__sessions[i];
    ATOMIC_STORE(&trace_engine__generation[i], 0);
    ATOMIC_STORE(&trace_engine__hot[i].generation, 0);
    ATOMIC_STORE(&trace_engine__hot[i].epoch, 0);
    e->initialized = false;
    e->thread_running = false;
    ATOMIC_STORE(&e->state, TRACE_STOPPED);
    e->forked = true;
    trace_engine__self[i] = NULL;
  }
  trace_engine__sessions_epoch++;
  engine__forget_pending(); /* and the call sites then cache "disabled" again */
}

static int initialize_locked(engine_t* e, trace_handler_t* handler, trace_buffering_mode_t mode,
                             void* buffer, size_t size, bool zeroed) {
  trace_buffer_geometry_t g;
  if (handler == NULL || handler->ops == NULL || buffer == NULL || ((uintptr_t)buffer & 7) ||
      buffer__compute_geometry((unsigned)mode, size, &g) != 0)
    return -EINVAL;
  if (e->initialized || e->thread_running || e->forked) return -EBUSY;
  uint32_t per_buffer = (uint32_t)(g.rolling_size / g.chunk_size);
  uint16_t* owners = calloc((size_t)per_buffer * g.segments, sizeof(uint16_t));
  if (!owners) return -ENOMEM;
  int fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
  if (fd < 0) {
    free(owners);
    return -ENOMEM;
  }
  static pthread_once_t once = PTHREAD_ONCE_INIT;
  pthread_once(&once, process_setup);
  e->mode = (uint32_t)mode;
  e->header = buffer;
  e->durable = (uint8_t*)buffer + sizeof(trace_buffer_header_t);
  e->durable_size = g.durable_size;
  e->rolling = e->durable + g.durable_size;
  e->segments = g.segments;
  e->rolling_size = g.rolling_size;
  e->chunk_size = g.chunk_size;
  e->chunks_per_buffer = per_buffer;
  e->run_max = writer__run_max(per_buffer);
  e->owners = owners;
  e->wake_fd = fd;
  if (!zeroed) memset(buffer, 0, size);
  buffer_header__init(e->header, (unsigned)mode, size, &g);
  memset(e->dirty, 0, sizeof(e->dirty));
  e->pid = (trace_koid_t)getpid();
  e->disposition = 0;
  e->stop_pending = e->started_pending = e->terminate_pending = false;
  ATOMIC_STORE(&e->state, TRACE_STOPPED);
  ATOMIC_RELEASE(&e->handler, handler);
  clear_all(e);
  if (pthread_create(&e->thread, NULL, engine_thread_main, e) != 0) {
    close(fd);
    free(owners);
    e->owners = NULL;
    e->wake_fd = -1;
    return -ENOMEM;
  }
  e->thread_running = true;
  e->initialized = true;
  return 0;
}

static engine_t* session_at(unsigned session) {
  return session < TRACE_ENGINE_MAX_SESSIONS ? &engine__sessions[session] : NULL;
}

int trace_engine__session_initialize_zeroed(unsigned session, trace_handler_t* handler,
                                            trace_buffering_mode_t mode, void* buffer,
                                            size_t size) {
  engine_t* e = session_at(session);
  if (!e) return -EINVAL;
  pthread_mutex_lock(&e->lock);
  int status = initialize_locked(e, handler, mode, buffer, size, true);
  pthread_mutex_unlock(&e->lock);
  return status;
}

int trace_engine__initialize_zeroed(trace_handler_t* handler, trace_buffering_mode_t mode,
                                    void* buffer, size_t size) {
  return trace_engine__session_initialize_zeroed(0, handler, mode, buffer, size);
}

int trace_engine_session_initialize(unsigned session, trace_handler_t* handler,
                                    trace_buffering_mode_t mode, void* buffer, size_t size) {
  engine_t* e = session_at(session);
  if (!e) return -EINVAL;
  pthread_mutex_lock(&e->lock);
  int status = initialize_locked(e, handler, mode, buffer, size, false);
  pthread_mutex_unlock(&e->lock);
  return status;
}

int trace_engine_initialize(trace_handler_t* handler, trace_buffering_mode_t mode, void* buffer,
                            size_t size) {
  return trace_engine_session_initialize(0, handler, mode, buffer, size);
}

/* Publishes session e's new generation (or 0) and a new sessions epoch,
 * then has every listed call site ask again (sites.c). Under e->lock. */
static void publish_generation_locked(engine_t* e, uint64_t generation) {
  pthread_mutex_lock(&engine__sessions_lock);
  ATOMIC_RELEASE(&e->hot->generation, generation);
  ATOMIC_RELEASE(e->current, generation);
  ATOMIC_RELEASE(&trace_engine__sessions_epoch, trace_engine__sessions_epoch + 1);
  sites__reset();
  pthread_mutex_unlock(&engine__sessions_lock);
}

/* The streaming writers' drop counters (writer.c, count_dropped_waiting)
 * of a durable buffer this start keeps: zeroed, like the header's count.
 * A counter whose writer's epoch is not the engine's was cleared with the
 * durable buffer (or is in an earlier engine's buffer): left alone. Under
 * e->lock, with no writer in the buffer. */
static void reset_drop_counters(engine_t* e) {
  for (trace_context_t* w = e->writers; w; w = w->next) {
    uint64_t* slot = ATOMIC_LOAD(&w->drop_slot);
    if (slot && ATOMIC_LOAD(&w->drop_slot_epoch) == e->cache_epoch) ATOMIC_STORE(slot, 0);
  }
}

int trace_engine_start(trace_start_mode_t start_mode) {
  return trace_engine_session_start(0, start_mode);
}

int trace_engine_session_start(unsigned session, trace_start_mode_t start_mode) {
  engine_t* e = session_at(session);
  if (!e) return -EINVAL;
  if (start_mode < TRACE_START_CLEAR_ENTIRE_BUFFER || start_mode > TRACE_START_RETAIN_BUFFER)
    return -EINVAL;
  pthread_mutex_lock(&e->lock);
  int status = 0;
  if (!e->initialized) {
    status = -ENODEV;
  } else if (e->state != TRACE_STOPPED || e->terminate_pending) {
    status = -EBUSY;
  } else {
    if (start_mode == TRACE_START_CLEAR_ENTIRE_BUFFER ||
        (start_mode == TRACE_START_CLEAR_NONDURABLE_BUFFER &&
         e->mode == TRACE_BUFFERING_MODE_ONESHOT))
      clear_all(e);
    else if (start_mode == TRACE_START_CLEAR_NONDURABLE_BUFFER)
      clear_rolling(e);
    /* Every writer is outside the buffer (the last stop waited for them):
     * chunk tokens of earlier traces are void. */
    memset(e->owners, 0, (size_t)e->chunks_per_buffer * e->segments * sizeof(uint16_t));
    trace_buffer_header_t* h = e->header;
    uint64_t sw = h->rolling_alloc >> TRACE_BUFFER_ALLOC_OFFSET_BITS;
    h->rolling_data_end[sw & 1] = 0;
    h->flags &= ~TRACE_BUFFER_FLAG_STOPPED;
    /* drops are counted per start, as the writers' own counts (no writer is
     * in the buffer: the last stop waited for them) */
    ATOMIC_STORE(&h->num_records_dropped, 0);
    reset_drop_counters(e);
    e->generation = (__atomic_add_fetch(&generations, 1, __ATOMIC_RELAXED) << 2) | e->session;
    e->generations++;
    e->started_ns = trace_clock__now_ns();
    e->disposition = 0;
    e->engine_dropped = 0;
    engine__reset_alerts(e);
    ATOMIC_STORE(&e->state, TRACE_STARTED);
    ATOMIC_STORE(&e->hot->epoch, (e->generation << 24) | (sw & 0xffffff));
    publish_generation_locked(e, e->generation); /* sites that cached an answer ask again */
    /* Events before this start that the process waited for (pending.c):
     * taken after the generation is out, so that every event either saw
     * the generation (and records) or was counted before the take. */
    uint64_t missed = engine__take_pending_locked();
    if (missed != 0) {
      __atomic_fetch_add(&h->num_records_dropped, missed, __ATOMIC_RELAXED);
      e->engine_dropped += missed;
    }
    e->started_pending = true;
    wake_engine_thread(e);
  }
  pthread_mutex_unlock(&e->lock);
  return status;
}

static void begin_stop_locked(engine_t* e, int disposition) {
  if (e->state != TRACE_STARTED) return;
  ATOMIC_STORE(&e->state, TRACE_STOPPING);
  e->disposition = disposition;
  ATOMIC_STORE(&e->hot->epoch, 0);
  publish_generation_locked(e, 0); /* enabled sites learn they are off (once each) */
  e->stop_pending = true;
  wake_engine_thread(e);
}

/* See engine__set_stop_hook(). Set before tracing starts, never while a
 * stop may run. */
static void (*stop_hook)(unsigned session, void* arg);
static void* stop_hook_arg;

void engine__set_stop_hook(void (*hook)(unsigned session, void* arg), void* arg) {
  stop_hook = hook;
  stop_hook_arg = arg;
}

void engine__add_dropped(unsigned session, uint64_t count) {
  engine_t* e = session_at(session);
  if (!e) return;
  pthread_mutex_lock(&e->lock);
  e->engine_dropped += count;
  /* the header's count is live (writer__count_dropped): the manager reads
   * it even if this process dies before the stop */
  if (e->header) __atomic_fetch_add(&e->header->num_records_dropped, count, __ATOMIC_RELAXED);
  pthread_mutex_unlock(&e->lock);
}

void trace_engine_stop(int disposition) { trace_engine_session_stop(0, disposition); }

void trace_engine_session_stop(unsigned session, int disposition) {
  engine_t* e = session_at(session);
  if (!e) return;
  /* The hook runs while records may still be written into this session
   * (state STARTED), on the stopping thread, outside the lock: it may write
   * and wait. For every session: the kernel provider's ftrace serves them
   * all and drains into the one that stops (docs/kernel-provider.md). */
  if (stop_hook && ATOMIC_LOAD(&e->state) == TRACE_STARTED) stop_hook(session, stop_hook_arg);
  pthread_mutex_lock(&e->lock);
  begin_stop_locked(e, disposition);
  pthread_mutex_unlock(&e->lock);
}

void trace_engine_terminate(void) { trace_engine_session_terminate(0); }

void trace_engine_session_terminate(unsigned session) {
  engine_t* e = session_at(session);
  if (!e) return;
  pthread_mutex_lock(&e->lock);
  if (!e->initialized) {
    pthread_mutex_unlock(&e->lock);
    return;
  }
  if (e->terminate_pending) { /* another thread is terminating: wait for it */
    if (!pthread_equal(pthread_self(), e->thread))
      while (e->initialized) pthread_cond_wait(&e->cond, &e->lock);
    pthread_mutex_unlock(&e->lock);
    return;
  }
  e->terminate_pending = true;
  begin_stop_locked(e, 0);
  wake_engine_thread(e);
  if (pthread_equal(pthread_self(), e->thread)) { /* from a callback: finish in the loop */
    e->thread_detach = true;
    pthread_mutex_unlock(&e->lock);
    return;
  }
  while (e->initialized) pthread_cond_wait(&e->cond, &e->lock);
  pthread_t thread = e->thread;
  bool join = e->thread_running;
  pthread_mutex_unlock(&e->lock);
  if (join) pthread_join(thread, NULL);
  pthread_mutex_lock(&e->lock);
  e->thread_running = false;
  pthread_mutex_unlock(&e->lock);
}

int trace_engine_mark_buffer_saved(uint32_t wrapped_count, uint64_t durable_data_end) {
  return trace_engine_session_mark_buffer_saved(0, wrapped_count, durable_data_end);
}

int trace_engine_session_mark_buffer_saved(unsigned session, uint32_t wrapped_count,
                                           uint64_t durable_data_end) {
  engine_t* e = session_at(session);
  if (!e) return -EINVAL;
  (void)durable_data_end;
  pthread_mutex_lock(&e->lock);
  int status = 0;
  if (!e->initialized || e->mode != TRACE_BUFFERING_MODE_STREAMING) {
    status = -EBUSY;
  } else if ((uint64_t)wrapped_count < e->saves_done || (uint64_t)wrapped_count >= e->next_save) {
    status = -EINVAL; /* not handed over, or marked already */
  } else {
    /* cumulative: every save up to wrapped_count (they were handed over in
     * switch order) */
    trace_buffer_header_t* h = e->header;
    /* the previous segment's mark goes back to 0 once saved; an older
     * segment's slot is the current one's by now */
    uint64_t sw = ATOMIC_LOAD(&h->rolling_alloc) >> TRACE_BUFFER_ALLOC_OFFSET_BITS;
    if (sw == (uint64_t)wrapped_count + 1) ATOMIC_STORE(&h->rolling_data_end[wrapped_count & 1], 0);
    /* the header's count first: it never lags the one writers act on, so
     * a reader sees at most segments - 1 unsaved segments */
    ATOMIC_STORE(&h->saves_done, (uint64_t)wrapped_count + 1);
    ATOMIC_RELEASE(&e->saves_done, (uint64_t)wrapped_count + 1);
  }
  pthread_mutex_unlock(&e->lock);
  return status;
}

bool trace_engine_save_pending(void) { return trace_engine_session_save_pending(0); }

bool trace_engine_session_save_pending(unsigned session) {
  engine_t* e = session_at(session);
  if (!e) return false;
  /* the header pointer goes away at terminate: read it under the lock */
  pthread_mutex_lock(&e->lock);
  bool pending = false;
  if (e->header && e->mode == TRACE_BUFFERING_MODE_STREAMING) {
    /* as the writers' step H (writer.c): the next segment held switch
     * count sw + 1 - segments and is free once it is saved */
    uint64_t sw = ATOMIC_LOAD(&e->header->rolling_alloc) >> TRACE_BUFFER_ALLOC_OFFSET_BITS;
    pending = ATOMIC_ACQUIRE(&e->saves_done) + e->segments < sw + 2;
  }
  pthread_mutex_unlock(&e->lock);
  return pending;
}

int trace_engine_get_stats(trace_engine_stats_t* out) {
  return trace_engine_session_get_stats(0, out);
}

int trace_engine_session_get_stats(unsigned session, trace_engine_stats_t* out) {
  engine_t* e = session_at(session);
  if (!e) return -EINVAL;
  /* the header pointer goes away at terminate: read it under the lock */
  pthread_mutex_lock(&e->lock);
  trace_buffer_header_t* h = e->header;
  uint64_t alloc = h ? ATOMIC_LOAD(&h->rolling_alloc) : 0;
  pthread_mutex_unlock(&e->lock);
  if (!h) return -ENODEV;
  uint64_t written, dropped;
  uint32_t threads;
  engine__totals(e, &written, &dropped, &threads);
  out->records_written = written;
  out->records_dropped = dropped;
  out->wrapped_count = (uint32_t)(alloc >> TRACE_BUFFER_ALLOC_OFFSET_BITS);
  out->threads = threads;
  return 0;
}

/* ---- the engine thread ---- */

static void notify_observers(trace_state_t state, bool wait) {
  observer_t snapshot[MAX_OBSERVERS];
  pthread_mutex_lock(&observers_lock);
  size_t n = observer_count;
  for (size_t i = 0; i < n; i++) {
    observers[i].pending = observers[i].callback == NULL;
    snapshot[i] = observers[i];
  }
  pthread_mutex_unlock(&observers_lock);
  for (size_t i = 0; i < n; i++) {
    if (snapshot[i].callback) {
      snapshot[i].callback(state, snapshot[i].arg);
    } else {
      uint64_t one = 1;
      if (write(snapshot[i].fd, &one, sizeof(one)) < 0) { /* counter full: still signalled */
      }
    }
  }
  if (!wait) return;
  struct timespec deadline;
  clock_gettime(CLOCK_REALTIME, &deadline);
  deadline.tv_sec += OBSERVER_TIMEOUT_MS / 1000;
  pthread_mutex_lock(&observers_lock);
  for (;;) {
    bool pending = false;
    for (size_t i = 0; i < observer_count; i++) pending |= observers[i].pending;
    if (!pending ||
        pthread_cond_timedwait(&observers_cond, &observers_lock, &deadline) == ETIMEDOUT)
      break;
  }
  pthread_mutex_unlock(&observers_lock);
}

/* Streaming: hands every full segment not handed over yet to the handler, in
 * switch order, without waiting for the saves before (a slow consumer gets
 * them all queued; trace_engine_mark_buffer_saved() frees them). Once every
 * writer has left them and the durable records they may use are committed:
 * one wait for the whole batch. A handler that saves synchronously (file
 * mode) marks each saved before returning. */
static void run_saves(engine_t* e) {
  for (;;) {
    pthread_mutex_lock(&e->lock);
    uint64_t next = e->next_save;
    uint64_t requested = ATOMIC_ACQUIRE(&e->save_request);
    pthread_mutex_unlock(&e->lock);
    if (next >= requested) return;
    engine__wait_writers_quiet(e, false, requested);
    uint64_t durable_end = durable_committed_end(e);
    trace_buffer_header_t* h = e->header;
    uint64_t written, dropped;
    engine__totals(e, &written, &dropped, NULL);
    ATOMIC_STORE(&h->durable_data_end, durable_end);
    (void)dropped; /* the header's counter is live (writer__count_dropped) */
    ATOMIC_STORE(&h->records_written, written);
    for (uint64_t sw = next; sw < requested; sw++) {
      /* No writer can write into this segment again (their chunks' epochs
       * are gone), so its chunks are free for the next round once saved. */
      uint32_t first = engine__segment(e, sw) * e->chunks_per_buffer;
      for (uint32_t i = 0; i < e->chunks_per_buffer; i++) ATOMIC_STORE(&e->owners[first + i], 0);
      pthread_mutex_lock(&e->lock);
      e->next_save = sw + 1;
      pthread_mutex_unlock(&e->lock);
      e->handler->ops->notify_buffer_full(e->handler, (uint32_t)sw, durable_end);
    }
  }
}

/* From the winner of the switch from `sw` (after it published the new
 * epoch): switch counts up to `sw` are full. A monotonic maximum, since the
 * winners of successive switches may get here out of order. */
void engine__request_save(engine_t* e, uint64_t sw) {
  uint64_t cur = ATOMIC_LOAD(&e->save_request);
  while (cur < sw + 1 && !__atomic_compare_exchange_n(&e->save_request, &cur, sw + 1, true,
                                                      __ATOMIC_RELEASE, __ATOMIC_RELAXED)) {
  }
  wake_engine_thread(e); /* the one syscall a streaming switch makes */
}

static void finish_stop(engine_t* e) {
  notify_observers(TRACE_STOPPING, false);
  engine__wait_writers_quiet(e, true, 0);
  /* switches made by writers that were finishing: handed over before the
   * end */
  if (e->mode == TRACE_BUFFERING_MODE_STREAMING) run_saves(e);
  while (ATOMIC_ACQUIRE(&e->prolonged) != 0) {
    struct timespec ts = {0, 1000000};
    nanosleep(&ts, NULL);
  }
  /* alerts raised before the stop go out before STOPPED does */
  engine__deliver_alerts(e);
  engine__report_alerts(e);
  stop_names__write(e); /* where a full buffer cannot keep them out */
  trace_buffer_header_t* h = e->header;
  uint64_t alloc = ATOMIC_LOAD(&h->rolling_alloc);
  uint64_t sw = alloc >> TRACE_BUFFER_ALLOC_OFFSET_BITS;
  uint64_t off = alloc & TRACE_BUFFER_ALLOC_OFFSET_MASK;
  uint64_t written, dropped;
  engine__totals(e, &written, &dropped, NULL);
  if (e->mode != TRACE_BUFFERING_MODE_ONESHOT)
    ATOMIC_STORE(&h->durable_data_end, durable_committed_end(e));
  ATOMIC_STORE(&h->wrapped_count, (uint32_t)sw);
  ATOMIC_STORE(&h->rolling_data_end[sw & 1], off < e->rolling_size ? off : e->rolling_size);
  /* circular: switch winners write the marks without ordering among
   * themselves; the older buffer is full by definition */
  if (e->mode == TRACE_BUFFERING_MODE_CIRCULAR && sw > 0)
    ATOMIC_STORE(&h->rolling_data_end[(sw - 1) & 1], e->rolling_size);
  /* num_records_dropped is live: every drop adds to it (writer__count_dropped) */
  ATOMIC_STORE(&h->records_written, written);
  ATOMIC_STORE(&h->flags, h->flags | TRACE_BUFFER_FLAG_STOPPED);
  pthread_mutex_lock(&e->lock);
  int disposition = e->disposition;
  if (disposition == 0 && dropped > 0) disposition = -ENOMEM;
  ATOMIC_STORE(&e->state, TRACE_STOPPED);
  pthread_cond_broadcast(&e->cond);
  pthread_mutex_unlock(&e->lock);
  e->handler->ops->trace_stopped(e->handler, disposition);
  notify_observers(TRACE_STOPPED, false);
}

static void* engine_thread_main(void* arg) {
  engine_t* e = arg;
  latency_hint__short_slice();
  for (;;) {
    struct pollfd pfd = {e->wake_fd, POLLIN, 0};
    if (poll(&pfd, 1, -1) < 0 && errno != EINTR) break;
    uint64_t count;
    if (read(e->wake_fd, &count, sizeof(count)) < 0) { /* EAGAIN: spurious */
    }
    pthread_mutex_lock(&e->lock);
    bool started = e->started_pending, stop = e->stop_pending, terminate;
    e->started_pending = false;
    e->stop_pending = false;
    pthread_mutex_unlock(&e->lock);
    bool saving =
        e->mode == TRACE_BUFFERING_MODE_STREAMING && ATOMIC_LOAD(&e->state) == TRACE_STARTED;
    if (started) {
      /* formats before anything reports the start (oneshot: each writer
       * writes its own, tracepoints.c) */
      if (e->mode != TRACE_BUFFERING_MODE_ONESHOT) tracepoints__on_start(e->session);
      notify_observers(TRACE_STARTED, true);
      if (e->handler->ops->trace_started) e->handler->ops->trace_started(e->handler);
    }
    engine__deliver_alerts(e);
    if (saving) run_saves(e);
    if (stop) finish_stop(e);
    pthread_mutex_lock(&e->lock);
    terminate = e->terminate_pending && e->state == TRACE_STOPPED;
    pthread_mutex_unlock(&e->lock);
    if (terminate) {
      /* every question to the handler asked under the generation the stop
       * cleared has been answered (writer__session_enables) before its
       * owner may free what the answers read */
      while (__atomic_load_n(&e->askers, __ATOMIC_SEQ_CST) != 0) sched_yield();
      e->handler->ops->trace_terminated(e->handler);
      pthread_mutex_lock(&e->lock);
      if (e->thread_detach) {
        pthread_detach(pthread_self());
        e->thread_running = false;
        e->thread_detach = false;
      }
      free(e->owners);
      e->owners = NULL;
      close(e->wake_fd);
      e->wake_fd = -1;
      e->header = NULL;
      ATOMIC_RELEASE(&e->handler, NULL);
      e->initialized = false;
      e->terminate_pending = false;
      pthread_cond_broadcast(&e->cond);
      pthread_mutex_unlock(&e->lock);
      return NULL;
    }
  }
  return NULL;
}

/* ---- instrumentation.h ---- */

trace_state_t trace_state(void) {
  /* the process's state: started while any session is */
  trace_state_t state = TRACE_STOPPED;
  for (unsigned i = 0; i < TRACE_ENGINE_MAX_SESSIONS; i++) {
    trace_state_t s = ATOMIC_LOAD(&engine__sessions[i].state);
    if (s == TRACE_STARTED) return s;
    if (s == TRACE_STOPPING) state = s;
  }
  return state;
}

bool trace_is_enabled(void) { return trace_state() != TRACE_STOPPED; }

trace_state_t trace_engine_session_state(unsigned session) {
  engine_t* e = session_at(session);
  return e ? ATOMIC_LOAD(&e->state) : TRACE_STOPPED;
}

/* The sessions that enable the category now, and the generation of the
 * last of them. */
static unsigned enabling_sessions(const char* category_literal, uint64_t* generation) {
  unsigned mask = 0;
  for (unsigned i = 0; i < TRACE_ENGINE_MAX_SESSIONS; i++) {
    /* acquire: orders the reads of the session's set-up after its publication */
    uint64_t g = ATOMIC_ACQUIRE(&trace_engine__generation[i]);
    if (g != 0 && writer__session_enables(&engine__sessions[i], category_literal)) {
      mask |= 1u << i;
      *generation = g;
    }
  }
  return mask;
}

static bool any_session_started(void) {
  for (unsigned i = 0; i < TRACE_ENGINE_MAX_SESSIONS; i++)
    if (ATOMIC_ACQUIRE(&trace_engine__generation[i]) != 0) return true;
  return false;
}

uint64_t trace_engine__resolve_site(const char* category_literal, trace_site_t* site) {
  uint64_t epoch = ATOMIC_ACQUIRE(&trace_engine__sessions_epoch);
  uint64_t state = ATOMIC_LOAD(&site->state);
  /* several sessions, decided in this epoch: stands (the common visit of
   * such a site) */
  if ((state & TRACE_SITE_SEVERAL_FLAG) &&
      ((state & ~TRACE_SITE_SEVERAL_FLAG) >> 5) == TRACE_SITE_SEVERAL_EPOCH(epoch))
    return state;
  if (!any_session_started()) {
    if (engine__count_if_pending(category_literal))
      return TRACE_SITE_DISABLED; /* counted, not cached: the next event asks again */
    /* not pending, or a start took the count meanwhile: then its generation
     * is out (pending.c), and this event belongs to the trace */
    epoch = ATOMIC_ACQUIRE(&trace_engine__sessions_epoch);
  }
  uint64_t generation = 0;
  unsigned mask = enabling_sessions(category_literal, &generation);
  if (mask == 0)
    state = TRACE_SITE_DISABLED;
  else if ((mask & (mask - 1)) == 0)
    state = TRACE_SITE_ENABLED(generation);
  else
    state = TRACE_SITE_SEVERAL(TRACE_SITE_SEVERAL_EPOCH(epoch), mask);
  sites__set(site, state, epoch);
  return state;
}

trace_context_t* trace_engine__acquire_context_for_site(const char* category_literal,
                                                        trace_site_t* site,
                                                        trace_string_ref_t* out_ref,
                                                        uint64_t state) {
  uint64_t generation = state & TRACE_SITE_SEVERAL_FLAG
                            ? 0
                            : ATOMIC_ACQUIRE(&trace_engine__generation[TRACE_SITE_SESSION(state)]);
  unsigned further = 0;
  if (UNLIKELY(generation == 0 || state != TRACE_SITE_ENABLED(generation))) {
    state = trace_engine__resolve_site(category_literal, site);
    if (state == TRACE_SITE_DISABLED) return NULL;
    if (state & TRACE_SITE_SEVERAL_FLAG) {
      /* the context of the first of its sessions that is still started;
       * the others ride along in it for the event helpers (docs/sessions.md) */
      unsigned mask = (unsigned)(state >> 1) & 0xfu;
      for (generation = 0; mask != 0 && generation == 0; mask &= mask - 1)
        generation = ATOMIC_ACQUIRE(&trace_engine__generation[__builtin_ctz(mask)]);
      if (generation == 0) return NULL;
      further = mask;
    } else {
      generation = state >> 1;
    }
  }
  trace_context_t* w = writer__enter(generation);
  if (w) {
    *out_ref = writer__register_literal(w, category_literal);
    w->further_sessions = further;
    w->further_category = category_literal;
  }
  return w;
}

/* The first started session (enabling the category, if one is given). */
static uint64_t first_generation(const char* category_literal) {
  for (unsigned i = 0; i < TRACE_ENGINE_MAX_SESSIONS; i++) {
    uint64_t g = ATOMIC_ACQUIRE(&trace_engine__generation[i]);
    if (g != 0 && (category_literal == NULL ||
                   writer__session_enables(&engine__sessions[i], category_literal)))
      return g;
  }
  return 0;
}

/* The first started session's context; the other started sessions ride
 * along in it for the helpers of the forms without a category (TRACE_BLOB,
 * TRACE_KERNEL_OBJECT, event_helpers.c), which write into each. */
trace_context_t* trace_acquire_context(void) {
  uint64_t generation = first_generation(NULL);
  if (generation == 0) return NULL;
  trace_context_t* w = writer__enter(generation);
  if (w) {
    unsigned further = 0;
    for (unsigned i = TRACE_GENERATION_SESSION(generation) + 1; i < TRACE_ENGINE_MAX_SESSIONS; i++)
      if (ATOMIC_LOAD(&trace_engine__generation[i]) != 0) further |= 1u << i;
    w->further_sessions = further;
    w->further_category = NULL;
  }
  return w;
}

trace_context_t* trace_acquire_context_for_category(const char* category_literal,
                                                    trace_string_ref_t* out_ref) {
  uint64_t generation = first_generation(category_literal);
  if (generation == 0) return NULL;
  trace_context_t* w = writer__enter(generation);
  if (w) {
    *out_ref = writer__register_literal(w, category_literal);
    w->further_sessions = 0; /* one session: the caller writes into it */
  }
  return w;
}

trace_context_t* trace_engine_session_acquire_context_for_category(unsigned session,
                                                                   const char* category_literal,
                                                                   trace_string_ref_t* out_ref) {
  if (session >= TRACE_ENGINE_MAX_SESSIONS) return NULL;
  uint64_t generation = ATOMIC_ACQUIRE(&trace_engine__generation[session]);
  if (generation == 0) return NULL;
  if (category_literal != NULL &&
      !writer__session_enables(&engine__sessions[session], category_literal))
    return NULL;
  trace_context_t* w = writer__enter(generation);
  if (w) w->further_sessions = 0;
  if (w && out_ref)
    *out_ref = category_literal ? writer__register_literal(w, category_literal)
                                : trace_make_empty_string_ref();
  return w;
}

bool trace_is_category_enabled(const char* category_literal) {
  trace_string_ref_t ref;
  trace_context_t* w = trace_acquire_context_for_category(category_literal, &ref);
  if (!w) return false;
  trace_release_context(w);
  return true;
}

void trace_release_context(trace_context_t* context) { writer__release(context); }

int trace_engine_flush_category_cache(void) {
  /* Unlinks every listed site (sites.c), so that none of a shared object
   * about to be unloaded stays on the list; they ask again on their next
   * visit. Only while every session is stopped. */
  pthread_mutex_lock(&engine__sessions_lock);
  int status = trace_state() == TRACE_STOPPED ? 0 : -EBUSY;
  if (status == 0) sites__forget();
  pthread_mutex_unlock(&engine__sessions_lock);
  return status;
}

trace_prolonged_context_t* trace_acquire_prolonged_context(void) {
  /* the first started session's (the API predates sessions) */
  for (unsigned i = 0; i < TRACE_ENGINE_MAX_SESSIONS; i++) {
    engine_t* e = &engine__sessions[i];
    pthread_mutex_lock(&e->lock);
    trace_prolonged_context_t* result = NULL;
    if (e->state == TRACE_STARTED && ATOMIC_LOAD(&e->prolonged) < 127) {
      __atomic_add_fetch(&e->prolonged, 1, __ATOMIC_RELAXED);
      result = (trace_prolonged_context_t*)e;
    }
    pthread_mutex_unlock(&e->lock);
    if (result) return result;
  }
  return NULL;
}

void trace_release_prolonged_context(trace_prolonged_context_t* context) {
  if (context) __atomic_sub_fetch(&((engine_t*)context)->prolonged, 1, __ATOMIC_RELEASE);
}

/* ---- observers ---- */

static int add_observer(trace_observer_callback_t callback, void* arg, int fd) {
  int status = 0;
  pthread_mutex_lock(&observers_lock);
  for (size_t i = 0; i < observer_count; i++)
    if (observers[i].callback == callback && observers[i].arg == arg && observers[i].fd == fd)
      status = -EINVAL;
  if (status == 0 && observer_count == MAX_OBSERVERS) status = -ENOMEM;
  if (status == 0) observers[observer_count++] = (observer_t){callback, arg, fd, false};
  pthread_mutex_unlock(&observers_lock);
  return status;
}

static int remove_observer(trace_observer_callback_t callback, void* arg, int fd) {
  int status = -ENOENT;
  pthread_mutex_lock(&observers_lock);
  for (size_t i = 0; i < observer_count; i++)
    if (observers[i].callback == callback && observers[i].arg == arg && observers[i].fd == fd) {
      observers[i] = observers[--observer_count];
      status = 0;
      break;
    }
  pthread_cond_broadcast(&observers_cond);
  pthread_mutex_unlock(&observers_lock);
  return status;
}

int trace_register_observer_callback(trace_observer_callback_t callback, void* arg) {
  if (!callback) return -EINVAL;
  return add_observer(callback, arg, -1);
}

int trace_unregister_observer_callback(trace_observer_callback_t callback, void* arg) {
  if (!callback) return -EINVAL;
  return remove_observer(callback, arg, -1);
}

int trace_register_observer(int eventfd) {
  if (eventfd < 0) return -EINVAL;
  return add_observer(NULL, NULL, eventfd);
}

int trace_unregister_observer(int eventfd) { return remove_observer(NULL, NULL, eventfd); }

void trace_notify_observer_updated(int eventfd) {
  pthread_mutex_lock(&observers_lock);
  for (size_t i = 0; i < observer_count; i++)
    if (observers[i].callback == NULL && observers[i].fd == eventfd) observers[i].pending = false;
  pthread_cond_broadcast(&observers_cond);
  pthread_mutex_unlock(&observers_lock);
}
