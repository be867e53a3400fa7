/* Public API of libtrace-reader: a streaming reader of FXT archives.
 *
 * The reader pulls one record at a time from a file descriptor, a FILE* or a
 * memory block, in memory bounded by the largest record it decodes plus the
 * per-provider string and thread tables, whatever the archive's length (a
 * raw trace buffer left by a crash adds its buffer, whose size its header
 * gives, see trace_reader_recovered()). It
 * never reads out of bounds: every length, index and reference is checked,
 * and a problem is reported with the byte offset of the record at fault;
 * every record is measured against its size field (trace_reader_warning()).
 *
 * An archive compressed with zstd or gzip (as `trace record --compress`
 * writes it) is read the same way, from any of the three sources: it is
 * recognized by its first bytes and decompressed as it is read, in constant
 * memory. Offsets are then offsets in the decompressed archive. Compressed
 * data that is cut short ends the archive there: exactly the records before
 * the cut are returned, then TRACE_READ_ERROR with trace_reader_truncated()
 * true. Damage inside a compressed frame is found at the latest at the
 * frame's end (zstd's content checksum, gzip's CRC32), then
 * TRACE_READ_ERROR; records of that frame returned before then may be
 * wrong, as any damage in a plain archive (which has no checksum) may go
 * unseen.
 *
 *     trace_reader_t* r = trace_reader_open_fd(fd, NULL);
 *     trace_record_t rec;
 *     int rc;
 *     while ((rc = trace_reader_next(r, &rec)) != TRACE_READ_END) {
 *       if (rc == TRACE_READ_ERROR) { report(trace_reader_error(r)); break; }
 *       if (rc == TRACE_READ_SKIPPED) { warn(trace_reader_error(r)); continue; }
 *       if (trace_reader_warning(r, &w)) warn(w);  // words past its contents
 *       use(&rec);                 // valid until the next call
 *     }
 *     trace_reader_close(r);
 *
 * Thread-safety: a reader object is used by one thread at a time; distinct
 * readers are independent (no global state). */
#ifndef TRACE_READER_READER_H_
#define TRACE_READER_READER_H_

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(__GNUC__)
#define TRACE_READER_EXPORT __attribute__((visibility("default")))
#else
#define TRACE_READER_EXPORT
#endif

/* Results of trace_reader_next(). */
enum {
  TRACE_READ_ERROR = -1,  /* fatal: the stream cannot be read further */
  TRACE_READ_END = 0,     /* clean end of input, after a whole record */
  TRACE_READ_RECORD = 1,  /* *record holds the next record */
  TRACE_READ_SKIPPED = 2, /* a record was skipped (unknown or invalid);
                             trace_reader_error() says why; reading goes on */
};

/* A string inside a decoded record: `data` is NUL-terminated for
 * convenience, but may contain other NUL bytes; use `length`. Borrowed: valid
 * until the next trace_reader_next() or trace_reader_close(). */
typedef struct trace_reader_string {
  const char* data;
  size_t length;
} trace_reader_string_t;

typedef struct trace_reader_arg {
  uint32_t type; /* trace_arg_type_t from <trace-engine/types.h>, 0..10 */
  trace_reader_string_t name;
  union {
    int32_t int32_value;
    uint32_t uint32_value;
    int64_t int64_value;
    uint64_t uint64_value;
    double double_value;
    trace_reader_string_t string_value;
    uint64_t pointer_value;
    uint64_t koid_value;
    bool bool_value;
    struct {
      const void* data;
      uint32_t size;
    } blob_value;
  };
} trace_reader_arg_t;

#define TRACE_READER_MAX_ARGS 15

typedef struct trace_reader_args {
  size_t count; /* arguments of known types, in record order */
  trace_reader_arg_t items[TRACE_READER_MAX_ARGS];
} trace_reader_args_t;

/* The provider whose section a record belongs to. Borrowed, as strings. */
typedef struct trace_reader_provider {
  uint32_t id; /* 0 before any provider-info record */
  trace_reader_string_t name;
  uint64_t ticks_per_second; /* 1e9 until an initialization record says otherwise */
} trace_reader_provider_t;

