/* `trace dump`: one readable line per FXT record, then counts by type. */
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "trace-reader/formats.h"
#include "trace-reader/reader.h"
#include "trace/cli.h"
#include "trace/text_escape.h"
#include "trace/thread_names.h"
#include "trace/time_range.h"
#include "trace/timestamp.h"

static const char kUsage[] =
    "Usage: trace dump FILE [--time-range=START,END]\n"
    "\n"
    "Prints every record of the FXT archive FILE ('-' for stdin) on one line: type,\n"
    "timestamp in seconds and ticks, provider, category, name, thread and arguments;\n"
    "then a count of records by type. A typed event (TRACE_EVENT(), kernel\n"
    "SYSTEM/EVENT) whose format is in the archive is printed as \"NAME: TEXT\" with TEXT\n"
    "from its print format (docs/trace-event.md), escaped as strings are. A record whose\n"
    "size field covers words its header does not describe is printed with a warning on\n"
    "stderr (its offset, the words skipped) and counted at the end. Exit status: 0 on\n"
    "success, 1 if the archive is damaged (the records before the damage are printed), 2\n"
    "on a usage error.\n"
    "\n"
    "  --time-range=START,END  only timestamped records between START and END\n"
    "                          seconds from the trace's start (either may be empty;\n"
    "                          records without a timestamp are always printed)\n"
    "\n"
    "FILE may also be the raw trace buffer that a program traced in file mode leaves\n"
    "when it crashes or is killed: its records are recovered, with a warning on\n"
    "stderr (exit status 0; offsets are then those of the recovered archive).\n";

static const char* const kSchedNames[] = {"context-switch (legacy)", "context-switch",
                                          "thread-wakeup"};
static const char* const kMetadataNames[] = {"?", "provider-info", "provider-section",
                                             "provider-event", "trace-info"};

static const char* kernel_object_type_name(uint32_t type) {
  return type == 1 ? "process" : type == 2 ? "thread" : "other";
}

/* Text from the archive, escaped so that a record stays on one line and no
 * control character reaches the terminal. String arguments and typed
 * events' rendered text both go through here. */
static void put_escaped(FILE* out, const char* data, size_t length) {
  text__put_escaped(out, data, length, NULL, true);
}

/* Strings are quoted and escaped. */
static void put_string(FILE* out, const trace_reader_string_t* s) {
  fputc('"', out);
  put_escaped(out, s->data, s->length);
  fputc('"', out);
}

static void put_time(FILE* out, uint64_t ticks, const trace_reader_provider_t* p) {
  char buf[32];
  timestamp__format_seconds(buf, timestamp__ticks_to_ns(ticks, p->ticks_per_second));
  fprintf(out, " ts=%ss (%" PRIu64 " ticks)", buf, ticks);
}

static void put_arg(FILE* out, const trace_reader_arg_t* a) {
  fputc(' ', out);
  put_string(out, &a->name);
  fprintf(out, "=%s:", trace_arg_type_name(a->type));
  switch (a->type) {
    case 0:
      fputs("null", out);
      break;
    case 1:
      fprintf(out, "%" PRId32, a->int32_value);
      break;
    case 2:
      fprintf(out, "%" PRIu32, a->uint32_value);
      break;
    case 3:
      fprintf(out, "%" PRId64, a->int64_value);
      break;
    case 4:
      fprintf(out, "%" PRIu64, a->uint64_value);
      break;
    case 5:
      fprintf(out, "%.17g", a->double_value);
      break;
    case 6:
      put_string(out, &a->string_value);
      break;
    case 7:
      fprintf(out, "0x%" PRIx64, a->pointer_value);
      break;
    case 8:
      fprintf(out, "%" PRIu64, a->koid_value);
      break;
    case 9:
      fputs(a->bool_value ? "true" : "false", out);
      break;
    case 10:
      fprintf(out, "%" PRIu32 "-bytes", a->blob_value.size);
      break;
    default:
      fputs("?", out);
      break;
  }
}

static void put_args(FILE* out, const trace_reader_args_t* args) {
  if (args->count == 0) return;
  fputs(" args:", out);
  for (size_t i = 0; i < args->count; i++) put_arg(out, &args->items[i]);
}

static void put_thread(FILE* out, uint64_t pid, uint64_t tid) {
  fprintf(out, " thread=%" PRIu64 "/%" PRIu64, pid, tid);
}

static void put_cat_name(FILE* out, const trace_reader_string_t* cat,
                         const trace_reader_string_t* name) {
  fputs(" cat=", out);
  put_string(out, cat);
  fputs(" name=", out);
  put_string(out, name);
}

