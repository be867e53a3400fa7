#!/usr/bin/env python3
"""Tests of `trace record`, `trace list-providers` and `trace list-categories`:

    test_record.py PATH_TO_TRACE PATH_TO_DEMO [PATH_TO_TRACE_MANAGER]

- flags and errors: bad values exit 2 and create no output; no manager for list-* exits 1
  (list-categories still lists the kernel categories of the kernel provider trace record
  starts on demand, when trace has one: FXTRACE_TEST_KERNEL_PROVIDER=1, set by CMake);
- the controller client against a scripted fake manager (a Python SOCK_SEQPACKET server
  speaking src/protocol/wire.h): good replies are printed, every malformed reply is refused
  with a clear error and exit status 1, never a crash;
- end to end with real processes (when `trace` has its in-process manager): the demo recorded
  in each buffering mode, checked by the independent decoder (tests/tools/fxt_decode.py) and
  `trace dump`; the command's exit status passed through; --duration without a command;
  --format=json; Ctrl-C; and, with the trace_manager daemon, list-providers/list-categories.
Python 3 standard library only. Exit status 0 only if every check passed.
"""

import array
import json
import os
import signal
import socket
import struct
import subprocess
import sys
import tempfile
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, '..', 'tools'))
from fxtest import check, run_tests, status, stop_daemon  # noqa: E402
import fxt_decode as fxt  # noqa: E402

TRACE = DEMO = MANAGER = None
TMP = None
LOCAL = False  # trace runs a manager of its own when none is running

# trace built with the kernel provider (libtracefs): list-categories then ends with the
# categories of the one trace record starts on demand, unless one is registered
KERNEL = os.environ.get('FXTRACE_TEST_KERNEL_PROVIDER') == '1'
KERNEL_HEADING = ('trace_kernel_provider (not running): trace record starts it on demand for '
                  'kernel:* categories (needs root)')
KERNEL_NAMES = ('kernel:sched', 'kernel:sched-legacy', 'kernel:task', 'kernel:irq',
                'kernel:SYSTEM/EVENT')
KERNEL_WIDTH = max(map(len, KERNEL_NAMES)) if KERNEL else 0


def env_with(**kw):
    env = dict(os.environ)
    env.pop('FXTRACE_OUTPUT', None)
    for k, v in kw.items():
        if v is None:
            env.pop(k, None)
        else:
            env[k] = v
    return env


def run(args, env=None, timeout=60, cwd=None):
    """Runs trace; returns (rc, stdout bytes, stderr text)."""
    p = subprocess.run([TRACE] + args, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, env=env, timeout=timeout, cwd=cwd or TMP)
    return p.returncode, p.stdout, p.stderr.decode('utf-8', 'replace')


def path(name):
    return os.path.join(TMP, name)


def no_manager_env():
    """FXTRACE_SOCKET pointing where nothing listens."""
    return env_with(FXTRACE_SOCKET=path('nothing-here.sock'))


def clean_failure(rc, err, what, expect_rc):
    check(rc == expect_rc, '%s: exit status %d, expected %d; stderr: %s' % (what, rc, expect_rc,
                                                                           err[:400]))
    check(err.strip() != '', '%s: nothing on stderr' % what)
    for bad in ('Traceback', 'Sanitizer', 'runtime error', 'Segmentation', 'core dumped'):
        check(bad not in err, '%s: stderr shows a crash (%s): %s' % (what, bad, err[:300]))


def check_kernel_group(lines, width, what):
    """lines: the on-demand kernel provider's group as list-categories prints it (nothing
    when trace has no kernel provider): its heading, then each kernel category in the
    common name column, with a description; kernel:sched's names exactly the ftrace
    events the provider enables."""
    if not KERNEL:
        check(lines == [], '%s: kernel categories listed by a trace without them: %r'
              % (what, lines))
        return
    check(lines[:1] == [KERNEL_HEADING], '%s: no on-demand kernel provider heading: %r'
          % (what, lines[:1]))
    entries = lines[1:]
    check([e[2:2 + width].rstrip() for e in entries] == list(KERNEL_NAMES) and
          all(e[:2] == '  ' and e[2 + width:4 + width] == '  ' and e[4 + width:].strip()
              for e in entries),
          '%s: kernel categories (width %d): %r' % (what, width, entries))
    check(any(e.startswith('  kernel:sched ') and
              '(ftrace sched_switch, sched_waking, sched_wakeup_new)' in e for e in entries),
          '%s: kernel:sched does not name its ftrace events exactly: %r' % (what, entries))


# ---- flags and errors ----

def test_help():
    rc, out, err = run(['--help'])
    check(rc == 0, 'trace --help: exit status %d' % rc)
    for cmd in (b'record', b'list-providers', b'list-categories'):
        check(cmd in out, 'trace --help does not list %s' % cmd.decode())
    rc, out, err = run(['record', '--help'])
    check(rc == 0, 'record --help: exit status %d' % rc)
    for opt in (b'--categories', b'--buffering-mode', b'--buffer-size', b'--duration',
                b'--format', b'-o', b'--trigger'):
        check(opt in out, 'record --help does not mention %s' % opt.decode())
    for cmd in ('list-providers', 'list-categories'):
        rc, out, err = run([cmd, '--help'])
        check(rc == 0 and out.startswith(b'Usage: trace ' + cmd.encode()),
              '%s --help: rc %d, %r' % (cmd, rc, out[:80]))