typedef struct trace_record {
  uint64_t offset;     /* byte offset of the record in the input */
  uint32_t type;       /* FXT record type, 0..15 */
  uint64_t size_words; /* header included */
  const trace_reader_provider_t* provider;
  union {
    struct {
      uint32_t type; /* 1 provider info, 2 section, 3 event, 4 trace info */
      uint32_t provider_id;
      /* provider info and section: the provider's name; provider event: the
       * name of the provider the event is about, "" if never announced */
      trace_reader_string_t provider_name;
      uint32_t event_id;        /* provider event: 0 = buffer overflow */
      uint32_t trace_info_type; /* trace info: 0 = magic number */
      uint64_t magic;           /* magic number record */
    } metadata;
    struct {
      uint64_t ticks_per_second;
    } initialization;
    struct {
      uint32_t index;
      trace_reader_string_t value;
    } string;
    struct {
      uint32_t index;
      uint64_t process_koid;
      uint64_t thread_koid;
    } thread;
    struct {
      uint32_t event_type; /* enum: 0 instant .. 10 flow end */
      uint64_t ticks;
      uint64_t process_koid; /* resolved from the thread table or inline */
      uint64_t thread_koid;
      trace_reader_string_t category;
      trace_reader_string_t name;
      trace_reader_args_t args;
      bool has_scope;   /* instant: the scope word was present */
      uint32_t scope;   /* instant: trace_scope_t; thread when absent */
      uint64_t payload; /* counter id, end ticks, async id or flow id */
    } event;
    struct {
      uint32_t blob_type;
      trace_reader_string_t name;
      const void* data;
      size_t size;
    } blob;
    struct {
      uint64_t pointer;
      uint64_t process_koid;
      trace_reader_string_t name;
      trace_reader_args_t args;
    } userspace_object;
    struct {
      uint64_t koid;
      uint32_t object_type; /* 1 process, 2 thread, ... */
      trace_reader_string_t name;
      trace_reader_args_t args;
    } kernel_object;
    struct {
      uint32_t sched_type; /* 0 legacy context switch, 1 context switch, 2 wakeup */
      uint64_t ticks;
      uint32_t cpu;
      uint32_t outgoing_state;
      uint64_t outgoing_process_koid; /* legacy only */
      uint64_t outgoing_thread_koid;
      uint64_t incoming_process_koid; /* legacy only */
      uint64_t incoming_thread_koid;  /* the woken thread for a wakeup */
      uint32_t outgoing_priority;     /* legacy only */
      uint32_t incoming_priority;     /* legacy only */
      trace_reader_args_t args;       /* types 1 and 2 */
    } scheduling;
    struct {
      uint64_t ticks;
      uint64_t process_koid;
      uint64_t thread_koid;
      trace_reader_string_t message;
    } log;
    /* A large blob written as a chain of records (docs/instrumentation.md,
     * "Large blobs") is returned as one record: data and size are the whole
     * blob, size_words covers all of the chain's records. */
    struct {
      uint32_t large_type;  /* 0 = blob */
      uint32_t blob_format; /* 0 event, 1 attachment */
      trace_reader_string_t category;
      trace_reader_string_t name;
      uint64_t ticks;                     /* format 0 */
      uint64_t process_koid, thread_koid; /* format 0 */
      trace_reader_args_t args;           /* format 0 */
      const void* data;
      size_t size;
    } large;
  };
} trace_record_t;

typedef struct trace_reader_error {
  uint64_t offset; /* byte offset of the record (or place) at fault */
  const char* message;
} trace_reader_error_t;

typedef struct trace_reader_stats {
  uint64_t bytes_read;
  uint64_t records;         /* returned as TRACE_READ_RECORD */
  uint64_t records_skipped; /* returned as TRACE_READ_SKIPPED */
} trace_reader_stats_t;

