/* Kernel data as a systrace string for `trace convert` (see json_systrace.h). */
#include "trace/json_systrace.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "trace/cli.h"
#include "trace/thread_names.h"
#include "trace/timestamp.h"

/* Escapes text for the inside of a JSON string into out (at most `size` - 1
 * bytes, whole escapes only); a task name's spaces and '=' become '_' so that
 * the key=value fields stay parseable, and bytes outside printable ASCII
 * become '?'. Returns the length. */
static size_t escape(const char* text, bool name, char* out, size_t size) {
  size_t n = 0;
  for (const unsigned char* p = (const unsigned char*)text; *p; p++) {
    unsigned char c = *p;
    if (name && (c == ' ' || c == '=')) c = '_';
    char piece[3] = {(char)c, 0, 0};
    if (c == '"' || c == '\\') {
      piece[0] = '\\';
      piece[1] = (char)c;
    } else if (c == '\n') {
      piece[0] = '\\';
      piece[1] = 'n';
    } else if (c < 0x20 || c >= 0x7f) {
      piece[0] = '?';
    }
    size_t length = strlen(piece);
    if (n + length >= size) break;
    memcpy(out + n, piece, length);
    n += length;
  }
  out[n] = '\0';
  return n;
}

/* Appends text escaped (escape()) to the temporary file. */
static void put(json_systrace_t* s, const char* text, bool name) {
  char escaped[512];
  while (*text) {
    /* in pieces: each piece's escapes whole */
    size_t take = strnlen(text, 128);
    char piece[129];
    memcpy(piece, text, take);
    piece[take] = '\0';
    escape(piece, name, escaped, sizeof(escaped));
    fputs(escaped, s->tmp);
    text += take;
  }
}

/* A task's name at `ns` is known only once the whole archive has been read
 * (the kernel's task events and the names section may come after the line
 * in the file): the line holds a mark, \x01TID NS\x02, replaced at the end
 * (json_systrace__finish) by thread_names__at(). Marks cannot be mistaken
 * for text: escape() turns every control byte into '?'. */
static void put_task(json_systrace_t* s, uint64_t tid, uint32_t cpu, uint64_t ns) {
  if (tid == 0)
    fprintf(s->tmp, "swapper/%u", cpu);
  else
    fprintf(s->tmp, "\x01%" PRIu64 " %" PRIu64 "\x02", tid, ns);
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

/* `comm-tid (tgid) [cpu] .... seconds: event: ` */
static void prefix(json_systrace_t* s, uint64_t tid, uint64_t tgid, uint32_t cpu, uint64_t ns,
                   const char* event) {
  char line[160];
  put_task(s, tid, cpu, ns);
  uint64_t id = json_koids__id(s->koids, tid);
  char process[24] = "-----"; /* ftrace's own mark for an unknown tgid */
  if (tgid != 0 || tid == 0)
    snprintf(process, sizeof(process), "%" PRIu64, json_koids__id(s->koids, tgid));
  snprintf(line, sizeof(line), "-%" PRIu64 " (%s) [%03u] .... %" PRIu64 ".%09" PRIu64 ": %s: ", id,
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
  char line[256];
  if (k->sched_type == 2) { /* a wakeup record: the waker, when known, is its `waker` koid */
    uint64_t tid = k->incoming_thread_koid;
    const trace_reader_arg_t* waker = arg(&k->args, "waker");
    prefix(s, waker && waker->type == 8 ? waker->koid_value : 0, 0, k->cpu, ns, "sched_waking");
    fputs("comm=", s->tmp);
    put_task(s, tid, k->cpu, ns);
    snprintf(line, sizeof(line), " pid=%" PRIu64 " prio=120 target_cpu=%03u",
             json_koids__id(s->koids, tid), k->cpu);
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
  fputs("prev_comm=", s->tmp);
  put_task(s, out, k->cpu, ns);
  snprintf(line, sizeof(line), " prev_pid=%" PRIu64 " prev_prio=%u prev_state=%s ==> next_comm=",
           json_koids__id(s->koids, out), out_prio, state_letter(k->outgoing_state));
  put(s, line, false);
  put_task(s, in, k->cpu, ns);
  snprintf(line, sizeof(line), " next_pid=%" PRIu64 " next_prio=%u", json_koids__id(s->koids, in),
           in_prio);
  put(s, line, false);
  fputs("\\n", s->tmp);
}

static bool is(const trace_reader_string_t* s, const char* text) {
  return s->length == strlen(text) && memcmp(s->data, text, s->length) == 0;
}

void json_systrace__instant(json_systrace_t* s, const trace_record_t* r) {
  const __typeof__(r->event)* e = &r->event;
  uint64_t ns = timestamp__ticks_to_ns(e->ticks, r->provider->ticks_per_second);
  thread_names__note_task(r, ns); /* names in time (thread_names__at) */
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
  char name[96], line[160];
  snprintf(name, sizeof(name), "%.*s", (int)e->name.length, e->name.data);
  prefix(s, waker_tid, 0, target, ns, name);
  fputs("comm=", s->tmp);
  put_task(s, e->thread_koid, target, ns);
  snprintf(line, sizeof(line), " pid=%" PRIu64 " prio=%d target_cpu=%03u",
           json_koids__id(s->koids, e->thread_koid),
           prio && prio->type == 1 ? prio->int32_value : 120, target);
  put(s, line, false);
  fputs("\\n", s->tmp);
}

/* One mark's task name (put_task), escaped into out. */
static void resolve(const char* mark, json_writer_t* out) {
  uint64_t tid = 0, ns = 0;
  const char* name =
      sscanf(mark, "%" SCNu64 " %" SCNu64, &tid, &ns) == 2 ? thread_names__at(tid, ns) : NULL;
  char escaped[512];
  size_t n = escape(name && *name ? name : "<...>", true, escaped, sizeof(escaped));
  json__raw(out, escaped, n);
}

/* The temporary file's text to out, its marks replaced by task names. */
static void copy_resolving(FILE* tmp, json_writer_t* out) {
  char buf[65536], mark[48];
  size_t n, mark_length = 0;
  bool in_mark = false;
  while ((n = fread(buf, 1, sizeof(buf), tmp)) > 0) {
    size_t from = 0;
    for (size_t i = 0; i < n; i++) {
      if (!in_mark) {
        if (buf[i] != '\x01') continue;
        json__raw(out, buf + from, i - from);
        in_mark = true;
        mark_length = 0;
      } else if (buf[i] == '\x02') {
        mark[mark_length] = '\0';
        resolve(mark, out);
        in_mark = false;
        from = i + 1;
      } else if (mark_length < sizeof(mark) - 1) {
        mark[mark_length++] = buf[i];
      }
    }
    if (!in_mark) json__raw(out, buf + from, n - from);
  }
}

void json_systrace__finish(json_systrace_t* s, json_writer_t* out) {
  if (!s->tmp || s->lines == 0) {
    json__text(out, "]");
  } else {
    json__text(out, "],\n\"systemTraceEvents\":\"");
    rewind(s->tmp);
    copy_resolving(s->tmp, out);
    json__text(out, "\"");
  }
  if (s->tmp) fclose(s->tmp);
  s->tmp = NULL;
  thread_names__free();
}
