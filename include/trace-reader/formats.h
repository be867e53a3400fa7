/* Public API of libtrace-reader: the formats of typed events
 * (docs/event-formats.md). An archive describes each TRACE_EVENT() and
 * kernel SYSTEM/EVENT event it holds in a blob record (type 1, name
 * "trace_event_format") whose payload is a tracefs format file with a
 * `category:` line in front. A format set collects them from the records a
 * reader returns, and renders typed events through their print formats:
 *
 *     trace_format_set_t* set = trace_format_set_new();
 *     while (trace_reader_next(r, &rec) == TRACE_READ_RECORD) {
 *       if (trace_format_set_add_record(set, &rec, &err) < 0) warn(err);
 *       const trace_event_format_t* f = trace_format_set_find_event(set, &rec);
 *       if (f) { trace_format_render(f, &rec, buf, sizeof(buf)); print_escaped(buf); }
 *     }
 *     trace_format_set_free(set);
 *
 * Parsing never trusts the payload: a malformed format is reported (offset
 * and reason) and skipped. Thread-safety: one set per thread. */
#ifndef TRACE_READER_FORMATS_H_
#define TRACE_READER_FORMATS_H_

#include "trace-reader/reader.h"

#ifdef __cplusplus
extern "C" {
#endif

/* One field line of a format ("field:DECL;\toffset:N;\tsize:N;\tsigned:N;"). */
typedef struct trace_format_field {
  const char* decl; /* as written: "int fd", "char comm[16]", "__data_loc char[] peer" */
  const char* type; /* the type without the name or brackets: "int", "char", "char" */
  const char* name;
  uint32_t offset;
  uint32_t size;
  bool is_signed;
  bool is_common;   /* name starts with "common_": not an argument */
  bool is_data_loc; /* __data_loc (__string, __dynamic_array) */
  uint32_t count;   /* elements of a fixed array; 0 for a scalar or __data_loc */
} trace_format_field_t;

typedef struct trace_event_format {
  uint32_t provider_id; /* the provider whose section held the format */
  const char* category;
  const char* name;
  uint32_t id;
  size_t num_fields; /* common fields included */
  const trace_format_field_t* fields;
  const char* print_fmt; /* as after "print fmt: " */
  const char* text;      /* the whole payload, NUL-terminated */
  size_t text_length;
} trace_event_format_t;

typedef struct trace_format_set trace_format_set_t;

/* NULL only when out of memory. */
TRACE_READER_EXPORT trace_format_set_t* trace_format_set_new(void);
TRACE_READER_EXPORT void trace_format_set_free(trace_format_set_t* set);

/* Takes the format from a "trace_event_format" blob record: 1 taken (a later
 * format with the same provider, category and name replaces the earlier),
 * 0 not a format record, -1 malformed or out of memory (*error says where
 * and why; the record is skipped). */
TRACE_READER_EXPORT int trace_format_set_add_record(trace_format_set_t* set,
                                                    const trace_record_t* record,
                                                    trace_reader_error_t* error);

/* Parses one payload on its own (as above, for tests and tools). */
TRACE_READER_EXPORT int trace_format_set_add_text(trace_format_set_t* set, uint32_t provider_id,
                                                  const char* text, size_t length,
                                                  const char** reason);

TRACE_READER_EXPORT size_t trace_format_set_count(const trace_format_set_t* set);
/* In the order first seen; NULL past the end. */
TRACE_READER_EXPORT const trace_event_format_t* trace_format_set_at(const trace_format_set_t* set,
                                                                    size_t index);
TRACE_READER_EXPORT const trace_event_format_t* trace_format_set_find(
    const trace_format_set_t* set, uint32_t provider_id, const char* category,
    size_t category_length, const char* name, size_t name_length);
/* The format of an event record (an instant of a known category and name
 * in its provider), or NULL. */
TRACE_READER_EXPORT const trace_event_format_t* trace_format_set_find_event(
    const trace_format_set_t* set, const trace_record_t* record);

/* The size in bytes of one element of an array field (fixed or __data_loc),
 * from its element type ("char" 1, "int" 4, "u64" 8, "size_t" 8, ...); 0 for
 * a type it does not know. Never-fail, thread-safe. */
TRACE_READER_EXPORT unsigned trace_format_field_element_size(const trace_format_field_t* field);

/* The field named `name` (length bytes), or NULL. */
TRACE_READER_EXPORT const trace_format_field_t* trace_event_format_field(
    const trace_event_format_t* format, const char* name, size_t length);

/* The renderer's bounds, whatever the format says: a field width or
 * precision counts as at most TRACE_FORMAT_MAX_WIDTH ("%2147483647d" pads
 * to 4096 columns), and an event's text is at most TRACE_FORMAT_MAX_TEXT
 * bytes, a longer one ending in "[...]" at that length. So rendering costs
 * at most a few times TRACE_FORMAT_MAX_TEXT per event. */
#define TRACE_FORMAT_MAX_WIDTH 4096
#define TRACE_FORMAT_MAX_TEXT 8192

/* Writes the event's text into out (always NUL-terminated when cap > 0):
 * the print format evaluated on the record's arguments (printf conversions,
 * REC->field, __get_str, __get_dynamic_array(_len), __print_flags,
 * __print_symbolic, __print_hex(_str), casts), or, when the print format
 * holds anything else, "field=value ..." for every argument. Returns 1 when
 * the print format was used, 0 for the fallback. The text is the archive's:
 * it may hold any byte, control characters included; print it escaped
 * (trace dump escapes it as it does string arguments). */
TRACE_READER_EXPORT int trace_format_render(const trace_event_format_t* format,
                                            const trace_record_t* record, char* out, size_t cap);

/* As trace_format_render(), and *length (when not NULL) is the length of
 * the text written, which may hold NUL bytes: "%c" of 0 prints one, as
 * printf does, and the text goes on after it. */
TRACE_READER_EXPORT int trace_format_render_text(const trace_event_format_t* format,
                                                 const trace_record_t* record, char* out,
                                                 size_t cap, size_t* length);

/* Writes an argument's value as the fallback shows it, using the field (may
 * be NULL) to split array bytes into elements ("{1,2,3}"). */
TRACE_READER_EXPORT void trace_format_value(const trace_format_field_t* field,
                                            const trace_reader_arg_t* arg, char* out, size_t cap);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* TRACE_READER_FORMATS_H_ */
