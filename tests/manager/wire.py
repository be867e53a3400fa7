"""The control protocol of src/protocol/wire.h, from the test side: a
controller (or a raw connection) speaking to a trace manager."""

import os
import select
import socket
import struct
import time

MAGIC = 0x4d545846
VERSION = 6  # src/protocol/wire.h WIRE_VERSION (3: rolling segments, 4: snapshots, 5: alerts, 6: sessions)
HEADER = struct.Struct('<IHHII')
MAX_MESSAGE = 256 * 1024

HELLO, ERROR = 1, 2
REGISTER_PROVIDER, REGISTER_RESULT = 10, 11
GET_KNOWN_CATEGORIES, KNOWN_CATEGORIES = 16, 17
GET_PROVIDERS, PROVIDERS = 30, 31
INITIALIZE_TRACING, START_TRACING, START_RESULT = 32, 33, 34
STOP_TRACING, STOP_RESULT, TERMINATE_TRACING, TERMINATE_RESULT = 35, 36, 37, 38
GET_PROVIDER_CATEGORIES, PROVIDER_CATEGORIES = 39, 40
CATEGORIES_FORMAT = 1
SNAPSHOT, SNAPSHOT_RESULT = 41, 42
WATCH_ALERT, ALERT = 43, 44
LIST_SESSIONS, SESSIONS, STOP_SESSION, STOP_SESSION_RESULT, SESSION_STOPPED = 45, 46, 47, 48, 49
ARCHIVE_RING, ARCHIVE_RING_RESULT = 50, 51
MAX_SESSIONS = 4  # src/protocol/wire.h WIRE_MAX_SESSIONS
# session_info.state
SESSION_STATES = {1: 'initialized', 2: 'starting', 3: 'started', 4: 'stopping', 5: 'stopped',
                  6: 'terminating'}
ROLE_PROVIDER, ROLE_CONTROLLER = 1, 2


def u8(v): return struct.pack('<B', v)
def u16(v): return struct.pack('<H', v)
def u32(v): return struct.pack('<I', v)
def u64(v): return struct.pack('<Q', v)
def s(text):
    b = text.encode() if isinstance(text, str) else text
    return u16(len(b)) + b
def strs(items): return u16(len(items)) + b''.join(s(i) for i in items)


def message(mtype, payload=b'', request_id=0, magic=MAGIC, version=VERSION, length=None):
    n = HEADER.size + len(payload) if length is None else length
    return HEADER.pack(magic, version, mtype, n, request_id) + payload


class Reader:
    def __init__(self, payload):
        self.b, self.p = payload, 0
    def take(self, fmt):
        v = struct.unpack_from(fmt, self.b, self.p)[0]
        self.p += struct.calcsize(fmt)
        return v
    def u8(self): return self.take('<B')
    def u16(self): return self.take('<H')
    def u32(self): return self.take('<I')
    def i32(self): return self.take('<i')
    def u64(self): return self.take('<Q')
    def str(self):
        n = self.u16()
        v = self.b[self.p:self.p + n].decode()
        self.p += n
        return v
    def done(self): return self.p == len(self.b)


