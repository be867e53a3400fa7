#!/usr/bin/env python3
"""The trace manager with real processes: trace_manager, fake_provider
processes (the real engine on the manager's memfd), and this script as the
controller client (wire.py). Each archive is checked with the independent
validator tests/tools/fxt_decode.py and with `trace dump`.

usage: test_manager.py TRACE_MANAGER FAKE_PROVIDER TRACE TOOLS_DIR DEMO [TEST...]
(DEMO: examples/demo, a program on the real libtrace-provider)"""

import errno
import fcntl
import grp
import mmap
import os
import pwd
import queue
import select
import re
import signal
import socket
import stat
import struct
import subprocess
import sys
import tempfile
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import wire  # noqa: E402

MANAGER, PROVIDER, TRACE, TOOLS, DEMO = [os.path.abspath(a) for a in sys.argv[1:6]]
sys.path.insert(0, TOOLS)
import fxt_decode  # noqa: E402

ONESHOT, CIRCULAR, STREAMING = 0, 1, 2
TMP = tempfile.mkdtemp(prefix='fxtrace-manager-test-')
FAILURES = []
PROCESSES = []  # every process a test starts, killed when it ends


def cleanup():
    for proc in PROCESSES:
        if proc.poll() is None:
            proc.kill()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            pass
    PROCESSES.clear()


def check(cond, what):
    if not cond:
        raise AssertionError(what)


# ---- processes ------------------------------------------------------------------------------

class Manager:
    count = 0

    def __init__(self, *args, stop_timeout_ms=400, path=None, prefix=()):
        Manager.count += 1
        self.path = path or os.path.join(TMP, 'm%d' % Manager.count, 'manager.sock')
        self.log = os.path.join(TMP, 'manager%d.log' % Manager.count)
        self.proc = subprocess.Popen(
            list(prefix) + [MANAGER, '--socket', self.path, '--stop-timeout-ms', str(stop_timeout_ms),
             '--log-level', 'debug'] + list(args),
            stderr=open(self.log, 'w'))
        PROCESSES.append(self.proc)
        deadline = time.time() + 10
        while True:
            check(self.proc.poll() is None, 'trace_manager exited at start:\n' + self.logs())
            try:
                c = wire.Conn(self.path)
                c.providers()
                c.close()
                break
            except (FileNotFoundError, ConnectionRefusedError):
                check(time.time() < deadline, 'trace_manager did not come up')
                time.sleep(0.02)

    def logs(self):
        with open(self.log) as f:
            return f.read()

    def controller(self):
        return wire.Conn(self.path)

    def alive(self):
        return self.proc.poll() is None

    def stop(self):
        check(self.alive(), 'trace_manager died:\n' + self.logs()[-3000:])
        self.proc.send_signal(signal.SIGTERM)
        code = self.proc.wait(timeout=20)
        check(code == 0, 'trace_manager exit status %d' % code)


class Provider:
    def __init__(self, manager, name, *args):
        self.name = name
        self.proc = subprocess.Popen([PROVIDER, '--socket', manager.path, '--name', name] +
                                     [str(a) for a in args],
                                     stdout=subprocess.PIPE, text=True)
        PROCESSES.append(self.proc)
        self.lines = queue.Queue()
        self.seen = []
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self):
        for line in self.proc.stdout:
            self.lines.put(line.strip())
        self.lines.put(None)

    def wait_for(self, prefix, timeout=10):
        deadline = time.time() + timeout
        while True:
            try:
                line = self.lines.get(timeout=max(0.01, deadline - time.time()))
            except queue.Empty:
                raise AssertionError('provider %s: no "%s" line within %ss (saw %s)'
                                     % (self.name, prefix, timeout, self.seen))
            check(line is not None, 'provider %s exited waiting for "%s" (saw %s)'
                  % (self.name, prefix, self.seen))
            self.seen.append(line)
            if line.startswith(prefix):
                return line

    def kill(self, sig=signal.SIGKILL):
        self.proc.send_signal(sig)
        self.proc.wait(timeout=10)

    def close(self):
        if self.proc.poll() is None:
            self.proc.kill()
        self.proc.wait(timeout=10)


def field(line, key):
    for part in line.split():
        if part.startswith(key + '='):
            return int(part.split('=', 1)[1])
    raise AssertionError('no %s= in %r' % (key, line))


class Archive:
    """The read end of the pipe the manager writes the archive to."""

    def __init__(self):
        self.r, self.w = os.pipe()
        self.data = bytearray()
        self.eof = threading.Event()
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self):
        while True:
            chunk = os.read(self.r, 1 << 16)
            if not chunk:
                break
            self.data += chunk
        os.close(self.r)
        self.eof.set()

    def give(self):
        """The write end, for INITIALIZE_TRACING; our copy is closed after sending."""
        return self.w

    def sent(self):
        os.close(self.w)

    def wait(self, timeout=15):
        check(self.eof.wait(timeout), 'the archive was not closed within %ss' % timeout)
        return bytes(self.data)


# The control block of a shared archive ring (src/ring/archive_ring.c, ring_control_t).
RING_HEAD, RING_TAIL, RING_CLOSED, RING_READER_WAITING, RING_WRITER_WAITING = 0, 64, 128, 132, 136
F_GET_SEALS = 1034
F_SEAL_SEAL, F_SEAL_SHRINK, F_SEAL_GROW, F_SEAL_FUTURE_WRITE = 1, 2, 4, 16


class RingArchive(Archive):
    """The archive through a shared ring the manager makes (ARCHIVE_RING, docs/manager.md
    "The archive ring of a daemon"), read as trace record reads it; the pipe still goes with
    INITIALIZE_TRACING (and is never written)."""

    def __init__(self, conn, size=1 << 16, read=True):
        self.reading = read  # False: a client that never reads (nor writes its tail)
        reply, fds = conn.archive_ring(size)
        check(reply[0] == wire.ARCHIVE_RING_RESULT and wire.Reader(reply[2]).u32() == size and
              len(fds) == 3, 'ARCHIVE_RING: %r with %d fds' % (reply, len(fds)))
        self.fds = fds
        self.size = size
        self.ctl = mmap.mmap(fds[0], 4096)
        self.ring = mmap.mmap(fds[1], size, prot=mmap.PROT_READ)
        self.sock = socket.socket(fileno=os.dup(fds[2]))
        self.sock.setblocking(False)
        self.closed_by_writer = False
        super().__init__()

    def word(self, offset, fmt='<Q'):
        return struct.unpack_from(fmt, self.ctl, offset)[0]

    def put(self, offset, value, fmt='<Q'):
        struct.pack_into(fmt, self.ctl, offset, value)

    def _wake_drained(self):
        """Takes the wake-ups; False when the manager's end was closed (or ours)."""
        while True:
            try:
                if not self.sock.recv(64):
                    return False
            except BlockingIOError:
                return True
            except (OSError, ValueError):
                return False

    def abandon(self):
        """The client's process going away: every descriptor of the ring closed (the mmaps
        hold copies of the memfds)."""
        self.sock.close()
        self.ctl.close()
        self.ring.close()
        for fd in self.fds:
            os.close(fd)

    def _read(self):
        os.close(self.r)  # the pipe is not read: the ring carries the archive
        if not self.reading:
            return
        tail, alive = 0, True
        while True:
            closed = self.word(RING_CLOSED, '<I') != 0
            head = self.word(RING_HEAD)
            if head == tail:
                if closed or not alive:
                    break
                self.put(RING_READER_WAITING, 1, '<I')
                if self.word(RING_HEAD) == tail and not self.word(RING_CLOSED, '<I'):
                    try:
                        select.select([self.sock], [], [], 1.0)
                    except (OSError, ValueError):
                        pass
                    alive = self._wake_drained()
                continue
            at = tail % self.size
            n = min(head - tail, self.size - at)
            self.data += self.ring[at:at + n]
            tail += n
            self.put(RING_TAIL, tail)
            if self.word(RING_WRITER_WAITING, '<I'):
                self.put(RING_WRITER_WAITING, 0, '<I')
                try:
                    self.sock.send(b'w')
                except OSError:
                    pass
        self.closed_by_writer = self.word(RING_CLOSED, '<I') != 0
        self.eof.set()


