/* The framing-only archive scan of `trace record` (src/trace/archive_scan.h):
 * per-provider record counts and names whatever way the archive is split
 * into reads, and damage found at the right offset. The archive is built
 * here word by word from FXT.md's layouts (§8.1, §6.2). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "test.h"
#include "trace/archive_scan.h"

static uint8_t archive[4096];
static size_t archive_length;

static void put_word(uint64_t w) {
  for (int i = 0; i < 8; i++) archive[archive_length++] = (uint8_t)(w >> (8 * i));
}

static void put_provider_info(uint32_t id, const char* name) {
  uint64_t n = strlen(name), words = 1 + (n + 7) / 8;
  put_word(words << 4 | UINT64_C(1) << 16 | (uint64_t)id << 20 | n << 52);
  size_t start = archive_length;
  memcpy(archive + archive_length, name, n);
  archive_length = start + (words - 1) * 8;
}

static void put_provider_section(uint32_t id) {
  put_word(UINT64_C(1) << 4 | UINT64_C(2) << 16 | (uint64_t)id << 20);
}

/* An instant event with an inline thread and no strings: 4 words + scope. */
static void put_event(void) {
  put_word(UINT64_C(5) << 4 | 4);
  put_word(1000);
  put_word(1);
  put_word(2);
  put_word(0);
}

/* A large blob (type 15) of `words` words: the size in bits 4..35. */
static void put_large(uint64_t words) {
  put_word(words << 4 | 15);
  for (uint64_t i = 1; i < words; i++) put_word(0);
}

typedef struct counts {
  uint64_t records[4];
  uint64_t bytes[4];
  char names[4][32];
} counts_t;

/* The scan's counts, by provider id. */
static void take_counts(const archive_scan_t* s, counts_t* c) {
  for (size_t i = 0; i < s->provider_count; i++) {
    const archive_scan_provider_t* p = &s->providers[i];
    ASSERT_MSG(p->id < 4, "unexpected provider id %u", p->id);
    c->records[p->id] += p->records;
    c->bytes[p->id] += p->bytes;
    snprintf(c->names[p->id], sizeof(c->names[p->id]), "%.*s", (int)p->name_length, p->name);
  }
}

static uint64_t scanned_boundary; /* archive_scan__boundary() after the last scan() */

/* Scans the archive's first `length` bytes in pieces cut at `cuts`. */
static bool scan(size_t length, const size_t* cuts, size_t ncuts, counts_t* c, char* damage,
                 size_t damage_size) {
  static archive_scan_t s; /* large; static keeps it off the stack */
  memset(c, 0, sizeof(*c));
  archive_scan__init(&s);
  size_t at = 0;
  for (size_t i = 0; i <= ncuts; i++) {
    size_t end = i < ncuts ? cuts[i] : length;
    if (end > length) end = length;
    if (end > at) archive_scan__feed(&s, archive + at, end - at);
    if (end > at) at = end;
  }
  take_counts(&s, c);
  scanned_boundary = archive_scan__boundary(&s);
  bool ok = archive_scan__finish(&s);
  snprintf(damage, damage_size, "%s", s.damage);
  return ok;
}

static void check_counts(const counts_t* c, const char* how) {
  ASSERT_MSG(c->records[0] == 0, "%s: records before any provider counted", how);
  ASSERT_MSG(c->records[1] == 4, "%s: provider 1 has %llu records, want 4", how,
             (unsigned long long)c->records[1]);
  ASSERT_MSG(c->records[2] == 2, "%s: provider 2 has %llu records, want 2", how,
             (unsigned long long)c->records[2]);
  /* provider 1: initialization (16 B) and 3 events (40 B); 2: a large
   * record (320 B) and an event */
  ASSERT_MSG(c->bytes[1] == 16 + 3 * 40 && c->bytes[2] == 320 + 40, "%s: bytes %llu / %llu", how,
             (unsigned long long)c->bytes[1], (unsigned long long)c->bytes[2]);
  ASSERT_MSG(strcmp(c->names[1], "alpha") == 0, "%s: provider 1 named '%s'", how, c->names[1]);
  ASSERT_MSG(strcmp(c->names[2], "a-provider-name-of-26bytes") == 0, "%s: provider 2 named '%s'",
             how, c->names[2]);
}

