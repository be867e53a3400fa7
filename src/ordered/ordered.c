/* The ordered view's API (see ordered.h): inputs are read in file order into
 * sorted runs (slab.c), then merged (merge.c). */
#include "ordered/ordered.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ordered/merge.h"
#include "ordered/ordered_internal.h"
#include "ordered/slab.h"
#include "ordered/spill.h"

bool ordered__fail(ordered_t* o, const char* format, ...) {
  if (o->state != ORDERED_FAILED) {
    va_list ap;
    va_start(ap, format);
    vsnprintf(o->error, sizeof(o->error), format, ap);
    va_end(ap);
    o->state = ORDERED_FAILED;
  }
  return false;
}

void ordered__hold(ordered_t* o, size_t grown, size_t shrunk) {
  o->held = o->held + grown - shrunk;
  if (o->held > o->stats.peak_bytes) o->stats.peak_bytes = o->held;
}

bool ordered__sources_add(ordered_t* o, ordered_sources_t* list, const ordered_source_t* source) {
  if (list->count == list->capacity) {
    size_t cap = list->capacity ? 2 * list->capacity : 8;
    ordered_source_t* items = realloc(list->items, cap * sizeof(*items));
    if (!items) return ordered__fail(o, "out of memory");
    list->items = items;
    list->capacity = cap;
  }
  list->items[list->count++] = *source;
  return true;
}

ordered_t* ordered__open(const ordered_options_t* options) {
  ordered_t* o = calloc(1, sizeof(*o));
  if (!o) return NULL;
  if (options) o->opt = *options;
  if (o->opt.memory_bytes == 0) o->opt.memory_bytes = ORDERED_DEFAULT_MEMORY;
  if (o->opt.memory_bytes < ORDERED_MIN_MEMORY) o->opt.memory_bytes = ORDERED_MIN_MEMORY;
  if (o->opt.fan_in == 0) o->opt.fan_in = ORDERED_DEFAULT_FAN_IN;
  if (o->opt.fan_in < 2) o->opt.fan_in = 2;
  o->spill.fd = -1;
  o->state = ORDERED_OPEN;
  return o;
}

bool ordered__add_input(ordered_t* o, trace_reader_t* reader) {
  if (o->state != ORDERED_OPEN || !reader) return false;
  if (o->input_count == o->input_capacity) {
    size_t cap = o->input_capacity ? 2 * o->input_capacity : 4;
    ordered_input_t* inputs = realloc(o->inputs, cap * sizeof(*inputs));
    if (!inputs) return false;
    o->inputs = inputs;
    o->input_capacity = cap;
  }
  ordered_input_t* in = &o->inputs[o->input_count++];
  memset(in, 0, sizeof(*in));
  in->reader = reader;
  return true;
}

bool ordered__set_input_shift(ordered_t* o, size_t input, uint64_t shift_ns) {
  if (shift_ns > INT64_MAX) return false;
  ordered_clock_t clock = {(int64_t)shift_ns, 0, 0};
  return ordered__set_input_clock(o, input, &clock);
}

bool ordered__set_input_clock(ordered_t* o, size_t input, const ordered_clock_t* clock) {
  if (o->state != ORDERED_OPEN || input >= o->input_count) return false;
  if (!(clock->drift_ppb > -1e9 && clock->drift_ppb < 1e9)) return false; /* NaN too */
  o->inputs[input].clock = *clock;
  return true;
}

uint64_t ordered__clock_map(const ordered_clock_t* c, uint64_t ns) {
  /* in long double: (ns - origin) x ppb overflows 64 bits past hours x 1000 ppm */
  long double out = (long double)ns + (long double)c->shift_ns;
  if (c->drift_ppb != 0)
    out += ((long double)ns - (long double)c->origin_ns) * (long double)c->drift_ppb / 1e9L;
  if (out <= 0) return 0;
  if (out >= 18446744073709551615.0L) return UINT64_MAX;
  if (c->drift_ppb == 0) return ns + (uint64_t)c->shift_ns; /* exact, wrapping as intended */
  return (uint64_t)(out + 0.5L);
}