def begin(manager, mode=ONESHOT, **kw):
    c = manager.controller()
    a = Archive()
    c.initialize(a.give(), mode=mode, **kw)
    a.sent()
    return c, a


# ---- archive checks ------------------------------------------------------------------------

DATA_KINDS = ('provider_info', 'provider_section', 'provider_event', 'magic')


class Checked:
    count = 0

    def __init__(self, data, strict=True):
        self.data = data
        Checked.count += 1
        with open(os.path.join(TMP, 'archive%d.fxt' % Checked.count), 'wb') as f:
            f.write(data)
        self.trace = fxt_decode.decode(data)
        t = self.trace
        check(len(data) >= 8 and t.records and t.records[0]['kind'] == 'magic',
              'the archive does not start with the magic record')
        check(t.truncated_at is None, 'archive framing broken at %s: %s'
              % (t.truncated_at, t.errors[:3]))
        if strict:
            check(t.ok, 'fxt_decode violations: %s' % t.errors[:5])
        self.names = {pid: p.name.decode() for pid, p in t.providers.items()}

    def provider_id(self, name):
        ids = [pid for pid, n in self.names.items() if n == name]
        check(len(ids) == 1, 'provider %s: %d provider-info records (names %s)'
              % (name, len(ids), self.names))
        return ids[0]

    def has(self, name):
        return name in self.names.values()

    def records(self, name):
        pid = self.provider_id(name)
        return [r for r in self.trace.records if r['provider'] == pid and r['kind'] not in DATA_KINDS]

    def events(self, name, category=b'test'):
        return [r for r in self.records(name) if r['kind'] == 'event' and r.get('ok')
                and r.get('category') == category]

    def dump_ok(self):
        path = os.path.join(TMP, 'archive.fxt')
        with open(path, 'wb') as f:
            f.write(self.data)
        p = subprocess.run([TRACE, 'dump', path], capture_output=True, text=True)
        check(p.returncode == 0, 'trace dump exit %d: %s' % (p.returncode, p.stderr[-500:]))
        check('error' not in p.stderr.lower(), 'trace dump: %s' % p.stderr[-500:])


def one_trace(manager, providers, mode=ONESHOT, wait='emitted', **kw):
    """initialize, start, wait for every provider's line, stop, terminate."""
    c, a = begin(manager, mode=mode, **kw)
    check(c.start() == 0, 'start failed')
    for p in providers:
        p.wait_for(wait)
    stop_stats = c.stop(write_results=True)
    term_stats = c.terminate(write_results=True)
    data = a.wait()
    c.close()
    return Checked(data), stop_stats, term_stats


# ---- tests ------------------------------------------------------------------------------------

def test_socket_permissions_and_single_instance():
    m = Manager()
    mode = stat.S_IMODE(os.stat(m.path).st_mode)
    check(mode == 0o600, 'socket mode %o, expected 600' % mode)
    dmode = stat.S_IMODE(os.stat(os.path.dirname(m.path)).st_mode)
    check(dmode == 0o700, 'socket directory mode %o, expected 700' % dmode)
    second = subprocess.run([MANAGER, '--socket', m.path], capture_output=True, text=True,
                            timeout=10)
    check(second.returncode != 0 and 'another trace manager' in second.stderr,
          'a second manager on the same socket was not refused: %s' % second.stderr)
    m.stop()
    check(not os.path.exists(m.path), 'the socket file stays after shutdown')
    # a stale socket file (nobody listening) is replaced
    stale = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    stale.bind(m.path)
    stale.close()
    m2 = Manager(path=m.path)
    m2.stop()
    h = subprocess.run([MANAGER, '--help'], capture_output=True, text=True)
    check(h.returncode == 0 and '--stop-timeout-ms' in h.stdout, 'trace_manager --help')
    b = subprocess.run([MANAGER, '--log-level', 'loud'], capture_output=True, text=True)
    check(b.returncode == 2, 'a bad --log-level is a usage error')
    for bad in ('no-equals', '=no name', 'n' * 101 + '=x', 'x=' + 'd' * 401):
        b = subprocess.run([MANAGER, '--socket', m.path, '--category', bad], capture_output=True,
                           text=True, timeout=10)
        check(b.returncode == 2 and '--category' in b.stderr,
              '--category %.20s...: rc %d, %s' % (bad, b.returncode, b.stderr))


def test_each_mode_one_provider():
    m = Manager()
    for mode, events in ((ONESHOT, 2000), (CIRCULAR, 2000), (STREAMING, 150000)):
        p = Provider(m, 'solo-%d' % mode, '--events', events)
        p.wait_for('registered')
        c, a = begin(m, mode=mode, buffer_mb=1)
        p.wait_for('initialized mode=%d size=%d' % (mode, 1 << 20))
        check(c.start() == 0, 'start')
        emitted = field(p.wait_for('emitted').replace('emitted ', 'n='), 'n')
        stats = c.stop(write_results=True)
        stopped = p.wait_for('stopped')
        written, dropped = field(stopped, 'written'), field(stopped, 'dropped')
        check(len(stats) == 1 and stats[0]['name'] == p.name and stats[0]['state'] == 1 and
              stats[0]['mode'] == mode and stats[0]['dropped'] == dropped,
              'stop stats %s (engine dropped %d)' % (stats, dropped))
        term = c.terminate(write_results=True)
        p.wait_for('terminated')
        check(len(term) == 1 and term[0]['state'] == 2, 'terminate stats %s' % term)
        x = Checked(a.wait())
        x.dump_ok()
        recs = x.records(p.name)
        check(len(recs) == written, 'mode %d: %d records in the archive, the engine wrote %d'
              % (mode, len(recs), written))
        events = x.events(p.name)
        if mode == ONESHOT:
            check(len(events) == emitted and dropped == 0, 'oneshot: %d events of %d'
                  % (len(events), emitted))
        elif mode == STREAMING:
            check(stats[0]['wrapped'] >= 1, 'streaming never saved: %s' % stats)
            check(len(events) + dropped == emitted, 'streaming: %d events + %d dropped != %d'
                  % (len(events), dropped, emitted))
        else:
            check(0 < len(events) <= emitted, 'circular: %d events' % len(events))
        c.close()
        p.close()
    m.stop()


class PausedArchive(Archive):
    """An archive whose reader reads nothing until resume(): the client that stopped reading."""

    def __init__(self):
        self.go = threading.Event()
        super().__init__()

    def _read(self):
        self.go.wait()
        super()._read()

    def resume(self):
        self.go.set()


def wait_log(m, pattern, timeout=20):
    deadline = time.time() + timeout
    while True:
        found = re.search(pattern, m.logs())
        if found:
            return found
        check(time.time() < deadline, 'no log line matching %r within %ss:\n%s'
              % (pattern, timeout, m.logs()[-2000:]))
        time.sleep(0.05)