def test_bad_flags():
    cases = [
        (['--buffering-mode=bogus'], 'buffering mode'),
        (['--buffering-mode='], 'buffering mode'),
        (['--buffer-size=0'], 'buffer size'),
        (['--buffer-size=65'], 'buffer size'),
        (['--buffer-size=-1'], 'buffer size'),
        (['--buffer-size=4MB'], 'buffer size'),
        (['--buffer-size='], 'buffer size'),
        (['--duration=0.0.1'], 'duration'),
        (['--trigger=flight'], 'trigger'),
        (['--trigger=:stop'], 'trigger'),
        (['--trigger=fifteen_chars__:stop'], 'at most 14'),
        (['--trigger=flight:explode'], 'unknown action'),
        (['--trigger=flight:snapshot', '--buffering-mode=streaming'], 'streaming'),
        (['--trigger=flight:snapshot', '-o', '-'], 'standard output'),
        (['--trigger=flight:snapshot', '--format=json'], '--format=json'),
        (['--duration=-3'], 'duration'),
        (['--duration=soon'], 'duration'),
        (['--duration=nan'], 'duration'),
        (['--stop-timeout=0'], 'stop timeout'),
        (['--format=xml'], 'format'),
        (['--categories=' + 'x' * 101], 'longer than'),
        (['--bogus'], 'unknown option'),
        (['-o'], 'needs a value'),
        (['--duration'], 'needs a value'),
        (['-o', ''], 'empty output'),
    ]
    for args, words in cases:
        what = 'record %s' % ' '.join(args)[:60]
        rc, out, err = run(['record'] + args, env=no_manager_env())
        clean_failure(rc, err, what, 2)
        check(words in err, '%s: stderr does not say "%s": %s' % (what, words, err[:300]))
        check('--help' in err, '%s: no hint to run --help' % what)
    check(not os.path.exists(path('trace.fxt')), 'a usage error created trace.fxt')
    for cmd in ('list-providers', 'list-categories'):
        rc, out, err = run([cmd, 'extra'], env=no_manager_env())
        clean_failure(rc, err, '%s extra' % cmd, 2)
        rc, out, err = run([cmd, '--bogus'], env=no_manager_env())
        clean_failure(rc, err, '%s --bogus' % cmd, 2)


def test_no_manager_for_lists():
    for cmd in ('list-providers', 'list-categories'):
        rc, out, err = run([cmd], env=no_manager_env())
        clean_failure(rc, err, '%s without a manager' % cmd, 1)
        check('no trace manager is running' in err,
              '%s without a manager: unclear message: %s' % (cmd, err[:300]))
        if cmd == 'list-categories' and LOCAL:
            # trace record would run its own manager, and the kernel provider in it
            check_kernel_group(out.decode().splitlines(), KERNEL_WIDTH,
                               'list-categories without a manager')
        else:
            check(out == b'', '%s without a manager: wrote to stdout' % cmd)
    # a socket path that is not a socket at all
    not_socket = path('not-a-socket')
    with open(not_socket, 'w') as f:
        f.write('x')
    rc, out, err = run(['list-providers'], env=env_with(FXTRACE_SOCKET=not_socket))
    clean_failure(rc, err, 'list-providers on a regular file', 1)


# ---- a scripted fake manager ----

MAGIC = 0x4d545846
MSG_HELLO, MSG_ERROR = 1, 2
MSG_KNOWN_CATEGORIES = 17
MSG_GET_PROVIDERS, MSG_PROVIDERS = 30, 31
MSG_INITIALIZE_TRACING, MSG_START_TRACING, MSG_START_RESULT = 32, 33, 34
MSG_TERMINATE_TRACING, MSG_TERMINATE_RESULT = 37, 38
MSG_GET_KNOWN_CATEGORIES = 16
MSG_GET_PROVIDER_CATEGORIES, MSG_PROVIDER_CATEGORIES = 39, 40
MSG_ARCHIVE_RING, MSG_ARCHIVE_RING_RESULT = 50, 51
ENOSYS = 38


WIRE_VERSION = 6  # src/protocol/wire.h (3: rolling segments, 4: snapshots, 5: alerts, 6: sessions)


def wire_msg(mtype, request_id, payload, version=WIRE_VERSION, magic=MAGIC, length_delta=0):
    return struct.pack('<IHHII', magic, version, mtype, 16 + len(payload) + length_delta,
                       request_id) + payload


def wstr(s):
    b = s.encode() if isinstance(s, str) else s
    return struct.pack('<H', len(b)) + b


def parse_msg(data):
    magic, version, mtype, length, rid = struct.unpack_from('<IHHII', data)
    return mtype, rid, data[16:]


class FakeManager:
    """Listens on a SOCK_SEQPACKET socket; for each request, `script(mtype, rid, payload, fds)`
    returns the bytes to send back (or None to send nothing, or 'close' to hang up)."""

    def __init__(self, sock_path, script, ring_answer='enosys'):
        self.path = sock_path
        self.script = script
        self.ring_answer = ring_answer  # 'enosys', or 'no-fds': a result without its ring
        self.requests = []
        self.srv = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        self.srv.bind(sock_path)
        self.srv.listen(4)
        self.srv.settimeout(20)
        self.thread = threading.Thread(target=self.serve, daemon=True)
        self.thread.start()

    def serve(self):
        try:
            conn, _ = self.srv.accept()
        except OSError:
            return
        conn.settimeout(20)
        with conn:
            while True:
                try:
                    data, anc, flags, _ = conn.recvmsg(1 << 18, socket.CMSG_SPACE(8 * 4))
                except OSError:
                    return
                if not data:
                    return
                fds = []
                for level, ctype, cdata in anc:
                    if level == socket.SOL_SOCKET and ctype == socket.SCM_RIGHTS:
                        a = array.array('i')
                        a.frombytes(cdata[:len(cdata) - len(cdata) % a.itemsize])
                        fds.extend(a)
                mtype, rid, payload = parse_msg(data)
                self.requests.append((mtype, rid, payload))
                if mtype == MSG_ARCHIVE_RING and self.ring_answer == 'enosys':
                    # a manager without shared archive rings (wire.h): the client keeps to its
                    # archive fd, without a word
                    conn.send(wire_msg(MSG_ERROR, rid, struct.pack('<i', -ENOSYS) +
                                       wstr('unexpected message type')))
                    continue
                if mtype == MSG_ARCHIVE_RING:
                    conn.send(wire_msg(MSG_ARCHIVE_RING_RESULT, rid, payload[:4]))
                    continue
                reply = self.script(mtype, rid, payload, fds)
                if reply == 'close':
                    for fd in fds:
                        os.close(fd)
                    return
                if reply is not None:
                    conn.send(reply)

    def close(self):
        self.srv.close()
        self.thread.join(5)
        try:
            os.unlink(self.path)
        except FileNotFoundError:
            pass


