/* Not part of the public API: the provider versions of one input of the
 * ordered view. A record read in file order belongs to its provider as it
 * was at that point (name, tick rate); a provider-info or initialization
 * record may change both later. Each distinct (id, name, tick rate) a
 * record used is kept once, and stored records refer to it by index, so a
 * record returned in time order still names its provider as it was.
 * Memory: one entry and one copy of the name per version, never per record.
 * Thread-safety: one list per thread. */
#ifndef FXTRACE_ORDERED_PROVIDER_LIST_H_
#define FXTRACE_ORDERED_PROVIDER_LIST_H_

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "trace-reader/reader.h"

/* Versions an input may have; past it the view fails. A real archive has one
 * or two per provider; the cap also bounds the time of the linear lookup of
 * a provider not seen before. */
enum { ORDERED_MAX_PROVIDER_VERSIONS = 1 << 16 };

typedef struct ordered_providers {
  trace_reader_provider_t* items; /* names are owned copies, NUL-terminated */
  uint32_t count, capacity;
  uint32_t last; /* the version the previous record used: the common case */
  size_t bytes;  /* entries and names, for the memory figures */
} ordered_providers_t;

/* The index of p's current version, added when new. false when out of
 * memory or past ORDERED_MAX_PROVIDER_VERSIONS. */
bool ordered__providers_intern(ordered_providers_t* list, const trace_reader_provider_t* p,
                               uint32_t* index);

void ordered__providers_free(ordered_providers_t* list);

#endif /* FXTRACE_ORDERED_PROVIDER_LIST_H_ */
