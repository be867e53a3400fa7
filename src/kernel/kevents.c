/* The enabled kernel events and bounds-checked field access (see kevents.h). */
#include "kernel/kevents.h"

#include <event-parse.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void kev_table__init(kev_table_t* t, struct tep_handle* tep) {
  memset(t, 0, sizeof(*t));
  t->tep = tep;
  t->max_id = -1;
  t->type_offset = t->pid_offset = -1;
}

void kev_table__free(kev_table_t* t) {
  free(t->descs);
  free(t->by_id);
  if (t->tep) tep_free(t->tep);
  memset(t, 0, sizeof(*t));
}

static const char* const kSlots[][8] = {
    [KEV_SWITCH] = {"prev_comm", "prev_pid", "prev_prio", "prev_state", "next_comm", "next_pid",
                    "next_prio"},
    [KEV_WAKEUP] = {"comm", "pid", "prio", "target_cpu"},
    [KEV_FORK] = {"parent_pid", "child_comm", "child_pid"},
    [KEV_EXEC] = {"filename", "pid"},
    [KEV_EXIT] = {"comm", "pid"},
    [KEV_RENAME] = {"pid", "newcomm"},
    [KEV_IRQ_ENTRY] = {"irq", "name"},
    [KEV_IRQ_EXIT] = {"irq"},
    [KEV_SOFTIRQ_ENTRY] = {"vec"},
    [KEV_SOFTIRQ_EXIT] = {"vec"},
    [KEV_NEWTASK] = {"pid", "clone_flags"},
};

kev_desc_t* kev_table__add(kev_table_t* t, const char* system, const char* event, kev_kind_t kind,
                           const char* category) {
  struct tep_event* e = tep_find_event_by_name(t->tep, system, event);
  if (!e) return NULL;
  for (size_t i = 0; i < t->count; i++) {
    kev_desc_t* d = &t->descs[i];
    if (d->id != e->id) continue;
    if (d->kind == KEV_GENERIC && kind != KEV_GENERIC) { /* the known kind wins */
      d->kind = kind;
      if (category) snprintf(d->category, sizeof(d->category), "%s", category);
      for (int j = 0; j < 8; j++) {
        const char* name = kSlots[kind][j];
        d->f[j] = name ? tep_find_field(e, name) : NULL;
      }
    }
    return d;
  }
  kev_desc_t* grown = realloc(t->descs, (t->count + 1) * sizeof(*grown));
  if (!grown) return NULL;
  t->descs = grown;
  kev_desc_t* d = &t->descs[t->count++];
  memset(d, 0, sizeof(*d));
  d->id = e->id;
  d->kind = kind;
  d->event = e;
  snprintf(d->system_category, sizeof(d->system_category), "kernel:%s", system);
  if (category)
    snprintf(d->category, sizeof(d->category), "%s", category);
  else
    snprintf(d->category, sizeof(d->category), "kernel:%s", system);
  for (int i = 0; i < 8; i++) {
    const char* name = kSlots[kind][i];
    if (name) d->f[i] = tep_find_field(e, name);
  }
  for (struct tep_format_field* f = e->format.fields; f; f = f->next) {
    if (d->field_count == KEV_MAX_FIELDS) {
      d->truncated = true;
      break;
    }
    d->fields[d->field_count++] = f;
  }
  if (e->id > t->max_id) t->max_id = e->id;
  return d;
}

int kev_table__finish(kev_table_t* t) {
  free(t->by_id);
  t->by_id = NULL;
  if (t->count == 0) return 0;
  if (t->max_id < 0 || t->max_id > 1 << 20) return -1;
  t->by_id = calloc((size_t)t->max_id + 1, sizeof(*t->by_id));
  if (!t->by_id) return -1;
  for (size_t i = 0; i < t->count; i++) t->by_id[t->descs[i].id] = &t->descs[i];
  struct tep_format_field* type = tep_find_common_field(t->descs[0].event, "common_type");
  struct tep_format_field* pid = tep_find_common_field(t->descs[0].event, "common_pid");
  if (!type || type->size < 1 || type->size > 4) return -1;
  t->type_offset = type->offset;
  t->type_size = type->size;
  if (pid && pid->size >= 1 && pid->size <= 4) {
    t->pid_offset = pid->offset;
    t->pid_size = pid->size;
  }
  return 0;
}

/* Little-endian unsigned read of n (1..8) bytes; the host is the kernel.
 * The common sizes are one load each (this runs several times per event). */
static uint64_t read_le(const unsigned char* p, int n) {
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
  switch (n) {
    case 1:
      return p[0];
    case 2: {
      uint16_t v;
      memcpy(&v, p, 2);
      return v;
    }
    case 4: {
      uint32_t v;
      memcpy(&v, p, 4);
      return v;
    }
    case 8: {
      uint64_t v;
      memcpy(&v, p, 8);
      return v;
    }
    default:
      break;
  }
#endif
  uint64_t v = 0;
  for (int i = n - 1; i >= 0; i--) v = (v << 8) | p[i];
  return v;
}

