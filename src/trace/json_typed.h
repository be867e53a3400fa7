/* Not part of the public API: JSON values of typed-event fields
 * (docs/event-formats.md) for `trace convert`. */
#ifndef FXTRACE_TRACE_JSON_TYPED_H_
#define FXTRACE_TRACE_JSON_TYPED_H_

#include <stdbool.h>

#include "trace-reader/formats.h"
#include "trace/json_writer.h"

/* Writes an array field (fixed or __data_loc, element type other than
 * char) as a JSON array of its elements, decoded little-endian with the
 * element size of its C type and the field's signedness. false (nothing
 * written) for any other argument, or an element type of unknown size. */
bool json_typed__array_value(json_writer_t* j, const trace_event_format_t* format,
                             const trace_reader_arg_t* arg);

#endif /* FXTRACE_TRACE_JSON_TYPED_H_ */
