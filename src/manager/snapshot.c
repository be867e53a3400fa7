/* SNAPSHOT (wire.h, docs/snapshots.md): the running session's buffers as
 * they are now, written as a complete archive of its own to the fd the
 * controller sends, while tracing goes on. The manager only reads the
 * buffers (its mapping is read-only): each is copied and checked by
 * snapshot/buffer_copy.c, so nobody pauses and nothing is taken from the
 * session's own archive. The snapshot's output is a queue of its own, written
 * as the fd accepts it and closed once delivered (output__release), like a
 * session's archive after the session. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "manager/manager_internal.h"
#include "snapshot/buffer_copy.h"

typedef struct snapshot_stats {
  uint64_t records, dropped, discarded, durable_missing, copy_ns, check_ns;
  char damage[WIRE_MAX_DAMAGE + 1];
} snapshot_stats_t;

/* Whether t's buffer belongs in a snapshot: it was started in this session
 * and its data is not ignored. A provider that stopped on its own or went
 * away still has its buffer mapped: what it committed is there. */
static bool in_snapshot(const tracee_t* t) { return t->started && !t->aborted && t->map; }

/* One provider: its provider-info record, its checked records, and a
 * buffer-overflow event when the snapshot misses records it wrote (dropped
 * by the buffer, or rewritten while the snapshot was copied). false only if
 * the output failed. */
static bool write_provider(manager_t* m, tracee_t* t, output_t* o, uint8_t* scratch,
                           snapshot_stats_t* st) {
  if (!archive__provider_info(o, t->provider_id, t->name)) return false;
  trace_buffer_header_t h;
  const char* why = NULL;
  if (!archive__header(t, &h, &why)) {
    snprintf(st->damage, sizeof(st->damage), "its buffer header is unusable (%s)", why);
    return !o->failed;
  }
  archive_emit_t e = {.out = o, .names = t->s->names, .source = t->names};
  buffer_copy_stats_t cs;
  int status = buffer_copy__snapshot(t->map, t->size, scratch, archive__emit_record, &e, &cs, &why);
  if (status != 0 && o->failed) return false;
  if (status == -1) snprintf(st->damage, sizeof(st->damage), "%s", why);
  if (cs.bad_records || e.rejected)
    snprintf(st->damage, sizeof(st->damage), "%llu damaged record(s) in its buffer",
             (unsigned long long)(cs.bad_records + e.rejected));
  st->records = e.records;
  st->dropped = cs.records_dropped;
  st->discarded = cs.discarded;
  st->durable_missing = cs.durable_missing;
  st->copy_ns = cs.copy_ns;
  st->check_ns = cs.scan_ns;
  if ((st->dropped > 0 || st->discarded > 0) && !archive__overflow_event(o, t->provider_id))
    return false;
  LOGI(m,
       "snapshot: provider #%u \"%s\": %llu records (%llu bytes); dropped %llu, discarded %llu, "
       "durable missing %llu bytes; copy %llu us, check %llu us (%llu bytes)",
       t->provider_id, t->name, (unsigned long long)e.records, (unsigned long long)e.bytes,
       (unsigned long long)st->dropped, (unsigned long long)st->discarded,
       (unsigned long long)st->durable_missing, (unsigned long long)(st->copy_ns / 1000),
       (unsigned long long)(st->check_ns / 1000), (unsigned long long)cs.copied_bytes);
  return !o->failed;
}

static void reply(manager_t* m, conn_t* c, uint32_t request_id, session_t* s,
                  const snapshot_stats_t* stats) {
  size_t n = 0;
  for (tracee_t* t = s->tracees; t; t = t->next)
    if (in_snapshot(t)) n++;
  wire__begin(m->w, MSG_SNAPSHOT_RESULT, request_id);
  wire__put_u16(m->w, (uint16_t)n);
  size_t i = 0;
  for (tracee_t* t = s->tracees; t; t = t->next) {
    if (!in_snapshot(t)) continue;
    const snapshot_stats_t* st = &stats[i++];
    wire__put_cstr(m->w, t->name);
    wire__put_u64(m->w, t->pid);
    wire__put_u8(m->w, t->mode);
    wire__put_u64(m->w, st->records);
    wire__put_u64(m->w, st->dropped);
    wire__put_u64(m->w, st->discarded);
    wire__put_u64(m->w, st->durable_missing);
    wire__put_u64(m->w, st->copy_ns);
    wire__put_u64(m->w, st->check_ns);
    wire__put_cstr(m->w, st->damage);
  }
  mgr__send(m, c, NULL, 0);
}

void snapshot__take(manager_t* m, conn_t* c, wire_reader_t* r, int* fds, size_t fd_count) {
  session_t* s = c->session; /* the caller's own */
  const char* refusal = NULL;
  int code = -EINVAL;
  if (!wire__done(r)) {
    refusal = "malformed SNAPSHOT";
    code = -EBADMSG;
  } else if (fd_count != 1) {
    refusal = "SNAPSHOT needs exactly one file descriptor (the snapshot's)";
  } else if (!s || (s->state != SESSION_STARTING && s->state != SESSION_STARTED &&
                    s->state != SESSION_STOPPING && s->state != SESSION_STOPPED)) {
    refusal = "no trace is running";
    code = -ENODATA;
  } else if (s->mode == TRACE_BUFFERING_MODE_STREAMING) {
    refusal = "streaming mode has no snapshots (its buffers are saved as they fill)";
    code = -EOPNOTSUPP;
  }
  if (refusal) {
    for (size_t i = 0; i < fd_count; i++) close(fds[i]);
    LOGW(m, "SNAPSHOT from pid %d refused: %s", (int)c->cred.pid, refusal);
    mgr__send_error(m, c, r->request_id, code, refusal);
    return;
  }
  size_t n = 0, largest = 0;
  for (tracee_t* t = s->tracees; t; t = t->next)
    if (in_snapshot(t)) {
      n++;
      if (t->size > largest) largest = t->size;
    }
  snapshot_stats_t* stats = calloc(n ? n : 1, sizeof(*stats));
  uint8_t* scratch = largest ? malloc(largest) : NULL; /* malloc aligns to 8 at least */
  bool memory = stats && (scratch || largest == 0);
  output_t* o = memory ? output__create(m, NULL, fds[0]) : NULL;
  if (!o) close(fds[0]);
  bool ok = o && archive__magic(o) && archive__clock_anchor(o, false);
  size_t i = 0;
  for (tracee_t* t = s->tracees; ok && t; t = t->next)
    if (in_snapshot(t)) ok = write_provider(m, t, o, scratch, &stats[i++]);
  free(scratch);
  ok = ok && archive__write_names_to(m, s, o); /* names right last here too */
  if (ok) {
    LOGI(m, "snapshot of %zu provider(s): %zu bytes queued", n, o->queued);
    output__release(m, o); /* delivered, then closed: the client reads it to its end */
    reply(m, c, r->request_id, s, stats);
  } else {
    if (o) {
      o->failed = true;
      output__release(m, o);
    }
    const char* why = o ? "the snapshot's output failed" : "out of memory";
    LOGW(m, "snapshot failed: %s", why);
    mgr__send_error(m, c, r->request_id, o ? -EIO : -ENOMEM, why);
  }
  free(stats);
}
