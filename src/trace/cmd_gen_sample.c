/* `trace gen-sample` (hidden from --help): writes the sample archive, which
 * holds every record and argument type, for tests, benchmarks and demos. */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "trace/cli.h"
#include "trace/sample.h"

static const char kUsage[] =
    "Usage: trace gen-sample -o FILE [--repeat N]\n"
    "\n"
    "Writes a sample FXT archive holding every record type and argument type.\n"
    "--repeat N repeats its event section N times (for large test inputs).\n";

static int write_all(const char* path, const fxt_buffer_t* b) {
  FILE* f = strcmp(path, "-") == 0 ? stdout : fopen(path, "wbe");
  if (!f) {
    cli__error("gen-sample", "cannot write '%s': %s", path, strerror(errno));
    return EXIT_FAILED;
  }
  bool removable = f != stdout && cli__is_regular_file(f);
  size_t n = fwrite(b->words, sizeof(uint64_t), b->count, f);
  int err = n == b->count ? 0 : errno;
  if ((f == stdout ? fflush(f) : fclose(f)) != 0 && !err) err = errno;
  if (err) {
    cli__error("gen-sample", "writing '%s' failed: %s", path, strerror(err));
    if (removable) unlink(path);
    return EXIT_FAILED;
  }
  return EXIT_OK;
}

int cmd__gen_sample(int argc, char** argv) {
  static const struct option kLong[] = {{"output", required_argument, NULL, 'o'},
                                        {"repeat", required_argument, NULL, 'r'},
                                        {"help", no_argument, NULL, 'h'},
                                        {NULL, 0, NULL, 0}};
  const char* output = NULL;
  unsigned long long repeat = 1;
  char* end;
  int opt;
  opterr = 0;
  optind = 1;
  while ((opt = getopt_long(argc, argv, ":o:h", kLong, NULL)) != -1) {
    switch (opt) {
      case 'o':
        output = optarg;
        break;
      case 'r':
        errno = 0;
        repeat = strtoull(optarg, &end, 10);
        if (errno || *end || repeat == 0 || repeat > 100000000ull)
          return cli__usage_error("gen-sample", "--repeat needs a count from 1 to 100000000");
        break;
      case 'h':
        fputs(kUsage, stdout);
        return EXIT_OK;
      case ':':
        return cli__usage_error("gen-sample", "option '%s' needs a value", argv[optind - 1]);
      default:
        return cli__usage_error("gen-sample", "unknown option '%s'", argv[optind - 1]);
    }
  }
  if (!output || optind != argc)
    return cli__usage_error("gen-sample", "usage: -o FILE [--repeat N]");
  fxt_buffer_t b = {0};
  if (sample_archive__build(&b, repeat) != 0) {
    fxt_buffer_free(&b);
    cli__error("gen-sample", "out of memory");
    return EXIT_FAILED;
  }
  int rc = write_all(output, &b);
  fxt_buffer_free(&b);
  return rc;
}