def test_archive_ring():
    """ARCHIVE_RING (wire.h; docs/manager.md, "The archive ring of a daemon"): sizes out of
    range refused; the client's view of the data is sealed read-only and fixed in size; every
    record of each mode arrives through the ring, which the manager closes at the end; a
    request after INITIALIZE_TRACING is refused."""
    m = Manager()
    c = m.controller()
    for bad in (0, 1000, 32 << 10, 32 << 20):
        reply, fds = c.archive_ring(bad)
        check(reply[0] == wire.ERROR and wire.parse_error(reply[2])[0] == -errno.EINVAL and
              not fds, 'ARCHIVE_RING %d: %r' % (bad, reply))
    # one ring per connection, and at most 8 alive in the manager (each connection of these
    # holds one, never used); the connections' ends give them back
    held = []
    for i in range(8):
        ci = m.controller()
        reply, fds = ci.archive_ring(1 << 16)
        check(reply[0] == wire.ARCHIVE_RING_RESULT and len(fds) == 3, 'ring %d: %r' % (i, reply))
        for fd in fds:
            os.close(fd)
        held.append(ci)
    reply, fds = held[0].archive_ring(1 << 16)
    check(reply[0] == wire.ERROR and wire.parse_error(reply[2])[0] == -errno.EBUSY,
          'a second ring on one connection: %r' % (reply,))
    reply, fds = c.archive_ring(1 << 16)
    check(reply[0] == wire.ERROR and wire.parse_error(reply[2])[0] == -errno.EBUSY and
          'limit is 8' in wire.parse_error(reply[2])[1], 'a ninth ring: %r' % (reply,))
    for ci in held:
        ci.close()
    deadline = time.time() + 10
    while True:
        reply, fds = c.archive_ring(1 << 16)
        if reply[0] == wire.ARCHIVE_RING_RESULT:
            break
        check(time.time() < deadline, 'the rings of closed connections were not given back')
        time.sleep(0.05)
    for fd in fds:
        os.close(fd)
    c.close()
    for mode, events in ((ONESHOT, 2000), (CIRCULAR, 2000), (STREAMING, 150000)):
        p = Provider(m, 'ring-%d' % mode, '--events', events)
        p.wait_for('registered')
        c = m.controller()
        a = RingArchive(c)
        seals = fcntl.fcntl(a.fds[1], F_GET_SEALS)
        want = F_SEAL_SEAL | F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_FUTURE_WRITE
        check(seals & want == want, 'the data memfd is sealed %#x' % seals)
        try:
            mmap.mmap(a.fds[1], a.size)  # shared and writable
            check(False, 'the client mapped the ring\'s data writable')
        except PermissionError:
            pass
        check(fcntl.fcntl(a.fds[0], F_GET_SEALS) & (F_SEAL_SHRINK | F_SEAL_SEAL) ==
              F_SEAL_SHRINK | F_SEAL_SEAL, 'the control memfd can shrink')
        c.initialize(a.give(), mode=mode, buffer_mb=1)
        a.sent()
        reply, fds = c.archive_ring(1 << 16)
        check(reply[0] == wire.ERROR and wire.parse_error(reply[2])[0] == -errno.EBUSY,
              'ARCHIVE_RING after INITIALIZE_TRACING: %r' % (reply,))
        p.wait_for('initialized mode=%d' % mode)
        check(c.start() == 0, 'start')
        emitted = field(p.wait_for('emitted').replace('emitted ', 'n='), 'n')
        c.stop(write_results=True)
        stopped = p.wait_for('stopped')
        written, dropped = field(stopped, 'written'), field(stopped, 'dropped')
        c.terminate(write_results=True)
        p.wait_for('terminated')
        x = Checked(a.wait())
        check(a.closed_by_writer, 'mode %d: the ring ended without the manager closing it' % mode)
        check(len(x.records(p.name)) == written, 'mode %d: %d records through the ring, the '
              'engine wrote %d' % (mode, len(x.records(p.name)), written))
        if mode != CIRCULAR:
            check(len(x.events(p.name)) + dropped == emitted, 'mode %d: %d events + %d dropped '
                  '!= %d' % (mode, len(x.events(p.name)), dropped, emitted))
        c.close()
        p.close()
    check(m.alive(), 'trace_manager died')
    m.stop()


def test_archive_ring_hostile_client():
    """A client that never reads its ring and scribbles over its control page (counts ahead of
    what was written, behind it by more than the ring, any flags), then goes away mid-trace:
    the manager stays up, another client's session beside it (the same provider, in both)
    delivers a whole archive through its own ring, and the hostile session ends."""
    m = Manager()
    p = Provider(m, 'ring-both', '--multi', '--events', 20000)
    p.wait_for('registered')
    c = m.controller()
    a = RingArchive(c, read=False)
    c.initialize(a.give(), mode=STREAMING, buffer_mb=1)
    a.sent()
    check(c.start() == 0, 'start')
    cv = m.controller()
    av = RingArchive(cv)
    cv.initialize(av.give(), mode=STREAMING, buffer_mb=1)
    av.sent()
    check(cv.start() == 0, 'victim start')
    for value in (2 ** 64 - 1, 1 << 63, 12345, 0):
        a.put(RING_TAIL, value)
        a.put(RING_READER_WAITING, 0xa5a5a5a5, '<I')
        a.put(RING_WRITER_WAITING, 0x5a5a5a5a, '<I')
        time.sleep(0.15)
        check(m.alive(), 'trace_manager died (tail %#x)' % value)
    cv.stop(write_results=True)
    cv.terminate(write_results=True)
    x = Checked(av.wait())
    names = [pid for pid, n in x.names.items() if n == p.name]
    events = [r for r in x.trace.records if r['provider'] in names and r['kind'] == 'event']
    check(av.closed_by_writer and len(events) >= 1000,
          'beside a hostile client: %d events, closed %s' % (len(events), av.closed_by_writer))
    check(m.alive(), 'trace_manager died')
    a.abandon()
    c.close()
    wait_log(m, r'session 1 (aborted|ended)')
    check(m.alive(), 'trace_manager died after the client went away')
    cv.close()
    p.close()
    m.stop()


def test_streaming_ack_held_then_released():
    """Streaming, a client that stops reading (docs/manager.md): once the archive queue passes
    its high water (half of --archive-queue-mb, 4 MiB here) the manager holds the provider's
    save acknowledgement, so the provider drops records instead of the queue growing without
    bound, and saves nothing more; when the client reads again the acknowledgement is released
    and saves resume. Every record the engine wrote is in the archive."""
    for bad in ('0', '-1', '65537', 'x'):
        r = subprocess.run([MANAGER, '--socket', os.path.join(TMP, 'unused.sock'),
                            '--archive-queue-mb', bad], capture_output=True, text=True, timeout=10)
        check(r.returncode == 2 and '--archive-queue-mb' in r.stderr,
              '--archive-queue-mb %s: %d %r' % (bad, r.returncode, r.stderr))
    m = Manager('--archive-queue-mb', '8')
    p = Provider(m, 'held', '--continuous')
    p.wait_for('registered')
    c = m.controller()
    a = PausedArchive()
    c.initialize(a.give(), mode=STREAMING, buffer_mb=4)
    a.sent()
    p.wait_for('initialized mode=%d' % STREAMING)
    check(c.start() == 0, 'start')
    held = wait_log(m, r'acknowledgement of save (\d+) held \(archive queue (\d+) bytes\)')
    held_save, queued = int(held.group(1)), int(held.group(2))
    check(4 << 20 <= queued < 8 << 20, 'held at %d bytes queued (high water 4 MiB)' % queued)
    # BUFFER_SAVED is cumulative: the provider may still fill and save its other segments (a
    # 4 MiB buffer has 8: saves up to held + 6, the acknowledged one before it being held - 1),
    # and then must wait for the held one: the saves stop (no new one for 0.3 s)
    last, quiet_since, deadline = -1, time.time(), time.time() + 20
    while time.time() - quiet_since < 0.3:
        check(time.time() < deadline, 'saves never stopped while an acknowledgement was held')
        latest = max(int(x) for x in re.findall(r'"held": save (\d+):', m.logs()))
        if latest != last:
            last, quiet_since = latest, time.time()
        time.sleep(0.02)
    check(last <= held_save + 6,
          'saves went on while the acknowledgement was held: %d after %d' % (last, held_save))
    check(m.alive(), 'trace_manager died')
    a.resume()
    released = wait_log(m, r'acknowledgement of save (\d+) released')
    check(int(released.group(1)) == last, 'released %s, the latest save was %d'
          % (released.group(1), last))
    wait_log(m, r'"held": save %d:' % (last + 1))
    stats = c.stop(write_results=True)
    stopped = p.wait_for('stopped')
    written, dropped = field(stopped, 'written'), field(stopped, 'dropped')
    check(dropped > 0 and stats[0]['dropped'] == dropped, 'dropped %d, stats %s' % (dropped, stats))
    c.terminate(write_results=True)
    p.wait_for('terminated')
    x = Checked(a.wait(timeout=60))
    recs = x.records(p.name)
    # (the emitter's own count also takes the attempts between the stop and its handler)
    check(len(recs) == written, '%d records in the archive, the engine wrote %d'
          % (len(recs), written))
    c.close()
    p.close()
    m.stop()


