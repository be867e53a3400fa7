#!/usr/bin/env python3
"""Nothing lost at the edges of a trace (issue 14, parts 1 and 2), with real processes:
`trace record` (its in-process manager) and the README's counter program
(tests/trace/counter_program.c: trace_provider_create_with_name() at the top of main, then
TRACE_INSTANT "counter"/"tick" with the argument "counter" = 0, 1, 2, ...).

  test_edges.py TRACE COUNTER_PROGRAM TOOLS_DIR [TRACE_MANAGER]

1. the start: `trace record -- counter_program 1000`: the first counter in the archive is 0 and
   all 1000 events are there, nothing dropped; the same for a provider created 300 ms into the
   program (`--sleep-ms 300`).
   When the wait runs out (FXTRACE_REGISTER_TIMEOUT=1), the events before the start are counted
   as dropped: oneshot, counters first..last in the archive, DROPPED == first + COUNT-1-last.
   With the trace_manager daemon (when given): a program started on its own while a
   `trace record --duration` runs is traced from its first event too; with no trace running it
   does not wait (FXTRACE_REGISTER_TIMEOUT=10000, and it is done well before that); a daemon
   shutting down while `trace record` does not read stops after its one 10 s drain and cuts
   the archive, which the client then reports as cut (not as the manager gone).
2. a provider SIGKILLed mid-trace (it records COUNT events, prints how many, then waits to be
   killed, so the count of attempts is exact), 1 MiB buffer:
   - oneshot: events in the archive + DROPPED (the summary) == attempted, DROPPED > 0, and the
     archive carries the buffer-overflow provider event;
   - streaming: the same equation, no event twice;
   - circular: records overwritten by wrapping are neither in the archive nor dropped (Fuchsia's
     meaning, docs/buffer-layout.md): the archive holds the newest events, counters
     first .. COUNT-1 without a gap, so events in the archive + DROPPED == attempted - first,
     with DROPPED == 0 and no overflow event.
Every archive is checked with the independent decoder (tests/tools/fxt_decode.py).
"""
import os
import re
import signal
import subprocess
import sys
import tempfile
import threading
import time
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', 'tools'))
from fxtest import FAILS, check, stop_daemon  # noqa: E402

TRACE = PROGRAM = TMP = MANAGER = None
fxt = None


def env():
    e = dict(os.environ)
    e.pop('XDG_RUNTIME_DIR', None)
    e.pop('FXTRACE_OUTPUT', None)
    e.pop('FXTRACE_REGISTER_TIMEOUT', None)  # the default wait
    e['FXTRACE_SOCKET'] = os.path.join(TMP, 'no-manager.sock')  # trace record runs its own
    return e


def summary_row(err, name):
    """(records, dropped, wrapped, state) from trace record's summary row for `name`."""
    for line in err.splitlines():
        f = line.split()
        if f[:1] == [name] and len(f) >= 8:
            return f[3], int(f[4]), int(f[6]), ' '.join(f[7:])
    return None


def ticks_of(archive, what):
    """(counters in archive order, overflow events) of the archive, or None."""
    with open(archive, 'rb') as f:
        t = fxt.decode(f.read())
    if not check(t.ok, '%s: the independent decoder finds errors: %s' % (what, t.errors[:3])):
        return None
    counters = []
    for r in t.records:
        if r['kind'] == 'event' and r.get('name') == b'tick':
            args = [a['value'] for a in r['args'] if a['name'] == b'counter']
            if check(len(args) == 1, '%s: a tick without its counter' % what):
                counters.append(args[0])
    overflows = sum(1 for r in t.records if r['kind'] == 'provider_event' and r['event_id'] == 0)
    return counters, overflows


