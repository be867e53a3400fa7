/* `trace merge A.fxt B.fxt ... -o OUT [--host-names=a,b,...]
 *  [--align=anchor|first] [--order-memory=SIZE]` (docs/merge.md): archives
 * recorded separately, on different hosts, merged into one archive on one
 * timeline, through the ordered view (one input per archive), in bounded
 * memory. Each input is read twice: once for its anchor, once to merge. */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "merge/merge.h"
#include "trace/archive_writer.h"
#include "trace/cli.h"

static const char kUsage[] =
    "usage: trace merge FILE FILE... -o OUT [--host-names=NAME,NAME,...]\n"
    "                   [--align=anchor|first] [--order-memory=SIZE]\n"
    "\n"
    "Merges FXT archives recorded on different hosts into one archive on one timeline,\n"
    "aligned by the wall-clock anchors trace record writes (as good as the hosts'\n"
    "NTP/PTP synchronization). Each host's processes and threads keep koids of their\n"
    "own and are named \"HOST: NAME\", as are its providers; its CPUs become CPU lanes\n"
    "of their own. Flow and async ids pass through unchanged.\n"
    "\n"
    "  -o, --output=OUT            the merged archive (.zst/.gz: compressed; - stdout)\n"
    "      --host-names=LIST       one name per input, in order (default: the hostname\n"
    "                              in each archive's anchor; the file's base name when\n"
    "                              it has none or two inputs share it)\n"
    "      --align=anchor|first    anchor (default): by the wall-clock anchors; first:\n"
    "                              by each archive's earliest timestamp (for archives\n"
    "                              without anchors; their relative timing is lost)\n"
    "      --order-memory=SIZE     memory for putting records in time order (default\n"
    "                              64M; beyond it through a temporary file in TMPDIR)\n"
    "  -h, --help                  this help\n";

typedef struct merge_options {
  const char* output;
  char* host_names; /* the --host-names value, split in place */
  bool align_first;
  size_t order_memory;
  char** inputs;
  size_t input_count;
} merge_options_t;

/* 0: parsed; -1: --help printed; else the exit status. */
static int parse_options(int argc, char** argv, merge_options_t* o) {
  static const struct option kLong[] = {
      {"output", required_argument, NULL, 'o'}, {"host-names", required_argument, NULL, 'n'},
      {"align", required_argument, NULL, 'a'},  {"order-memory", required_argument, NULL, 'm'},
      {"help", no_argument, NULL, 'h'},         {NULL, 0, NULL, 0}};
  memset(o, 0, sizeof(*o));
  optind = 1;
  opterr = 0;
  int c, rc;
  while ((c = getopt_long(argc, argv, ":o:h", kLong, NULL)) != -1) {
    switch (c) {
      case 'o':
        o->output = optarg;
        break;
      case 'n':
        o->host_names = optarg;
        break;
      case 'a':
        if (strcmp(optarg, "first") == 0)
          o->align_first = true;
        else if (strcmp(optarg, "anchor") != 0)
          return cli__usage_error("merge", "--align: expected anchor or first, not '%s'", optarg);
        break;
      case 'm':
        if ((rc = cli__parse_order_memory("merge", optarg, &o->order_memory)) != 0) return rc;
        break;
      case 'h':
        fputs(kUsage, stdout);
        return -1;
      case ':':
        return cli__usage_error("merge", "option '%s' needs a value", argv[optind - 1]);
      default:
        return cli__usage_error("merge", "unknown option '%s'", argv[optind - 1]);
    }
  }
  if (!o->output) return cli__usage_error("merge", "missing the output: -o OUT");
  o->inputs = argv + optind;
  o->input_count = (size_t)(argc - optind);
  if (o->input_count == 0) return cli__usage_error("merge", "missing the input FILEs");
  if (o->input_count > MERGE_MAX_INPUTS)
    return cli__usage_error("merge", "at most %u inputs", MERGE_MAX_INPUTS);
  for (size_t i = 0; i < o->input_count; i++)
    if (strcmp(o->inputs[i], "-") == 0)
      return cli__usage_error("merge",
                              "an input cannot be standard input: merge reads each "
                              "input twice (its anchor, then its records)");
  return 0;
}

/* The file's base name without .fxt, .zst, .gz. */
static void base_name(const char* path, char* out, size_t size) {
  const char* slash = strrchr(path, '/');
  snprintf(out, size, "%s", slash ? slash + 1 : path);
  static const char* const kExt[] = {".zst", ".gz", ".fxt"};
  for (size_t i = 0; i < 3; i++) {
    size_t n = strlen(out), e = strlen(kExt[i]);
    if (n > e && strcmp(out + n - e, kExt[i]) == 0) out[n - e] = '\0';
  }
}

typedef struct merge_input {
  merge_anchor_t anchor;
  char name[256];
  char note[128];
} merge_input_t;