def mapping_kb(pid, name):
    """(Size, Rss) in kB of the mapping of `name` in process `pid` (/proc/PID/smaps)."""
    size = rss = None
    with open('/proc/%d/smaps' % pid) as f:
        inside = False
        for line in f:
            fields = line.split()
            if len(fields) >= 5 and '-' in fields[0] and ':' not in fields[0]:
                inside = name in line
            elif inside and fields[0] == 'Size:':
                size = int(fields[1])
            elif inside and fields[0] == 'Rss:':
                rss = int(fields[1])
                break
    return size, rss


def test_buffer_mapped_at_start():
    """Streaming: the manager's mapping of a provider's buffer gets its page tables when the
    provider reports started (MADV_POPULATE_READ), before the first save: its first copy of
    each segment then takes no page fault per 4 KiB, which delayed the first saves'
    acknowledgements enough for a fast provider to drop records. Not before the start (the
    pages are the provider's to allocate)."""
    m = Manager()
    p = Provider(m, 'mapped', '--events', 10)
    p.wait_for('registered')
    c, a = begin(m, mode=STREAMING, buffer_mb=4)
    p.wait_for('initialized mode=%d size=%d' % (STREAMING, 4 << 20))
    size, rss = mapping_kb(m.proc.pid, 'fxtrace-buffer')
    check(size == 4096 and rss == 0,
          "the manager's mapping of the buffer before the start: %s kB, %s kB resident" % (size, rss))
    check(c.start() == 0, 'start')
    size, rss = mapping_kb(m.proc.pid, 'fxtrace-buffer')
    check(size == 4096 and rss == 4096,
          "the manager's mapping of the buffer once started: %s kB, %s kB resident" % (size, rss))
    c.terminate(write_results=False)
    c.close()
    p.close()
    m.stop()


def test_two_providers_and_registry():
    m = Manager('--category', 'test=tests', '--category', 'cfg=from the configuration')
    a = Provider(m, 'alpha', '--events', 500, '--known', 'test=tests', '--known', 'a=only alpha')
    b = Provider(m, 'beta', '--events', 700, '--sync', '--known', 'test=tests',
                 '--known', 'b=only beta', '--known', 'b=only beta')
    a.wait_for('registered')
    b.wait_for('registered started=0')
    c = m.controller()
    listed = c.providers()
    # the two register concurrently: ids 1 and 2 in either order
    check(sorted(i for i, _, _ in listed) == [1, 2] and
          sorted(n for _, _, n in listed) == ['alpha', 'beta'], 'GetProviders: %s' % listed)
    pids = {n: pid for _, pid, n in listed}
    check(pids.get('alpha') == a.proc.pid and pids.get('beta') == b.proc.pid,
          'pids: %s' % listed)
    known = sorted(c.known_categories())
    check(known == [('a', 'only alpha'), ('b', 'only beta'), ('cfg', 'from the configuration'),
                    ('test', 'tests')],
          'known categories (union of the configuration and the providers, de-duplicated): %s'
          % known)
    # per provider: the manager's configuration first (id 0, its pid), then each provider in
    # registration order, each de-duplicated on its own ("test" stays in all three)
    ids = {n: i for i, _, n in listed}
    groups = c.provider_categories()
    want = [(0, m.proc.pid, 'trace_manager', 1, [('test', 'tests'),
                                                 ('cfg', 'from the configuration')])]
    want += sorted([(ids['alpha'], a.proc.pid, 'alpha', 1, [('test', 'tests'),
                                                            ('a', 'only alpha')]),
                    (ids['beta'], b.proc.pid, 'beta', 1, [('test', 'tests'),
                                                          ('b', 'only beta')])])
    check(groups == want, 'known categories per provider:\n%s\nexpected\n%s' % (groups, want))
    err = c.provider_categories(fmt=2)
    check(err[:2] == ('error', -93), 'an unknown reply format is refused with '
          '-EPROTONOSUPPORT: %s' % (err,))
    # a provider that never answers: listed, marked unanswered, after the 1 s timeout
    mute = wire.Conn(m.path, role=wire.ROLE_PROVIDER)
    mute.send_raw(wire.message(wire.REGISTER_PROVIDER, wire.u64(0) + wire.s('mute') + wire.u8(1)))
    check(mute.recv()[0] == wire.REGISTER_RESULT, 'mute provider registration')
    start = time.time()
    groups = c.provider_categories()
    took = time.time() - start
    check([g[2] for g in groups] == ['trace_manager'] + [n for _, _, n in sorted(listed)] +
          ['mute'] and groups[-1][3:] == (0, []) and 0.9 < took < 4,
          'a provider that does not answer: %s after %.2f s' % (groups, took))
    # `trace list-categories` prints the groups, each provider's under its heading
    env = dict(os.environ, FXTRACE_SOCKET=m.path)
    lc = subprocess.run([TRACE, 'list-categories'], env=env, capture_output=True, text=True,
                        timeout=20)
    lines = lc.stdout.splitlines()
    first, second = sorted(listed)[0][2], sorted(listed)[1][2]
    proc = {'alpha': a.proc.pid, 'beta': b.proc.pid}
    # a trace with the kernel provider (FXTRACE_TEST_KERNEL_PROVIDER=1, set by CMake) ends
    # with the kernel categories of the one trace record starts on demand, since none is
    # registered here; one name column for all groups, theirs included
    kernel = os.environ.get('FXTRACE_TEST_KERNEL_PROVIDER') == '1'
    kernel_names = ['kernel:sched', 'kernel:sched-legacy', 'kernel:task', 'kernel:irq',
                    'kernel:SYSTEM/EVENT']
    w = max([8] + [len(n) for n in kernel_names if kernel])
    expected = ["trace_manager (pid %d): the manager's configuration" % m.proc.pid,
                '  %-*s  tests' % (w, 'test'), '  %-*s  from the configuration' % (w, 'cfg'),
                '%s (provider %d, pid %d)' % (first, ids[first], proc[first]),
                '  %-*s  tests' % (w, 'test'), '  %-*s  only %s' % (w, first[0], first),
                '%s (provider %d, pid %d)' % (second, ids[second], proc[second]),
                '  %-*s  tests' % (w, 'test'), '  %-*s  only %s' % (w, second[0], second),
                'mute (provider 3, pid %d): did not answer' % os.getpid()]
    if kernel:
        expected.append('trace_kernel_provider (not running): trace record starts it on demand '
                        'for kernel:* categories (needs root)')
    tail = lines[len(expected):]
    check(lc.returncode == 0 and lines[:len(expected)] == expected and
          [l[:2 + w].strip() for l in tail] == (kernel_names if kernel else []),
          'trace list-categories (rc %d):\n%s\nexpected\n%s\n%s'
          % (lc.returncode, lc.stdout, '\n'.join(expected), lc.stderr))
    mute.close()
    c.close()
    x, stats, _ = one_trace(m, [a, b], mode=CIRCULAR)
    x.dump_ok()
    check(len(x.events('alpha')) == 500 and len(x.events('beta')) == 700,
          'events: alpha %d beta %d' % (len(x.events('alpha')), len(x.events('beta'))))
    check(sorted(s['name'] for s in stats) == ['alpha', 'beta'], 'stats %s' % stats)
    a.close()
    b.close()
    m.stop()


