/* The archive (PROTOCOL.md §10.4): a session's output queue, written to the
 * client's fd with non-blocking writes as it accepts them, and what goes in
 * it: the magic record, each provider's provider-info / provider-section
 * record and its buffer's records, read with the buffer scan and checked
 * record by record, so that the archive is well-formed FXT whatever a
 * provider wrote. */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "anchor/clock_anchor.h"
#include "engine/buffer_scan.h"
#include "fxt/fxt_encode.h"
#include "manager/manager_internal.h"

#define CHUNK_SIZE ((size_t)256 << 10)
/* spare chunks kept per output: 4 MiB, a save's worth with room to spare */
#define SPARE_CHUNKS 16u

/* ---- output queue ---- */

output_t* output__create(manager_t* m, session_t* s, int fd) {
  output_t* o = calloc(1, sizeof(*o));
  if (!o) return NULL;
  o->tag.kind = EP_OUTPUT;
  o->m = m;
  o->session = s;
  o->fd = fd;
  /* the archive ring its client asked for, else the in-process one */
  if (shared_ring__take(s ? s->owner : NULL, &o->sink) ||
      (m->config.archive_sink &&
       m->config.archive_sink(m->config.archive_sink_arg, fd, &o->sink))) {
    /* the room fd is polled for reading, only while a write was short */
    if (mgr__epoll_add(m, o->sink.room_fd, 0, &o->tag) != 0) {
      o->sink.close(o->sink.arg);
      free(o);
      return NULL;
    }
    o->has_sink = o->pollable = true;
    return o;
  }
  struct stat st;
  o->is_socket = fstat(fd, &st) == 0 && S_ISSOCK(st.st_mode);
  /* Pipes and sockets are written without blocking, when epoll says so; a
   * regular file (epoll refuses it: EPERM) is always ready. */
  if (mgr__epoll_add(m, fd, 0, &o->tag) == 0) {
    o->pollable = true;
    int flags = fcntl(fd, F_GETFL);
    if (flags >= 0 && !(flags & O_NONBLOCK)) fcntl(fd, F_SETFL, flags | O_NONBLOCK);
  }
  return o;
}

/* The tail chunk if it has room for `bytes`, else a new one (a spare if
 * one fits) appended; NULL (and the output failed) without memory. */
static out_chunk_t* room_for(output_t* o, size_t bytes) {
  out_chunk_t* t = o->tail;
  if (t && t->capacity - t->length >= bytes) return t;
  if (o->spare && o->spare->capacity >= bytes) {
    t = o->spare;
    o->spare = t->next;
    o->spare_count--;
  } else {
    size_t capacity = bytes > CHUNK_SIZE ? bytes : CHUNK_SIZE;
    t = malloc(sizeof(*t) + capacity);
    if (!t) {
      o->failed = true;
      return NULL;
    }
    t->capacity = capacity;
  }
  t->next = NULL;
  t->length = t->pos = 0;
  if (o->tail)
    o->tail->next = t;
  else
    o->head = t;
  o->tail = t;
  return t;
}

/* Room for `bytes` in the sink itself (the in-process ring), when nothing
 * is queued before them: the provider's records are copied once, straight
 * to where the archive thread reads them, instead of into the queue and
 * from there into the ring; and the queue's memory stays unused while the
 * ring has room (a save copied into memory touched for the first time took
 * 2-4 ms instead of 65 us on a VM, a page fault per 4 KiB: docs/manager.md,
 * "What a save waits for"). NULL: queue them. The copy is checked in place
 * before direct_commit() hands it over. What goes straight in is not
 * queued: the acknowledgement hold (streaming_high_water, session.c)
 * counts only the backlog the ring could not take. */
static uint8_t* direct_room(const output_t* o, size_t bytes) {
  if (!o->has_sink || !o->sink.reserve || !o->sink.commit || o->queued != 0 || o->failed)
    return NULL;
  return o->sink.reserve(o->sink.arg, bytes);
}

static void direct_commit(output_t* o, size_t bytes) {
  o->sink.commit(o->sink.arg, bytes);
  o->written += bytes;
}

/* output__append through the queue only: emit_record reads the copy back
 * (tail_bytes) and may take it back (unappend). */