/* Reads input i in file order into the slab. */
static bool read_input(ordered_t* o, size_t i) {
  static const trace_reader_provider_t kNone = {0, {"", 0}, 1000000000u};
  ordered_input_t* in = &o->inputs[i];
  trace_record_t r;
  for (;;) {
    int rc = trace_reader_next(in->reader, &r);
    if (rc == TRACE_READ_END) return true;
    if (rc == TRACE_READ_ERROR) {
      in->failed = true;
      return true;
    }
    if (rc == TRACE_READ_SKIPPED) {
      if (o->opt.on_skip) {
        trace_reader_error_t e = trace_reader_error(in->reader);
        o->opt.on_skip(o->opt.context, i, &e);
      }
      continue;
    }
    if (o->opt.on_record) o->opt.on_record(o->opt.context, i, in->reader);
    ordered_rec_t h = {.seq = in->records++, .input = (uint32_t)i};
    if (ordered__record_ns(&r, &h.ns)) {
      h.flags = ORDERED_REC_TIMED;
      h.ns = ordered__clock_map(&in->clock, h.ns);
      if (!in->have_first) {
        in->have_first = true;
        in->first_ns = h.ns;
      }
    }
    if (!ordered__providers_intern(&in->providers, r.provider ? r.provider : &kNone, &h.provider))
      return ordered__fail(o, "out of memory, or more than %d provider versions in input %zu",
                           ORDERED_MAX_PROVIDER_VERSIONS, i);
    if (!ordered__slab_add(o, i, &r, &h)) return false;
    o->stats.records++;
  }
}

int ordered__load(ordered_t* o) {
  if (o->state == ORDERED_FAILED) return ORDERED_ERROR;
  if (o->state != ORDERED_OPEN) return ORDERED_END;
  for (size_t i = 0; i < o->input_count; i++) {
    if (!read_input(o, i)) return ORDERED_ERROR;
    /* the slab is for the next input: this one's records go to the file,
     * except the last input's, which are merged from memory */
    bool last = i + 1 == o->input_count;
    if (o->slab.count && !(last ? ordered__slab_keep(o, i) : ordered__slab_spill(o, i)))
      return ORDERED_ERROR;
  }
  if (!ordered__merge_passes(o) || !ordered__spill_seal(o) || !ordered__merge_start(o))
    return ORDERED_ERROR;
  o->state = ORDERED_MERGING;
  return ORDERED_END;
}

int ordered__next(ordered_t* o, ordered_record_t* out) {
  if (o->state == ORDERED_OPEN && ordered__load(o) != ORDERED_END) return ORDERED_ERROR;
  if (o->state == ORDERED_FAILED) return ORDERED_ERROR;
  if (o->state == ORDERED_DONE) return ORDERED_END;
  const ordered_rec_t* rec = ordered__merge_next(o);
  if (!rec) {
    if (o->state == ORDERED_FAILED) return ORDERED_ERROR;
    o->state = ORDERED_DONE;
    ordered__merge_end(o); /* the buffers go at once; the slab at close */
    return ORDERED_END;
  }
  ordered_input_t* in = &o->inputs[rec->input];
  if (rec->provider >= in->providers.count || !ordered__rec_read(rec, &out->record)) {
    ordered__fail(o, "the temporary file is damaged (a record does not decode)");
    return ORDERED_ERROR;
  }
  out->record.provider = &in->providers.items[rec->provider];
  out->input = rec->input;
  out->seq = rec->seq;
  out->timed = (rec->flags & ORDERED_REC_TIMED) != 0;
  out->ns = rec->ns;
  return ORDERED_RECORD;
}

const char* ordered__error(const ordered_t* o) { return o->error; }

bool ordered__input_failed(const ordered_t* o, size_t input) {
  return input < o->input_count && o->inputs[input].failed;
}

bool ordered__input_first_ns(const ordered_t* o, size_t input, uint64_t* ns) {
  if (input >= o->input_count || !o->inputs[input].have_first) return false;
  *ns = o->inputs[input].first_ns;
  return true;
}

ordered_stats_t ordered__stats(const ordered_t* o) { return o->stats; }

void ordered__close(ordered_t* o) {
  if (!o) return;
  ordered__merge_end(o);
  ordered__slab_free(o);
  ordered__spill_close(o);
  for (size_t i = 0; i < o->input_count; i++) {
    ordered__providers_free(&o->inputs[i].providers);
    free(o->inputs[i].untimed.items);
  }
  free(o->inputs);
  free(o->runs.items);
  free(o);
}