def test_categories():
    m = Manager()
    p = Provider(m, 'cats', '--events', 100, '--all-categories')
    p.wait_for('registered')
    x, _, _ = one_trace(m, [p], categories=['test:*'])
    check(len(x.events('cats', b'test:sub')) == 100 and not x.events('cats', b'test') and
          not x.events('cats', b'other'), 'prefix: only test:sub')
    c, a = begin(m, categories=['test'])
    check(c.start(additional=['other']) == 0, 'start')
    p.wait_for('emitted')
    c.stop()
    c.terminate()
    x = Checked(a.wait())
    check(len(x.events('cats', b'test')) == 100 and len(x.events('cats', b'other')) == 100 and
          not x.events('cats', b'test:sub'), 'additional categories at start')
    p.close()
    m.stop()


def test_provider_registering_mid_trace():
    m = Manager()
    early = Provider(m, 'early', '--events', 100)
    early.wait_for('registered')
    c, a = begin(m, mode=STREAMING)
    check(c.start() == 0, 'start')
    early.wait_for('emitted')
    late = Provider(m, 'late', '--events', 300, '--sync')
    late.wait_for('registered started=1')
    late.wait_for('started')
    late.wait_for('emitted')
    c.stop()
    c.terminate()
    x = Checked(a.wait())
    check(len(x.events('late')) == 300 and len(x.events('early')) == 100,
          'late provider: %d events' % len(x.events('late')))
    early.close()
    late.close()
    m.stop()


def test_sigkilled_provider():
    m = Manager()
    for mode in (ONESHOT, CIRCULAR, STREAMING):
        victim = Provider(m, 'victim', '--events', 1500)
        other = Provider(m, 'other', '--events', 800)
        victim.wait_for('registered')
        other.wait_for('registered')
        c, a = begin(m, mode=mode)
        check(c.start() == 0, 'start')
        victim.wait_for('emitted')
        other.wait_for('emitted')
        victim.kill()
        time.sleep(0.1)
        stats = c.stop()
        check({s['name']: s['state'] for s in stats} == {'victim': 4, 'other': 1},
              'stats after a kill: %s' % stats)
        c.terminate()
        x = Checked(a.wait())
        x.dump_ok()
        check(len(x.events('victim')) == 1500, 'mode %d: %d of the killed provider\'s 1500 events'
              % (mode, len(x.events('victim'))))
        check(len(x.events('other')) == 800, 'the other provider is affected')
        c.close()
        other.close()
        check(m.alive(), 'manager died')
    # the next trace works
    p = Provider(m, 'after', '--events', 10)
    p.wait_for('registered')
    x, _, _ = one_trace(m, [p])
    check(len(x.events('after')) == 10 and 'victim' not in x.names.values(), 'next trace')
    p.close()
    m.stop()


def test_garbage_buffer():
    m = Manager()
    for mode in (ONESHOT, CIRCULAR, STREAMING):
        bad = Provider(m, 'scribbler', '--events', 3000, '--garbage', 'data')
        good = Provider(m, 'good', '--events', 400)
        bad.wait_for('registered')
        good.wait_for('registered')
        # 4 MiB: the scribbler's records stay in its first rolling segment (streaming: 8
        # segments of 480 KiB), so no save takes them before the scribble
        c, a = begin(m, mode=mode, buffer_mb=4)
        check(c.start() == 0, 'start')
        bad.wait_for('emitted')
        good.wait_for('emitted')
        c.stop()
        c.terminate()
        x = Checked(a.wait(), strict=False)  # framing must hold; contents are garbage
        check(len(x.events('good')) == 400, 'the good provider is intact')
        bad_pid = x.provider_id('scribbler')
        garbage = 0
        for r in x.trace.records:
            if r['provider'] != bad_pid:
                check(r.get('conforms', True), 'a record outside the scribbler\'s section is '
                      'damaged: %s' % r)
            elif not r.get('conforms', True):
                garbage += 1
        check(garbage > 0, 'mode %d: the garbage never reached the archive: the test tests '
              'nothing' % mode)
        c.close()
        bad.close()
        good.close()
    # an unusable header: that provider's data is skipped, the archive conforms
    bad = Provider(m, 'smashed', '--events', 100, '--garbage', 'header')
    good = Provider(m, 'good', '--events', 100)
    x, _, _ = one_trace(m, [bad, good], mode=CIRCULAR)
    check(not x.records('smashed') and len(x.events('good')) == 100, 'smashed header')
    check('buffer unusable' in m.logs(), 'no log line for the unusable buffer')
    bad.close()
    good.close()
    # the live drop counter is written by the provider: a wild value is clamped, never trusted
    # further (the records are still read, the overflow event written)
    liar = Provider(m, 'liar', '--events', 100, '--garbage', 'dropped')
    x, stop_stats, term_stats = one_trace(m, [liar], mode=ONESHOT)
    check(len(x.events('liar')) == 100, 'liar: %d events' % len(x.events('liar')))
    check([s['dropped'] for s in stop_stats] == [2**63 - 1],
          'a drop counter of 2^64-1 is not clamped to 2^63-1: %s' % stop_stats)
    check(any(r['kind'] == 'provider_event' and r['event_id'] == 0 for r in x.trace.records),
          'no buffer-overflow event for the liar')
    check(m.alive(), 'manager died')
    liar.close()
    m.stop()


def test_damaged_segment_table():
    """Streaming's rolling segments (docs/buffer-layout.md): a SAVE_BUFFER for a segment the
    header's switch count says was reused aborts that provider only; a segment count that does
    not match the buffer's size makes its header unusable (its data skipped, logged)."""
    m = Manager()
    bad = Provider(m, 'reused', '--events', 40000, '--garbage', 'segments')
    good = Provider(m, 'good', '--events', 400)  # no save needed: nothing to drop
    bad.wait_for('registered')
    good.wait_for('registered')
    x, stats, _ = one_trace(m, [bad, good], mode=STREAMING, buffer_mb=1)
    check(len(x.events('good')) == 400, 'good: %d events' % len(x.events('good')))
    check('SAVE_BUFFER for a segment the buffer does not hold' in m.logs(),
          'no log line for the damaged segment table')
    check(not x.has('reused') or not x.events('reused'),
          'the aborted provider\'s data reached the archive')
    check(m.alive(), 'manager died')
    bad.close()
    good.close()
    bad = Provider(m, 'miscounted', '--events', 100, '--garbage', 'segment-count')
    good = Provider(m, 'good', '--events', 100)
    x, _, _ = one_trace(m, [bad, good], mode=STREAMING)
    check(not x.records('miscounted') and len(x.events('good')) == 100, 'segment count')
    check('segment count does not match' in m.logs(), 'no log line for the segment count')
    bad.close()
    good.close()
    m.stop()


def test_damaged_records_at_a_save():
    """A streaming save copies a segment in runs of records (docs/manager.md, "What a save
    waits for"), checked record by record in the copy: a metadata record in the provider's
    buffer is dropped and counted, not written (it would re-attribute what follows to another
    provider), a zero header ends its chunk's data, and the rest of each run is kept."""
    m = Manager()
    bad = Provider(m, 'damaged', '--events', 40000, '--garbage', 'save-data')
    good = Provider(m, 'good', '--events', 400)
    bad.wait_for('registered')
    good.wait_for('registered')
    x, stats, _ = one_trace(m, [bad, good], mode=STREAMING, buffer_mb=1)
    check(sorted(x.names.values()) == ['damaged', 'fxtrace', 'good', 'trace_manager'],
          'provider records in the archive: %s' % x.names)
    check(len(x.events('good')) == 400, 'good: %d events' % len(x.events('good')))
    got = len(x.events('damaged'))
    bad_stats = [s for s in stats if s['name'] == 'damaged'][0]
    check(0 < got < 40000 - bad_stats['dropped'],
          'damaged: %d events of 40000 (%d dropped): the damage took nothing away'
          % (got, bad_stats['dropped']))
    check('damaged record(s) skipped at a save' in m.logs(), 'no log line for the damage')
    check(m.alive(), 'manager died')
    bad.close()
    good.close()
    m.stop()


