/* Not part of the public API: fxtrace's control protocol between providers,
 * the trace manager and controller clients (docs/protocol.md). It carries
 * PROTOCOL.md's Registry, Provider and Controller calls as framed messages
 * over Unix SOCK_SEQPACKET sockets (one message per packet, so framing is the
 * kernel's), with file descriptors passed as SCM_RIGHTS.
 *
 * Message = 16-byte header + payload:
 *   0  u32 magic 0x4d545846 ("FXTM")     4  u16 version (1)   6  u16 type
 *   8  u32 length (header + payload)    12  u32 request id (echoed in replies)
 * Payload fields, little-endian, in the order each type lists below:
 *   u8 / u16 / u32 / u64, str = u16 length + bytes (no NUL), and
 *   list = u16 count + items. Limits are PROTOCOL.md's (names ≤ 100 bytes,
 *   descriptions ≤ 400, ≤ 5000 categories, ≤ 100 providers); a message is at
 *   most WIRE_MAX_MESSAGE bytes. A reader checks every length against what
 *   is left; a malformed message is answered with MSG_ERROR (if a reply is
 *   due) or drops the connection, never trusted.
 *
 * Every connection starts with MSG_HELLO from the connecting side:
 *   HELLO { u8 role: 1 provider, 2 controller }
 * Provider connection (the Registry + Provider protocols on one socket):
 *   P→M REGISTER_PROVIDER { u64 pid, str name, u8 synchronous }
 *   M→P REGISTER_RESULT  { i32 status, u8 started }        (synchronous only)
 *   M→P INITIALIZE { u8 buffering_mode (engine enum 0..2), list<str> categories }
 *                  + fds [buffer memfd, fifo]  — the fifo is a SOCK_SEQPACKET
 *                    socket carrying PROTOCOL.md §6's 16-byte packets
 *   M→P START { u8 buffer_disposition (1..3), list<str> additional_categories }
 *   M→P STOP {}
 *   M→P TERMINATE {}
 *   M→P GET_KNOWN_CATEGORIES {}
 *   P→M KNOWN_CATEGORIES { list<{str name, str description}> }
 * Controller connection (PROTOCOL.md §5):
 *   C→M GET_PROVIDERS {}              M→C PROVIDERS { list<{u32 id, u64 pid, str name}> }
 *   C→M GET_KNOWN_CATEGORIES {}       M→C KNOWN_CATEGORIES (as above): PROTOCOL.md's
 *                                     union of the manager's own and every provider's,
 *                                     de-duplicated on (name, description)
 *   C→M GET_PROVIDER_CATEGORIES { u8 format }
 *                                     M→C PROVIDER_CATEGORIES { u8 format, list<category_group> }
 *     the same, per source. `format` is WIRE_CATEGORIES_FORMAT (1); a manager
 *     answers another with MSG_ERROR{-EPROTONOSUPPORT}, and a client rejects a
 *     reply whose format is not the one it asked for. At most
 *     WIRE_MAX_PROVIDERS + 1 groups (the manager's first, if it declares any,
 *     then the providers in registration order), each de-duplicated on
 *     (name, description):
 *     category_group = { u32 provider_id (0: the manager's own configuration),
 *                        u64 pid, str name, u8 answered (0: the provider did not
 *                        answer within 1 s, or its answer was malformed),
 *                        list<{str name, str description}> }
 *   C→M INITIALIZE_TRACING { list<str> categories, u32 buffer_size_mb, u64 start_timeout_ms,
 *                            u8 buffering_mode (engine enum), u64 stop_timeout_ms,
 *                            list<{str name, u32 buffer_size_mb, list<str> categories}> specs }
 *                          + fd [the archive's write end: pipe, socket or file]
 *                          no reply on success; MSG_ERROR if refused
 *   C→M START_TRACING { u8 buffer_disposition, list<str> additional_categories }
 *                                     M→C START_RESULT { u32 error (0, or 1..4 of §5.1) }
 *   C→M STOP_TRACING { u8 write_results }
 *                                     M→C STOP_RESULT { list<provider_stats> }
 *   C→M TERMINATE_TRACING { u8 write_results }
 *                                     M→C TERMINATE_RESULT { list<provider_stats> }
 *   provider_stats = { str name, u64 pid, u8 buffering_mode, u32 wrapped_count,
 *                      u64 records_dropped, u32 durable_percent, u64 non_durable_bytes,
 *                      u8 state (1 stopped, 2 terminated, 3 did not stop in time,
 *                      4 died), str damage (empty, or what was wrong with the
 *                      provider's buffer: an unusable header, damaged records),
 *                      u64 damaged_records (records left out as damaged;
 *                      WIRE_RECORDS_UNKNOWN when the whole buffer was) }
 *   C→M SNAPSHOT {} + fd [the snapshot archive's write end: pipe, socket or file]
 *                                     M→C SNAPSHOT_RESULT { list<snapshot_stats> }
 *     what the session's buffers hold now (circular and oneshot modes), as
 *     a complete archive of its own written to the fd, which the manager
 *     closes once it is delivered (after the reply; the client reads it to
 *     its end); tracing goes on (docs/snapshots.md). MSG_ERROR when no trace
 *     is running (-ENODATA), in streaming mode (-EOPNOTSUPP), without
 *     exactly one fd (-EINVAL), or when the output fails (-EIO).
 *   snapshot_stats = { str name, u64 pid, u8 buffering_mode, u64 records (in
 *                      the snapshot), u64 records_dropped (the buffer's drop
 *                      counter), u64 discarded_records (copied but rewritten
 *                      before they were checked), u64 durable_missing (bytes
 *                      of string / thread records not committed in time),
 *                      u64 copy_ns, u64 check_ns (what it cost), str damage }
 *   C→M WATCH_ALERT {}               M→C ALERT { str name (1..14 bytes), u32 provider_id,
 *                                       u64 pid, str provider_name, u64 time_ns
 *                                       (CLOCK_MONOTONIC at the manager's receipt),
 *                                       u32 dropped }
 *     PROTOCOL.md's WatchAlert, a hanging get: the reply comes when an alert
 *     is queued for this connection (a queue of 16 that drops the oldest);
 *     one WATCH_ALERT at a time per connection (another: MSG_ERROR{-EBUSY}).
 *     `dropped`: alerts this connection lost since its previous ALERT (the
 *     manager's limit of 16 a second per provider, or its full queue).
 * Sessions (WIRE_VERSION_SESSIONS; docs/sessions.md). The manager runs up to
 * WIRE_MAX_SESSIONS sessions at once, one per controller connection that sent
 * INITIALIZE_TRACING. Each has a u32 id, non-zero, never reused while the
 * daemon runs. On a provider connection, INITIALIZE, START, STOP and TERMINATE
 * carry that id as their first field, so the messages above are, from
 * version 6 on:
 *   M→P INITIALIZE { u32 session_id, u8 buffering_mode, list<str> categories }
 *                  + fds [buffer memfd, fifo] — a buffer and a fifo of its own
 *                    per session; the fifo's packets are unchanged (the fifo
 *                    names the session)
 *   M→P START { u32 session_id, u8 buffer_disposition, list<str> additional_categories }
 *   M→P STOP { u32 session_id }
 *   M→P TERMINATE { u32 session_id }
 * A provider takes part in at most WIRE_MAX_SESSIONS sessions at once; an
 * INITIALIZE beyond that, or for an id it already has, is answered by closing
 * that INITIALIZE's fifo (the manager then counts the provider as failed in
 * that session only). Controller side:
 *   M→C START_RESULT { u32 error, u32 session_id }
 *   C→M LIST_SESSIONS {}           M→C SESSIONS { list<session_info> }
 *     the sessions this connection's user may see: all of them for root,
 *     else those whose client runs as the same uid.
 *     session_info = { u32 id, u64 client_pid, u32 client_uid, u8 buffering_mode,
 *                      u32 buffer_size_mb, list<str> categories, u64 start_realtime_ns
 *                      (CLOCK_REALTIME at START_TRACING; 0 before it), u8 state
 *                      (1 initialized, 2 starting, 3 started, 4 stopping, 5 stopped,
 *                      6 terminating), u64 bytes (archive bytes written so far),
 *                      u32 providers (taking part) }
 *   C→M STOP_SESSION { u32 id }    M→C STOP_SESSION_RESULT { u32 id }
 *     stops another connection's session as if its own client had sent
 *     STOP_TRACING { write_results = 1 }; -ENOENT: no such session visible to
 *     this user (another user's session is reported as absent), -EPERM is never
 *     sent (absence hides existence). The owning client gets the unsolicited
 *     M→C SESSION_STOPPED { u32 id, u32 by_uid, u64 by_pid } (request id 0)
 *     and finishes as at the end of its --duration (STOP_TRACING answered as
 *     usual if it sends one, then TERMINATE_TRACING).
 *   INITIALIZE_TRACING with WIRE_MAX_SESSIONS sessions running is answered
 *   MSG_ERROR { -EBUSY, "N sessions are running (the limit is N)" }.
 * The archive ring (an addition to version 6; docs/manager.md, "The archive
 * ring of a daemon"): before INITIALIZE_TRACING a client may ask for its
 * archive to come through shared memory instead of its archive fd:
 *   C→M ARCHIVE_RING { u32 size }  M→C ARCHIVE_RING_RESULT { u32 size }
 *                                  + fds [control memfd, data memfd, socket]
 *     size: a power of two in [ARCHIVE_RING_MIN_SHARED, ARCHIVE_RING_MAX_SHARED]
 *     (src/ring/archive_ring.h; else MSG_ERROR -EINVAL). The connection's
 *     next INITIALIZE_TRACING then writes its archive into that ring (its fd
 *     is still required, and closed at the end). One ring per connection
 *     and a few in the whole manager (else MSG_ERROR -EBUSY). A manager that
 *     does not know the message answers MSG_ERROR -ENOSYS; after any
 *     MSG_ERROR the client keeps to its archive fd.
 * Any request may get MSG_ERROR { i32 code (negative errno), str message } instead.
 * The manager closes the archive fd when the session ends (terminate, or its
 * client's connection closing). */
