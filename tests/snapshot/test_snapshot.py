#!/usr/bin/env python3
"""Snapshots of a running trace (issue 22, docs/snapshots.md), end to end:
`trace record` runs tests/snapshot/snapshot_ticker.c, which records numbered ticks
("counter"/"tick", argument "counter" = 0, 1, 2, ...), sends SIGUSR1 to trace right after
known ticks and waits until trace has written the snapshot (the test reads "snapshot N ...
wrote" on trace's stderr, then lets it go on). So no tick is recorded while a snapshot is
taken, and the test knows exactly which ticks came before each request:

  test_snapshot.py TRACE TICKER TOOLS_DIR [TRACE_MANAGER]

- circular, 1 MiB (wraps before the first request), in-process manager and the trace_manager
  daemon: two snapshots out.1.fxt, out.2.fxt beside out.fxt, each a valid archive (the
  independent decoder tests/tools/fxt_decode.py) holding ticks first..K without a gap, K the
  request's tick, first > 0 (the buffer wrapped), nothing dropped or discarded and no overflow
  event; the records of the ticker in each file == what trace reported for it; the final
  archive runs to the program's last tick;
- --max-snapshots=1: only out.2.fxt is left, out.1.fxt is removed and trace says so;
- oneshot, 1 MiB (full before the first request): each snapshot holds ticks 0..m without a gap
  and ticks + dropped == K + 1 exactly, with the overflow event;
- compressed output (out.fxt.zst): the snapshots are out.1.fxt.zst, ..., zstd files holding
  valid archives (decompressed with the zstd tool);
- streaming mode: SIGUSR1 takes no snapshot and says why, the trace goes on;
- usage errors: --max-snapshots with streaming, -o -, --format=json, or a bad number.
"""
import os
import queue
import re
import shutil
import subprocess
import sys
import tempfile
import threading
import time
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', 'tools'))
from fxtest import FAILS, check, stop_daemon  # noqa: E402

TRACE = TICKER = TMP = MANAGER = None
fxt = None
WAIT_S = 120  # a guard against a hang, never a timing assertion


def env(sock=None):
    e = dict(os.environ)
    e.pop('XDG_RUNTIME_DIR', None)
    e.pop('FXTRACE_OUTPUT', None)
    e['FXTRACE_SOCKET'] = sock or os.path.join(TMP, 'no-manager.sock')  # trace runs its own
    return e


class Lines:
    """The lines of a stream, read by a thread, waited for by pattern."""

    def __init__(self, stream):
        self.q = queue.Queue()
        self.all = []
        self.t = threading.Thread(target=self._read, args=(stream,), daemon=True)
        self.t.start()

    def _read(self, stream):
        for line in stream:
            self.q.put(line.decode('utf-8', 'replace'))
        self.q.put(None)

    def wait(self, pattern):
        """The first line from now on matching pattern, or None (end of stream, or the guard)."""
        deadline = time.monotonic() + WAIT_S
        while True:
            try:
                line = self.q.get(timeout=max(0.1, deadline - time.monotonic()))
            except queue.Empty:
                return None
            if line is None:
                self.q.put(None)
                return None
            self.all.append(line)
            m = re.search(pattern, line)
            if m:
                return m
            if time.monotonic() > deadline:
                return None

    def rest(self):
        self.t.join(WAIT_S)
        while True:
            try:
                line = self.q.get_nowait()
            except queue.Empty:
                break
            if line is not None:
                self.all.append(line)
        return ''.join(self.all)


def record(what, mode, requests, count, out_file, extra=(), sock=None, expect_snapshots=True):
    """Runs trace record on the ticker; returns (status, stderr, {n: (records, dropped,
    discarded)}) or None."""
    args = [TRACE, 'record', '--buffering-mode=' + mode, '--buffer-size=1', '-o', out_file]
    args += list(extra) + ['--', TICKER] + [str(k) for k in requests] + [str(count)]
    p = subprocess.Popen(args, env=env(sock), stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE)
    out, err = Lines(p.stdout), Lines(p.stderr)
    reported = {}
    try:
        for n, k in enumerate(requests, 1):
            if out.wait(r'^requested after %d$' % k) is None:
                # (the messages read the rest of stderr only on a failure: that waits for its end)
                check(False, '%s: the ticker never reached tick %d: %s' % (what, k, err.rest()))
                return None
            if expect_snapshots:
                m = err.wait(r'snapshot %d \(SIGUSR1\): wrote (\S+)' % n)
                if m is None:
                    check(False, '%s: no snapshot %d: %s' % (what, n, err.rest()))
                    return None
                m = err.wait(r"provider 'snapshot_ticker' \(pid \d+\): (\d+) records, (\d+) "
                             r"dropped, (\d+) discarded")
                if not check(m is not None, '%s: snapshot %d: no provider line' % (what, n)):
                    return None
                reported[n] = tuple(int(x) for x in m.groups())
            else:
                if err.wait(r'SIGUSR1: no snapshot') is None:
                    check(False, '%s: SIGUSR1 said nothing: %s' % (what, err.rest()))
                    return None
            p.stdin.write(b'go\n')
            p.stdin.flush()
        check(out.wait(r'^done %d$' % count) is not None, '%s: the ticker did not finish' % what)
        p.stdin.close()
        status = p.wait(timeout=WAIT_S)
        return status, err.rest(), reported
    finally:
        if p.poll() is None:
            p.kill()
            p.wait()