static bool queue_append(output_t* o, const void* data, size_t bytes) {
  if (o->failed) return false;
  if (bytes == 0) return true;
  out_chunk_t* t = room_for(o, bytes);
  if (!t) return false;
  memcpy(t->data + t->length, data, bytes);
  t->length += bytes;
  o->queued += bytes;
  if (o->queued > o->m->config.max_output_queue) {
    o->overflow = true;
    o->failed = true;
    return false;
  }
  return true;
}

bool output__append(output_t* o, const void* data, size_t bytes) {
  uint8_t* direct = bytes ? direct_room(o, bytes) : NULL;
  if (!direct) return queue_append(o, data, bytes);
  memcpy(direct, data, bytes);
  direct_commit(o, bytes);
  return true;
}

/* A record just appended whole to the tail chunk: its last `bytes` bytes. */
static uint8_t* tail_bytes(output_t* o, size_t bytes) {
  return o->tail->data + o->tail->length - bytes;
}

static void unappend(output_t* o, size_t bytes) {
  o->tail->length -= bytes;
  o->queued -= bytes;
}

static void set_want_out(output_t* o, bool want) {
  if (!o->pollable || o->want_out == want) return;
  o->want_out = want;
  if (o->has_sink)
    mgr__epoll_mod(o->m, o->sink.room_fd, want ? EPOLLIN : 0, &o->tag);
  else
    mgr__epoll_mod(o->m, o->fd, want ? EPOLLOUT : 0, &o->tag);
}

/* SIGPIPE is blocked on the loop's thread (manager.c): a write to a pipe
 * without reader leaves one pending, taken here. */
static void consume_sigpipe(void) {
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGPIPE);
  struct timespec zero = {0, 0};
  while (sigtimedwait(&set, NULL, &zero) > 0) {
  }
}

bool output__flush(output_t* o) {
  while (o->head && !o->failed) {
    out_chunk_t* c = o->head;
    if (c->pos == c->length) {
      if (c == o->tail && c->length < c->capacity) {
        c->pos = c->length = 0; /* keep the last chunk for reuse */
        break;
      }
      o->head = c->next;
      if (!o->head) o->tail = NULL;
      if (c->capacity == CHUNK_SIZE && o->spare_count < SPARE_CHUNKS) {
        c->next = o->spare;
        o->spare = c;
        o->spare_count++;
      } else {
        free(c);
      }
      continue;
    }
    ssize_t n;
    if (o->has_sink) {
      size_t taken = o->sink.write(o->sink.arg, c->data + c->pos, c->length - c->pos);
      if (taken == 0) {
        set_want_out(o, true);
        return true;
      }
      n = (ssize_t)taken;
    } else if (o->is_socket)
      n = send(o->fd, c->data + c->pos, c->length - c->pos, MSG_NOSIGNAL | MSG_DONTWAIT);
    else
      n = write(o->fd, c->data + c->pos, c->length - c->pos);
    if (n > 0) {
      c->pos += (size_t)n;
      o->queued -= (size_t)n;
      o->written += (uint64_t)n;
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK) && o->pollable) {
      set_want_out(o, true);
      return true;
    }
    if (n < 0 && errno == EPIPE) consume_sigpipe();
    mgr__log(o->m, MANAGER_LOG_WARN, "archive output: %s",
             n < 0 ? strerror(errno) : "nothing written");
    o->failed = true;
  }
  if (o->failed) return false;
  set_want_out(o, false);
  return true;
}

/* Whether the sink's reader still has bytes to read, and if so room_fd
 * polled for when it reads some (a shared ring's pages go only after). */
static bool sink_unread(output_t* o) {
  if (!o->has_sink || !o->sink.unread || o->failed || !o->sink.unread(o->sink.arg)) return false;
  set_want_out(o, true);
  return true;
}

void output__event(manager_t* m, output_t* o, uint32_t events) {
  bool reader_gone = false;
  if (o->has_sink) {
    o->sink.clear_room(o->sink.arg);
    events &= ~(uint32_t)(EPOLLERR | EPOLLHUP); /* of the room fd, not the archive's reader */
    reader_gone = o->sink.gone && o->sink.gone(o->sink.arg);
  }
  bool ok = !reader_gone && output__flush(o);
  if (ok && (events & (EPOLLERR | EPOLLHUP)) && o->queued > 0) ok = false;
  if (!ok) o->failed = true;
  if (o->session) {
    if (o->failed)
      session__abort(m, o->session, "the client stopped reading the archive");
    else if (o->queued < m->config.streaming_high_water / 2)
      session__output_drained(o->session);
  } else if (o->failed || (o->queued == 0 && !sink_unread(o))) {
    /* draining after the session: delivered, or the reader is gone */
    for (output_t** pp = &m->draining; *pp; pp = &(*pp)->next) {
      if (*pp == o) {
        *pp = o->next;
        break;
      }
    }
    output__free(m, o);
  }
}