def test_start(sleep_ms):
    what = 'start' + (' (provider created after %d ms)' % sleep_ms if sleep_ms else '')
    out_file = os.path.join(TMP, 'start.fxt')
    args = [TRACE, 'record', '-o', out_file, '--', PROGRAM]
    if sleep_ms:
        args += ['--sleep-ms', str(sleep_ms)]
    p = subprocess.run(args + ['1000'], env=env(), stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, timeout=60)
    err = p.stderr.decode('utf-8', 'replace')
    if not check(p.returncode == 0, '%s: status %d: %s' % (what, p.returncode, err)):
        return
    check(b'attempted 1000' in p.stdout, '%s: program output %r' % (what, p.stdout))
    row = summary_row(err, 'counter_program')
    if check(row is not None, '%s: no summary row: %s' % (what, err)):
        check(row[1] == 0, '%s: %d dropped' % (what, row[1]))
    got = ticks_of(out_file, what)
    if got is None:
        return
    counters, overflows = got
    check(counters[:1] == [0], '%s: the first counter in the archive is %s, not 0'
          % (what, counters[:1]))
    check(counters == list(range(1000)), '%s: %d events, expected counters 0..999'
          % (what, len(counters)))
    check(overflows == 0, '%s: an overflow event, nothing was dropped' % what)


def test_start_timeout(count):
    """A registration wait that runs out (FXTRACE_REGISTER_TIMEOUT=1): the events before the
    start are not in the archive but counted as dropped. Oneshot, so the archive holds the
    counters first .. last without a gap (the start, then a full buffer) and
    DROPPED == first + (COUNT - 1 - last): every event is in the archive or counted."""
    what = 'start after a wait that ran out'
    out_file = os.path.join(TMP, 'late.fxt')
    e = dict(env(), FXTRACE_REGISTER_TIMEOUT='1')
    late = 0
    for attempt in range(5):  # until the 1 ms wait does run out (it nearly always does)
        # a small buffer: the manager hands it over quickly (a large one takes it ~40 ms to
        # make, and the loop may be over by then)
        p = subprocess.run([TRACE, 'record', '--buffering-mode=oneshot', '--buffer-size=2',
                            '-o', out_file, '--', PROGRAM, str(count)], env=e,
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=120)
        err = p.stderr.decode('utf-8', 'replace')
        if not check(p.returncode == 0, '%s: status %d: %s' % (what, p.returncode, err)):
            return
        row = summary_row(err, 'counter_program')
        got = ticks_of(out_file, what)
        if not check(row is not None and got is not None, '%s: no summary row or archive: %s'
                     % (what, err)):
            return
        counters, _ = got
        first = counters[0] if counters else count
        last = counters[-1] if counters else count - 1
        print('   attempt %d: counters %d..%d in the archive, %d dropped'
              % (attempt + 1, first, last, row[1]), flush=True)
        check(counters == list(range(first, last + 1)),
              '%s: the archive\'s %d events are not counters %d..%d without a gap'
              % (what, len(counters), first, last))
        check(len(counters) + row[1] == count,
              '%s: %d events in the archive + %d dropped != %d attempted (stderr: %s)'
              % (what, len(counters), row[1], count, err))
        if 'within 1 ms' in err and first > 0:
            check('counted as dropped' in err, '%s: the missed events are not reported: %s'
                  % (what, err))
            late += 1
            break
    check(late == 1, '%s: the 1 ms registration wait never ran out with events missed in 5 '
          'attempts' % what)


def start_daemon(sock_name):
    """A trace_manager daemon on TMP/sock_name, its log read by a thread: -> (daemon, the
    environment of its clients, an Event set at 'tracing started', the log lines, the
    thread); returns once the socket exists."""
    sock = os.path.join(TMP, sock_name)
    e = env()
    e['FXTRACE_SOCKET'] = sock
    d = subprocess.Popen([MANAGER, '--socket', sock], stdout=subprocess.DEVNULL,
                         stderr=subprocess.PIPE)
    started = threading.Event()
    log = []

    def read_log():
        for line in d.stderr:
            log.append(line.decode('utf-8', 'replace'))
            if 'tracing started' in log[-1]:
                started.set()
    reader = threading.Thread(target=read_log)
    reader.start()
    for _ in range(200):
        if os.path.exists(sock):
            break
        time.sleep(0.05)
    return d, e, started, log, reader


