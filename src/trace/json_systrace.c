/* Kernel data as a systrace string for `trace convert` (see json_systrace.h). */
#include "trace/json_systrace.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "trace/cli.h"
#include "trace/thread_names.h"
#include "trace/timestamp.h"

/* Appends text escaped for the inside of a JSON string; a task name's
 * spaces and '=' become '_' so that the key=value fields stay parseable,
 * and bytes outside printable ASCII become '?'. */
static void put(json_systrace_t* s, const char* text, bool name) {
  for (const unsigned char* p = (const unsigned char*)text; *p; p++) {
    unsigned char c = *p;
    if (name && (c == ' ' || c == '=')) c = '_';
    if (c == '"' || c == '\\')
      fprintf(s->tmp, "\\%c", c);
    else if (c == '\n')
      fputs("\\n", s->tmp);
    else if (c < 0x20 || c >= 0x7f)
      fputc('?', s->tmp);
    else
      fputc(c, s->tmp);
  }
}

static bool begin_line(json_systrace_t* s) {
  if (s->failed) return false;
  if (!s->tmp) {
    s->tmp = cli__temporary_file();
    if (!s->tmp) {
      s->failed = true;
      return false;
    }
    fputs("# tracer: nop\\n", s->tmp);
  }
  s->lines++;
  return true;
}

static void task_name(char* out, size_t size, uint64_t tid, uint32_t cpu) {
  const char* name = thread_names__get(tid);
  if (tid == 0)
    snprintf(out, size, "swapper/%u", cpu);
  else
    snprintf(out, size, "%s", name && *name ? name : "<...>");
}

/* `comm-tid (tgid) [cpu] .... seconds: event: ` */
static void prefix(json_systrace_t* s, uint64_t tid, uint64_t tgid, uint32_t cpu, uint64_t ns,
                   const char* event) {
  char name[64], line[160];
  task_name(name, sizeof(name), tid, cpu);
  put(s, name, true);
  char process[24] = "-----"; /* ftrace's own mark for an unknown tgid */
  if (tgid != 0 || tid == 0) snprintf(process, sizeof(process), "%" PRIu64, tgid);
  snprintf(line, sizeof(line), "-%" PRIu64 " (%s) [%03u] .... %" PRIu64 ".%09" PRIu64 ": %s: ", tid,
           process, cpu, ns / 1000000000u, ns % 1000000000u, event);
  put(s, line, false);
}

static const char* state_letter(uint32_t state) {
  switch (state) {
    case 0:
      return "R+"; /* preempted (FXT "new", see docs/kernel-provider.md) */
    case 1:
      return "R";
    case 2:
      return "T";
    case 3:
      return "S";
    case 4:
      return "Z";
    default:
      return "X";
  }
}

static uint32_t prio_or(uint32_t prio, uint64_t tid) { return tid == 0 ? 120 : prio ? prio : 120; }

static const trace_reader_arg_t* arg(const trace_reader_args_t* args, const char* name) {
  for (size_t i = 0; i < args->count; i++)
    if (args->items[i].name.length == strlen(name) &&
        memcmp(args->items[i].name.data, name, args->items[i].name.length) == 0)
      return &args->items[i];
  return NULL;
}

/* A thread's prio from a scheduling record's weight argument (int32): our
 * kernel provider writes the kernel's prio as the weight and INT32_MIN for
 * idle (docs/kernel-provider.md); 120 (nice 0) when absent or out of range. */
static uint32_t prio_of_weight(const trace_reader_args_t* args, const char* name, uint64_t tid) {
  const trace_reader_arg_t* w = arg(args, name);
  if (tid == 0 || !w || w->type != 1 || w->int32_value < 0 || w->int32_value > 255) return 120;
  return (uint32_t)w->int32_value;
}