void output__free(manager_t* m, output_t* o) {
  if (o->pollable) mgr__epoll_del(m, o->has_sink ? o->sink.room_fd : o->fd);
  if (o->has_sink) {
    bool whole = !o->failed && o->queued == 0 && !(o->sink.unread && o->sink.unread(o->sink.arg));
    (whole || !o->sink.cut ? o->sink.close : o->sink.cut)(o->sink.arg);
  }
  close(o->fd);
  while (o->head) {
    out_chunk_t* c = o->head;
    o->head = c->next;
    free(c);
  }
  while (o->spare) {
    out_chunk_t* c = o->spare;
    o->spare = c->next;
    free(c);
  }
  o->spare_count = 0;
  o->tail = NULL;
  o->gone = true;
  o->next = m->dead_outputs;
  m->dead_outputs = o;
}

void output__release(manager_t* m, output_t* o) {
  o->session = NULL;
  if (!o->failed) output__flush(o);
  if (o->failed || (o->queued == 0 && !sink_unread(o))) {
    output__free(m, o);
    return;
  }
  o->next = m->draining;
  m->draining = o;
}

void output__drain_all(manager_t* m, uint64_t timeout_ms) {
  uint64_t deadline = mgr__now_ms() + timeout_ms;
  while (m->draining) {
    output_t* o = m->draining;
    m->draining = o->next;
    while (!o->failed && (o->queued > 0 || sink_unread(o))) {
      uint64_t now = mgr__now_ms();
      if (now >= deadline) break;
      struct pollfd pfd = {.fd = o->has_sink ? o->sink.room_fd : o->fd,
                           .events = o->has_sink ? POLLIN : POLLOUT};
      if (o->pollable && poll(&pfd, 1, (int)(deadline - now)) <= 0) break;
      if (o->has_sink) o->sink.clear_room(o->sink.arg);
      if (o->has_sink && o->sink.gone && o->sink.gone(o->sink.arg)) break; /* nobody reads */
      if (!output__flush(o)) break;
    }
    if (o->queued > 0) LOGW(m, "archive output: %zu bytes not delivered at shutdown", o->queued);
    output__free(m, o);
  }
}

/* ---- archive content ---- */

bool archive__magic(output_t* o) {
  uint64_t word;
  fxt_write_magic_record(&word);
  return output__append(o, &word, sizeof(word));
}

/* The anchors are instants on the manager's own thread (koid = its pid), which
 * no provider names: without these records readers show an unnamed process
 * (Perfetto: "Process 1234") holding the "start" and "stop" instants. The
 * name is the command's (/proc/self/comm: "trace" for `trace record`'s own
 * manager, "trace_manager" for the daemon), under provider id 0xffffffff
 * that the anchor selected. */
static size_t encode_own_names(uint64_t* words, size_t max_words) {
  char comm[32] = "";
  FILE* f = fopen("/proc/self/comm", "re");
  if (f) {
    if (!fgets(comm, sizeof(comm), f)) comm[0] = '\0';
    fclose(f);
  }
  comm[strcspn(comm, "\n")] = '\0';
  if (!comm[0]) return 0;
  trace_koid_t pid = (trace_koid_t)getpid();
  trace_string_ref_t name = trace_make_inline_c_string_ref(comm);
  trace_arg_t process =
      trace_make_arg(trace_make_inline_c_string_ref("process"), trace_make_koid_arg_value(pid));
  size_t pw = fxt_kernel_object_record_words(&name, NULL, 0);
  size_t tw = fxt_kernel_object_record_words(&name, &process, 1);
  if (pw + tw > max_words) return 0;
  uint64_t* p = fxt_write_kernel_object_record(words, pw, pid, FXT_KOBJ_PROCESS, &name, NULL, 0);
  p = fxt_write_kernel_object_record(p, tw, pid, FXT_KOBJ_THREAD, &name, &process, 1);
  return (size_t)(p - words) * 8;
}

