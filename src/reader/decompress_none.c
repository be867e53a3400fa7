/* The decompression entry points (decompress.h) without codecs: the form
 * built into libfxtrace, so that the instrumentation library traced programs
 * link depends on no compression library. A compressed archive is then
 * reported as such (input.c) instead of being misread as damaged FXT;
 * libtrace-reader and `trace` read it. */
#include <stdlib.h>

#include "reader/decompress.h"

bool decompress__supported(void) { return false; }

decompress_t* decompress__create(decompress_codec_t codec) {
  (void)codec;
  return NULL;
}

void decompress__free(decompress_t* d) { (void)d; }

ptrdiff_t decompress__step(decompress_t* d, const unsigned char* in, size_t in_size, size_t* used,
                           unsigned char* out, size_t out_size) {
  (void)d, (void)in, (void)in_size, (void)out, (void)out_size;
  *used = 0;
  return -1;
}

bool decompress__at_boundary(const decompress_t* d) {
  (void)d;
  return true;
}

const char* decompress__message(const decompress_t* d) {
  (void)d;
  return "this reader was built without decompression";
}
