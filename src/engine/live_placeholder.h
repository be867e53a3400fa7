/* Not part of the public API: the placeholder file mode leaves in
 * FXTRACE_OUTPUT while a program traces (docs/file-mode.md).
 *
 * The live trace buffer is a file in shared memory (/dev/shm or
 * FXTRACE_SHM_DIR); the output file holds, until the archive replaces it:
 *
 *   [0, LIVE_PLACEHOLDER_BYTES)   text: the magic line, then "buffer PATH\n"
 *                                 naming the live buffer, "pid N\n" and a
 *                                 hint for humans; zero padding
 *   [LIVE_PLACEHOLDER_BYTES, ...) streaming: the saved rolling buffers, the
 *                                 buffer header's streamed_bytes long
 *
 * The raw buffer image the readers recover (recover.h) is the live buffer
 * followed by those streamed bytes: exactly the raw file earlier versions
 * left behind, so one recovery serves both. Header-only: the provider
 * writes it, `trace` reads it. */
#ifndef FXTRACE_ENGINE_LIVE_PLACEHOLDER_H_
#define FXTRACE_ENGINE_LIVE_PLACEHOLDER_H_

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

enum { LIVE_PLACEHOLDER_BYTES = 4096 };

/* The first line of a placeholder (8 bytes, so readers test one word). */
#define LIVE_PLACEHOLDER_MAGIC "FXTLIVE\n"
#define LIVE_PLACEHOLDER_BUFFER_KEY "\nbuffer "

static inline bool live_placeholder__is(const void* data, size_t size) {
  return size >= 8 && memcmp(data, LIVE_PLACEHOLDER_MAGIC, 8) == 0;
}

/* Copies the live buffer's path out of a placeholder's first `size` bytes
 * into out[out_size]. false when there is none (or it does not fit). The
 * path must be absolute; the bytes are untrusted. */
static inline bool live_placeholder__buffer_path(const char* data, size_t size, char* out,
                                                 size_t out_size) {
  if (size > LIVE_PLACEHOLDER_BYTES) size = LIVE_PLACEHOLDER_BYTES;
  const size_t key_len = sizeof(LIVE_PLACEHOLDER_BUFFER_KEY) - 1;
  for (size_t i = 0; i + key_len < size; i++) {
    if (memcmp(data + i, LIVE_PLACEHOLDER_BUFFER_KEY, key_len) != 0) continue;
    const char* p = data + i + key_len;
    const char* end = memchr(p, '\n', size - i - key_len);
    if (!end || end == p || p[0] != '/' || (size_t)(end - p) >= out_size) return false;
    if (memchr(p, '\0', (size_t)(end - p))) return false;
    memcpy(out, p, (size_t)(end - p));
    out[end - p] = '\0';
    return true;
  }
  return false;
}

#endif /* FXTRACE_ENGINE_LIVE_PLACEHOLDER_H_ */