static void dump_metadata(FILE* out, const trace_record_t* r) {
  uint32_t t = r->metadata.type;
  fprintf(out, " %s", t < 5 ? kMetadataNames[t] : "?");
  if (t == 4) {
    fprintf(out, r->metadata.trace_info_type == 0 ? " magic-number 0x%" PRIx64 : " type=%" PRIu64,
            r->metadata.trace_info_type == 0 ? r->metadata.magic
                                             : (uint64_t)r->metadata.trace_info_type);
    return;
  }
  fprintf(out, " id=%" PRIu32, r->metadata.provider_id);
  if (t == 1 || t == 2) {
    fputs(" name=", out);
    put_string(out, &r->metadata.provider_name);
  }
  if (t == 3) fprintf(out, " event=%s", r->metadata.event_id == 0 ? "buffer-overflow" : "unknown");
}

static void dump_event(FILE* out, const trace_record_t* r) {
  const __typeof__(r->event)* e = &r->event;
  static const char* const kScopes[] = {"thread", "process", "global"};
  fprintf(out, " %s", trace_event_type_name(e->event_type));
  put_time(out, e->ticks, r->provider);
  put_cat_name(out, &e->category, &e->name);
  put_thread(out, e->process_koid, e->thread_koid);
  put_args(out, &e->args);
  switch (e->event_type) {
    case 0:
      fprintf(out, " scope=%s", kScopes[e->scope < 3 ? e->scope : 0]);
      break;
    case 1:
      fprintf(out, " counter-id=%" PRIu64, e->payload);
      break;
    case 2:
    case 3:
      break;
    case 4:
      fputs(" end", out);
      put_time(out, e->payload, r->provider);
      break;
    default:
      fprintf(out, " id=0x%" PRIx64, e->payload);
      break;
  }
}

static void dump_scheduling(FILE* out, const trace_record_t* r) {
  const __typeof__(r->scheduling)* s = &r->scheduling;
  fprintf(out, " %s", s->sched_type < 3 ? kSchedNames[s->sched_type] : "?");
  put_time(out, s->ticks, r->provider);
  fprintf(out, " cpu=%" PRIu32, s->cpu);
  if (s->sched_type == 2) {
    fprintf(out, " thread=%" PRIu64, s->incoming_thread_koid);
  } else {
    fprintf(out, " out=%" PRIu64 "/%" PRIu64 " state=%" PRIu32 " in=%" PRIu64 "/%" PRIu64,
            s->outgoing_process_koid, s->outgoing_thread_koid, s->outgoing_state,
            s->incoming_process_koid, s->incoming_thread_koid);
    if (s->sched_type == 0)
      fprintf(out, " out-prio=%" PRIu32 " in-prio=%" PRIu32, s->outgoing_priority,
              s->incoming_priority);
    thread_names__switch(out, r);
  }
  put_args(out, &s->args);
}

static void dump_large(FILE* out, const trace_record_t* r) {
  const __typeof__(r->large)* l = &r->large;
  fprintf(out, " blob-%s", l->blob_format == 0 ? "event" : "attachment");
  if (l->blob_format == 0) put_time(out, l->ticks, r->provider);
  put_cat_name(out, &l->category, &l->name);
  if (l->blob_format == 0) put_thread(out, l->process_koid, l->thread_koid);
  put_args(out, &l->args);
  fprintf(out, " size=%zu", l->size);
}

/* A typed event: the line's head, then "NAME: " and its print format's text
 * instead of the arguments. */
static void dump_typed_event(FILE* out, const trace_record_t* r, const trace_event_format_t* f) {
  static char text[TRACE_FORMAT_MAX_TEXT + 1];
  const __typeof__(r->event)* e = &r->event;
  fprintf(out, "%-16s provider=%" PRIu32 " %s", trace_record_type_name(r->type), r->provider->id,
          trace_event_type_name(e->event_type));
  put_time(out, e->ticks, r->provider);
  put_cat_name(out, &e->category, &e->name);
  put_thread(out, e->process_koid, e->thread_koid);
  size_t length;
  trace_format_render_text(f, r, text, sizeof(text), &length);
  fputc(' ', out);
  put_escaped(out, f->name, strlen(f->name));
  fputs(": ", out);
  put_escaped(out, text, length);
  fputc('\n', out);
}