typedef struct trace_reader_options {
  /* Require the magic-number record as the first record (default true when
   * options is NULL). */
  bool require_magic;
  /* Most memory the string, thread and provider tables of all providers may
   * use together; 0 means the default, 256 MiB. A string or thread record
   * past it is skipped (reported), a provider past it is a fatal error. */
  size_t table_memory_limit;
} trace_reader_options_t;

typedef struct trace_reader trace_reader_t;

/* Each open function returns NULL only when out of memory. The reader owns
 * neither fd nor file: the caller closes them after trace_reader_close(). For
 * memory, `data` is borrowed and must outlive the reader. options may be
 * NULL. Thread-safe. */
TRACE_READER_EXPORT trace_reader_t* trace_reader_open_fd(int fd,
                                                         const trace_reader_options_t* options);
TRACE_READER_EXPORT trace_reader_t* trace_reader_open_file(FILE* file,
                                                           const trace_reader_options_t* options);
TRACE_READER_EXPORT trace_reader_t* trace_reader_open_memory(const void* data, size_t size,
                                                             const trace_reader_options_t* options);

/* Reads the next record into *record (see the result enum above). After
 * TRACE_READ_ERROR or TRACE_READ_END every later call returns the same. */
TRACE_READER_EXPORT int trace_reader_next(trace_reader_t* reader, trace_record_t* record);

/* The last problem reported (SKIPPED or ERROR); message is borrowed. */
TRACE_READER_EXPORT trace_reader_error_t trace_reader_error(const trace_reader_t* reader);

TRACE_READER_EXPORT trace_reader_stats_t trace_reader_stats(const trace_reader_t* reader);

/* True when the record the last trace_reader_next() returned
 * (TRACE_READ_RECORD) comes with a warning, then in *warning (if not NULL)
 * with the record's offset: its size field covers words that its header
 * does not describe (past its arguments, inline strings and the words of
 * its type, or inside an argument past the argument's contents). FXT lets a
 * reader skip words it does not understand, so the record is returned and
 * those words are skipped; a newer writer may append fields, but a damaged
 * size field also swallows the records after it, so tools should show the
 * warning. In a raw trace buffer (trace_reader_recovered()), which fxtrace
 * itself wrote, such a size field is damage: reading goes on right after the
 * record's contents instead. Once per record; false otherwise. */
TRACE_READER_EXPORT bool trace_reader_warning(const trace_reader_t* reader,
                                              trace_reader_error_t* warning);

/* True when the input ended inside a record (TRACE_READ_ERROR was returned
 * for a truncated archive rather than for corrupt data). */
TRACE_READER_EXPORT bool trace_reader_truncated(const trace_reader_t* reader);

/* True when the input was not an FXT archive but the raw trace buffer that a
 * traced program leaves in its FXTRACE_OUTPUT file when it crashes or is
 * killed before finishing it (docs/file-mode.md). The first
 * trace_reader_next() call detects it (whatever the options), checks its
 * header as soon as it arrives, reads the buffer (as large as the header
 * says, at most 4 GiB) and reads on in the archive the program would have
 * written: magic, a provider named "recovered", a buffer-overflow event if
 * the buffer counted dropped records, the streamed saves that follow the
 * buffer in the file (read as they stream, never held whole), then the
 * buffer's committed records. Record and error offsets, and
 * stats.bytes_read, are offsets in that archive, not in the file. A buffer
 * whose header is unusable is a TRACE_READ_ERROR saying why, before anything
 * past the header is read. Tools should warn that the
 * trace is incomplete when this is true. */
TRACE_READER_EXPORT bool trace_reader_recovered(const trace_reader_t* reader);

TRACE_READER_EXPORT void trace_reader_close(trace_reader_t* reader);

/* Names for dump output: "instant", "duration begin", ... ("?" if unknown). */
TRACE_READER_EXPORT const char* trace_record_type_name(uint32_t record_type);
TRACE_READER_EXPORT const char* trace_event_type_name(uint32_t event_type);
TRACE_READER_EXPORT const char* trace_arg_type_name(uint32_t arg_type);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* TRACE_READER_READER_H_ */