class Conn:
    def __init__(self, path, role=ROLE_CONTROLLER, hello=True):
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        self.sock.connect(path)
        self.next_id = 100
        self.session_stopped = []  # SESSION_STOPPED messages come unasked: kept here
        if hello:
            self.send_raw(message(HELLO, u8(role)))

    def close(self):
        self.sock.close()

    def send_raw(self, data, fds=()):
        if fds:
            socket.send_fds(self.sock, [data], list(fds))
        else:
            self.sock.send(data)

    def recv(self, timeout=10.0):
        """(type, request_id, payload), or None when the manager closed."""
        r, _, _ = select.select([self.sock], [], [], timeout)
        if not r:
            raise TimeoutError('no message from the manager within %.1f s' % timeout)
        data = self.sock.recv(MAX_MESSAGE)
        if not data:
            return None
        magic, version, mtype, length, rid = HEADER.unpack_from(data)
        assert magic == MAGIC and version == VERSION and length == len(data), data[:16]
        return mtype, rid, data[HEADER.size:]

    def archive_ring(self, size, timeout=10.0):
        """ARCHIVE_RING: ((type, request_id, payload), fds received with the reply)."""
        rid = self.next_id
        self.next_id += 1
        self.send_raw(message(ARCHIVE_RING, u32(size), rid))
        r, _, _ = select.select([self.sock], [], [], timeout)
        if not r:
            raise TimeoutError('no reply to ARCHIVE_RING within %.1f s' % timeout)
        data, fds, _, _ = socket.recv_fds(self.sock, MAX_MESSAGE, 4)
        assert data, 'connection closed instead of a reply'
        magic, version, mtype, length, got_rid = HEADER.unpack_from(data)
        assert magic == MAGIC and length == len(data) and got_rid == rid, data[:16]
        return (mtype, got_rid, data[HEADER.size:]), list(fds)

    def call(self, mtype, payload=b'', fds=(), timeout=10.0):
        rid = self.next_id
        self.next_id += 1
        self.send_raw(message(mtype, payload, rid), fds)
        if mtype == INITIALIZE_TRACING:
            return None
        while True:
            reply = self.recv(timeout)
            assert reply is not None, 'connection closed instead of a reply'
            if reply[0] == SESSION_STOPPED and reply[1] == 0:
                self.session_stopped.append(parse_session_stopped(reply[2]))
                continue
            assert reply[1] == rid, 'reply to request %d, expected %d' % (reply[1], rid)
            return reply

    def wait_session_stopped(self, timeout=10.0):
        """The next SESSION_STOPPED {id, by_uid, by_pid} (one already read first)."""
        if not self.session_stopped:
            t, rid, p = self.recv(timeout)
            assert t == SESSION_STOPPED and rid == 0, (t, rid, p)
            self.session_stopped.append(parse_session_stopped(p))
        return self.session_stopped.pop(0)

    def list_sessions(self):
        """[{id, client_pid, client_uid, mode, buffer_mb, categories, start_realtime_ns,
        state, bytes, providers}]"""
        t, _, p = self.call(LIST_SESSIONS)
        assert t == SESSIONS, (t, p)
        r = Reader(p)
        out = []
        for _ in range(r.u16()):
            out.append(dict(id=r.u32(), client_pid=r.u64(), client_uid=r.u32(), mode=r.u8(),
                            buffer_mb=r.u32(), categories=[r.str() for _ in range(r.u16())],
                            start_realtime_ns=r.u64(), state=SESSION_STATES.get(r.u8(), '?'),
                            bytes=r.u64(), providers=r.u32()))
        assert r.done()
        return out

    def stop_session(self, session_id):
        """('stopped', id) or ('error', code, text)."""
        t, _, p = self.call(STOP_SESSION, u32(session_id))
        if t == ERROR:
            return ('error',) + parse_error(p)
        assert t == STOP_SESSION_RESULT, (t, p)
        r = Reader(p)
        stopped = r.u32()
        assert r.done()
        return ('stopped', stopped)

    # ---- the Controller calls ----
    def initialize(self, out_fd, mode=0, categories=(), buffer_mb=1, start_timeout_ms=0,
                   stop_timeout_ms=0, specs=()):
        payload = (strs(categories) + u32(buffer_mb) + u64(start_timeout_ms) + u8(mode) +
                   u64(stop_timeout_ms) + u16(len(specs)) +
                   b''.join(s(n) + u32(mb) + strs(c) for n, mb, c in specs))
        self.call(INITIALIZE_TRACING, payload, fds=[out_fd])

    def start(self, disposition=3, additional=()):
        t, _, p = self.call(START_TRACING, u8(disposition) + strs(additional))
        assert t == START_RESULT, (t, p)
        r = Reader(p)
        error = r.u32()
        self.session_id = r.u32()  # wire.h, "Sessions"
        return error

    def stop(self, write_results=True, timeout=10.0):
        t, _, p = self.call(STOP_TRACING, u8(1 if write_results else 0), timeout=timeout)
        assert t == STOP_RESULT, (t, p)
        return parse_stats(p)

    def terminate(self, write_results=True, timeout=10.0):
        t, _, p = self.call(TERMINATE_TRACING, u8(1 if write_results else 0), timeout=timeout)
        assert t == TERMINATE_RESULT, (t, p)
        return parse_stats(p)

    def providers(self):
        t, _, p = self.call(GET_PROVIDERS)
        assert t == PROVIDERS, t
        r = Reader(p)
        out = [(r.u32(), r.u64(), r.str()) for _ in range(r.u16())]
        assert r.done()
        return out

    def known_categories(self):
        t, _, p = self.call(GET_KNOWN_CATEGORIES, timeout=5)
        assert t == KNOWN_CATEGORIES, t
        r = Reader(p)
        out = [(r.str(), r.str()) for _ in range(r.u16())]
        assert r.done()
        return out

    def provider_categories(self, fmt=CATEGORIES_FORMAT):
        """[(id, pid, name, answered, [(name, description)])], or ('error', code, text)."""
        t, _, p = self.call(GET_PROVIDER_CATEGORIES, u8(fmt), timeout=5)
        if t == ERROR:
            return ('error',) + parse_error(p)
        assert t == PROVIDER_CATEGORIES, t
        r = Reader(p)
        assert r.u8() == CATEGORIES_FORMAT
        out = []
        for _ in range(r.u16()):
            ident, pid, name, answered = r.u32(), r.u64(), r.str(), r.u8()
            out.append((ident, pid, name, answered, [(r.str(), r.str()) for _ in range(r.u16())]))
        assert r.done()
        return out


def parse_alert(payload):
    """ALERT: {name, provider_id, pid, provider_name, time_ns, dropped}."""
    r = Reader(payload)
    a = {'name': r.str(), 'provider_id': r.u32(), 'pid': r.u64(), 'provider_name': r.str(),
         'time_ns': r.u64(), 'dropped': r.u32()}
    assert r.done(), payload
    return a


def parse_session_stopped(payload):
    r = Reader(payload)
    out = {'id': r.u32(), 'by_uid': r.u32(), 'by_pid': r.u64()}
    assert r.done(), payload
    return out


def parse_error(payload):
    r = Reader(payload)
    return r.i32(), r.str()


def parse_stats(payload):
    r = Reader(payload)
    out = []
    for _ in range(r.u16()):
        out.append(dict(name=r.str(), pid=r.u64(), mode=r.u8(), wrapped=r.u32(),
                        dropped=r.u64(), durable_percent=r.u32(), non_durable=r.u64(),
                        state=r.u8(), damage=r.str(), damaged_records=r.u64()))
    assert r.done()
    return out