def with_fake(script, args, timeout=30, ring_answer='enosys'):
    sock_path = path('fake.sock')
    fm = FakeManager(sock_path, script, ring_answer)
    try:
        rc, out, err = run(args, env=env_with(FXTRACE_SOCKET=sock_path), timeout=timeout)
    finally:
        fm.close()
    return rc, out, err, fm


def providers_payload(items, count=None):
    body = struct.pack('<H', len(items) if count is None else count)
    for pid_, (ident, pid, name) in enumerate(items):
        body += struct.pack('<IQ', ident, pid) + wstr(name)
    return body


def category_groups_payload(groups, fmt=1, count=None):
    """PROVIDER_CATEGORIES: groups of (id, pid, name, answered, [(name, description)])."""
    body = struct.pack('<BH', fmt, len(groups) if count is None else count)
    for ident, pid, name, answered, items in groups:
        body += struct.pack('<IQ', ident, pid) + wstr(name) + struct.pack('<BH', answered,
                                                                          len(items))
        body += b''.join(wstr(n) + wstr(d) for n, d in items)
    return body


def test_fake_manager_categories():
    """list-categories asks for the per-provider form (format 1) and prints a heading per
    source, its categories indented under it; every malformed reply is refused."""
    groups = [(0, 11, 'trace_manager', 1, [('cfg', 'from the configuration')]),
              (1, 4242, 'alpha', 1, [('gfx', 'graphics things'), ('demo', 'd' * 400)]),
              (2, 4343, 'beta', 0, []),
              (3, 4444, 'gamma', 1, [])]

    def good(mtype, rid, payload, fds):
        if mtype == MSG_HELLO:
            return None
        if mtype == MSG_GET_PROVIDER_CATEGORIES:
            check(payload == b'\x01', 'GET_PROVIDER_CATEGORIES payload %r, expected format 1'
                  % payload)
            return wire_msg(MSG_PROVIDER_CATEGORIES, rid, category_groups_payload(groups))
        return 'close'
    rc, out, err, fm = with_fake(good, ['list-categories'])
    check(rc == 0, 'list-categories (fake): rc %d, %s' % (rc, err[:300]))
    lines = out.decode().splitlines()
    # one name column for every group, the kernel categories' names included
    w = max(8, KERNEL_WIDTH)
    expected = ["trace_manager (pid 11): the manager's configuration",
                '  %-*s  from the configuration' % (w, 'cfg'),
                'alpha (provider 1, pid 4242)',
                '  %-*s  graphics things' % (w, 'gfx'),
                '  %-*s  ' % (w, 'demo') + 'd' * 400,
                'beta (provider 2, pid 4343): did not answer',
                'gamma (provider 3, pid 4444)',
                '  (no known categories)']
    check(lines[:len(expected)] == expected, 'list-categories output:\n%s\nexpected:\n%s'
          % ('\n'.join(lines), '\n'.join(expected)))
    # no kernel provider registered: the one trace record starts on demand, last
    check_kernel_group(lines[len(expected):], w, 'list-categories (fake)')

    # a registered kernel provider, answering or not: its own group only, no second one
    for answered in (1, 0):
        kgroups = [(1, 4242, 'alpha', 1, [('gfx', 'graphics things')]),
                   (2, 77, 'trace_kernel_provider', answered,
                    [('kernel:sched', 'from the provider')] if answered else [])]

        def with_kernel(mtype, rid, payload, fds, kgroups=kgroups):
            if mtype == MSG_GET_PROVIDER_CATEGORIES:
                return wire_msg(MSG_PROVIDER_CATEGORIES, rid, category_groups_payload(kgroups))
            return None
        rc, out, err, fm = with_fake(with_kernel, ['list-categories'])
        lines = out.decode().splitlines()
        expected = ['alpha (provider 1, pid 4242)',
                    '  %-*s  graphics things' % (12 if answered else 8, 'gfx'),
                    'trace_kernel_provider (provider 2, pid 77)' +
                    ('' if answered else ': did not answer')]
        expected += ['  kernel:sched  from the provider'] if answered else []
        check(rc == 0 and lines == expected,
              'list-categories with a registered kernel provider (answered %d): rc %d\n%s\n'
              'expected:\n%s' % (answered, rc, '\n'.join(lines), '\n'.join(expected)))

    # nothing known at all: said on stderr, still exit 0 (unless the on-demand kernel
    # provider's categories are there)
    rc, out, err, fm = with_fake(lambda m, r, p, f: wire_msg(
        MSG_PROVIDER_CATEGORIES, r, category_groups_payload([]))
        if m == MSG_GET_PROVIDER_CATEGORIES else None, ['list-categories'])
    check(rc == 0 and ('no category is known' in err) == (not KERNEL),
          'empty category list: rc %d, %r, %s' % (rc, out, err))
    check_kernel_group(out.decode().splitlines(), max(8, KERNEL_WIDTH), 'empty category list')

    one = [(1, 2, 'a', 1, [('x', 'y')])]
    bad_replies = {
        'another format': category_groups_payload(one, fmt=2),
        'group count larger than the groups': category_groups_payload(one, count=2),
        'more than 101 groups': category_groups_payload([(i, i, 'p', 1, []) for i in range(102)]),
        'answered neither 0 nor 1': category_groups_payload([(1, 2, 'a', 2, [])]),
        'category name over 100 bytes': category_groups_payload([(1, 2, 'a', 1,
                                                                  [('n' * 101, '')])]),
        'description over 400 bytes': category_groups_payload([(1, 2, 'a', 1,
                                                                 [('n', 'd' * 401)])]),
        'entry count past the end': category_groups_payload(one)[:-4],
        'bytes left over': category_groups_payload(one) + b'\0',
        'no format byte': b'',
    }
    for what, payload in bad_replies.items():
        def script(mtype, rid, p, fds, payload=payload):
            if mtype == MSG_GET_PROVIDER_CATEGORIES:
                return wire_msg(MSG_PROVIDER_CATEGORIES, rid, payload)
            return None
        rc, out, err, fm = with_fake(script, ['list-categories'])
        clean_failure(rc, err, 'list-categories, fake manager reply: %s' % what, 1)
        check(out == b'', 'list-categories, %s: printed %r' % (what, out[:100]))
    rc, out, err, fm = with_fake(good, ['list-categories', 'extra'])
    check(rc == 2, 'list-categories with an argument: rc %d' % rc)


