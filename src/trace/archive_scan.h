/* Framing-only scan of an FXT archive as it streams in: record boundaries,
 * provider sections and the records of each, without decoding a record's
 * body. `trace record` uses it when it writes the archive as it came (FXT
 * output): the trace manager has already checked every record's framing, so
 * the client only needs the per-provider counts of its summary and to notice
 * an archive that ends inside a record. A full decode (libtrace-reader) is
 * several times slower and made the client the bottleneck of a fast
 * streaming trace. */
#ifndef FXTRACE_TRACE_ARCHIVE_SCAN_H_
#define FXTRACE_TRACE_ARCHIVE_SCAN_H_

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum { ARCHIVE_SCAN_MAX_NAMED_PROVIDERS = 256 };

/* A provider's data records (not its metadata records, and none before the
 * archive's first provider-info record) are counted under its id, in the
 * order of the ids' first provider-info or provider-section record. */
typedef struct archive_scan_provider {
  uint32_t id;
  uint8_t name_length;
  char name[255];   /* from its provider-info record; not NUL-terminated */
  uint64_t records; /* its data records so far */
  uint64_t bytes;   /* their bytes */
} archive_scan_provider_t;

/* Optional (archive_scan__on_record): called for every record of a provider's
 * data, with its provider, its record type (FXT.md §7) and its size in bytes. */
typedef void (*archive_scan_record_fn)(void* context, const archive_scan_provider_t* provider,
                                       unsigned type, uint64_t bytes);

typedef struct archive_scan {
  archive_scan_record_fn on_record; /* NULL: counts only */
  void* context;
  uint64_t offset;        /* archive bytes consumed so far */
  uint64_t record_start;  /* where the record being passed over began */
  uint64_t skip;          /* bytes of the current record's body still to pass over */
  size_t carry_length;    /* bytes of a record head split across two feeds */
  uint8_t carry[8 + 255]; /* the most a head needs: a provider-info header and name */
  bool magic_seen;
  bool damaged; /* stop scanning; `damage` says why and where */
  char damage[160];
  archive_scan_provider_t* current; /* NULL before the first provider-info */
  size_t provider_count;
  archive_scan_provider_t providers[ARCHIVE_SCAN_MAX_NAMED_PROVIDERS];
} archive_scan_t;

void archive_scan__init(archive_scan_t* s);

/* Also calls `fn` for each data record (a tool that needs record types:
 * bench_fxt_count); slower than counting alone. */
void archive_scan__on_record(archive_scan_t* s, archive_scan_record_fn fn, void* context);

/* Consumes the next `length` bytes of the archive. Once damaged, ignores
 * the rest. */
void archive_scan__feed(archive_scan_t* s, const uint8_t* data, size_t length);

/* The end of the last complete record fed so far (the archive's offset):
 * where an archive cut short must end to hold whole records only. */
uint64_t archive_scan__boundary(const archive_scan_t* s);

/* At the end of the archive: false (and `damage` set) if it was damaged or
 * ended inside a record. */
bool archive_scan__finish(archive_scan_t* s);

#endif /* FXTRACE_TRACE_ARCHIVE_SCAN_H_ */