#ifndef FXTRACE_PROTOCOL_WIRE_H_
#define FXTRACE_PROTOCOL_WIRE_H_

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#define WIRE_MAGIC UINT32_C(0x4d545846)
#define WIRE_VERSION_DAMAGE 2u /* 2: provider_stats carries its buffer's damage */
/* 3: the provider's buffer has N rolling segments (docs/buffer-layout.md,
 * layout version 2); SAVE_BUFFER's wrapped count names a segment
 * (wrapped % segment_count); SAVE_BUFFERs are pipelined (up to
 * segment_count - 1 outstanding) and BUFFER_SAVED is cumulative
 * (docs/manager.md). */
#define WIRE_VERSION_SEGMENTS 3u
/* 4: SNAPSHOT / SNAPSHOT_RESULT (snapshots of a running trace) */
/* 5: WATCH_ALERT / ALERT (alerts relayed to controllers) */
/* 6: sessions: INITIALIZE/START/STOP/TERMINATE carry a session id;
 * START_RESULT carries it; LIST_SESSIONS, STOP_SESSION, SESSION_STOPPED */
#define WIRE_VERSION_SESSIONS 6u
#define WIRE_VERSION 6u
/* Sessions the manager runs at once, and sessions a provider takes part in
 * at once (docs/sessions.md). */
