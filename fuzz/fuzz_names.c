/* libFuzzer target: the names collection (src/names) on the records of an
 * untrusted archive, as the manager notes every record a provider's buffer
 * holds. The input's records are framed by their size fields (each whole,
 * as the manager's emit path hands them), noted for an own provider (pid 1)
 * and a provider of another pid namespace alternately; then the names section
 * is written and must be well-formed FXT that our reader takes whole. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fxt/fxt_format.h"
#include "grow_buffer.h"
#include "names/names.h"
#include "trace-reader/reader.h"

int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  names_t* n = names__create();
  names_source_t* own = names__source_create(1);
  names_source_t* foreign = names__source_create_foreign();
  if (!n || !own || !foreign) abort();
  size_t offset = 0, count = 0;
  while (offset + 8 <= size) {
    uint64_t header;
    memcpy(&header, data + offset, 8);
    size_t words = (size_t)fxt_record_words(header);
    if (words == 0 || words > (size - offset) / 8) break;
    /* an aligned copy, as in the manager's output chunks */
    uint64_t* copy = malloc(words * 8);
    if (!copy) abort();
    memcpy(copy, data + offset, words * 8);
    names__note(n, (count++ & 4) ? foreign : own, copy, words * 8);
    free(copy);
    offset += words * 8;
  }
  grow_buffer_t s = {0};
  uint64_t magic = FXT_MAGIC_RECORD;
  grow_buffer_append(&s, &magic, 8);
  uint64_t records = 0;
  if (!names__write_section(n, grow_buffer_append, &s, &records)) abort();
  trace_reader_t* r = trace_reader_open_memory(s.data, s.size, NULL);
  if (!r) abort();
  trace_record_t rec;
  int rc;
  uint64_t seen = 0;
  while ((rc = trace_reader_next(r, &rec)) != TRACE_READ_END) {
    if (rc != TRACE_READ_RECORD) abort(); /* the section is always well-formed */
    if (rec.type == 7) seen++;
  }
  if (seen != records) abort();
  trace_reader_close(r);
  free(s.data);
  names__source_free(own);
  names__source_free(foreign);
  names__free(n);
  return 0;
}