bool archive__clock_anchor(output_t* o, bool stop) {
  uint64_t words[CLOCK_ANCHOR_MAX_WORDS + 16];
  clock_anchor_t a = clock_anchor__take(clock_anchor__monotonic_ns);
  size_t bytes = clock_anchor__encode(words, &a, stop);
  bytes += encode_own_names(words + bytes / 8, sizeof(words) / 8 - bytes / 8);
  return output__append(o, words, bytes);
}

bool archive__provider_info(output_t* o, uint32_t provider_id, const char* name) {
  uint64_t words[1 + 32];
  uint64_t* end = fxt_write_provider_info_record(words, provider_id, name, strlen(name));
  return output__append(o, words, (size_t)(end - words) * 8);
}

bool archive__overflow_event(output_t* o, uint32_t provider_id) {
  uint64_t word;
  fxt_write_provider_event_record(&word, provider_id, FXT_PROVIDER_EVENT_BUFFER_OVERFLOW);
  return output__append(o, &word, 8);
}

static bool provider_record(tracee_t* t, output_t* o) {
  if (!t->info_written) {
    t->info_written = true;
    return archive__provider_info(o, t->provider_id, t->name);
  }
  uint64_t word;
  fxt_write_provider_section_record(&word, t->provider_id);
  return output__append(o, &word, 8);
}

bool archive__header(const tracee_t* t, trace_buffer_header_t* h, const char** why) {
  const char* reason = buffer_scan__header(t->map, t->size, h);
  if (!reason && h->total_size != t->size) reason = "total size does not match the buffer";
  if (!reason && h->buffering_mode != t->mode)
    reason = "buffering mode does not match the one asked for";
  if (why) *why = reason;
  return reason == NULL;
}

/* A record copied to `copy` is the one its size field says, and not a
 * metadata record (provider info / section / event, trace info: those are
 * the manager's to write; one in a provider's buffer is garbage that would
 * re-attribute the records after it to another provider). */
static bool copied_record_ok(const uint8_t* copy, size_t bytes) {
  uint64_t header;
  memcpy(&header, copy, 8);
  return header != 0 && fxt_record_words(header) * 8 == bytes &&
         FXT_GET(header, 0, 3) != FXT_RECORD_METADATA;
}

/* A run record by record, framed by its own headers as they are now (each
 * copy is checked again); a frame that no longer fits ends it, counted as
 * one rejected record. */
static int emit_each(archive_emit_t* e, const uint8_t* p, size_t bytes) {
  size_t pos = 0;
  while (pos + 8 <= bytes) {
    uint64_t header;
    memcpy(&header, p + pos, 8);
    size_t size = (size_t)fxt_record_words(header) * 8;
    if (header == 0 || size == 0 || size > bytes - pos) {
      e->rejected++;
      return 0;
    }
    int status = archive__emit_record(e, p + pos, size);
    if (status != 0) return status;
    pos += size;
  }
  return 0;
}

int archive__emit_record(void* arg, const void* data, size_t bytes) {
  archive_emit_t* e = arg;
  const uint8_t* p = data;
  if (p >= e->skip_begin && p < e->skip_end) return 0;
  if (bytes < 8 || bytes % 8 != 0) {
    e->rejected++;
    return 0;
  }
  output_t* o = e->out;
  uint8_t* direct = direct_room(o, bytes);
  if (direct) {
    memcpy(direct, data, bytes);
    if (!copied_record_ok(direct, bytes)) {
      e->rejected++;
      return 0;
    }
    names__note(e->names, e->source, direct, bytes);
    direct_commit(o, bytes);
    e->records++;
    e->bytes += bytes;
    return 0;
  }
  out_chunk_t* t = o->tail;
  if (t && !o->failed && t->capacity - t->length >= bytes &&
      o->queued + bytes <= o->m->config.max_output_queue) {
    /* the common case, inline: room in the tail chunk (output__append's
     * work without its call, its chunk allocation and its unappend) */
    uint8_t* copy = t->data + t->length;
    memcpy(copy, data, bytes);
    if (!copied_record_ok(copy, bytes)) {
      e->rejected++;
      return 0;
    }
    t->length += bytes;
    o->queued += bytes;
    names__note(e->names, e->source, copy, bytes);
  } else {
    if (!queue_append(o, data, bytes)) return -1;
    if (!copied_record_ok(tail_bytes(o, bytes), bytes)) {
      unappend(o, bytes);
      e->rejected++;
      return 0;
    }
    names__note(e->names, e->source, tail_bytes(o, bytes), bytes);
  }
  e->records++;
  e->bytes += bytes;
  return 0;
}

