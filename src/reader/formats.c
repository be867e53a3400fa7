/* <trace-reader/formats.h>: collecting and parsing the format records of
 * typed events (docs/event-formats.md). Every length and number in a
 * payload is checked; a format that does not parse is reported and dropped.
 * The set is a growing array (the order first seen) with an open-addressing
 * index by (provider, category, name), so that a lookup per event record
 * stays cheap with thousands of formats. */
#include "trace-reader/formats.h"

#include <stdlib.h>
#include <string.h>

enum {
  MAX_TEXT = 65536, /* a small blob holds at most 32767 bytes: generous */
  MAX_FIELDS = 512,
};

typedef struct entry {
  trace_event_format_t format;
  trace_format_field_t* fields;
  char* strings; /* the text copy the field strings point into */
  char* text;
} entry_t;

struct trace_format_set {
  entry_t** items;
  size_t count, capacity;
  size_t* index; /* slots of item + 1, 0 empty; size index_size (a power of 2) */
  size_t index_size;
};

static const char kFormatBlobName[] = "trace_event_format";

trace_format_set_t* trace_format_set_new(void) { return calloc(1, sizeof(trace_format_set_t)); }

static void free_entry(entry_t* e) {
  if (!e) return;
  free(e->fields);
  free(e->strings);
  free(e->text);
  free(e);
}

void trace_format_set_free(trace_format_set_t* set) {
  if (!set) return;
  for (size_t i = 0; i < set->count; i++) free_entry(set->items[i]);
  free(set->items);
  free(set->index);
  free(set);
}

size_t trace_format_set_count(const trace_format_set_t* set) { return set ? set->count : 0; }

const trace_event_format_t* trace_format_set_at(const trace_format_set_t* set, size_t index) {
  if (!set || index >= set->count) return NULL;
  return &set->items[index]->format;
}

static uint64_t hash_bytes(uint64_t h, const char* s, size_t n) {
  for (size_t i = 0; i < n; i++) h = (h ^ (unsigned char)s[i]) * UINT64_C(0x100000001b3);
  return h;
}

static uint64_t key_hash(uint32_t provider, const char* cat, size_t cat_len, const char* name,
                         size_t name_len) {
  uint64_t h = UINT64_C(0xcbf29ce484222325) ^ provider;
  h = hash_bytes(h, cat, cat_len);
  h = hash_bytes(h ^ 0xff, name, name_len);
  return h;
}

static bool same_key(const trace_event_format_t* f, uint32_t provider, const char* cat,
                     size_t cat_len, const char* name, size_t name_len) {
  return f->provider_id == provider && strlen(f->category) == cat_len &&
         memcmp(f->category, cat, cat_len) == 0 && strlen(f->name) == name_len &&
         memcmp(f->name, name, name_len) == 0;
}

/* The index slot holding the key, or the empty slot where it would go. */
static size_t* find_slot(const trace_format_set_t* set, uint32_t provider, const char* cat,
                         size_t cat_len, const char* name, size_t name_len) {
  size_t mask = set->index_size - 1;
  size_t i = (size_t)key_hash(provider, cat, cat_len, name, name_len) & mask;
  for (;; i = (i + 1) & mask) {
    size_t* slot = &set->index[i];
    if (*slot == 0) return slot;
    if (same_key(&set->items[*slot - 1]->format, provider, cat, cat_len, name, name_len))
      return slot;
  }
}

static bool grow_index(trace_format_set_t* set) {
  size_t size = set->index_size ? set->index_size * 2 : 64;
  size_t* index = calloc(size, sizeof(size_t));
  if (!index) return false;
  free(set->index);
  set->index = index;
  set->index_size = size;
  for (size_t k = 0; k < set->count; k++) {
    const trace_event_format_t* f = &set->items[k]->format;
    *find_slot(set, f->provider_id, f->category, strlen(f->category), f->name, strlen(f->name)) =
        k + 1;
  }
  return true;
}

const trace_event_format_t* trace_format_set_find(const trace_format_set_t* set,
                                                  uint32_t provider_id, const char* category,
                                                  size_t category_length, const char* name,
                                                  size_t name_length) {
  if (!set || set->count == 0 || !category || !name) return NULL;
  size_t* slot = find_slot(set, provider_id, category, category_length, name, name_length);
  return *slot ? &set->items[*slot - 1]->format : NULL;
}

const trace_event_format_t* trace_format_set_find_event(const trace_format_set_t* set,
                                                        const trace_record_t* record) {
  if (!record || record->type != 4 || record->event.event_type != 0) return NULL;
  uint32_t provider = record->provider ? record->provider->id : 0;
  return trace_format_set_find(set, provider, record->event.category.data,
                               record->event.category.length, record->event.name.data,
                               record->event.name.length);
}

const trace_format_field_t* trace_event_format_field(const trace_event_format_t* format,
                                                     const char* name, size_t length) {
  if (!format || !name) return NULL;
  for (size_t i = 0; i < format->num_fields; i++) {
    const trace_format_field_t* f = &format->fields[i];
    if (strlen(f->name) == length && memcmp(f->name, name, length) == 0) return f;
  }
  return NULL;
}