def test_fake_manager_replies():
    # good replies
    def good(mtype, rid, payload, fds):
        if mtype == MSG_HELLO:
            check(payload == b'\x02', 'HELLO payload is %r, expected role 2' % payload)
            return None
        if mtype == MSG_GET_PROVIDERS:
            check(payload == b'', 'GET_PROVIDERS has a payload: %r' % payload)
            return wire_msg(MSG_PROVIDERS, rid, providers_payload(
                [(1, 4242, 'alpha'), (7, 99, 'b' * 100)]))
        return 'close'
    rc, out, err, fm = with_fake(good, ['list-providers'])
    check(rc == 0, 'list-providers (fake): rc %d, %s' % (rc, err[:300]))
    lines = out.decode().splitlines()
    check(len(lines) == 3 and lines[0].split() == ['ID', 'PID', 'NAME'],
          'list-providers output: %r' % out[:300])
    check(len(lines) == 3 and lines[1].split() == ['1', '4242', 'alpha'] and
          lines[2].split() == ['7', '99', 'b' * 100], 'list-providers rows: %r' % lines)
    # an empty list
    def empty(mtype, rid, payload, fds):
        if mtype == MSG_GET_PROVIDERS:
            return wire_msg(MSG_PROVIDERS, rid, struct.pack('<H', 0))
        return None
    rc, out, err, fm = with_fake(empty, ['list-providers'])
    check(rc == 0 and 'no provider' in err, 'empty provider list: rc %d, %s' % (rc, err))

    # malformed replies: each must be refused with exit status 1
    bad_replies = {
        'count larger than the items': lambda rid: wire_msg(
            MSG_PROVIDERS, rid, providers_payload([(1, 2, 'a')], count=2)),
        'bytes left over': lambda rid: wire_msg(
            MSG_PROVIDERS, rid, providers_payload([(1, 2, 'a')]) + b'\0'),
        'name over 100 bytes': lambda rid: wire_msg(
            MSG_PROVIDERS, rid, providers_payload([(1, 2, 'n' * 101)])),
        'more than 100 providers': lambda rid: wire_msg(
            MSG_PROVIDERS, rid, providers_payload([(i, i, 'p') for i in range(101)])),
        'string past the end': lambda rid: wire_msg(
            MSG_PROVIDERS, rid, struct.pack('<HIQH', 1, 1, 2, 50) + b'abc'),
        'wrong request id': lambda rid: wire_msg(MSG_PROVIDERS, rid + 1, struct.pack('<H', 0)),
        'wrong type': lambda rid: wire_msg(MSG_START_RESULT, rid, struct.pack('<II', 0, 1)),
        'bad magic': lambda rid: wire_msg(MSG_PROVIDERS, rid, struct.pack('<H', 0),
                                          magic=0x12345678),
        'bad version': lambda rid: wire_msg(MSG_PROVIDERS, rid, struct.pack('<H', 0), version=9),
        'length field wrong': lambda rid: wire_msg(MSG_PROVIDERS, rid, struct.pack('<H', 0),
                                                   length_delta=4),
        'shorter than a header': lambda rid: b'FXTM\x01\x00',
        'an error reply': lambda rid: wire_msg(MSG_ERROR, rid, struct.pack('<i', -13) +
                                               wstr('permission denied by policy')),
        'hang up': None,
    }
    for what, make in bad_replies.items():
        def script(mtype, rid, payload, fds, make=make):
            if mtype == MSG_GET_PROVIDERS:
                return 'close' if make is None else make(rid)
            return None
        rc, out, err, fm = with_fake(script, ['list-providers'])
        clean_failure(rc, err, 'list-providers, fake manager reply: %s' % what, 1)
        check(out == b'', 'list-providers, %s: printed %r' % (what, out[:100]))
    rc, out, err, fm = with_fake(lambda m, r, p, f: wire_msg(
        MSG_ERROR, r, struct.pack('<i', -13) + wstr('permission denied by policy'))
        if m == MSG_GET_PROVIDERS else None, ['list-providers'])
    check('permission denied by policy' in err, 'the manager\'s error message is not shown: %s'
          % err[:300])


