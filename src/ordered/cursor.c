/* Reading a source record by record (see cursor.h). */
#include "ordered/cursor.h"

#include <stdlib.h>
#include <string.h>

#include "ordered/slab.h"
#include "ordered/spill.h"

bool ordered__cursor_open(ordered_t* o, ordered_cursor_t* c, const ordered_source_t* source) {
  memset(c, 0, sizeof(*c));
  c->src = *source;
  if (!source->in_memory) {
    c->pos = source->off;
    c->buf = malloc(ORDERED_IO_BYTES);
    if (!c->buf) return ordered__fail(o, "out of memory");
    c->cap = ORDERED_IO_BYTES;
    ordered__hold(o, c->cap, 0);
  }
  return ordered__cursor_advance(o, c);
}

/* At least `want` unread bytes in the buffer: the unread rest moves to the
 * buffer's start (at is a multiple of 8, so records stay aligned), the
 * buffer grows when a record is larger, then it is filled from the file. */
static bool fill(ordered_t* o, ordered_cursor_t* c, size_t want) {
  size_t rest = c->have - c->at;
  memmove(c->buf, c->buf + c->at, rest);
  c->at = 0;
  c->have = rest;
  if (want > c->cap) {
    unsigned char* buf = realloc(c->buf, want);
    if (!buf) return ordered__fail(o, "out of memory");
    ordered__hold(o, want - c->cap, 0);
    c->buf = buf;
    c->cap = want;
  }
  uint64_t left = c->src.off + c->src.len - c->pos;
  size_t n = c->cap - c->have;
  if (n > left) n = (size_t)left;
  if (!ordered__spill_read(o, c->pos, c->buf + c->have, n)) return false;
  c->pos += n;
  c->have += n;
  if (c->have < want) return ordered__fail(o, "the temporary file is damaged (a run ends early)");
  return true;
}

bool ordered__cursor_advance(ordered_t* o, ordered_cursor_t* c) {
  if (c->src.in_memory) {
    c->rec = c->next < c->src.count ? ordered__slab_record(o, c->src.entries[c->next++].off) : NULL;
    return true;
  }
  if (c->rec) c->at += c->rec->size;
  c->rec = NULL;
  if (c->at == c->have && c->pos == c->src.off + c->src.len) return true; /* the end */
  if (c->have - c->at < sizeof(ordered_rec_t) && !fill(o, c, sizeof(ordered_rec_t))) return false;
  uint32_t size = ((const ordered_rec_t*)(c->buf + c->at))->size;
  if (size < sizeof(ordered_rec_t) || size % 8)
    return ordered__fail(o, "the temporary file is damaged (a record of %u bytes)", size);
  if (c->have - c->at < size && !fill(o, c, size)) return false;
  const ordered_rec_t* rec = (const ordered_rec_t*)(c->buf + c->at);
  if (rec->input >= o->input_count)
    return ordered__fail(o, "the temporary file is damaged (input %u)", rec->input);
  c->rec = rec;
  return true;
}

void ordered__cursor_close(ordered_t* o, ordered_cursor_t* c) {
  if (c->buf) ordered__hold(o, 0, c->cap);
  free(c->buf);
  memset(c, 0, sizeof(*c));
}