int main(void) {
  size_t boundaries[64], nb = 0;
  put_word(UINT64_C(0x0016547846040010)); /* magic */
  boundaries[nb++] = archive_length;
  put_provider_info(1, "alpha");
  boundaries[nb++] = archive_length;
  put_word(UINT64_C(2) << 4 | 1); /* initialization */
  put_word(1000000000);
  boundaries[nb++] = archive_length;
  put_event();
  boundaries[nb++] = archive_length;
  put_provider_info(2, "a-provider-name-of-26bytes");
  boundaries[nb++] = archive_length;
  put_large(40);
  boundaries[nb++] = archive_length;
  put_event();
  boundaries[nb++] = archive_length;
  put_provider_section(1);
  boundaries[nb++] = archive_length;
  put_word(UINT64_C(1) << 4 | UINT64_C(3) << 16 | UINT64_C(1) << 20); /* provider event */
  boundaries[nb++] = archive_length;
  put_event();
  boundaries[nb++] = archive_length;
  put_event();
  boundaries[nb++] = archive_length;
  size_t whole = archive_length;
  counts_t c;
  char damage[200];

  ASSERT_MSG(scan(whole, NULL, 0, &c, damage, sizeof(damage)), "whole archive: %s", damage);
  check_counts(&c, "one read");

  /* Byte by byte. */
  size_t cuts[4096];
  for (size_t i = 0; i < whole; i++) cuts[i] = i + 1;
  ASSERT_MSG(scan(whole, cuts, whole, &c, damage, sizeof(damage)), "byte by byte: %s", damage);
  check_counts(&c, "byte by byte");

  /* Every two-piece and three-piece split. */
  for (size_t i = 0; i <= whole; i++) {
    size_t two[1] = {i};
    ASSERT_MSG(scan(whole, two, 1, &c, damage, sizeof(damage)), "split at %zu: %s", i, damage);
    check_counts(&c, "two pieces");
    for (size_t j = i; j <= whole; j += 7) {
      size_t three[2] = {i, j};
      ASSERT_MSG(scan(whole, three, 2, &c, damage, sizeof(damage)), "split at %zu,%zu: %s", i, j,
                 damage);
      check_counts(&c, "three pieces");
    }
  }

  /* Every truncation: complete only at a record boundary, and the boundary
   * reported (where trace record cuts an archive after a failed write) the
   * last one at or before the truncation, in one read or byte by byte. */
  for (size_t len = 8; len < whole; len++) {
    bool at_boundary = false;
    size_t last = 0;
    for (size_t b = 0; b < nb; b++) {
      at_boundary |= boundaries[b] == len;
      if (boundaries[b] <= len) last = boundaries[b];
    }
    bool ok = scan(len, NULL, 0, &c, damage, sizeof(damage));
    ASSERT_MSG(ok == at_boundary, "truncated to %zu bytes: scan says %s (%s)", len,
               ok ? "complete" : "damaged", damage);
    if (!ok) ASSERT_MSG(strstr(damage, "ends inside a record") != NULL, "truncated: '%s'", damage);
    ASSERT_MSG(scanned_boundary == last, "truncated to %zu bytes: boundary %llu, want %zu", len,
               (unsigned long long)scanned_boundary, last);
    scan(len, cuts, len, &c, damage, sizeof(damage));
    ASSERT_MSG(scanned_boundary == last,
               "truncated to %zu bytes, byte by byte: boundary %llu, "
               "want %zu",
               len, (unsigned long long)scanned_boundary, last);
  }
  for (size_t len = 0; len < 8; len++) {
    scan(len, NULL, 0, &c, damage, sizeof(damage));
    ASSERT_MSG(scanned_boundary == 0, "%zu bytes of the magic: boundary %llu", len,
               (unsigned long long)scanned_boundary);
  }

  /* Not an FXT archive. */
  archive[0] ^= 1;
  ASSERT_MSG(!scan(whole, NULL, 0, &c, damage, sizeof(damage)), "a wrong magic number passes");
  ASSERT_MSG(strstr(damage, "byte offset 0") && strstr(damage, "magic"), "wrong magic: '%s'",
             damage);
  archive[0] ^= 1;

  /* A record of size 0 stops the scan where it is. */
  archive_length = whole;
  put_word(4); /* event header, size 0 */
  put_event();
  ASSERT_MSG(!scan(archive_length, NULL, 0, &c, damage, sizeof(damage)), "a size-0 record passes");
  char where[64];
  snprintf(where, sizeof(where), "byte offset %zu: a record of size 0", whole);
  ASSERT_MSG(strstr(damage, where) != NULL, "size 0: '%s', want '%s'", damage, where);
  check_counts(&c, "records before a size-0 record");

  printf("ok: archive scan (%zu-byte archive, every split and truncation)\n", whole);
  return 0;
}