def decode(path, what):
    if path.endswith('.zst'):
        data = subprocess.run(['zstd', '-dc', path], stdout=subprocess.PIPE, check=True).stdout
    else:
        with open(path, 'rb') as f:
            data = f.read()
    t = fxt.decode(data)
    if not check(t.ok, '%s: the independent decoder finds errors: %s' % (what, t.errors[:3])):
        return None
    return t


def content(t, what):
    """(ticks in archive order, the ticker's non-metadata records, overflow events)."""
    ids = [r['provider_id'] for r in t.records
           if r['kind'] == 'provider_info' and r.get('name') == b'snapshot_ticker']
    check(len(ids) == 1, '%s: %d provider-info records for the ticker' % (what, len(ids)))
    ticks = []
    for r in t.records:
        if r['kind'] == 'event' and r.get('name') == b'tick':
            ticks += [a['value'] for a in r['args'] if a['name'] == b'counter']
    records = sum(1 for r in t.records if r['rtype'] != 0 and ids and r['provider'] == ids[0])
    overflows = sum(1 for r in t.records
                    if r['kind'] == 'provider_event' and r['event_id'] == 0)
    magic = t.records[:1] and t.records[0]['kind'] == 'magic'
    check(magic, '%s: does not begin with the magic record' % what)
    return ticks, records, overflows


def contiguous(ticks):
    return bool(ticks) and ticks == list(range(ticks[0], ticks[0] + len(ticks)))


def check_snapshot(path, what, k, reported, mode):
    if not check(os.path.exists(path), '%s: %s is missing' % (what, path)):
        return
    t = decode(path, what)
    if t is None:
        return
    ticks, records, overflows = content(t, what)
    rec, dropped, discarded = reported
    print('   %s: ticks %s..%s (%d), %d records, %d dropped, %d discarded'
          % (what, ticks[:1], ticks[-1:], len(ticks), rec, dropped, discarded), flush=True)
    check(records == rec, '%s: the file holds %d records of the ticker, trace reported %d'
          % (what, records, rec))
    check(contiguous(ticks), '%s: the ticks are not a run without a gap' % what)
    check(discarded == 0, '%s: %d discarded, though nothing was written during the snapshot'
          % (what, discarded))
    if mode == 'circular':
        check(ticks[-1:] == [k], '%s: the last tick is %s, not the request\'s %d'
              % (what, ticks[-1:], k))
        check(ticks[:1] != [0], '%s: starts at tick 0: the buffer did not wrap' % what)
        check(dropped == 0 and overflows == 0, '%s: %d dropped, %d overflow events'
              % (what, dropped, overflows))
    else:  # oneshot, full before the request: every tick is in the snapshot or dropped
        check(ticks[:1] == [0], '%s: does not start at tick 0' % what)
        check(len(ticks) + dropped == k + 1, '%s: %d ticks + %d dropped != %d attempted'
              % (what, len(ticks), dropped, k + 1))
        check(dropped > 0 and overflows == 1, '%s: %d dropped, %d overflow events (the buffer '
              'was full)' % (what, dropped, overflows))


def test_circular(sock=None, label='in-process manager'):
    what = 'circular, ' + label
    out_file = os.path.join(TMP, 'circ.fxt')
    requests, count = [30000, 45000], 50000
    got = record(what, 'circular', requests, count, out_file, sock=sock)
    if not got:
        return
    status, err, reported = got
    if not check(status == 0, '%s: status %d: %s' % (what, status, err)):
        return
    for n, k in enumerate(requests, 1):
        check_snapshot(os.path.join(TMP, 'circ.%d.fxt' % n), '%s, snapshot %d' % (what, n), k,
                       reported[n], 'circular')
    t = decode(out_file, what + ', final archive')
    if t:
        ticks, _, _ = content(t, what)
        check(contiguous(ticks) and ticks[-1] == count - 1,
              '%s: the final archive\'s ticks %s..%s do not run to %d without a gap'
              % (what, ticks[:1], ticks[-1:], count - 1))


def test_max_snapshots():
    what = '--max-snapshots=1'
    out_file = os.path.join(TMP, 'max.fxt')
    requests = [25000, 26000]
    got = record(what, 'circular', requests, 27000, out_file, extra=['--max-snapshots=1'])
    if not got:
        return
    status, err, reported = got
    if not check(status == 0, '%s: status %d: %s' % (what, status, err)):
        return
    first, second = os.path.join(TMP, 'max.1.fxt'), os.path.join(TMP, 'max.2.fxt')
    check(not os.path.exists(first), '%s: %s is still there' % (what, first))
    check('removed %s (--max-snapshots=1)' % first in err, '%s: the removal is not said: %s'
          % (what, err))
    check_snapshot(second, what + ', snapshot 2', requests[1], reported[2], 'circular')