def test_fake_manager_record():
    """trace record's requests and its handling of the replies, against a fake manager that
    writes a small archive to the fd it receives."""
    magic_word = struct.pack('<Q', 0x0016547846040010)
    # provider info record: type 0, size 2 words (name 'fake' padded), metadata type 1, id 5
    name = b'fake'
    header = 0 | (2 << 4) | (1 << 16) | (5 << 20) | (len(name) << 52)
    archive = magic_word + struct.pack('<Q', header) + name.ljust(8, b'\0')
    state = {}

    def stats(name_, pid, mode, wrapped, dropped, percent, nd, st, damage='', damaged=0):
        return (wstr(name_) + struct.pack('<QBIQIQB', pid, mode, wrapped, dropped, percent, nd,
                                          st) + wstr(damage) + struct.pack('<Q', damaged))

    def script(mtype, rid, payload, fds):
        if mtype == MSG_INITIALIZE_TRACING:
            state['init'] = payload
            check(len(fds) == 1, 'INITIALIZE_TRACING carried %d fds, expected 1' % len(fds))
            if fds:
                os.write(fds[0], archive)
                state['fd'] = fds[0]
            return None
        if mtype == MSG_START_TRACING:
            state['start'] = payload
            return wire_msg(MSG_START_RESULT, rid, struct.pack('<II', 0, 1))
        if mtype == MSG_TERMINATE_TRACING:
            state['terminate'] = payload
            if 'fd' in state:
                os.close(state.pop('fd'))
            return wire_msg(MSG_TERMINATE_RESULT, rid, struct.pack('<H', 4) +
                            stats('fake', 777, 1, 3, 12, 40, 1000, 1) +
                            stats('slow', 778, 2, 0, 0, 0, 0, 3) +
                            stats('scribbler', 779, 0, 0, 0, 0, 0, 2,
                                  'its buffer header is unusable (bad magic)', 2**64 - 1) +
                            stats('ev\x1b]0;title\x07il', 780, 0, 0, 5, 0, 0, 4))
        if mtype == MSG_GET_PROVIDERS:
            # trace record's round trip after the stop, which collects the alerts that came
            # while stopping (protocol version 5): unanswered, it waits out its timeout
            return wire_msg(MSG_PROVIDERS, rid, struct.pack('<H', 0))
        return None  # WATCH_ALERT stays pending: no alert
    out_file = path('fake.fxt')
    rc, out, err, fm = with_fake(script, [
        'record', '--duration=0.2', '--categories=a, b*,', '--buffer-size=7',
        '--buffering-mode=circular', '--stop-timeout=2', '-o', out_file])
    check(rc == 0, 'record (fake manager): rc %d, %s' % (rc, err[:500]))
    check('warning: the archive comes' not in err and
          [m for m, _, _ in fm.requests].count(MSG_ARCHIVE_RING) == 1,
          'record (fake manager): an ARCHIVE_RING answered ENOSYS: the pipe, silently: %r'
          % err[:300])
    check(os.path.exists(out_file) and open(out_file, 'rb').read() == archive,
          'record (fake manager): the archive was not copied exactly')
    init = state.get('init', b'')
    expect = (struct.pack('<H', 2) + wstr('a') + wstr('b*') + struct.pack('<IQBQH', 7, 5000, 1,
                                                                            2000, 0))
    check(init == expect, 'INITIALIZE_TRACING payload %r, expected %r' % (init, expect))
    check(state.get('start') == b'\x03\x00\x00', 'START_TRACING payload %r, expected RETAIN and '
          'no categories' % state.get('start'))
    check(state.get('terminate') == b'\x01', 'TERMINATE_TRACING payload %r, expected '
          'write_results=1' % state.get('terminate'))
    for words in ('fake', '777', 'circular', '12', '40%', 'slow', 'did not stop in time',
                  "provider 'scribbler' (pid 779) damaged its trace buffer: its buffer header is "
                  'unusable (bad magic); its records could not be read'):
        check(words in err, 'record summary lacks "%s": %s' % (words, err[:600]))
    check("provider 'fake' (pid 777) dropped 12 records" in err,
          'no warning for the dropped records: %s' % err[:600])
    # a provider's name (its own choice) reaches the terminal escaped, in the table and warnings
    check('\x1b' not in err and '\x07' not in err and
          "provider 'ev\\x1b]0;title\\x07il' (pid 780) dropped 5" in err,
          'a provider name with control characters was not escaped: %r' % err[-800:])
    check("provider 'slow' (pid 778) did not stop in time" in err,
          'no warning for the provider that did not stop: %s' % err[:600])
    check('0 records from 4 providers' in err, 'summary totals: %s' % err[:300])

    # a ring answered without its descriptors: the manager may hold a ring for this
    # connection's archive, so the pipe cannot be trusted to carry it: a clear failure, and
    # no INITIALIZE_TRACING
    rc, out, err, fm = with_fake(script, ['record', '--duration=0.2', '-o', path('noring.fxt')],
                                 ring_answer='no-fds')
    clean_failure(rc, err, 'record, a ring without descriptors', 1)
    check('ArchiveRing' in err and MSG_INITIALIZE_TRACING not in [m for m, _, _ in fm.requests],
          'record, a ring without descriptors: %r, requests %s'
          % (err[:300], [m for m, _, _ in fm.requests]))

    # StartTracing refused: exit 1, a clear message, no output file left behind
    def refuse(mtype, rid, payload, fds):
        for fd in fds:
            os.close(fd)
        if mtype == MSG_START_TRACING:
            return wire_msg(MSG_START_RESULT, rid, struct.pack('<II', 2, 1))
        return None
    out_file2 = path('refused.fxt')
    rc, out, err, fm = with_fake(refuse, ['record', '--duration=0.2', '-o', out_file2])
    clean_failure(rc, err, 'record, start refused', 1)
    check('already started' in err, 'record, start refused: message %s' % err[:300])
    check(not os.path.exists(out_file2), 'record, start refused: left %s' % out_file2)

    # InitializeTracing refused with MSG_ERROR: reported when StartTracing waits for its reply
    def init_error(mtype, rid, payload, fds):
        for fd in fds:
            os.close(fd)
        if mtype == MSG_INITIALIZE_TRACING:
            return wire_msg(MSG_ERROR, rid, struct.pack('<i', -16) + wstr('a session exists'))
        return None
    rc, out, err, fm = with_fake(init_error, ['record', '--duration=0.2', '-o', out_file2])
    clean_failure(rc, err, 'record, initialize refused', 1)
    check('a session exists' in err, 'record, initialize refused: message %s' % err[:300])

    # a malformed TERMINATE_RESULT (state 9): refused, exit 1
    def bad_stats(mtype, rid, payload, fds):
        if mtype == MSG_INITIALIZE_TRACING:
            os.write(fds[0], archive)
            state['fd2'] = fds[0]
        if mtype == MSG_START_TRACING:
            return wire_msg(MSG_START_RESULT, rid, struct.pack('<II', 0, 1))
        if mtype == MSG_TERMINATE_TRACING:
            os.close(state.pop('fd2'))
            return wire_msg(MSG_TERMINATE_RESULT, rid, struct.pack('<H', 1) +
                            stats('x', 1, 0, 0, 0, 0, 0, 9))
        return None
    rc, out, err, fm = with_fake(bad_stats, ['record', '--duration=0.2', '-o', out_file2])
    clean_failure(rc, err, 'record, malformed TERMINATE_RESULT', 1)
    check('malformed' in err, 'record, malformed TERMINATE_RESULT: message %s' % err[:300])


