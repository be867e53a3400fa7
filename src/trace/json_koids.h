/* Not part of the public API: `trace convert`'s JSON pid/tid values. A koid
 * at or above JSON_KOID_LIMIT (Linux's PID_MAX_LIMIT, 2^22) is no Linux id:
 * a virtual thread (`id | 1 << 63`), the kernel:irq pseudo process and its
 * threads (0x800000007f000000 + ...). Readers cannot hold such values
 * (Perfetto turns them into 0, Catapult rounds them to doubles), so each gets
 * a small synthetic id, JSON_KOID_LIMIT + n in order of first use: unique in
 * the conversion and distinct from every real pid/tid, which are below the
 * limit (docs/convert-json.md). Memory grows with the number of such koids
 * only. */
#ifndef FXTRACE_TRACE_JSON_KOIDS_H_
#define FXTRACE_TRACE_JSON_KOIDS_H_

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define JSON_KOID_LIMIT (UINT64_C(1) << 22)
/* The id of every koid past the last synthetic one (2^31 - 1), or when the
 * table cannot grow: JSON integers stay below 2^31. */
#define JSON_KOID_OVERFLOW UINT64_C(0x7fffffff)

typedef struct json_koids {
  uint64_t* keys; /* open addressing; 0 marks an empty slot (0 is never mapped) */
  uint32_t* ids;
  size_t capacity; /* 0 or a power of two */
  size_t count;
} json_koids_t;

static inline bool json_koids__is_mapped(uint64_t koid) { return koid >= JSON_KOID_LIMIT; }

/* The JSON id of `koid`: itself below JSON_KOID_LIMIT, else its synthetic id
 * (assigned at the first call). */
uint64_t json_koids__id(json_koids_t* k, uint64_t koid);

void json_koids__free(json_koids_t* k);

#endif /* FXTRACE_TRACE_JSON_KOIDS_H_ */