void json_systrace__scheduling(json_systrace_t* s, const trace_record_t* r) {
  const __typeof__(r->scheduling)* k = &r->scheduling;
  if (k->sched_type > 2 || !begin_line(s)) return;
  uint64_t ns = timestamp__ticks_to_ns(k->ticks, r->provider->ticks_per_second);
  char prev[64], next[64], line[256];
  if (k->sched_type == 2) { /* a wakeup record: the waker, when known, is its `waker` koid */
    uint64_t tid = k->incoming_thread_koid;
    const trace_reader_arg_t* waker = arg(&k->args, "waker");
    prefix(s, waker && waker->type == 8 ? waker->koid_value : 0, 0, k->cpu, ns, "sched_waking");
    task_name(next, sizeof(next), tid, k->cpu);
    fputs("comm=", s->tmp);
    put(s, next, true);
    snprintf(line, sizeof(line), " pid=%" PRIu64 " prio=120 target_cpu=%03u", tid, k->cpu);
    put(s, line, false);
    fputs("\\n", s->tmp);
    return;
  }
  uint64_t out = k->outgoing_thread_koid, in = k->incoming_thread_koid;
  /* sub-type 1 carries no process (prefix() then writes ftrace's "-----")
   * and the priorities as weights */
  uint32_t out_prio = k->sched_type == 1 ? prio_of_weight(&k->args, "outgoing_weight", out)
                                         : prio_or(k->outgoing_priority, out);
  uint32_t in_prio = k->sched_type == 1 ? prio_of_weight(&k->args, "incoming_weight", in)
                                        : prio_or(k->incoming_priority, in);
  prefix(s, out, k->outgoing_process_koid, k->cpu, ns, "sched_switch");
  task_name(prev, sizeof(prev), out, k->cpu);
  task_name(next, sizeof(next), in, k->cpu);
  fputs("prev_comm=", s->tmp);
  put(s, prev, true);
  snprintf(line, sizeof(line),
           " prev_pid=%" PRIu64 " prev_prio=%u prev_state=%s ==> next_comm=", out, out_prio,
           state_letter(k->outgoing_state));
  put(s, line, false);
  put(s, next, true);
  snprintf(line, sizeof(line), " next_pid=%" PRIu64 " next_prio=%u", in, in_prio);
  put(s, line, false);
  fputs("\\n", s->tmp);
}

static bool is(const trace_reader_string_t* s, const char* text) {
  return s->length == strlen(text) && memcmp(s->data, text, s->length) == 0;
}

void json_systrace__instant(json_systrace_t* s, const trace_record_t* r) {
  const __typeof__(r->event)* e = &r->event;
  if (e->event_type != 0 || !is(&e->category, "kernel:sched") ||
      !(is(&e->name, "sched_waking") || is(&e->name, "sched_wakeup") ||
        is(&e->name, "sched_wakeup_new")))
    return;
  const trace_reader_arg_t* cpu = arg(&e->args, "cpu");
  const trace_reader_arg_t* prio = arg(&e->args, "prio");
  const trace_reader_arg_t* waker = arg(&e->args, "waker_tid");
  uint32_t target = cpu && cpu->type == 2 ? cpu->uint32_value : 0;
  uint64_t waker_tid = waker && waker->type == 8 ? waker->koid_value : 0;
  if (!begin_line(s)) return;
  uint64_t ns = timestamp__ticks_to_ns(e->ticks, r->provider->ticks_per_second);
  char name[96], line[160];
  snprintf(name, sizeof(name), "%.*s", (int)e->name.length, e->name.data);
  prefix(s, waker_tid, 0, target, ns, name);
  task_name(name, sizeof(name), e->thread_koid, target);
  fputs("comm=", s->tmp);
  put(s, name, true);
  snprintf(line, sizeof(line), " pid=%" PRIu64 " prio=%d target_cpu=%03u", e->thread_koid,
           prio && prio->type == 1 ? prio->int32_value : 120, target);
  put(s, line, false);
  fputs("\\n", s->tmp);
}

void json_systrace__finish(json_systrace_t* s, json_writer_t* out) {
  if (!s->tmp || s->lines == 0) {
    json__text(out, "]");
  } else {
    json__text(out, "],\n\"systemTraceEvents\":\"");
    rewind(s->tmp);
    char buf[65536];
    size_t n;
    while ((n = fread(buf, 1, sizeof(buf), s->tmp)) > 0) json__raw(out, buf, n);
    json__text(out, "\"");
  }
  if (s->tmp) fclose(s->tmp);
  s->tmp = NULL;
  thread_names__free();
}