#define WIRE_MAX_SESSIONS 4u
/* provider_stats.damaged_records when the count is not known (the buffer's
 * header was unusable, so none of its records could be read). */
#define WIRE_RECORDS_UNKNOWN UINT64_MAX
/* The longest provider_stats.damage text. */
#define WIRE_MAX_DAMAGE 200
#define WIRE_HEADER_SIZE 16u
#define WIRE_MAX_MESSAGE (256u * 1024u)
#define WIRE_MAX_FDS 3u

enum wire_limits {
  WIRE_MAX_NAME = 100,        /* provider and category names */
  WIRE_MAX_DESCRIPTION = 400, /* category descriptions */
  WIRE_MAX_CATEGORIES = 5000,
  WIRE_MAX_PROVIDERS = 100,
};

enum wire_role { WIRE_ROLE_PROVIDER = 1, WIRE_ROLE_CONTROLLER = 2 };

enum wire_type {
  MSG_HELLO = 1,
  MSG_ERROR = 2,
  /* provider connection */
  MSG_REGISTER_PROVIDER = 10,
  MSG_REGISTER_RESULT = 11,
  MSG_INITIALIZE = 12,
  MSG_START = 13,
  MSG_STOP = 14,
  MSG_TERMINATE = 15,
  MSG_GET_KNOWN_CATEGORIES = 16,
  MSG_KNOWN_CATEGORIES = 17,
  /* controller connection */
  MSG_GET_PROVIDERS = 30,
  MSG_PROVIDERS = 31,
  MSG_INITIALIZE_TRACING = 32,
  MSG_START_TRACING = 33,
  MSG_START_RESULT = 34,
  MSG_STOP_TRACING = 35,
  MSG_STOP_RESULT = 36,
  MSG_TERMINATE_TRACING = 37,
  MSG_TERMINATE_RESULT = 38,
  MSG_GET_PROVIDER_CATEGORIES = 39,
  MSG_PROVIDER_CATEGORIES = 40,
  MSG_SNAPSHOT = 41,
  MSG_SNAPSHOT_RESULT = 42,
  MSG_WATCH_ALERT = 43,
  MSG_ALERT = 44,
  MSG_LIST_SESSIONS = 45,
  MSG_SESSIONS = 46,
  MSG_STOP_SESSION = 47,
  MSG_STOP_SESSION_RESULT = 48,
  MSG_SESSION_STOPPED = 49,
  MSG_ARCHIVE_RING = 50,
  MSG_ARCHIVE_RING_RESULT = 51,
};

