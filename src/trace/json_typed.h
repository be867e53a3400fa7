/* Not part of the public API: JSON values of typed-event fields
 * (docs/event-formats.md) for `trace convert`. */
#ifndef FXTRACE_TRACE_JSON_TYPED_H_
#define FXTRACE_TRACE_JSON_TYPED_H_

#include <stdbool.h>

#include "trace-reader/formats.h"
#include "trace/json_writer.h"

/* Writes a typed event's field that the record holds as raw bytes: an
 * array (fixed or __data_loc) of integers as a JSON array of its elements,
 * decoded little-endian with the element size of its C type and the
 * field's signedness; of float or double as a JSON array of numbers; a
 * struct (__field_struct) or an array of any other element type as a string
 * of its bytes in lowercase hex, memory order (lossless, where a JSON string
 * of the raw bytes would not be). false (nothing written) for any other
 * argument: text fields (char arrays, __string) and scalars. */
bool json_typed__field_value(json_writer_t* j, const trace_event_format_t* format,
                             const trace_reader_arg_t* arg);

#endif /* FXTRACE_TRACE_JSON_TYPED_H_ */