/* ---- parsing ---- */

static bool starts_with(const char* s, const char* prefix) {
  return strncmp(s, prefix, strlen(prefix)) == 0;
}

static bool is_ident_char(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
}

/* A decimal number of at most 9 digits (offsets and sizes stay small). */
static bool parse_number(const char* s, uint32_t* out, const char** end) {
  uint32_t v = 0;
  size_t n = 0;
  while (s[n] >= '0' && s[n] <= '9') {
    if (n == 9) return false;
    v = v * 10 + (uint32_t)(s[n] - '0');
    n++;
  }
  if (n == 0) return false;
  *out = v;
  if (end) *end = s + n;
  return true;
}

static void trim_right(char* s) {
  size_t n = strlen(s);
  while (n > 0 && (s[n - 1] == ' ' || s[n - 1] == '\t')) s[--n] = '\0';
}

/* "key:N;" somewhere in `attrs`. */
static bool parse_attr(const char* attrs, const char* key, uint32_t* out) {
  const char* p = strstr(attrs, key);
  const char* end;
  if (!p || !parse_number(p + strlen(key), out, &end) || *end != ';') return false;
  return true;
}

/* One field line: "field:DECL;\toffset:N;\tsize:N;\tsigned:N;". `buf` has
 * room for two copies of the line: the declaration, then its type and name. */
static const char* parse_field(const char* line, trace_format_field_t* f, char* buf) {
  const char* decl = strstr(line, "field:");
  if (!decl) return "a field line without 'field:'";
  decl += 6;
  const char* semi = strchr(decl, ';');
  if (!semi) return "a field declaration without ';'";
  const char* attrs = semi + 1;
  uint32_t is_signed = 0;
  if (!parse_attr(attrs, "offset:", &f->offset) || !parse_attr(attrs, "size:", &f->size))
    return "a field without offset or size";
  if (parse_attr(attrs, "signed:", &is_signed) && is_signed > 1)
    return "a field with signed: other than 0 or 1";
  f->is_signed = is_signed == 1;
  while (*decl == ' ') decl++;
  size_t n = (size_t)(semi - decl);
  char* whole = buf;
  memcpy(whole, decl, n);
  whole[n] = '\0';
  trim_right(whole);
  f->decl = whole;
  size_t whole_len = strlen(whole);
  char* d = whole + whole_len + 1;
  memcpy(d, whole, whole_len + 1);
  if (starts_with(d, "__data_loc ")) {
    f->is_data_loc = true;
    d += 11;
  }
  /* the name: the last identifier before any trailing [N] */
  char* name_end = d + strlen(d);
  char* bracket = strrchr(d, '[');
  if (bracket && name_end > d && name_end[-1] == ']' && !f->is_data_loc) {
    uint32_t count = 0;
    const char* num_end;
    if (bracket[1] != ']' && (!parse_number(bracket + 1, &count, &num_end) || *num_end != ']'))
      return "a field with an array length that is not a number";
    f->count = count;
    name_end = bracket;
  }
  while (name_end > d && name_end[-1] == ' ') name_end--;
  char* name_start = name_end;
  while (name_start > d && is_ident_char(name_start[-1])) name_start--;
  if (name_start == name_end) return "a field without a name";
  *name_end = '\0';
  f->name = name_start;
  if (name_start > d) name_start[-1] = '\0';
  f->type = d;
  if (f->is_data_loc) { /* "char[] name" → type "char" */
    char* b = strchr(d, '[');
    if (!b) return "a __data_loc field without []";
    *b = '\0';
  }
  trim_right(d);
  if (f->type[0] == '\0' || f->type == f->name) return "a field without a type";
  f->is_common = starts_with(f->name, "common_");
  return NULL;
}