/* Whether a copy, given `bytes` at data, may go in one piece: else record
 * by record (a skipped range, a failed or full output, a ragged length). */
static bool copies_whole(const archive_emit_t* e, const uint8_t* p, size_t bytes) {
  const output_t* o = e->out;
  return !(p + bytes > e->skip_begin && p < e->skip_end) && !o->failed && bytes % 8 == 0 &&
         o->queued + bytes <= o->m->config.max_output_queue && bytes <= CHUNK_SIZE;
}

/* Copies `bytes` from data into the output, frames them again in the copy
 * and keeps the whole records before the first one `plain_only` excludes
 * (a prefix: only what buffer_scan__is_plain_record takes; a run: any
 * non-metadata record that fits). The bytes kept, or -1 without memory. */
static int64_t copy_framed(archive_emit_t* e, const void* data, size_t bytes, bool plain_only,
                           uint64_t* records) {
  output_t* o = e->out;
  out_chunk_t* t = NULL;
  /* What is queued goes out first, as far as the ring or the pipe (or
   * socket) takes it without blocking: a save of many pieces then keeps
   * its reader fed instead of queueing all of them until the save ends
   * (the reader ran dry meanwhile), and with the in-process ring its copies
   * go straight in again once the queue is empty. Order is kept: the queue
   * drains in order, and nothing goes straight in while anything is
   * queued. A full pipe costs one write that fails with EAGAIN per piece. */
  if (o->queued != 0 && (o->has_sink || o->pollable) && !output__flush(o)) return -1;
  uint8_t* copy = direct_room(o, bytes);
  if (!copy) {
    if (!(t = room_for(o, bytes))) return -1;
    copy = t->data + t->length;
  }
  memcpy(copy, data, bytes);
  size_t good = 0;
  uint64_t n = 0, any = 0, all = ~UINT64_C(0); /* the headers kept, OR-ed and AND-ed */
  while (good + 8 <= bytes) {
    uint64_t header;
    memcpy(&header, copy + good, 8);
    size_t size = (size_t)fxt_record_words(header) * 8;
    bool takes = plain_only ? buffer_scan__is_plain_record(header, bytes - good)
                            : header != 0 && size != 0 && size <= bytes - good &&
                                  FXT_GET(header, 0, 3) != FXT_RECORD_METADATA;
    if (!takes) break;
    any |= header;
    all &= header;
    good += size;
    n++;
  }
  if (n > 0 && names__run_may_teach(e->source, any, all))
    names__note_run(e->names, e->source, copy, good);
  if (t) {
    t->length += good;
    o->queued += good;
  } else {
    direct_commit(o, good);
  }
  e->records += n;
  e->bytes += good;
  *records = n;
  return (int64_t)good;
}

int archive__emit_run(void* arg, const void* data, size_t bytes) {
  archive_emit_t* e = arg;
  const uint8_t* p = data;
  if (!copies_whole(e, p, bytes)) return emit_each(e, p, bytes);
  /* framed again in the copy: every record's size as the scan saw it, or
   * the provider changed it since (then it, and the rest, go one by one) */
  uint64_t records;
  int64_t good = copy_framed(e, data, bytes, false, &records);
  if (good < 0) return -1;
  return (size_t)good == bytes ? 0 : emit_each(e, p + good, bytes - (size_t)good);
}

int64_t archive__emit_prefix(void* arg, const void* data, size_t max_bytes, uint64_t* records) {
  archive_emit_t* e = arg;
  *records = 0;
  /* a chunk that starts with nothing a prefix takes (a zero header: an
   * unused chunk; a large or metadata record) is not copied for nothing;
   * the live header only decides whether to try, the copy is checked */
  uint64_t first;
  if (max_bytes < 8) return 0;
  memcpy(&first, data, 8);
  if (!buffer_scan__is_plain_record(first, max_bytes) || !copies_whole(e, data, max_bytes))
    return 0; /* record by record instead */
  /* framed in the copy only: what is archived is what was checked */
  return copy_framed(e, data, max_bytes, true, records);
}

