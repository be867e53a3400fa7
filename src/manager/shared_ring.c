/* The archive ring of a daemon (docs/manager.md, "The archive ring of a
 * daemon"; wire.h, ARCHIVE_RING): a controller's archive written into
 * shared memory its client reads, instead of its archive fd. The ring is
 * the manager's (src/ring/archive_ring.h, shared kind): the client gets a
 * read-only view of the data and a control page, whose counts the ring
 * takes only as far as they are consistent, so a client can spoil nothing
 * but its own archive. What one may cost is bounded: one ring per
 * connection, SHARED_RINGS_MAX alive in the manager (offered, written, or
 * waiting for its client to read the rest), each at most
 * ARCHIVE_RING_MAX_SHARED, its pages taken only as the archive fills them
 * (a client that keeps its descriptors after its session keeps those
 * pages: docs/security.md). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "manager/manager_internal.h"
#include "ring/archive_ring.h"

enum { SHARED_RINGS_MAX = 2 * WIRE_MAX_SESSIONS };

struct shared_ring {
  manager_t* m;
  archive_ring_t* ring;
};

static void ring_free(shared_ring_t* s) {
  if (!s) return;
  archive_ring__free(s->ring);
  s->m->shared_rings--;
  free(s);
}

void shared_ring__offer(manager_t* m, conn_t* c, wire_reader_t* r) {
  uint32_t size = wire__get_u32(r);
  if (!wire__done(r)) {
    mgr__send_error(m, c, r->request_id, -EBADMSG, "malformed ARCHIVE_RING");
    return;
  }
  char busy[96];
  const char* refusal = NULL;
  int code = -EBUSY;
  if (c->session) {
    refusal =
        "ARCHIVE_RING after INITIALIZE_TRACING: this connection's archive has its output "
        "already";
  } else if (c->ring) {
    refusal = "this connection has an archive ring already";
  } else if (m->shared_rings >= SHARED_RINGS_MAX) {
    snprintf(busy, sizeof(busy), "%u archive rings are in use (the limit is %u)", m->shared_rings,
             (unsigned)SHARED_RINGS_MAX);
    refusal = busy;
  }
  shared_ring_t* s = refusal ? NULL : calloc(1, sizeof(*s));
  int fds[3];
  if (s) {
    s->m = m;
    s->ring = archive_ring__create_shared(size, fds);
    if (!s->ring) {
      code = -errno;
      refusal = errno == EINVAL ? "ARCHIVE_RING: the size must be a power of two from 64 KiB to "
                                  "16 MiB"
                                : "ARCHIVE_RING: cannot make the ring";
      free(s);
      s = NULL;
    }
  } else if (!refusal) {
    code = -ENOMEM;
    refusal = "out of memory";
  }
  if (refusal) {
    mgr__send_error(m, c, r->request_id, code, refusal);
    return;
  }
  m->shared_rings++;
  wire__begin(m->w, MSG_ARCHIVE_RING_RESULT, r->request_id);
  wire__put_u32(m->w, size);
  int status = mgr__send(m, c, fds, 3);
  for (int i = 0; i < 3; i++) close(fds[i]);
  if (status != 0) {
    ring_free(s);
    return;
  }
  c->ring = s;
  LOGD(m, "connection of pid %d: archive ring of %u bytes", (int)c->cred.pid, (unsigned)size);
}

static archive_ring_t* ring_of(void* arg) { return ((shared_ring_t*)arg)->ring; }
static size_t sink_write(void* arg, const void* data, size_t size) {
  return archive_ring__write(ring_of(arg), data, size);
}
static void* sink_reserve(void* arg, size_t size) {
  return archive_ring__reserve(ring_of(arg), size);
}
static void sink_commit(void* arg, size_t n) { archive_ring__commit(ring_of(arg), n); }
static void sink_clear_room(void* arg) { archive_ring__clear_room(ring_of(arg)); }
static bool sink_gone(void* arg) { return archive_ring__reader_gone(ring_of(arg)); }
static bool sink_unread(void* arg) { return archive_ring__unread(ring_of(arg)); }
/* The end of the archive (its client has read all of it, or is gone, or
 * the archive was cut): the manager's side goes. */
static void sink_close(void* arg) {
  archive_ring__close(ring_of(arg));
  ring_free(arg);
}
static void sink_cut(void* arg) {
  archive_ring__cut(ring_of(arg));
  ring_free(arg);
}

bool shared_ring__take(conn_t* c, manager_archive_sink_t* sink) {
  if (!c || !c->ring) return false;
  *sink = (manager_archive_sink_t){.write = sink_write,
                                   .reserve = sink_reserve,
                                   .commit = sink_commit,
                                   .clear_room = sink_clear_room,
                                   .close = sink_close,
                                   .cut = sink_cut,
                                   .gone = sink_gone,
                                   .unread = sink_unread,
                                   .room_fd = archive_ring__room_fd(c->ring->ring),
                                   .arg = c->ring};
  c->ring = NULL;
  return true;
}

void shared_ring__conn_free(conn_t* c) {
  ring_free(c->ring);
  c->ring = NULL;
}