static const char* parse_text(entry_t* e, uint32_t provider_id, const char* text, size_t length) {
  if (length == 0) return "an empty format";
  if (length > MAX_TEXT) return "a format longer than 64 KiB";
  if (memchr(text, '\0', length)) return "a NUL byte in a format";
  e->text = malloc(length + 1);
  /* every line is copied once; a field line's room is used twice over
   * (declaration, then type and name): three times the text is enough */
  e->strings = malloc(3 * length + 3);
  if (!e->text || !e->strings) return "out of memory";
  memcpy(e->text, text, length);
  e->text[length] = '\0';
  trace_event_format_t* f = &e->format;
  f->provider_id = provider_id;
  f->text = e->text;
  f->text_length = length;
  size_t cap = 0;
  char* out = e->strings;
  const char* p = text;
  const char* end = text + length;
  while (p < end) {
    const char* nl = memchr(p, '\n', (size_t)(end - p));
    size_t n = nl ? (size_t)(nl - p) : (size_t)(end - p);
    char* line = out;
    memcpy(line, p, n);
    line[n] = '\0';
    out += n + 1;
    p += n + 1;
    if (starts_with(line, "category: ")) {
      f->category = line + 10;
    } else if (starts_with(line, "name: ")) {
      f->name = line + 6;
    } else if (starts_with(line, "ID: ")) {
      const char* num_end;
      if (!parse_number(line + 4, &f->id, &num_end) || *num_end != '\0') return "a bad ID line";
    } else if (starts_with(line, "print fmt: ")) {
      f->print_fmt = line + 11;
    } else if ((line[0] == '\t' || line[0] == ' ') && strstr(line, "field:")) {
      if (f->num_fields == MAX_FIELDS) return "more than 512 fields";
      if (f->num_fields == cap) {
        cap = cap ? cap * 2 : 16;
        trace_format_field_t* grown = realloc(e->fields, cap * sizeof(*grown));
        if (!grown) return "out of memory";
        e->fields = grown;
      }
      trace_format_field_t* field = &e->fields[f->num_fields];
      memset(field, 0, sizeof(*field));
      const char* reason = parse_field(line, field, out);
      if (reason) return reason;
      out += 2 * (n + 1); /* the two copies */
      f->num_fields++;
    }
  }
  f->fields = e->fields;
  if (!f->category || !f->category[0]) return "no 'category:' line";
  if (!f->name || !f->name[0]) return "no 'name:' line";
  if (!f->print_fmt) return "no 'print fmt:' line";
  return NULL;
}

int trace_format_set_add_text(trace_format_set_t* set, uint32_t provider_id, const char* text,
                              size_t length, const char** reason) {
  static const char* unused;
  if (!reason) reason = &unused;
  entry_t* e = calloc(1, sizeof(*e));
  if (!set || !e || !text) {
    free(e);
    *reason = "out of memory";
    return -1;
  }
  *reason = parse_text(e, provider_id, text, length);
  if (*reason) {
    free_entry(e);
    return -1;
  }
  if (set->count == set->capacity || (set->count + 1) * 2 > set->index_size) {
    size_t cap = set->capacity ? set->capacity * 2 : 16;
    entry_t** items =
        set->count == set->capacity ? realloc(set->items, cap * sizeof(*items)) : set->items;
    if (!items) {
      free_entry(e);
      *reason = "out of memory";
      return -1;
    }
    if (items != set->items || set->count == set->capacity) {
      set->items = items;
      set->capacity = cap;
    }
    if ((set->count + 1) * 2 > set->index_size && !grow_index(set)) {
      free_entry(e);
      *reason = "out of memory";
      return -1;
    }
  }
  trace_event_format_t* f = &e->format;
  size_t* slot =
      find_slot(set, provider_id, f->category, strlen(f->category), f->name, strlen(f->name));
  if (*slot) { /* rule 4: a later format replaces the earlier */
    free_entry(set->items[*slot - 1]);
    set->items[*slot - 1] = e;
  } else {
    set->items[set->count++] = e;
    *slot = set->count;
  }
  return 1;
}

int trace_format_set_add_record(trace_format_set_t* set, const trace_record_t* record,
                                trace_reader_error_t* error) {
  if (!record || record->type != 5 || record->blob.blob_type != 1 ||
      record->blob.name.length != sizeof(kFormatBlobName) - 1 ||
      memcmp(record->blob.name.data, kFormatBlobName, sizeof(kFormatBlobName) - 1) != 0)
    return 0;
  const char* reason = NULL;
  int rc = trace_format_set_add_text(set, record->provider ? record->provider->id : 0,
                                     (const char*)record->blob.data, record->blob.size, &reason);
  if (rc < 0 && error) {
    error->offset = record->offset;
    error->message = reason;
  }
  return rc;
}

/* Bytes of the element types arrays use in practice (formats.h). */
unsigned trace_format_field_element_size(const trace_format_field_t* field) {  // never-fail
  const char* type = field->type;
  static const struct {
    const char* name;
    unsigned size;
  } kTypes[] = {{"char", 1},
                {"signed char", 1},
                {"unsigned char", 1},
                {"u8", 1},
                {"s8", 1},
                {"uint8_t", 1},
                {"int8_t", 1},
                {"bool", 1},
                {"short", 2},
                {"unsigned short", 2},
                {"u16", 2},
                {"s16", 2},
                {"uint16_t", 2},
                {"int16_t", 2},
                {"int", 4},
                {"unsigned int", 4},
                {"unsigned", 4},
                {"u32", 4},
                {"s32", 4},
                {"uint32_t", 4},
                {"int32_t", 4},
                {"long", 8},
                {"unsigned long", 8},
                {"long long", 8},
                {"unsigned long long", 8},
                {"u64", 8},
                {"s64", 8},
                {"uint64_t", 8},
                {"int64_t", 8},
                {"size_t", 8},
                {"pid_t", 4}};
  for (size_t i = 0; i < sizeof(kTypes) / sizeof(kTypes[0]); i++)
    if (strcmp(type, kTypes[i].name) == 0) return kTypes[i].size;
  return 0;
}
