/* libFuzzer target: typed-event formats and their rendering
 * (<trace-reader/formats.h>: src/reader/formats.c, format_render.c). The
 * input is a format's text (a tracefs format file with a `category:` line
 * in front, docs/event-formats.md), then a NUL byte, then the bytes the
 * event's argument values are taken from. A format that parses gets an
 * event record with one argument per field that is not a common one, typed
 * from the field's declaration (strings for char arrays and __data_loc
 * fields, doubles, signed and unsigned integers of the field's size), and
 * is rendered through its print format into a buffer larger than the
 * renderer's bound. Checks: the text is at most TRACE_FORMAT_MAX_TEXT bytes,
 * NUL-terminated at the length it reports, every byte readable; the
 * fuzzer's -timeout catches a render that is slow (a width or precision the
 * renderer did not bound). Seeds: the kernel's own formats (fuzz/kernel-
 * formats), the typed sample's, and crafted ones (make_corpus --formats). */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "record_touch.h"
#include "trace-reader/formats.h"
#include "trace-reader/reader.h"

volatile uint64_t fuzz_sink;

static void check(bool ok, const char* what) {
  if (ok) return;
  fprintf(stderr, "fuzz_format: %s\n", what);
  abort();
}

/* Takes n bytes of the values (zeros once they run out). */
typedef struct values {
  const uint8_t* p;
  size_t left;
} values_t;

static uint64_t take(values_t* v, size_t n) {
  uint64_t x = 0;
  for (size_t i = 0; i < n && v->left; i++, v->left--) x |= (uint64_t)*v->p++ << (8 * i);
  return x;
}

static bool has(const char* s, const char* word) { return strstr(s, word) != NULL; }

/* One argument for the field, its value taken from `v`; a string is copied
 * into `store`, NUL-terminated after its length as the reader's are. */
static void make_arg(const trace_format_field_t* f, values_t* v, trace_reader_arg_t* a, char* store,
                     size_t store_size) {
  memset(a, 0, sizeof(*a));
  a->name.data = f->name;
  a->name.length = strlen(f->name);
  bool stringy = f->is_data_loc || f->count > 0 || trace_format_field_element_size(f) == 0;
  if (stringy && !has(f->type, "double") && !has(f->type, "float")) {
    size_t n = (size_t)take(v, 1) % store_size;
    if (n > v->left) n = v->left;
    memcpy(store, v->p, n);
    store[n] = '\0';
    v->p += n;
    v->left -= n;
    a->type = 6;
    a->string_value.data = store;
    a->string_value.length = n;
    return;
  }
  if (has(f->type, "double") || has(f->type, "float")) {
    uint64_t bits = take(v, 8);
    a->type = 5;
    memcpy(&a->double_value, &bits, sizeof(bits));
    return;
  }
  unsigned size = f->size >= 8 ? 8 : 4;
  uint64_t x = take(v, size);
  if (f->is_signed)
    a->type = size == 8 ? 3 : 1;
  else
    a->type = size == 8 ? 4 : 2;
  a->uint64_value = x;
  if (size == 4) a->uint32_value = (uint32_t)x;
}

int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const uint8_t* nul = memchr(data, 0, size);
  size_t text_size = nul ? (size_t)(nul - data) : size;
  /* an exact-size copy of the text, so that ASan flags reads past it */
  char* text = malloc(text_size ? text_size : 1);
  if (!text) return 0;
  memcpy(text, data, text_size);
  values_t v = {nul ? nul + 1 : data + size, nul ? size - text_size - 1 : 0};

  trace_format_set_t* set = trace_format_set_new();
  check(set != NULL, "format set allocation failed");
  const char* reason = NULL;
  int rc = trace_format_set_add_text(set, 1, text, text_size, &reason);
  check(rc == 1 || (rc == -1 && reason && reason[0]), "a result without a reason");
  free(text); /* the set keeps copies */
  if (rc == 1) {
    const trace_event_format_t* f = trace_format_set_at(set, 0);
    check(f != NULL, "a format taken but not listed");
    static char strings[TRACE_READER_MAX_ARGS][4096];
    trace_record_t rec;
    memset(&rec, 0, sizeof(rec));
    rec.type = 4;
    rec.event.category.data = f->category;
    rec.event.category.length = strlen(f->category);
    rec.event.name.data = f->name;
    rec.event.name.length = strlen(f->name);
    for (size_t i = 0; i < f->num_fields && rec.event.args.count < TRACE_READER_MAX_ARGS; i++) {
      if (f->fields[i].is_common) continue;
      size_t k = rec.event.args.count++;
      make_arg(&f->fields[i], &v, &rec.event.args.items[k], strings[k], sizeof(strings[k]));
    }
    static char out[TRACE_FORMAT_MAX_TEXT + 4096];
    memset(out, 0x55, sizeof(out));
    size_t length = SIZE_MAX;
    int used = trace_format_render_text(f, &rec, out, sizeof(out), &length);
    check(used == 0 || used == 1, "render: bad result");
    check(length <= TRACE_FORMAT_MAX_TEXT, "render: text past TRACE_FORMAT_MAX_TEXT");
    check(out[length] == '\0', "render: no NUL at the length it reports");
    uint64_t sum = touch_bytes(out, length);
    /* a small buffer: cut, still terminated */
    char small[7];
    trace_format_render_text(f, &rec, small, sizeof(small), &length);
    check(length < sizeof(small) && small[length] == '\0', "render: small buffer overrun");
    for (size_t i = 0; i < rec.event.args.count; i++) {
      const trace_reader_arg_t* a = &rec.event.args.items[i];
      trace_format_value(trace_event_format_field(f, a->name.data, a->name.length), a, out, 1024);
      sum += touch_bytes(out, strnlen(out, 1024));
    }
    fuzz_sink = sum;
  }
  trace_format_set_free(set);
  return 0;
}