/* The layout of PROVIDER_CATEGORIES this code reads and writes. */
#define WIRE_CATEGORIES_FORMAT 1u

/* PROTOCOL.md §6: the FIFO's 16-byte packets, host byte order. */
typedef struct fifo_packet {
  uint16_t request;
  uint16_t data16;
  uint32_t data32;
  uint64_t data64;
} fifo_packet_t;

enum fifo_request {
  FIFO_STARTED = 0x0001,
  FIFO_SAVE_BUFFER = 0x0002,
  FIFO_STOPPED = 0x0003,
  FIFO_ALERT = 0x0004,
  FIFO_BUFFER_SAVED = 0x0100,
};
#define FIFO_PROTOCOL_VERSION 1u

/* ---- building a message ---- */

typedef struct wire_writer {
  uint8_t data[WIRE_MAX_MESSAGE];
  size_t length;
  bool overflow; /* a put did not fit: do not send */
} wire_writer_t;

void wire__begin(wire_writer_t* w, uint16_t type, uint32_t request_id);
void wire__put_u8(wire_writer_t* w, uint8_t v);
void wire__put_u16(wire_writer_t* w, uint16_t v);
void wire__put_u32(wire_writer_t* w, uint32_t v);
void wire__put_u64(wire_writer_t* w, uint64_t v);
void wire__put_str(wire_writer_t* w, const char* s, size_t length);
void wire__put_cstr(wire_writer_t* w, const char* s);
/* Stores the final length in the header; false if anything overflowed. */
bool wire__end(wire_writer_t* w);

/* ---- reading a message ---- */

typedef struct wire_reader {
  const uint8_t* data;
  size_t length;
  size_t pos;
  bool error; /* a get ran past the end or broke a limit: reject the message */
  uint16_t type;
  uint32_t request_id;
} wire_reader_t;

/* Checks the header (magic, version, length == bytes received); NULL if good,
 * else why not. */
const char* wire__open(wire_reader_t* r, const void* data, size_t length);
uint8_t wire__get_u8(wire_reader_t* r);
uint16_t wire__get_u16(wire_reader_t* r);
uint32_t wire__get_u32(wire_reader_t* r);
uint64_t wire__get_u64(wire_reader_t* r);
/* A string of at most max_length bytes, copied NUL-terminated into out
 * (out_size > max_length). Longer, or past the end: error. */
void wire__get_str(wire_reader_t* r, char* out, size_t out_size, size_t max_length);
/* true when every byte was consumed and nothing failed. */
bool wire__done(const wire_reader_t* r);

/* ---- sockets ---- */

/* Sends one message with up to WIRE_MAX_FDS descriptors. 0 or -errno. */
int wire__send(int socket, const wire_writer_t* w, const int* fds, size_t fd_count);

/* Receives one message into buffer (WIRE_MAX_MESSAGE bytes). Returns its
 * length, 0 at end of stream (peer closed), or -errno (-EMSGSIZE when the
 * packet was truncated). Received descriptors go to fds (CLOEXEC); extra ones
 * are closed; *fd_count says how many. */
ssize_t wire__recv(int socket, void* buffer, int* fds, size_t* fd_count);

/* Connects a SOCK_SEQPACKET socket to path, checks the peer (SO_PEERCRED)
 * and sends HELLO(role). The fd or -errno: -ENOENT / -ECONNREFUSED, no
 * manager; -EPERM, the peer runs neither as this user nor as root (its uid in
 * *peer_uid, which may be NULL), and was told nothing. Where the path comes
 * from: manager_socket.h. */
int wire__connect(const char* path, enum wire_role role, uid_t* peer_uid);

#endif /* FXTRACE_PROTOCOL_WIRE_H_ */