# ---- end to end ----

def decode_ok(archive, what):
    with open(archive, 'rb') as f:
        data = f.read()
    t = fxt.decode(data)
    check(t.ok, '%s: the independent decoder finds errors: %s' % (what, t.errors[:3]))
    return t


def dump_ok(archive, what):
    rc, out, err = run(['dump', archive])
    check(rc == 0, '%s: trace dump exit status %d: %s' % (what, rc, err[:300]))
    check('warning' not in err, '%s: trace dump warns: %s' % (what, err[:300]))
    return out.decode('utf-8', 'replace')


def private_env():
    """No manager anywhere: trace record must start its own (its socket directory goes to
    TMPDIR, checked empty afterwards)."""
    os.makedirs(path('tmpdir'), exist_ok=True)
    return env_with(FXTRACE_SOCKET=path('no-manager.sock'), XDG_RUNTIME_DIR=None,
                    TMPDIR=path('tmpdir'))


def check_no_leftovers(what):
    left = os.listdir(path('tmpdir')) if os.path.isdir(path('tmpdir')) else []
    check(left == [], '%s: the in-process manager left %r behind' % (what, left))


def test_record_demo_modes():
    for mode in ('oneshot', 'circular', 'streaming'):
        what = 'record demo (%s)' % mode
        out_file = path('demo-%s.fxt' % mode)
        rc, out, err = run(['record', '--buffering-mode=' + mode, '-o', out_file, '--',
                            DEMO, '200'], env=private_env())
        check(rc == 0, '%s: exit status %d: %s' % (what, rc, err[:600]))
        check(b'demo: processed 200 items' in out, '%s: the demo did not run: %r' % (what, out))
        if not check(os.path.exists(out_file), '%s: no archive' % what):
            continue
        t = decode_ok(out_file, what)
        names = [p.name for p in t.providers.values()]
        check(b'demo' in names, '%s: no provider-info record named demo: %r' % (what, names))
        events = [r for r in t.records if r['kind'] == 'event']
        check(len(events) > 100, '%s: only %d events' % (what, len(events)))
        names = set(r.get('name') for r in events)
        # the demo registers synchronously and waits to be started: its first and last
        # events are in the trace
        for n in (b'start', b'produce', b'process', b'done'):
            check(n in names, '%s: no %s event' % (what, n.decode()))
        produced = [r for r in events if r.get('name') == b'produce']
        check(len(produced) >= 200, '%s: %d produce events for 200 items' % (what,
                                                                             len(produced)))
        dumped = dump_ok(out_file, what)
        check('produce' in dumped, '%s: trace dump shows no produce event' % what)
        row = [line.split() for line in err.splitlines() if line.split()[:1] == ['demo']]
        check(len(row) == 1 and row[0][2] == mode and row[0][4] == '0',
              '%s: no summary row for demo in %s mode with 0 dropped: %s' % (what, mode, err))
        # the RECORDS column and the total count the archive's data records (every record
        # but the metadata ones, rtype 0) of each provider, as a decoder finds them
        demo_ids = [i for i, p in t.providers.items() if p.name == b'demo']
        data = [r for r in t.records if r['rtype'] != 0]
        demo_records = sum(1 for r in data if r['provider'] in demo_ids)
        check(len(row) == 1 and row[0][3] == str(demo_records),
              '%s: summary row says %s records for demo, the archive holds %d: %s'
              % (what, row[0][3] if row else '-', demo_records, err[:600]))
        check(' %d records from ' % len(data) in err,
              '%s: summary total is not the archive\'s %d data records: %s'
              % (what, len(data), err[:600]))
        check('warning' not in err, '%s: warnings: %s' % (what, err[:600]))
        check_no_leftovers(what)


