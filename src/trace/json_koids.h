/* Not part of the public API: `trace convert`'s JSON pid/tid values. A koid
 * of 2^32 or more is no Linux id (nor one `trace merge` made, i x 2^22 + pid,
 * docs/merge.md): a virtual thread (`id | 1 << 63`), the kernel:irq pseudo
 * process and its threads (0x800000007f000000 + ...). Readers cannot hold
 * such values (Perfetto turns them into 0, Catapult rounds them to doubles),
 * so each gets a synthetic id counting down from 2^31 - 1 in order of first
 * use: unique in the conversion, below 2^31, and apart from every real pid
 * and tid (below 2^22) and every merged one of the first 511 inputs
 * (docs/convert-json.md). Memory grows with the number of such koids only. */
#ifndef FXTRACE_TRACE_JSON_KOIDS_H_
#define FXTRACE_TRACE_JSON_KOIDS_H_

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define JSON_KOID_LIMIT (UINT64_C(1) << 32)  /* koids below are written as they are */
#define JSON_KOID_FIRST UINT64_C(0x7fffffff) /* the first synthetic id, 2^31 - 1 */
/* The last one (2^31 - 2^22), shared by every koid past it or when the table
 * cannot grow. */
#define JSON_KOID_LAST UINT64_C(0x7fc00000)

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
