/* Recognizing a compressed archive by its magic (decompress.h). The codecs
 * themselves are in decompress_codecs.c (libtrace-reader, `trace`) or
 * decompress_none.c (libfxtrace: the instrumentation library links no
 * compression library). */
#include "reader/decompress.h"

#include <string.h>

decompress_codec_t decompress__detect(const unsigned char* p, size_t size) {
  static const unsigned char kZstd[4] = {0x28, 0xb5, 0x2f, 0xfd};
  static const unsigned char kGzip[3] = {0x1f, 0x8b, 0x08}; /* the last: deflate */
  if (size >= sizeof(kZstd) && memcmp(p, kZstd, sizeof(kZstd)) == 0) return DECOMPRESS_ZSTD;
  if (size >= sizeof(kGzip) && memcmp(p, kGzip, sizeof(kGzip)) == 0) return DECOMPRESS_GZIP;
  return DECOMPRESS_PLAIN;
}

const char* decompress__codec_name(decompress_codec_t codec) {
  return codec == DECOMPRESS_ZSTD ? "zstd" : codec == DECOMPRESS_GZIP ? "gzip" : "plain";
}