def test_stdout_output():
    """-o -: the archive on stdout, the command's own output moved to stderr."""
    rc, out, err = run(['record', '-o', '-', '--', DEMO, '50'], env=private_env())
    check(rc == 0, 'record -o -: exit status %d: %s' % (rc, err[:300]))
    t = fxt.decode(out)
    check(t.ok, 'record -o -: stdout is not a valid archive: %s' % t.errors[:3])
    check(b'demo' in [p.name for p in t.providers.values()], 'record -o -: no demo provider')
    check('demo: processed 50 items' in err, 'record -o -: the demo\'s output is not on stderr')


def test_exit_status_passthrough():
    for code in (0, 3, 77):
        rc, out, err = run(['record', '-o', path('exit.fxt'), '--', 'sh', '-c', 'exit %d' % code],
                           env=private_env())
        check(rc == code, 'record -- sh -c "exit %d": exit status %d: %s' % (code, rc, err[:300]))
        decode_ok(path('exit.fxt'), 'record of sh exit %d' % code)
    rc, out, err = run(['record', '-o', path('kill.fxt'), '--', 'sh', '-c', 'kill -9 $$'],
                       env=private_env())
    check(rc == 128 + 9, 'a command killed by SIGKILL: exit status %d' % rc)
    rc, out, err = run(['record', '-o', path('none.fxt'), '--', path('no-such-program')],
                       env=private_env())
    clean_failure(rc, err, 'record of a missing program', 1)
    check('cannot run' in err, 'record of a missing program: message %s' % err[:300])


def check_manager_named(t, name, pid, what):
    """The wall-clock anchors are instants on the manager's own thread (koid = its pid): the
    archive names that process and thread (kernel objects), so that readers do not show an
    unnamed process holding them (docs/merge.md#anchors)."""
    anchors = [r for r in t.records if r['kind'] == 'event' and r.get('category') == b'fxtrace:clock']
    check(len(anchors) >= 2 and all((r['pid'], r['tid']) == (pid, pid) for r in anchors),
          '%s: the anchors are not on the manager\'s thread %d: %r'
          % (what, pid, [(r['pid'], r['tid']) for r in anchors]))
    kobjs = [(r['obj_type'], r['name']) for r in t.records
             if r['kind'] == 'kernel_object' and r['koid'] == pid]
    check((1, name) in kobjs and (2, name) in kobjs,
          '%s: the manager (pid %d) is not named %r as a process and a thread: %r'
          % (what, pid, name, kobjs))


def test_duration_without_command():
    out_file = path('duration.fxt')
    start = time.monotonic()
    rc, out, err = run(['record', '--duration=0.5', '-o', out_file], env=private_env())
    elapsed = time.monotonic() - start
    check(rc == 0, 'record --duration=0.5: exit status %d: %s' % (rc, err[:300]))
    check(0.5 <= elapsed < 8, 'record --duration=0.5 took %.2f s' % elapsed)
    t = decode_ok(out_file, 'record --duration=0.5')
    check(t.records and t.records[0]['kind'] == 'magic', 'record --duration: no magic record')
    check('no provider' in err, 'record --duration with no provider: no note: %s' % err[:300])
    anchors = [r for r in t.records if r['kind'] == 'event' and r.get('category') == b'fxtrace:clock']
    if check(anchors, 'record --duration: no anchor'):
        check_manager_named(t, b'trace', anchors[0]['pid'], 'record --duration')
    # a new archive is the owner's only, whatever the umask (docs/security.md); an existing
    # file keeps its mode
    mode = os.stat(out_file).st_mode & 0o777
    check(mode == 0o600, 'record: a new archive has mode %o, expected 600' % mode)
    os.chmod(out_file, 0o640)
    rc, out, err = run(['record', '--duration=0.1', '-o', out_file], env=private_env())
    mode = os.stat(out_file).st_mode & 0o777
    check(rc == 0 and mode == 0o640, 'record over an existing file: mode %o, expected 640' % mode)
    # the duration also ends a command that runs longer
    start = time.monotonic()
    rc, out, err = run(['record', '--duration=0.5', '-o', out_file, '--', 'sleep', '30'],
                       env=private_env())
    elapsed = time.monotonic() - start
    check(rc == 0, 'record --duration=0.5 -- sleep 30: exit status %d: %s' % (rc, err[:300]))
    check(elapsed < 10, 'record --duration=0.5 -- sleep 30 took %.2f s' % elapsed)


def test_json_output():
    out_file = path('demo.json')
    rc, out, err = run(['record', '--format=json', '-o', out_file, '--', DEMO, '100'],
                       env=private_env())
    check(rc == 0, 'record --format=json: exit status %d: %s' % (rc, err[:300]))
    with open(out_file, 'rb') as f:
        doc = json.loads(f.read().decode('utf-8'))
    events = doc.get('traceEvents', [])
    check(len(events) > 50, 'record --format=json: only %d events' % len(events))
    check(any(e.get('name') == 'produce' for e in events), 'record --format=json: no produce')
    # the default output name follows the format
    rc, out, err = run(['record', '--format=json', '--duration=0.2'], env=private_env())
    check(rc == 0 and os.path.exists(path('trace.json')),
          'record --format=json without -o: rc %d, no trace.json: %s' % (rc, err[:300]))
    json.load(open(path('trace.json')))