static bool in_bounds(int offset, int length, size_t size) {
  return offset >= 0 && length >= 0 && (size_t)offset + (size_t)length <= size;
}

const kev_desc_t* kev_table__lookup(const kev_table_t* t, const void* data, size_t size) {
  if (!t->by_id || !in_bounds(t->type_offset, t->type_size, size)) return NULL;
  uint64_t id = read_le((const unsigned char*)data + t->type_offset, t->type_size);
  if (id > (uint64_t)t->max_id) return NULL;
  return t->by_id[id];
}

int64_t kev__common_pid(const kev_table_t* t, const void* data, size_t size) {
  if (t->pid_offset < 0 || !in_bounds(t->pid_offset, t->pid_size, size)) return -1;
  uint64_t v = read_le((const unsigned char*)data + t->pid_offset, t->pid_size);
  return (int64_t)v;
}

bool kev__int(const struct tep_format_field* f, const void* data, size_t size, int64_t* out) {
  if (!f || f->size < 1 || f->size > 8 || (f->flags & TEP_FIELD_IS_ARRAY) ||
      !in_bounds(f->offset, f->size, size))
    return false;
  uint64_t v = read_le((const unsigned char*)data + f->offset, f->size);
  if ((f->flags & TEP_FIELD_IS_SIGNED) && f->size < 8) {
    uint64_t sign = 1ull << (f->size * 8 - 1);
    v = (v ^ sign) - sign;
  }
  *out = (int64_t)v;
  return true;
}

bool kev__bytes(const struct tep_format_field* f, const void* data, size_t size, const char** out,
                size_t* length) {
  if (!f || !(f->flags & TEP_FIELD_IS_ARRAY) || !in_bounds(f->offset, f->size, size)) return false;
  const unsigned char* base = data;
  size_t start, len;
  if (f->flags & TEP_FIELD_IS_DYNAMIC) { /* dynamic ("data_loc") field: (length << 16) | offset */
    if (f->size != 4) return false;
    uint32_t loc = (uint32_t)read_le(base + f->offset, 4);
    start = loc & 0xffff;
    len = loc >> 16;
    if (f->flags & TEP_FIELD_IS_RELATIVE) start += (size_t)f->offset + (size_t)f->size;
    if (start > size || len > size - start) return false;
  } else {
    start = (size_t)f->offset;
    len = (size_t)f->size;
  }
  if (f->flags & TEP_FIELD_IS_STRING) { /* text: up to the first NUL */
    const void* nul = memchr(base + start, 0, len);
    if (nul) len = (size_t)((const unsigned char*)nul - (base + start));
  }
  *out = (const char*)base + start;
  *length = len;
  return true;
}

static bool is_float(const char* type) {
  return strcmp(type, "float") == 0 || strcmp(type, "double") == 0;
}

size_t kev__args(const kev_desc_t* d, const trace_string_ref_t* field_refs, const void* data,
                 size_t size, trace_arg_t* args) {
  size_t n = 0;
  for (unsigned i = 0; i < d->field_count; i++) {
    const struct tep_format_field* f = d->fields[i];
    trace_arg_t* a = &args[n];
    a->name_ref = field_refs[i];
    if (f->flags & TEP_FIELD_IS_ARRAY) {
      const char* bytes;
      size_t length;
      if (!kev__bytes(f, data, size, &bytes, &length)) continue;
      a->value.type = TRACE_ARG_STRING;
      a->value.string_value_ref = trace_make_inline_string_ref(bytes, length);
    } else if (f->flags & TEP_FIELD_IS_POINTER || strchr(f->type, '*')) {
      int64_t v;
      if (!kev__int(f, data, size, &v)) continue;
      a->value.type = TRACE_ARG_POINTER;
      a->value.pointer_value = (uintptr_t)(uint64_t)v;
    } else if (is_float(f->type) && (f->size == 4 || f->size == 8)) {
      if (!in_bounds(f->offset, f->size, size)) continue;
      a->value.type = TRACE_ARG_DOUBLE;
      if (f->size == 4) {
        float v;
        memcpy(&v, (const char*)data + f->offset, 4);
        a->value.double_value = v;
      } else {
        memcpy(&a->value.double_value, (const char*)data + f->offset, 8);
      }
    } else {
      int64_t v;
      if (!kev__int(f, data, size, &v)) continue;
      bool is_signed = (f->flags & TEP_FIELD_IS_SIGNED) != 0;
      if (f->size <= 4) {
        a->value.type = is_signed ? TRACE_ARG_INT32 : TRACE_ARG_UINT32;
        if (is_signed)
          a->value.int32_value = (int32_t)v;
        else
          a->value.uint32_value = (uint32_t)v;
      } else {
        a->value.type = is_signed ? TRACE_ARG_INT64 : TRACE_ARG_UINT64;
        if (is_signed)
          a->value.int64_value = v;
        else
          a->value.uint64_value = (uint64_t)v;
      }
    }
    n++;
  }
  return n;
}
