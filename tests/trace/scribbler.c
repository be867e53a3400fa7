/* A traced program that damages its own trace buffer, for test_damaged_provider.py:
 *
 *   scribbler header|magic|version|none
 *
 * Records 100 instant events, then (header) zeroes the first 128 bytes of
 * the shared buffer the manager gave it, (magic) only the magic, (version)
 * flips the version, (none) leaves it alone; records 100 more and exits 0.
 * The buffer is found as the mapping of the memfd named "fxtrace-buffer" in
 * /proc/self/maps (src/manager/session.c names it). */
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <trace-provider/provider.h>
#include <trace/event.h>

static uint8_t* find_buffer(void) {
  FILE* maps = fopen("/proc/self/maps", "re");
  if (!maps) return NULL;
  char line[512];
  uint8_t* found = NULL;
  while (!found && fgets(line, sizeof(line), maps)) {
    unsigned long start, end;
    char perms[8];
    if (strstr(line, "memfd:fxtrace-buffer") &&
        sscanf(line, "%lx-%lx %7s", &start, &end, perms) == 3 && perms[1] == 'w')
      found = (uint8_t*)start;
  }
  fclose(maps);
  return found;
}

int main(int argc, char** argv) {
  const char* mode = argc == 2 ? argv[1] : "";
  if (strcmp(mode, "header") && strcmp(mode, "magic") && strcmp(mode, "version") &&
      strcmp(mode, "none")) {
    fputs("usage: scribbler header|magic|version|none\n", stderr);
    return 2;
  }
  trace_provider_t* provider = trace_provider_create_with_name("scribbler");
  for (int i = 0; i < 100; i++) TRACE_INSTANT("scribble", "before", TRACE_SCOPE_THREAD, "i", i);
  uint8_t* buffer = find_buffer();
  if (!buffer) {
    fputs("scribbler: no trace buffer is mapped (not traced through a manager?)\n", stderr);
    trace_provider_destroy(provider);
    return 1;
  }
  if (strcmp(mode, "header") == 0) memset(buffer, 0, 128);
  if (strcmp(mode, "magic") == 0) memset(buffer, 0, 8);
  if (strcmp(mode, "version") == 0) buffer[8] ^= 0xff;
  for (int i = 0; i < 100; i++) TRACE_INSTANT("scribble", "after", TRACE_SCOPE_THREAD, "i", i);
  trace_provider_destroy(provider);
  printf("scribbled %s\n", mode);
  return 0;
}