def test_damaged_records_at_a_save_in_process():
    """The same damage through `trace record`'s in-process manager, whose saves copy the
    records straight into the archive thread's ring when nothing is queued before them
    (docs/manager.md, "The archive in the same process"): checked in the ring before they are
    handed over, the same records dropped and counted."""
    out = os.path.join(TMP, 'in-process-damage.fxt')
    # a socket path no daemon listens on: trace record runs its own manager
    env = dict(os.environ, FXTRACE_SOCKET=os.path.join(TMP, 'in-process.sock'))
    r = subprocess.run([TRACE, 'record', '--buffering-mode=streaming', '--buffer-size=1',
                        '--categories=test', '--duration=3', '-o', out, '--', 'sh', '-c',
                        'exec "$0" --socket "$FXTRACE_SOCKET" --name damaged --events 40000 '
                        '--garbage save-data', PROVIDER],
                       capture_output=True, text=True, timeout=60, env=env)
    check(r.returncode == 0, 'trace record: exit %d: %s' % (r.returncode, r.stderr[-800:]))
    check('emitted 40000' in r.stdout, 'the provider did not emit: %r' % r.stdout[-400:])
    stopped = re.search(r'stopped written=(\d+) dropped=(\d+)', r.stdout)
    check(stopped, 'the provider did not stop: %r' % r.stdout[-400:])
    dropped = int(stopped.group(2))
    with open(out, 'rb') as f:
        x = Checked(f.read())
    # no record re-attributed to a provider the damage named
    check(sorted(x.names.values()) == ['damaged', 'fxtrace', 'trace_manager'],
          'provider records in the archive: %s' % x.names)
    got = len(x.events('damaged'))
    check(0 < got < 40000 - dropped,
          'damaged: %d events of 40000 (%d dropped): the damage took nothing away'
          % (got, dropped))
    check(re.search(r"'damaged' .* damaged records in its buffer; \d+ record\(s\) left out",
                    r.stderr), 'no warning for the damage: %s' % r.stderr[-800:])
    kinds = {rec['kind'] for rec in x.trace.records}
    check('metadata' not in kinds, 'a metadata record of the provider reached the archive')


def test_bad_fifo_packet_and_stop_timeout():
    m = Manager(stop_timeout_ms=300)
    bad = Provider(m, 'badpacket', '--events', 10, '--bad-packet')
    hang = Provider(m, 'hang', '--events', 200, '--hang-stop')
    good = Provider(m, 'good', '--events', 50)
    for p in (bad, hang, good):
        p.wait_for('registered')
    c, a = begin(m, mode=CIRCULAR)
    check(c.start() == 0, 'start')
    for p in (bad, hang, good):
        p.wait_for('emitted')
    t0 = time.time()
    stats = {s['name']: s['state'] for s in c.stop()}
    check(time.time() - t0 < 5, 'stop took %.1fs' % (time.time() - t0))
    check(stats == {'badpacket': 4, 'hang': 3, 'good': 1}, 'stats %s' % stats)
    c.terminate()
    x = Checked(a.wait())
    check(not x.has('badpacket'), 'an aborted provider\'s data is ignored')
    check(len(x.events('hang')) == 200, 'a provider that did not stop is read as it is')
    check(len(x.events('good')) == 50, 'good provider')
    for p in (bad, hang, good):
        p.close()
    m.stop()


def test_alerts_relayed():
    """PROTOCOL.md §5.1 WatchAlert through the manager (src/manager/alerts.c): 40 raw ALERT
    packets from one provider (no library limit) while the controller does not watch. The
    manager's limit admits at least 16 (the first window's) and its queue of 16 keeps the newest,
    so whatever the windows: 16 ALERTs come, in order, and the first says 24 were lost before it.
    A second WATCH_ALERT while one waits is refused; the one waiting gets no reply while nothing
    is queued."""
    m = Manager()
    p = Provider(m, 'alerter', '--events', 10, '--raw-alerts', 40)
    p.wait_for('registered')
    c, a = begin(m)
    check(c.start() == 0, 'start')
    p.wait_for('alerted')
    c.stop()  # the manager has read every packet the provider sent before STOPPED
    got = []
    for _ in range(16):
        t, _, payload = c.call(wire.WATCH_ALERT)
        check(t == wire.ALERT, 'WATCH_ALERT answered with type %d' % t)
        got.append(wire.parse_alert(payload))
    names = [g['name'] for g in got]
    nums = [int(n[3:]) for n in names if n.startswith('raw')]
    check(len(nums) == 16 and nums == sorted(set(nums)), 'alerts out of order: %s' % names)
    check(got[0]['dropped'] == 24 and all(g['dropped'] == 0 for g in got[1:]),
          'dropped counts %s' % [g['dropped'] for g in got])
    check(all(g['provider_name'] == 'alerter' and g['pid'] == p.proc.pid for g in got),
          'provider fields %s' % got[:1])
    # nothing queued: the hanging get waits; a second one is refused meanwhile
    rid = c.next_id
    c.next_id += 1
    c.send_raw(wire.message(wire.WATCH_ALERT, b'', rid))
    t, r2, payload = c.call(wire.WATCH_ALERT)
    check(t == wire.ERROR and wire.parse_error(payload)[0] == -16,
          'a second WATCH_ALERT: type %d %r' % (t, payload))
    t, _, _ = c.call(wire.GET_PROVIDERS)  # answered; the waiting WATCH_ALERT is not
    check(t == wire.PROVIDERS, 'GET_PROVIDERS while a WATCH_ALERT waits: type %d' % t)
    c.terminate()
    x = Checked(a.wait())
    check(x.has('alerter'), 'the provider\'s data')
    p.close()
    m.stop()