def test_daemon():
    d, e, started, log, reader = start_daemon('daemon.sock')
    rec = None
    try:
        # no trace: the registration does not wait for a start
        e_wait = dict(e, FXTRACE_REGISTER_TIMEOUT='10000')
        t0 = time.monotonic()
        p = subprocess.run([PROGRAM, '1000'], env=e_wait, stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE, timeout=60)
        took = time.monotonic() - t0
        check(p.returncode == 0 and b'attempted 1000' in p.stdout,
              'daemon, no trace: status %d %r %r' % (p.returncode, p.stdout, p.stderr))
        check(took < 5, 'daemon, no trace: the program took %.1f s (it waited for a start that '
              'could not come)' % took)
        # a trace running: a program started on its own is traced from its first event
        out_file = os.path.join(TMP, 'daemon.fxt')
        rec = subprocess.Popen([TRACE, 'record', '--duration=4', '-o', out_file], env=e,
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        if not check(started.wait(20), 'daemon: the trace never started: %s' % ''.join(log)):
            return
        p = subprocess.run([PROGRAM, '1000'], env=e, stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE, timeout=60)
        check(p.returncode == 0, 'daemon: program status %d %r' % (p.returncode, p.stderr))
        out, err = rec.communicate(timeout=60)
        rec = None
        got = ticks_of(out_file, 'daemon')
        if got:
            counters, overflows = got
            check(counters == list(range(1000)), 'daemon: %d events, first %s, expected '
                  'counters 0..999' % (len(counters), counters[:1]))
    finally:
        if rec:
            rec.kill()
            rec.wait()
        stop_daemon(d)
        reader.join()


def test_daemon_cut():
    """A daemon that shuts down while `trace record` does not read its archive ring cuts the
    archive short (the ring's closed = 2) after its one 10 s drain: the client, reading again,
    writes what the ring holds and says the archive was ended before its end, not that the
    manager went away, and fails."""
    d, e, started, log, reader = start_daemon('cut.sock')
    rec = None
    try:
        out_file = os.path.join(TMP, 'cut.fxt')
        rec = subprocess.Popen([TRACE, 'record', '--duration=60', '-o', out_file], env=e,
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        if not check(started.wait(20), 'cut: the trace never started: %s' % ''.join(log)):
            return
        os.kill(rec.pid, signal.SIGSTOP)
        t0 = time.monotonic()
        d.terminate()
        d.wait(timeout=60)
        took = time.monotonic() - t0
        os.kill(rec.pid, signal.SIGCONT)
        out, err = rec.communicate(timeout=60)
        err = err.decode('utf-8', 'replace')
        rec = None
        check(9 <= took < 15, 'cut: the daemon took %.1f s to stop, not its one 10 s drain'
              % took)
        check('ended the archive before its end' in err and 'went away' not in err,
              'cut: trace record does not say the archive was cut: %s' % err)
        check(os.path.exists(out_file) and os.path.getsize(out_file) > 0,
              'cut: the archive\'s beginning was not written')
    finally:
        if rec:
            rec.kill()
            rec.wait()
        if d.poll() is None:
            d.kill()
            d.wait()
        reader.join()
    check(d.returncode == 0, 'cut: trace_manager status %s' % d.returncode)


def test_killed(mode, count):
    what = 'SIGKILL, %s' % mode
    out_file = os.path.join(TMP, 'killed-%s.fxt' % mode)
    # streaming: trace record (and its in-process manager) is stopped while the program
    # writes, so no save can keep up and the buffer surely fills, however fast saves are
    go = ['--wait-go'] if mode == 'streaming' else []
    p = subprocess.Popen([TRACE, 'record', '--buffering-mode=' + mode, '--buffer-size=1',
                          '-o', out_file, '--', PROGRAM, '--then-pause'] + go + [str(count)],
                         env=env(), stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE)
    if go:
        line = p.stdout.readline().decode()
        if not check(line.startswith('ready pid '), '%s: program output %r' % (what, line)):
            p.kill()
            p.communicate()
            return
        os.kill(p.pid, signal.SIGSTOP)
        p.stdin.write(b'go\n')
        p.stdin.flush()
    line = p.stdout.readline().decode()
    if go:
        os.kill(p.pid, signal.SIGCONT)
    m = re.match(r'pid (\d+) attempted (\d+)', line)
    if not check(m is not None, '%s: program output %r' % (what, line)):
        p.kill()
        p.communicate()
        return
    pid, attempted = int(m.group(1)), int(m.group(2))
    time.sleep(0.5)  # streaming: let the manager answer the last save
    os.kill(pid, signal.SIGKILL)
    out, errb = p.communicate(timeout=60)
    err = errb.decode('utf-8', 'replace')
    check(attempted == count, '%s: attempted %d' % (what, attempted))
    check(p.returncode == 128 + signal.SIGKILL or p.returncode == -signal.SIGKILL
          or p.returncode != 0, '%s: status %d' % (what, p.returncode))
    row = summary_row(err, 'counter_program')
    if not check(row is not None, '%s: no summary row: %s' % (what, err)):
        return
    dropped, wrapped = row[1], row[2]
    got = ticks_of(out_file, what)
    if got is None:
        return
    counters, overflows = got
    events = len(counters)
    print('   %s: attempted %d, %d in the archive, %d dropped, wrapped %d, overflow events %d'
          % (mode, attempted, events, dropped, wrapped, overflows), flush=True)
    check(len(set(counters)) == events, '%s: an event twice' % what)
    if mode == 'circular':
        first = min(counters) if counters else attempted
        check(wrapped > 0, '%s: the buffer did not wrap' % what)
        check(sorted(counters) == list(range(first, attempted)),
              '%s: the archive is not the newest events %d..%d' % (what, first, attempted - 1))
        check(dropped == 0 and overflows == 0, '%s: %d dropped, %d overflow events'
              % (what, dropped, overflows))
        check(events + dropped == attempted - first,
              '%s: %d in the archive + %d dropped != %d attempted - %d overwritten'
              % (what, events, dropped, attempted, first))
        return
    check(dropped > 0, '%s: nothing dropped (the buffer should have filled)' % what)
    check(events + dropped == attempted, '%s: %d in the archive + %d dropped = %d, attempted %d'
          % (what, events, dropped, events + dropped, attempted))
    check(overflows == 1, '%s: %d buffer-overflow events, expected 1' % (what, overflows))
    if mode == 'oneshot':
        check(counters == list(range(events)), '%s: the archive is not counters 0..%d'
              % (what, events - 1))
    check('dropped %d records' % dropped in err, '%s: no drop warning: %s' % (what, err))


def main():
    global TRACE, PROGRAM, TMP, MANAGER, fxt
    if len(sys.argv) not in (4, 5):
        print('usage: test_edges.py TRACE COUNTER_PROGRAM TOOLS_DIR [TRACE_MANAGER]',
              file=sys.stderr)
        return 2
    TRACE, PROGRAM, tools = [os.path.abspath(a) for a in sys.argv[1:4]]
    MANAGER = os.path.abspath(sys.argv[4]) if len(sys.argv) == 5 else None
    sys.path.insert(0, tools)
    import fxt_decode
    fxt = fxt_decode
    with tempfile.TemporaryDirectory(prefix='fxtrace-edges-') as TMP:
        tests = [('first event, provider created at the top of main', test_start, (0,)),
                 ('first event, provider created 300 ms later', test_start, (300,)),
                 ('events before a start the wait gave up on are counted as dropped',
                  test_start_timeout, (8000000,)),
                 ('the trace_manager daemon: joining a running trace, no trace', test_daemon,
                  ()),
                 ('the trace_manager daemon shuts down while the client does not read',
                  test_daemon_cut, ()),
                 ('killed provider, oneshot', test_killed, ('oneshot', 200000)),
                 ('killed provider, circular', test_killed, ('circular', 200000)),
                 ('killed provider, streaming', test_killed, ('streaming', 400000))]
        if not MANAGER:
            print('(no trace_manager given: the daemon scenario is not run)')
            tests = [t for t in tests if t[1] not in (test_daemon, test_daemon_cut)]
        for name, fn, args in tests:
            before = len(FAILS)
            print('== %s' % name, flush=True)
            fn(*args)
            print('   %s' % ('ok' if len(FAILS) == before else 'FAILED'), flush=True)
    print('%d failure(s)' % len(FAILS))
    return 1 if FAILS else 0


if __name__ == '__main__':
    sys.exit(main())
