/* Not part of the public API: the FXT constants and bit layouts shared by the
 * encoder (fxt_encode.h), the reader library and the trace manager.
 *
 * Every layout here is FXT.md's; a field [lo..hi] holds bits lo to hi of a
 * little-endian 64-bit word, both included. Every bit not assigned to a field
 * is written as 0, and every field is masked on write (FXT.md §11 item 3). */
#ifndef FXTRACE_FXT_FORMAT_H_
#define FXTRACE_FXT_FORMAT_H_

#include <stddef.h>
#include <stdint.h>

#if !defined(__BYTE_ORDER__) || __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "fxtrace writes and reads FXT words in little-endian byte order only"
#endif

/* Value of the bits [lo..hi] of a field holding v, in place. */
#define FXT_FIELD(v, lo, hi) \
  ((((uint64_t)(v)) & (~UINT64_C(0) >> (63 - ((hi) - (lo))))) << (lo))
/* The field [lo..hi] of word w, shifted down. */
#define FXT_GET(w, lo, hi) ((((uint64_t)(w)) >> (lo)) & (~UINT64_C(0) >> (63 - ((hi) - (lo)))))

enum fxt_record_type {
  FXT_RECORD_METADATA = 0,
  FXT_RECORD_INITIALIZATION = 1,
  FXT_RECORD_STRING = 2,
  FXT_RECORD_THREAD = 3,
  FXT_RECORD_EVENT = 4,
  FXT_RECORD_BLOB = 5,
  FXT_RECORD_USERSPACE_OBJECT = 6,
  FXT_RECORD_KERNEL_OBJECT = 7,
  FXT_RECORD_SCHEDULING = 8,
  FXT_RECORD_LOG = 9,
  FXT_RECORD_LARGE = 15,
};

enum fxt_metadata_type {
  FXT_METADATA_PROVIDER_INFO = 1,
  FXT_METADATA_PROVIDER_SECTION = 2,
  FXT_METADATA_PROVIDER_EVENT = 3,
  FXT_METADATA_TRACE_INFO = 4,
};

enum fxt_provider_event_type { FXT_PROVIDER_EVENT_BUFFER_OVERFLOW = 0 };
enum fxt_trace_info_type { FXT_TRACE_INFO_MAGIC_NUMBER = 0 };

enum fxt_event_type {
  FXT_EVENT_INSTANT = 0,
  FXT_EVENT_COUNTER = 1,
  FXT_EVENT_DURATION_BEGIN = 2,
  FXT_EVENT_DURATION_END = 3,
  FXT_EVENT_DURATION_COMPLETE = 4,
  FXT_EVENT_ASYNC_BEGIN = 5,
  FXT_EVENT_ASYNC_INSTANT = 6,
  FXT_EVENT_ASYNC_END = 7,
  FXT_EVENT_FLOW_BEGIN = 8,
  FXT_EVENT_FLOW_STEP = 9,
  FXT_EVENT_FLOW_END = 10,
};

enum fxt_scheduling_type {
  FXT_SCHED_LEGACY_CONTEXT_SWITCH = 0,
  FXT_SCHED_CONTEXT_SWITCH = 1,
  FXT_SCHED_THREAD_WAKEUP = 2,
};

enum fxt_large_type { FXT_LARGE_BLOB = 0 };

/* Kernel object types (ZX_OBJ_TYPE_*); only these two matter on Linux. */
enum fxt_kernel_object_type { FXT_KOBJ_PROCESS = 1, FXT_KOBJ_THREAD = 2 };

/* Thread states (ZX_THREAD_STATE_*), used by context-switch records. */
enum fxt_thread_state {
  FXT_THREAD_NEW = 0,
  FXT_THREAD_RUNNING = 1,
  FXT_THREAD_SUSPENDED = 2,
  FXT_THREAD_BLOCKED = 3,
  FXT_THREAD_DYING = 4,
  FXT_THREAD_DEAD = 5,
};

#define FXT_MAGIC_VALUE UINT64_C(0x16547846)
#define FXT_MAGIC_RECORD UINT64_C(0x0016547846040010)
#define FXT_MAX_RECORD_WORDS 0xfffu            /* 12-bit size field */
#define FXT_MAX_LARGE_RECORD_WORDS 0xffffffffu /* 32-bit size field */
#define FXT_MAX_ARG_WORDS 0xfffu
#define FXT_MAX_PROVIDER_NAME_LENGTH 0xffu
#define FXT_MAX_LOG_MESSAGE_LENGTH 0x7fffu
#define FXT_MAX_SMALL_BLOB_SIZE 0x7fffu

static inline size_t fxt_words_for_bytes(size_t bytes) { return (bytes + 7u) >> 3; }

/* Size in words of the record whose header is `header`: bits 4..35 for large
 * records (type 15), bits 4..15 otherwise (FXT.md §6). 0 is never valid. */
static inline uint64_t fxt_record_words(uint64_t header) {
  if (FXT_GET(header, 0, 3) == FXT_RECORD_LARGE) return FXT_GET(header, 4, 35);
  return FXT_GET(header, 4, 15);
}

#endif /* FXTRACE_FXT_FORMAT_H_ */