static void dump_record(FILE* out, const trace_record_t* r) {
  fprintf(out, "%-16s provider=%" PRIu32, trace_record_type_name(r->type), r->provider->id);
  switch (r->type) {
    case 0:
      dump_metadata(out, r);
      break;
    case 1:
      fprintf(out, " ticks-per-second=%" PRIu64, r->initialization.ticks_per_second);
      break;
    case 2:
      fprintf(out, " index=%" PRIu32 " ", r->string.index);
      put_string(out, &r->string.value);
      break;
    case 3:
      fprintf(out, " index=%" PRIu32, r->thread.index);
      put_thread(out, r->thread.process_koid, r->thread.thread_koid);
      break;
    case 4:
      dump_event(out, r);
      break;
    case 5:
      fprintf(out, " type=%" PRIu32 " size=%zu name=", r->blob.blob_type, r->blob.size);
      put_string(out, &r->blob.name);
      break;
    case 6:
      fprintf(out, " pointer=0x%" PRIx64 " process=%" PRIu64 " name=", r->userspace_object.pointer,
              r->userspace_object.process_koid);
      put_string(out, &r->userspace_object.name);
      put_args(out, &r->userspace_object.args);
      break;
    case 7:
      fprintf(out, " koid=%" PRIu64 " type=%s name=", r->kernel_object.koid,
              kernel_object_type_name(r->kernel_object.object_type));
      put_string(out, &r->kernel_object.name);
      put_args(out, &r->kernel_object.args);
      break;
    case 8:
      dump_scheduling(out, r);
      break;
    case 9:
      put_time(out, r->log.ticks, r->provider);
      put_thread(out, r->log.process_koid, r->log.thread_koid);
      fputs(" message=", out);
      put_string(out, &r->log.message);
      break;
    case 15:
      dump_large(out, r);
      break;
  }
  fputc('\n', out);
}

static int dump(const char* path, trace_reader_t* reader, time_range_t* range) {
  uint64_t by_type[16] = {0};
  cli_warnings_t warnings = {"dump", path, 0};
  trace_record_t record;
  int rc;
  trace_format_set_t* formats = trace_format_set_new();
  while ((rc = trace_reader_next(reader, &record)) != TRACE_READ_END && rc != TRACE_READ_ERROR) {
    if (rc == TRACE_READ_RECORD) {
      cli__note_warning(&warnings, reader);
      thread_names__note(&record);
      if (!time_range__keep(range, &record)) continue;
      const trace_event_format_t* format = trace_format_set_find_event(formats, &record);
      if (format)
        dump_typed_event(stdout, &record, format);
      else
        dump_record(stdout, &record);
      by_type[record.type & 15]++;
      trace_reader_error_t format_error;
      if (trace_format_set_add_record(formats, &record, &format_error) < 0)
        printf("%-16s offset=%" PRIu64 " bad format: %s\n", "skipped", format_error.offset,
               format_error.message);
    } else {
      trace_reader_error_t e = trace_reader_error(reader);
      printf("%-16s offset=%" PRIu64 " %s\n", "skipped", e.offset, e.message);
    }
  }
  trace_format_set_free(formats);
  trace_reader_stats_t stats = trace_reader_stats(reader);
  cli__warnings_done(&warnings);
  cli__warn_if_recovered(path, reader);
  printf("-- %" PRIu64 " records, %" PRIu64 " skipped, %" PRIu64 " bytes\n", stats.records,
         stats.records_skipped, stats.bytes_read);
  if (warnings.count)
    printf("-- %" PRIu64 " of them with a size field past their contents (words skipped)\n",
           warnings.count);
  for (unsigned t = 0; t < 16; t++)
    if (by_type[t]) printf("--   %-16s %" PRIu64 "\n", trace_record_type_name(t), by_type[t]);
  if (fflush(stdout) != 0 || ferror(stdout)) {
    cli__error("dump", "writing standard output failed");
    return EXIT_FAILED;
  }
  if (rc == TRACE_READ_ERROR) {
    trace_reader_error_t e = trace_reader_error(reader);
    cli__error("dump", "%s: at byte offset %" PRIu64 ": %s", path, e.offset, e.message);
    return EXIT_FAILED;
  }
  return EXIT_OK;
}

int cmd__dump(int argc, char** argv) {
  static const struct option kLong[] = {{"help", no_argument, NULL, 'h'},
                                        {"time-range", required_argument, NULL, 'r'},
                                        {NULL, 0, NULL, 0}};
  time_range_t range = {0};
  int opt;
  opterr = 0;
  optind = 1;
  while ((opt = getopt_long(argc, argv, ":h", kLong, NULL)) != -1) {
    if (opt == 'h') {
      fputs(kUsage, stdout);
      return EXIT_OK;
    }
    if (opt == 'r' && time_range__parse(optarg, &range) == 0) continue;
    if (opt == 'r')
      return cli__usage_error("dump", "--time-range: expected START,END in seconds, not '%s'",
                              optarg);
    if (opt == ':') return cli__usage_error("dump", "option '%s' needs a value", argv[optind - 1]);
    return cli__usage_error("dump", "unknown option '%s'", argv[optind - 1]);
  }
  if (optind != argc - 1)
    return cli__usage_error("dump",
                            optind == argc ? "missing the input FILE" : "expected one input FILE");
  int fd = cli__open_input("dump", argv[optind]);
  if (fd < 0) return EXIT_FAILED;
  trace_reader_t* reader = trace_reader_open_fd(fd, NULL);
  int rc = EXIT_FAILED;
  if (reader) rc = dump(argv[optind], reader, &range);
  thread_names__free();
  trace_reader_close(reader);
  if (fd != STDIN_FILENO) close(fd);
  return rc;
}