def test_oneshot():
    what = 'oneshot'
    out_file = os.path.join(TMP, 'one.fxt')
    requests = [40000, 50000]
    got = record(what, 'oneshot', requests, 51000, out_file)
    if not got:
        return
    status, err, reported = got
    if not check(status == 0, '%s: status %d: %s' % (what, status, err)):
        return
    for n, k in enumerate(requests, 1):
        check_snapshot(os.path.join(TMP, 'one.%d.fxt' % n), '%s, snapshot %d' % (what, n), k,
                       reported[n], 'oneshot')


def test_compressed():
    what = 'compressed (.fxt.zst)'
    if not shutil.which('zstd'):
        print('   skipped: %s needs the zstd tool (scripts/install-deps.sh)' % what)
        return
    out_file = os.path.join(TMP, 'z.fxt.zst')
    requests = [25000]
    got = record(what, 'circular', requests, 26000, out_file)
    if not got:
        return
    status, err, reported = got
    if not check(status == 0, '%s: status %d: %s' % (what, status, err)):
        return
    check_snapshot(os.path.join(TMP, 'z.1.fxt.zst'), what + ', snapshot 1', requests[0],
                   reported[1], 'circular')


def test_streaming_sigusr1():
    what = 'SIGUSR1 in streaming mode'
    out_file = os.path.join(TMP, 'stream.fxt')
    got = record(what, 'streaming', [1000], 2000, out_file, expect_snapshots=False)
    if not got:
        return
    status, err, _ = got
    check(status == 0, '%s: status %d (the trace must go on): %s' % (what, status, err))
    check('streaming' in err, '%s: the warning does not say why: %s' % (what, err))
    check(not os.path.exists(os.path.join(TMP, 'stream.1.fxt')), '%s: a snapshot file' % what)


def test_usage_errors():
    cases = [
        (['--buffering-mode=streaming', '--max-snapshots=2'], 'streaming'),
        (['--buffering-mode=circular', '--max-snapshots=2', '-o', '-'], 'standard output'),
        (['--buffering-mode=circular', '--max-snapshots=2', '--format=json',
          '-o', os.path.join(TMP, 'x.json')], 'json'),
        (['--buffering-mode=circular', '--max-snapshots=0'], 'max-snapshots'),
        (['--buffering-mode=circular', '--max-snapshots=x'], 'max-snapshots'),
    ]
    for args, word in cases:
        p = subprocess.run([TRACE, 'record', '--duration=1'] + args, env=env(),
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=60)
        err = p.stderr.decode('utf-8', 'replace')
        check(p.returncode == 2 and word in err, 'usage error %s: status %d, %r'
              % (args, p.returncode, err))


def with_daemon():
    sock = os.path.join(TMP, 'daemon.sock')
    d = subprocess.Popen([MANAGER, '--socket', sock], stdout=subprocess.DEVNULL,
                         stderr=subprocess.DEVNULL)
    try:
        for _ in range(400):
            if os.path.exists(sock):
                break
            time.sleep(0.05)
        if check(os.path.exists(sock), 'the trace_manager daemon did not start'):
            test_circular(sock, 'trace_manager daemon')
    finally:
        stop_daemon(d, timeout=30)


def main():
    global TRACE, TICKER, TMP, MANAGER, fxt
    if len(sys.argv) not in (4, 5):
        print(__doc__)
        return 2
    TRACE, TICKER = sys.argv[1], sys.argv[2]
    sys.path.insert(0, sys.argv[3])
    import fxt_decode
    fxt = fxt_decode
    MANAGER = sys.argv[4] if len(sys.argv) == 5 else None
    with tempfile.TemporaryDirectory(prefix='fxtrace-snapshot-') as tmp:
        TMP = tmp
        tests = [('usage errors', test_usage_errors, ()),
                 ('circular, in-process manager', test_circular, ()),
                 ('--max-snapshots=1', test_max_snapshots, ()),
                 ('oneshot', test_oneshot, ()),
                 ('compressed', test_compressed, ()),
                 ('SIGUSR1 in streaming mode', test_streaming_sigusr1, ())]
        if MANAGER:
            tests.append(('circular, trace_manager daemon', with_daemon, ()))
        else:
            print('note: no trace_manager given: the daemon case is not run')
        for name, fn, args in tests:
            print('-- ' + name, flush=True)
            fn(*args)
    if FAILS:
        print('%d failure(s)' % len(FAILS))
        return 1
    print('all snapshot tests passed')
    return 0


if __name__ == '__main__':
    sys.exit(main())
