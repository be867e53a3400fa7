/* The archive ring of a daemon (docs/manager.md, "The archive ring of a
 * daemon"; wire.h, ARCHIVE_RING): a controller's archive written into
 * shared memory its client reads, instead of its archive fd. The ring is
 * the manager's (src/ring/archive_ring.h, shared kind): the client gets a
 * read-only view of the data and a control page, whose counts the ring
 * takes only as far as they are consistent, so a client can spoil nothing
 * but its own archive. */
#include <errno.h>
#include <unistd.h>

#include "manager/manager_internal.h"
#include "ring/archive_ring.h"

void shared_ring__offer(manager_t* m, conn_t* c, wire_reader_t* r) {
  uint32_t size = wire__get_u32(r);
  if (!wire__done(r)) {
    mgr__send_error(m, c, r->request_id, -EBADMSG, "malformed ARCHIVE_RING");
    return;
  }
  if (c->session) {
    mgr__send_error(m, c, r->request_id, -EBUSY,
                    "ARCHIVE_RING after INITIALIZE_TRACING: this connection's archive has its "
                    "output already");
    return;
  }
  int fds[3];
  archive_ring_t* ring = archive_ring__create_shared(size, fds);
  if (!ring) {
    int error = errno;
    mgr__send_error(m, c, r->request_id, error == EINVAL ? -EINVAL : -error,
                    error == EINVAL ? "ARCHIVE_RING: the size must be a power of two from 64 KiB "
                                      "to 64 MiB"
                                    : "ARCHIVE_RING: cannot make the ring");
    return;
  }
  wire__begin(m->w, MSG_ARCHIVE_RING_RESULT, r->request_id);
  wire__put_u32(m->w, size);
  int status = mgr__send(m, c, fds, 3);
  for (int i = 0; i < 3; i++) close(fds[i]);
  if (status != 0) {
    archive_ring__free(ring);
    return;
  }
  archive_ring__free(c->ring); /* an earlier offer, never taken */
  c->ring = ring;
  LOGD(m, "connection of pid %d: archive ring of %u bytes", (int)c->cred.pid, (unsigned)size);
}

static size_t sink_write(void* arg, const void* data, size_t size) {
  return archive_ring__write(arg, data, size);
}
static void* sink_reserve(void* arg, size_t size) { return archive_ring__reserve(arg, size); }
static void sink_commit(void* arg, size_t n) { archive_ring__commit(arg, n); }
static void sink_clear_room(void* arg) { archive_ring__clear_room(arg); }
static bool sink_gone(void* arg) { return archive_ring__reader_gone(arg); }
/* The end of the archive: the client reads the rest from its mapping; the
 * manager's side goes. */
static void sink_close(void* arg) {
  archive_ring__close(arg);
  archive_ring__free(arg);
}

bool shared_ring__take(conn_t* c, manager_archive_sink_t* sink) {
  if (!c || !c->ring) return false;
  *sink = (manager_archive_sink_t){.write = sink_write,
                                   .reserve = sink_reserve,
                                   .commit = sink_commit,
                                   .clear_room = sink_clear_room,
                                   .close = sink_close,
                                   .gone = sink_gone,
                                   .room_fd = archive_ring__room_fd(c->ring),
                                   .arg = c->ring};
  c->ring = NULL;
  return true;
}

void shared_ring__conn_free(conn_t* c) {
  archive_ring__free(c->ring);
  c->ring = NULL;
}
