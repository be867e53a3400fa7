/* libFuzzer target: the kernel provider's page converter (src/kernel/
 * kconvert.c) and field decoding (kevents.c) on damaged ftrace pages. The
 * input is one ring-buffer page as trace_pipe_raw gives it; the seeds are
 * real pages (fuzz/kernel-seeds, captured by capture_kernel_pages.sh) and the
 * event formats those pages use (fuzz/kernel-formats). Every event handed on
 * has each of its fields decoded and every byte of every string touched, so
 * ASan sees any read outside the page. */
#include <dirent.h>
#include <event-parse.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernel/kconvert.h"
#include "kernel/kevents.h"

#ifndef KERNEL_FORMATS_DIR
#define KERNEL_FORMATS_DIR "fuzz/kernel-formats"
#endif

static kev_table_t table;
static kconv_t conv;
static volatile unsigned sink_sum;

static void add_formats(void) {
  struct tep_handle* tep = tep_alloc();
  kev_table__init(&table, tep);
  DIR* d = opendir(KERNEL_FORMATS_DIR);
  if (!d) {
    fprintf(stderr, "fuzz_kernel_page: no formats in %s\n", KERNEL_FORMATS_DIR);
    abort();
  }
  struct dirent* e;
  while ((e = readdir(d)) != NULL) {
    if (e->d_name[0] == '.') continue;
    char path[512], text[16384];
    snprintf(path, sizeof(path), "%s/%s", KERNEL_FORMATS_DIR, e->d_name);
    FILE* f = fopen(path, "r");
    if (!f) continue;
    size_t n = fread(text, 1, sizeof(text) - 1, f);
    fclose(f);
    text[n] = '\0';
    const char* system = strncmp(e->d_name, "task_", 5) == 0  ? "task"
                         : strncmp(e->d_name, "sys_", 4) == 0 ? "syscalls"
                         : strstr(e->d_name, "irq") != NULL   ? "irq"
                                                              : "sched";
    if (tep_parse_event(tep, text, n, system) != 0) continue;
    kev_kind_t kind = KEV_GENERIC;
    if (strcmp(e->d_name, "sched_switch") == 0) kind = KEV_SWITCH;
    if (strcmp(e->d_name, "sched_waking") == 0 || strcmp(e->d_name, "sched_wakeup_new") == 0)
      kind = KEV_WAKEUP;
    if (strcmp(e->d_name, "irq_handler_entry") == 0) kind = KEV_IRQ_ENTRY;
    if (strcmp(e->d_name, "sched_process_fork") == 0) kind = KEV_FORK;
    kev_table__add(&table, system, e->d_name, kind, NULL);
  }
  closedir(d);
  if (kev_table__finish(&table) != 0 || kconv__init(&conv, 4096) != 0) abort();
}

static void touch(const char* p, size_t n) {
  for (size_t i = 0; i < n; i++) sink_sum += (unsigned char)p[i];
}

static void sink(void* arg, const kconv_event_t* e) {
  (void)arg;
  trace_arg_t args[KEV_MAX_FIELDS];
  static const trace_string_ref_t kNoNames[KEV_MAX_FIELDS];
  size_t n = kev__args(e->desc, kNoNames, e->data, e->size, args);
  for (size_t i = 0; i < n; i++)
    if (args[i].value.type == TRACE_ARG_STRING && args[i].value.string_value_ref.inline_string)
      touch(args[i].value.string_value_ref.inline_string,
            trace_inline_string_ref_length(&args[i].value.string_value_ref));
  for (int i = 0; i < 8; i++) {
    int64_t v;
    const char* bytes;
    size_t length;
    if (kev__int(e->desc->f[i], e->data, e->size, &v)) sink_sum += (unsigned)v;
    if (kev__bytes(e->desc->f[i], e->data, e->size, &bytes, &length)) touch(bytes, length);
  }
  sink_sum += (unsigned)kev__common_pid(&table, e->data, e->size);
  touch(e->data, e->size);
}

int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (!table.tep) add_formats();
  if (size > 4096) size = 4096;
  kconv__page(&conv, &table, 0, data, size, sink, NULL);
  return 0;
}