def test_interrupt():
    out_file = path('sigint.fxt')
    p = subprocess.Popen([TRACE, 'record', '-o', out_file, '--', 'sleep', '30'], cwd=TMP,
                         env=private_env(), stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    time.sleep(1.0)
    start = time.monotonic()
    p.send_signal(signal.SIGINT)
    out, err = p.communicate(timeout=30)
    err = err.decode('utf-8', 'replace')
    check(time.monotonic() - start < 10, 'record stopped slowly after SIGINT')
    check(p.returncode == 0, 'record after SIGINT: exit status %d: %s' % (p.returncode, err[:300]))
    check('stopping' in err, 'record after SIGINT: says nothing: %s' % err[:300])
    decode_ok(out_file, 'record stopped by SIGINT')


def test_daemon_lists():
    sock = path('daemon.sock')
    d = subprocess.Popen([MANAGER, '--socket', sock, '--category', 'cfg=declared by the manager'],
                         stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    demo = None
    try:
        # the socket file exists from bind(), a moment before listen(): wait until the daemon
        # answers (under load that moment can be long enough for a client to be refused, and a
        # provider refused at its start does not register)
        env = env_with(FXTRACE_SOCKET=sock)
        for _ in range(200):
            rc, out, err = run(['list-providers'], env=env)
            if rc == 0:
                break
            time.sleep(0.05)
        check(rc == 0, 'list-providers (daemon, none registered): rc %d: %s' % (rc, err[:300]))
        demo = subprocess.Popen([DEMO, '1000000'], env=env, stdout=subprocess.DEVNULL)
        seen = False
        for _ in range(100):
            rc, out, err = run(['list-providers'], env=env)
            if rc == 0 and b' demo' in out:
                seen = True
                break
            time.sleep(0.05)
        check(seen, 'list-providers never showed the demo: rc %d %r %s' % (rc, out, err[:300]))
        if seen:
            row = [line.split() for line in out.decode().splitlines()[1:]]
            check(any(r[1] == str(demo.pid) and r[2] == 'demo' for r in row),
                  'list-providers: no row with the demo\'s pid %d: %r' % (demo.pid, row))
        rc, out, err = run(['list-categories'], env=env)
        check(rc == 0, 'list-categories (daemon): rc %d: %s' % (rc, err[:300]))
        lines = out.decode().splitlines()
        check(lines[:2] == ["trace_manager (pid %d): the manager's configuration" % d.pid,
                            '  %-*s  declared by the manager' % (max(8, KERNEL_WIDTH), 'cfg')] and
              'demo (provider 1, pid %d)' % demo.pid in lines,
              'list-categories (daemon) grouping: %r' % lines)
        # no kernel provider registered: the on-demand one's categories come last
        tail = lines[lines.index(KERNEL_HEADING):] if KERNEL_HEADING in lines else []
        check_kernel_group(tail, max(8, KERNEL_WIDTH), 'list-categories (daemon)')
        # trace record through the daemon (no in-process manager) while the demo runs
        out_file = path('daemon.fxt')
        rc, out, err = run(['record', '--duration=0.5', '-o', out_file], env=env)
        check(rc == 0, 'record through the daemon: rc %d: %s' % (rc, err[:300]))
        t = decode_ok(out_file, 'record through the daemon')
        check(b'demo' in [p.name for p in t.providers.values()],
              'record through the daemon: no demo provider')
        check_manager_named(t, b'trace_manager', d.pid, 'record through the daemon')
    finally:
        if demo:
            demo.kill()
            demo.wait()
        check(stop_daemon(d), 'trace_manager did not exit on SIGTERM')


def has_local_manager():
    rc, out, err = run(['record', '--duration=0.1', '-o', path('probe.fxt')], env=private_env())
    return 'start trace_manager first' not in err


def main():
    global TRACE, DEMO, MANAGER, TMP, LOCAL
    if len(sys.argv) not in (3, 4):
        print('usage: test_record.py PATH_TO_TRACE PATH_TO_DEMO [PATH_TO_TRACE_MANAGER]',
              file=sys.stderr)
        return 2
    TRACE = os.path.abspath(sys.argv[1])
    DEMO = os.path.abspath(sys.argv[2])
    MANAGER = os.path.abspath(sys.argv[3]) if len(sys.argv) == 4 else None
    tests = [
        ('help', test_help),
        ('bad flags', test_bad_flags),
        ('no manager for list-*', test_no_manager_for_lists),
        ('controller against a fake manager', test_fake_manager_replies),
        ('list-categories against a fake manager', test_fake_manager_categories),
        ('record against a fake manager', test_fake_manager_record),
    ]
    with tempfile.TemporaryDirectory(prefix='fxtrace-record-') as TMP:
        local = LOCAL = has_local_manager()
        if MANAGER and not local:
            check(False, 'the manager is built, but trace record cannot run one in-process')
        if local:
            tests += [
                ('record the demo in each buffering mode', test_record_demo_modes),
                ('exit status passed through', test_exit_status_passthrough),
                ('-o - (stdout)', test_stdout_output),
                ('--duration without a command', test_duration_without_command),
                ('--format=json', test_json_output),
                ('SIGINT stops cleanly', test_interrupt),
            ]
            if MANAGER:
                tests.append(('list-* and record through trace_manager', test_daemon_lists))
        else:
            print('note: this trace has no in-process manager; end-to-end tests skipped')
        run_tests(tests)
    return status()


if __name__ == '__main__':
    sys.exit(main())