def test_malformed_messages():
    m = Manager()
    # before HELLO: closed
    raw = wire.Conn(m.path, hello=False)
    raw.send_raw(wire.message(wire.GET_PROVIDERS))
    reply = raw.recv()
    check(reply is None or reply[0] == wire.ERROR, 'a message before HELLO: %s' % (reply,))
    raw.close()
    # bad magic, bad version, wrong length: MSG_ERROR and closed
    for bad in (wire.message(wire.GET_PROVIDERS, magic=0x1234),
                wire.message(wire.GET_PROVIDERS, version=9),
                wire.message(wire.GET_PROVIDERS, length=99), b'\x01\x02'):
        c = m.controller()
        c.send_raw(bad)
        reply = c.recv()
        check(reply is not None and reply[0] == wire.ERROR, 'bad header: %s' % (reply,))
        check(c.recv() is None, 'connection stays open after a bad header')
        c.close()
    c = m.controller()
    c.sock.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, 1 << 20)
    # oversized: MSG_ERROR -EMSGSIZE, the connection still works
    c.send_raw(wire.message(wire.GET_PROVIDERS, b'x' * (300 * 1024)))
    t, _, p = c.recv()
    check(t == wire.ERROR and wire.parse_error(p)[0] == -90, 'oversized: %s' % (t,))
    # unknown type, a provider's message on a controller connection, truncated payloads
    for mtype, payload in ((999, b''), (wire.REGISTER_PROVIDER, b''),
                           (wire.START_TRACING, b''), (wire.STOP_TRACING, b'\x01\x02'),
                           (wire.INITIALIZE_TRACING, b'\xff\xff')):
        reply = c.call(mtype, payload) if mtype != wire.INITIALIZE_TRACING else None
        if mtype == wire.INITIALIZE_TRACING:
            r, w = os.pipe()
            c.send_raw(wire.message(mtype, payload, 7), [w])
            os.close(w)
            reply = c.recv()
            check(os.read(r, 10) == b'', 'a refused INITIALIZE_TRACING keeps the fd')
            os.close(r)
        check(reply[0] == wire.ERROR, 'type %d: %s' % (mtype, reply[:1]))
    # INITIALIZE_TRACING without the fd, with a bad mode
    c.send_raw(wire.message(wire.INITIALIZE_TRACING, wire.strs([]) + wire.u32(1) + wire.u64(0) +
                            wire.u8(0) + wire.u64(0) + wire.u16(0), 8))
    check(c.recv()[0] == wire.ERROR, 'INITIALIZE_TRACING without fd')
    r, w = os.pipe()
    c.send_raw(wire.message(wire.INITIALIZE_TRACING, wire.strs([]) + wire.u32(1) + wire.u64(0) +
                            wire.u8(7) + wire.u64(0) + wire.u16(0), 9), [w])
    os.close(w)
    check(c.recv()[0] == wire.ERROR, 'bad buffering mode')
    os.close(r)
    check(c.providers() == [], 'the connection still answers')
    # start / stop / terminate without a session
    check(c.start() == 1, 'start without a session: NOT_INITIALIZED')
    check(c.stop() == [] and c.terminate() == [], 'stop/terminate without a session')
    c.close()
    # a provider sending garbage is dropped, not the manager
    pc = wire.Conn(m.path, role=wire.ROLE_PROVIDER)
    pc.send_raw(wire.message(wire.REGISTER_PROVIDER, b'\x01'))
    reply = pc.recv()
    check(reply is None or reply[0] == wire.ERROR, 'malformed REGISTER_PROVIDER')
    pc.close()
    check(m.alive(), 'manager died')
    p = Provider(m, 'after', '--events', 10)
    p.wait_for('registered')
    x, _, _ = one_trace(m, [p])
    check(len(x.events('after')) == 10, 'the next trace works')
    p.close()
    m.stop()


def test_second_initialize_and_client_disconnect():
    m = Manager()
    p = Provider(m, 'p', '--events', 100)
    p.wait_for('registered')
    c, a = begin(m)
    # a second INITIALIZE_TRACING on the same connection: refused (one session per
    # connection; other connections may run sessions of their own: test_sessions.py)
    a2 = Archive()
    c.send_raw(wire.message(wire.INITIALIZE_TRACING, wire.strs([]) + wire.u32(1) + wire.u64(0) +
                            wire.u8(0) + wire.u64(0) + wire.u16(0), 5), [a2.give()])
    a2.sent()
    t, rid, payload = c.recv()
    check(t == wire.ERROR and rid == 5 and wire.parse_error(payload)[0] == -16,
          'second INITIALIZE_TRACING: %s' % ((t, rid),))
    check(a2.wait(5) == b'', 'the refused client got data')
    check(c.start() == 0 and c.start() == 2, 'start, then ALREADY_STARTED')
    p.wait_for('emitted')
    # the session's client disconnects mid-trace: the session terminates and
    # the archive (results written) is closed
    c.close()
    x = Checked(a.wait())
    check(len(x.events('p')) == 100, 'results written when the client went away')
    p.wait_for('terminated')
    x, _, _ = one_trace(m, [p])
    check(len(x.events('p')) == 100, 'the next trace works')
    # a client whose archive reader is gone: the session is aborted, no crash
    c = m.controller()
    r, w = os.pipe()
    c.initialize(w, mode=CIRCULAR)
    os.close(w)
    check(c.start() == 0, 'start')
    p.wait_for('emitted')
    os.close(r)
    t, _, _ = c.call(wire.STOP_TRACING, wire.u8(1))
    check(t == wire.ERROR, 'stop with a dead archive reader: %d' % t)
    c.close()
    check(m.alive(), 'manager died on a dead archive reader')
    x, _, _ = one_trace(m, [p])
    check(len(x.events('p')) == 100, 'the trace after an aborted one works')
    p.close()
    m.stop()


def test_sigterm_delivers_archive():
    m = Manager()
    p = Provider(m, 'p', '--events', 300)
    p.wait_for('registered')
    c, a = begin(m, mode=CIRCULAR)
    check(c.start() == 0, 'start')
    p.wait_for('emitted')
    m.stop()  # SIGTERM with an active trace
    x = Checked(a.wait())
    check(len(x.events('p')) == 300, 'the active trace was delivered at shutdown')
    c.close()
    p.close()


def test_disallowed_uid():
    if os.geteuid() != 0:
        print('test_disallowed_uid: SKIPPED (needs root to switch uid)')
        return
    m = Manager()
    os.chmod(TMP, 0o755)
    os.chmod(os.path.dirname(m.path), 0o755)
    os.chmod(m.path, 0o666)  # past the file permissions: SO_PEERCRED must refuse
    nobody = pwd.getpwnam('nobody').pw_uid if 'nobody' in [u.pw_name for u in pwd.getpwall()] \
        else 65534
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(r)
        try:
            os.setgroups([])
            os.setgid(65534)
            os.setuid(nobody)
            c = wire.Conn(m.path)
            reply = c.recv()
            closed = c.recv() is None
            ok = reply is not None and reply[0] == wire.ERROR and \
                wire.parse_error(reply[2])[0] == -13 and closed
            # a provider from that uid is fine
            pc = wire.Conn(m.path, role=wire.ROLE_PROVIDER)
            pc.send_raw(wire.message(wire.REGISTER_PROVIDER, wire.u64(0) + wire.s('nobody') +
                                     wire.u8(1)))
            t = pc.recv()
            ok = ok and t is not None and t[0] == wire.REGISTER_RESULT
            os.write(w, b'ok' if ok else b'bad %r' % (reply,))
        except Exception as e:  # noqa: BLE001
            os.write(w, ('exception %s' % e).encode())
        os._exit(0)
    os.close(w)
    os.waitpid(pid, 0)
    result = os.read(r, 200)
    os.close(r)
    check(result == b'ok', 'a controller of uid %d: %s' % (nobody, result))
    check('not allowed' in m.logs(), 'no log line for the refused connection')
    m.stop()


def as_user(uid, gid, groups, fn):
    """fn() in a child process running as uid / gid / supplementary groups; its result
    (a short string, or the exception it raised) comes back through a pipe."""
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(r)
        try:
            os.setgroups(groups)
            os.setgid(gid)
            os.setuid(uid)
            result = fn()
        except Exception as e:  # noqa: BLE001
            result = 'exception %s: %s' % (type(e).__name__, e)
        os.write(w, result.encode()[:500])
        os._exit(0)
    os.close(w)
    os.waitpid(pid, 0)
    result = os.read(r, 1000).decode()
    os.close(r)
    return result


def try_controller(path):
    """'allowed' if GetProviders is answered, 'refused' on MSG_ERROR{-EACCES} and a close."""
    c = wire.Conn(path)
    # A refusal comes right after HELLO, then the close; sending a request into a closing
    # connection would turn that into ECONNRESET, so wait a moment for it first.
    try:
        reply = c.recv(timeout=0.3)
    except TimeoutError:  # not refused: ask
        reply = c.call(wire.GET_PROVIDERS)
    if reply is None:
        return 'closed without a reply'
    if reply[0] == wire.PROVIDERS:
        return 'allowed'
    if reply[0] == wire.ERROR and wire.parse_error(reply[2])[0] == -13 and c.recv() is None:
        return 'refused'
    return 'unexpected reply %r' % (reply,)


