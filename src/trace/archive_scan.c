/* Framing-only archive scan (archive_scan.h). Record sizes come from the
 * header word alone (FXT.md §6): bits 4..15, or 4..35 for a large record.
 * Only two record heads are looked into: the magic-number record, which
 * must come first, and provider-info records, whose name the summary shows. */
#include "trace/archive_scan.h"

#include <stdio.h>
#include <string.h>

#define FXT_MAGIC_RECORD UINT64_C(0x0016547846040010)

enum { METADATA_PROVIDER_INFO = 1, METADATA_PROVIDER_SECTION = 2, LARGE_RECORD = 15 };

static uint64_t load_le64(const uint8_t* p) {
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
  uint64_t v; /* one load: this runs for every record of the archive */
  memcpy(&v, p, sizeof(v));
  return v;
#else
  uint64_t v = 0;
  for (int i = 7; i >= 0; i--) v = v << 8 | p[i];
  return v;
#endif
}

static bool is_provider_info(uint64_t header) {
  return (header & 0xf) == 0 && ((header >> 16) & 0xf) == METADATA_PROVIDER_INFO;
}

/* Bytes of a record's head this scan reads: the header word, plus the
 * name of a provider-info record. */
static size_t head_needed(const uint8_t* head, size_t have) {
  if (have < 8) return 8;
  uint64_t header = load_le64(head);
  return is_provider_info(header) ? 8 + (size_t)((header >> 52) & 0xff) : 8;
}

static void damage(archive_scan_t* s, const char* what) {
  s->damaged = true;
  snprintf(s->damage, sizeof(s->damage), "at byte offset %llu: %s", (unsigned long long)s->offset,
           what);
}

static archive_scan_provider_t* provider(archive_scan_t* s, uint32_t id) {
  for (size_t i = 0; i < s->provider_count; i++)
    if (s->providers[i].id == id) return &s->providers[i];
  if (s->provider_count == ARCHIVE_SCAN_MAX_NAMED_PROVIDERS) return NULL; /* not counted */
  archive_scan_provider_t* p = &s->providers[s->provider_count++];
  p->id = id;
  p->name_length = 0;
  p->records = p->bytes = 0;
  return p;
}

/* One record whose head (head_needed bytes) is at `head`, found at
 * s->offset. Returns the record's size in bytes, or 0 once damaged. */
static uint64_t record_head(archive_scan_t* s, const uint8_t* head) {
  uint64_t header = load_le64(head);
  if (!s->magic_seen) {
    if (header != FXT_MAGIC_RECORD) {
      damage(s, "the archive does not start with the FXT magic-number record");
      return 0;
    }
    s->magic_seen = true;
    return 8;
  }
  unsigned type = (unsigned)(header & 0xf);
  uint64_t words = type == LARGE_RECORD ? (header >> 4) & 0xffffffffu : (header >> 4) & 0xfff;
  if (words == 0) {
    damage(s, "a record of size 0");
    return 0;
  }
  if (type != 0) {
    if (s->current) {
      s->current->records++;
      s->current->bytes += words * 8;
      if (s->on_record) s->on_record(s->context, s->current, type, words * 8);
    }
    return words * 8;
  }
  uint32_t id = (uint32_t)((header >> 20) & 0xffffffffu);
  if (is_provider_info(header)) {
    size_t length = (size_t)((header >> 52) & 0xff);
    if (8 + length > words * 8) {
      damage(s, "a provider-info record shorter than its name");
      return 0;
    }
    archive_scan_provider_t* p = provider(s, id);
    if (p) {
      memcpy(p->name, head + 8, length);
      p->name_length = (uint8_t)length;
    }
    s->current = p;
  } else if (((header >> 16) & 0xf) == METADATA_PROVIDER_SECTION) {
    s->current = provider(s, id);
  }
  return words * 8;
}

void archive_scan__init(archive_scan_t* s) { memset(s, 0, sizeof(*s)); }

void archive_scan__on_record(archive_scan_t* s, archive_scan_record_fn fn, void* context) {
  s->on_record = fn;
  s->context = context;
}

/* The common case, a run of a provider's data records (not metadata, not
 * large) whose headers lie in `data`: a tight loop over the headers alone,
 * counted once at the end (at 10 M records/s a call per record took a
 * fifth of a CPU). It stops at anything else (metadata, a large record, a
 * size of 0, a header split across feeds), which the general loop then
 * handles. Returns the bytes consumed; a record running past the end leaves
 * s->skip set. */
static size_t data_records(archive_scan_t* s, const uint8_t* data, size_t length) {
  size_t at = 0;
  uint64_t records = 0, sizes = 0; /* of the records whose header was read */
  while (length - at >= 8) {
    __builtin_prefetch(data + at + 2048);
    uint64_t header = load_le64(data + at);
    unsigned type = (unsigned)(header & 0xf);
    uint64_t bytes = ((header >> 4) & 0xfff) * 8;
    if (type == 0 || type == LARGE_RECORD || bytes == 0) break;
    records++;
    sizes += bytes;
    if (s->on_record) s->on_record(s->context, s->current, type, bytes);
    if (bytes > length - at) {
      s->record_start = s->offset + at;
      s->skip = bytes - (length - at);
      at = length;
      break;
    }
    at += (size_t)bytes;
  }
  s->current->records += records;
  s->current->bytes += sizes;
  s->offset += at;
  return at;
}

void archive_scan__feed(archive_scan_t* s, const uint8_t* data, size_t length) {
  while (length > 0 && !s->damaged) {
    if (s->skip == 0 && s->carry_length == 0 && s->current && s->magic_seen) {
      size_t n = data_records(s, data, length);
      data += n;
      length -= n;
      if (length == 0 || s->skip > 0) continue;
    }
    if (s->skip > 0) {
      size_t n = s->skip < length ? (size_t)s->skip : length;
      s->skip -= n;
      s->offset += n;
      data += n;
      length -= n;
    } else if (s->carry_length == 0) {
      size_t need = head_needed(data, length);
      s->record_start = s->offset;
      if (length < need) { /* the head continues in the next feed */
        memcpy(s->carry, data, length);
        s->carry_length = length;
        return;
      }
      s->skip = record_head(s, data); /* the loop then passes over the whole record */
    } else {
      size_t need = head_needed(s->carry, s->carry_length);
      size_t take = need - s->carry_length < length ? need - s->carry_length : length;
      memcpy(s->carry + s->carry_length, data, take);
      s->carry_length += take;
      data += take;
      length -= take;
      if (s->carry_length < head_needed(s->carry, s->carry_length)) continue;
      uint64_t bytes = record_head(s, s->carry);
      if (bytes == 0) return;
      s->skip = bytes - s->carry_length; /* the head was taken from `data` already */
      s->offset += s->carry_length;
      s->carry_length = 0;
    }
  }
}

uint64_t archive_scan__boundary(const archive_scan_t* s) {
  return s->skip == 0 && s->carry_length == 0 ? s->offset : s->record_start;
}

bool archive_scan__finish(archive_scan_t* s) {
  if (!s->damaged && (s->skip > 0 || s->carry_length > 0))
    damage(s, "the archive ends inside a record");
  return !s->damaged;
}