void archive__note_damage(tracee_t* t, uint64_t records, const char* fmt, ...) {
  if (!t->damage[0]) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(t->damage, sizeof(t->damage), fmt, ap);
    va_end(ap);
  }
  if (records == WIRE_RECORDS_UNKNOWN || t->damaged_records > WIRE_RECORDS_UNKNOWN - records)
    t->damaged_records = WIRE_RECORDS_UNKNOWN;
  else
    t->damaged_records += records;
}

bool archive__write_results(manager_t* m, tracee_t* t) {
  output_t* o = t->s->out;
  t->results_written = true;
  if (!provider_record(t, o)) return false;
  trace_buffer_header_t h;
  const char* why;
  if (!archive__header(t, &h, &why)) {
    LOGW(m, "provider #%u \"%s\": buffer unusable (%s): its data is skipped", t->provider_id,
         t->name, why);
    archive__note_damage(t, WIRE_RECORDS_UNKNOWN, "its buffer header is unusable (%s)", why);
    return !o->failed;
  }
  uint64_t dropped = buffer_scan__dropped(t->map, t->size, &h); /* header + writers' counters */
  if (dropped > 0 && !archive__overflow_event(o, t->provider_id)) return false;
  archive_emit_t e = {.out = o, .names = t->s->names, .source = t->names};
  t->s->names_due = true;
  uint64_t durable_from = 0, saved_switches = 0;
  if (t->mode == TRACE_BUFFERING_MODE_STREAMING && t->saved_once) {
    /* The segments this manager saved, whatever the header says (their
     * acknowledgement may not have reached the provider). */
    durable_from = t->last_durable_end;
    saved_switches = (uint64_t)t->last_wrapped + 1;
  }
  buffer_scan_stats_t stats;
  int status = buffer_scan__records_unsaved(t->map, t->size, durable_from, saved_switches,
                                            archive__emit_record, &e, &stats);
  if (status != 0 && o->failed) return false;
  if (status == -1) {
    LOGW(m, "provider \"%s\": buffer unusable at the scan", t->name);
    archive__note_damage(t, WIRE_RECORDS_UNKNOWN, "its buffer became unusable at the scan");
  }
  if (stats.bad_records || e.rejected) {
    LOGW(m, "provider #%u \"%s\": %llu damaged record(s) skipped", t->provider_id, t->name,
         (unsigned long long)(stats.bad_records + e.rejected));
    archive__note_damage(t, stats.bad_records + e.rejected, "damaged records in its buffer");
  }
  LOGI(m,
       "provider #%u \"%s\": %llu records (%llu bytes) written; wrapped %u, dropped %llu, "
       "durable end %llu, rolling ends %llu/%llu%s",
       t->provider_id, t->name, (unsigned long long)e.records, (unsigned long long)e.bytes,
       h.wrapped_count, (unsigned long long)dropped, (unsigned long long)h.durable_data_end,
       (unsigned long long)h.rolling_data_end[0], (unsigned long long)h.rolling_data_end[1],
       stats.stopped_cleanly ? "" : " (not stopped cleanly)");
  return !o->failed;
}

bool archive__write_save(manager_t* m, tracee_t* t, uint32_t wrapped, uint64_t durable_end) {
  output_t* o = t->s->out;
  if (!provider_record(t, o)) return false;
  archive_emit_t e = {.out = o, .names = t->s->names, .source = t->names};
  t->s->names_due = true;
  uint64_t from = t->saved_once ? t->last_durable_end : 0;
  buffer_scan_stats_t stats = {0};
  int status = buffer_scan__save_prefixes(t->map, t->size, wrapped, from, durable_end,
                                          archive__emit_run, archive__emit_prefix, &e, &stats);
  if (status != 0 && o->failed) return false;
  if (status == -1) {
    LOGW(m, "provider #%u \"%s\": buffer unusable at a save: skipped", t->provider_id, t->name);
    archive__note_damage(t, WIRE_RECORDS_UNKNOWN, "its buffer was unusable at a streaming save");
  }
  if (stats.bad_records || e.rejected) {
    LOGW(m, "provider #%u \"%s\": %llu damaged record(s) skipped at a save", t->provider_id,
         t->name, (unsigned long long)(stats.bad_records + e.rejected));
    archive__note_damage(t, stats.bad_records + e.rejected, "damaged records in its buffer");
  }
  LOGD(m, "provider #%u \"%s\": save %u: %llu records, %llu bytes", t->provider_id, t->name,
       wrapped, (unsigned long long)e.records, (unsigned long long)e.bytes);
  return !o->failed;
}