def test_group_members_may_control():
    """--group NAME: the socket is 0660 and its directory 0750, both owned by the group; a
    process of another uid whose primary or supplementary group is NAME may use the
    Controller; one outside the group may not reach the socket, and, given the file
    permissions anyway, is refused by SO_PEERCRED."""
    if os.geteuid() != 0:
        print('test_group_members_may_control: SKIPPED (needs root to switch uid)')
        return
    nobody = pwd.getpwnam('nobody')
    outside = os.getgrouplist('nobody', nobody.pw_gid)
    group = next(g for g in grp.getgrall()
                 if g.gr_gid != 0 and g.gr_gid not in outside and 'nobody' not in g.gr_mem)
    m = Manager('--group', group.gr_name)
    os.chmod(TMP, 0o755)
    st, dst = os.stat(m.path), os.stat(os.path.dirname(m.path))
    check(stat.S_IMODE(st.st_mode) == 0o660 and st.st_gid == group.gr_gid,
          'socket mode %o gid %d, expected 660 and %d' % (stat.S_IMODE(st.st_mode), st.st_gid,
                                                          group.gr_gid))
    check(stat.S_IMODE(dst.st_mode) == 0o750 and dst.st_gid == group.gr_gid,
          'socket directory mode %o gid %d, expected 750 and %d'
          % (stat.S_IMODE(dst.st_mode), dst.st_gid, group.gr_gid))
    uid, other = nobody.pw_uid, nobody.pw_gid
    result = as_user(uid, group.gr_gid, [], lambda: try_controller(m.path))
    check(result == 'allowed', 'uid %d with primary group %s: %s' % (uid, group.gr_name, result))
    result = as_user(uid, other, [group.gr_gid], lambda: try_controller(m.path))
    check(result == 'allowed', 'uid %d with supplementary group %s: %s'
          % (uid, group.gr_name, result))
    result = as_user(uid, other, [], lambda: try_controller(m.path))
    check('PermissionError' in result, 'uid %d outside group %s reached the 0660 socket: %s'
          % (uid, group.gr_name, result))
    os.chmod(os.path.dirname(m.path), 0o755)
    os.chmod(m.path, 0o666)  # past the file permissions: SO_PEERCRED must refuse
    result = as_user(uid, other, [], lambda: try_controller(m.path))
    check(result == 'refused', 'uid %d outside group %s: %s' % (uid, group.gr_name, result))
    check(m.logs().count('not allowed') == 1, 'refusals logged: %s' % m.logs()[-2000:])
    m.stop()
    bad = subprocess.run([MANAGER, '--socket', m.path, '--group', 'no-such-group-fxtrace'],
                         capture_output=True, text=True, timeout=10)
    check(bad.returncode == 1 and 'no-such-group-fxtrace' in bad.stderr,
          'an unknown --group: rc %d, %s' % (bad.returncode, bad.stderr))


SYSLOG_NAMESPACE = r"""
set -e
stage=$1 log=$2
shift 2
mount --rbind /dev "$stage"
mount -t tmpfs fxtrace-test-dev /dev
touch /dev/null /dev/log
mount --bind "$stage/null" /dev/null
mount --bind "$log" /dev/log
exec "$@"
"""


def test_syslog():
    """--syslog: the daemon's log lines go to syslog (LOG_DAEMON, its pid, the level as the
    priority), not stderr. syslog(3) writes to /dev/log, so the manager runs in a private
    mount namespace (unshare -m) whose /dev is a tmpfs holding /dev/null and, as /dev/log,
    a datagram socket this test reads: the machine's own /dev/log (or its absence) is not
    touched."""
    if os.geteuid() != 0:
        print('test_syslog: SKIPPED (needs root for a mount namespace)')
        return
    probe = subprocess.run(['unshare', '-m', '--propagation', 'private', 'true'],
                           capture_output=True, text=True)
    if probe.returncode != 0:
        print('test_syslog: SKIPPED (no mount namespace here: %s)' % probe.stderr.strip())
        return
    log_path = os.path.join(TMP, 'devlog.sock')
    stage = os.path.join(TMP, 'dev-stage')
    os.mkdir(stage)
    sink = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    sink.bind(log_path)
    try:
        m = Manager('--syslog', prefix=['unshare', '-m', '--propagation', 'private', 'sh', '-c',
                                         SYSLOG_NAMESPACE, 'sh', stage, log_path])
        # a warning: a malformed registration
        p = wire.Conn(m.path, role=wire.ROLE_PROVIDER)
        p.send_raw(wire.message(wire.REGISTER_PROVIDER, wire.u8(1)))
        check(p.recv()[0] == wire.ERROR, 'malformed registration answered')
        p.close()
        m.stop()
        sink.settimeout(0.5)
        lines = []
        while True:
            try:
                lines.append(sink.recv(4096).decode('utf-8', 'replace'))
            except socket.timeout:
                break
    finally:
        sink.close()
    tag = 'trace_manager[%d]: ' % m.proc.pid

    def logged(priority, text):
        return any(line.startswith('<%d>' % priority) and tag + text in line for line in lines)
    daemon = 3 << 3
    check(logged(daemon | 6, 'listening on %s' % m.path),
          'no info line "listening on" at daemon.info: %s' % lines[:5])
    check(logged(daemon | 4, 'pid %d: malformed REGISTER_PROVIDER' % os.getpid()),
          'no warning for the malformed registration at daemon.warning: %s' % lines)
    check(any(line.startswith('<%d>' % (daemon | 7)) for line in lines),
          'no debug line at daemon.debug (--log-level debug): %s' % lines)
    check(m.logs() == '', 'log lines on stderr with --syslog: %s' % m.logs()[:500])


def test_real_provider_library_three_processes():
    """examples/demo on the real libtrace-provider, three at once, each mode."""
    m = Manager()
    env = dict(os.environ, FXTRACE_SOCKET=m.path)
    env.pop('FXTRACE_OUTPUT', None)
    for mode in (ONESHOT, CIRCULAR, STREAMING):
        c, a = begin(m, mode=mode, buffer_mb=2)
        check(c.start() == 0, 'start')
        procs = [subprocess.Popen([DEMO, '300'], env=env, stdout=subprocess.DEVNULL)
                 for _ in range(3)]
        PROCESSES.extend(procs)
        for p in procs:
            check(p.wait(timeout=30) == 0, 'demo failed')
        c.stop()
        c.terminate()
        x = Checked(a.wait())
        x.dump_ok()
        demo_ids = [pid for pid, n in x.names.items() if n == 'demo']
        check(len(demo_ids) == 3, 'mode %d: %d demo providers in the archive' % (mode, len(demo_ids)))
        for pid in demo_ids:
            events = [r for r in x.trace.records if r['provider'] == pid and r['kind'] == 'event']
            check(len(events) > 100, 'mode %d: provider %d has %d events' % (mode, pid, len(events)))
        c.close()
    m.stop()


TESTS = [v for k, v in sorted(globals().items()) if k.startswith('test_')]


def run_tests(tests, only):
    """Runs each test (those named in `only`, if any) with cleanup() after it; the logs' tails
    when any failed. The exit status."""
    for t in tests:
        if only and t.__name__ not in only:
            continue
        start = time.time()
        try:
            t()
            print('%s: ok (%.1fs)' % (t.__name__, time.time() - start), flush=True)
        except Exception as e:  # noqa: BLE001
            import traceback
            traceback.print_exc()
            FAILURES.append(t.__name__)
            print('%s: FAILED: %s' % (t.__name__, e), flush=True)
        finally:
            cleanup()
    for f in sorted(os.listdir(TMP)):
        if f.endswith('.log') and FAILURES:
            print('--- %s (tail)' % f)
            with open(os.path.join(TMP, f)) as fh:
                print(fh.read()[-2500:])
    if FAILURES:
        print('FAILED: %s' % ', '.join(FAILURES))
        return 1
    if not os.environ.get('KEEP_TMP'):
        subprocess.run(['rm', '-rf', TMP])
    return 0


def main():
    return run_tests(TESTS, sys.argv[6:])


if __name__ == '__main__':
    sys.exit(main())