static int name_hosts(merge_options_t* o, merge_input_t* in) {
  if (o->host_names) {
    size_t i = 0;
    for (char *save = NULL, *t = strtok_r(o->host_names, ",", &save); t;
         t = strtok_r(NULL, ",", &save), i++)
      if (i < o->input_count) snprintf(in[i].name, sizeof(in[i].name), "%s", t);
    if (i != o->input_count)
      return cli__usage_error("merge", "--host-names: %zu names for %zu inputs", i, o->input_count);
  } else {
    for (size_t i = 0; i < o->input_count; i++) {
      bool shared = !in[i].anchor.hostname[0];
      for (size_t j = 0; j < o->input_count && !shared; j++)
        shared = j != i && strcmp(in[i].anchor.hostname, in[j].anchor.hostname) == 0;
      if (shared)
        base_name(o->inputs[i], in[i].name, sizeof(in[i].name));
      else
        snprintf(in[i].name, sizeof(in[i].name), "%s", in[i].anchor.hostname);
    }
  }
  for (size_t i = 0; i < o->input_count; i++)
    for (size_t j = 0; j < i; j++)
      if (strcmp(in[i].name, in[j].name) == 0)
        return cli__usage_error("merge", "two inputs are named '%s': give --host-names",
                                in[i].name);
  return 0;
}

/* Each input's shift: anchors put every host on the clock of the one whose
 * (realtime - trace clock) is smallest, whose times stay as they are, so no
 * shift is negative; --align=first makes every earliest timestamp the
 * latest one. */
static int compute_shifts(const merge_options_t* o, const merge_input_t* in, merge_host_t* hosts) {
  if (o->align_first) {
    uint64_t target = 0;
    for (size_t i = 0; i < o->input_count; i++)
      if (in[i].anchor.have_first && in[i].anchor.first_ns > target) target = in[i].anchor.first_ns;
    for (size_t i = 0; i < o->input_count; i++)
      hosts[i].clock.shift_ns =
          (int64_t)(in[i].anchor.have_first ? target - in[i].anchor.first_ns : 0);
    cli__warning("merge",
                 "aligned by each archive's earliest timestamp (--align=first): events "
                 "of different hosts are not in their real order");
    return 0;
  }
  int64_t base = INT64_MAX;
  int64_t* delta = calloc(o->input_count, sizeof(*delta));
  if (!delta) {
    cli__error("merge", "out of memory");
    return EXIT_FAILED;
  }
  for (size_t i = 0; i < o->input_count; i++) {
    delta[i] = (int64_t)(in[i].anchor.realtime_ns - in[i].anchor.trace_ns);
    if (delta[i] < base) base = delta[i];
  }
  for (size_t i = 0; i < o->input_count; i++) hosts[i].clock.shift_ns = delta[i] - base;
  free(delta);
  return 0;
}

int cmd__merge(int argc, char** argv) {
  merge_options_t o;
  int rc = parse_options(argc, argv, &o);
  if (rc != 0) return rc < 0 ? EXIT_OK : rc;
  merge_input_t* in = calloc(o.input_count, sizeof(*in));
  merge_host_t* hosts = calloc(o.input_count, sizeof(*hosts));
  if (!in || !hosts) {
    cli__error("merge", "out of memory");
    free(in);
    free(hosts);
    return EXIT_FAILED;
  }
  rc = EXIT_OK;
  for (size_t i = 0; rc == EXIT_OK && i < o.input_count; i++) {
    if (!merge__scan_anchor(o.inputs[i], o.align_first, &in[i].anchor)) {
      rc = EXIT_FAILED;
    } else if (!o.align_first && !in[i].anchor.found) {
      cli__error("merge",
                 "%s has no wall-clock anchor (an archive trace record or file mode wrote "
                 "before anchors existed, or another writer's): --align=first aligns the "
                 "archives by their earliest timestamps instead",
                 o.inputs[i]);
      rc = EXIT_FAILED;
    }
  }
  if (rc == EXIT_OK) rc = name_hosts(&o, in);
  for (size_t i = 0; i < o.input_count; i++) hosts[i].name = in[i].name;
  if (rc == EXIT_OK) rc = compute_shifts(&o, in, hosts);
  const char** notes = calloc(o.input_count, sizeof(*notes));
  if (rc == EXIT_OK && !notes) {
    cli__error("merge", "out of memory");
    rc = EXIT_FAILED;
  }
  for (size_t i = 0; rc == EXIT_OK && i < o.input_count; i++) {
    snprintf(in[i].note, sizeof(in[i].note),
             "shifted by %" PRId64 " ns (anchor uncertainty %" PRIu64 " ns)",
             hosts[i].clock.shift_ns, in[i].anchor.uncertainty_ns);
    notes[i] = in[i].note;
  }
  if (rc == EXIT_OK) {
    /* each input named by its path in messages, its note after the path */
    char** full = calloc(o.input_count, sizeof(*full));
    for (size_t i = 0; full && i < o.input_count; i++)
      if (asprintf(&full[i], "%s, %s", o.inputs[i], in[i].note) < 0) full[i] = NULL;
    for (size_t i = 0; full && i < o.input_count; i++)
      if (full[i]) notes[i] = full[i];
    merge_job_t job = {
        .cmd = "merge",
        .output = o.output,
        .codec = strcmp(o.output, "-") == 0 ? COMPRESS_NONE : compress__codec_for_name(o.output),
        .order_memory = o.order_memory,
        .count = o.input_count,
        .paths = (const char* const*)o.inputs,
        .labels = (const char* const*)o.inputs,
        .notes = notes,
        .hosts = hosts,
    };
    rc = merge__run(&job);
    for (size_t i = 0; full && i < o.input_count; i++) free(full[i]);
    free(full);
  }
  free(notes);
  free(in);
  free(hosts);
  return rc;
}
