#!/usr/bin/env python3
"""End-to-end tests of file mode: test_file_mode.py TRACED_PROGRAM TRACE READ_PATHS

traced_program (tests/provider/traced_program.c) records numbered events from two threads with
FXTRACE_OUTPUT set; the archives are validated by the independent decoder tests/tools/fxt_decode.py
and read back with `trace dump`. Covered: each buffering mode (counts, drops, circular keeping the
newest, streaming appending saves), FXTRACE_CATEGORIES, bad configuration, a full disk (output
and live buffer), the live buffer in shared memory named by the output's placeholder, and a
SIGKILL in each mode followed by recovery with `trace dump`, `trace convert` and `trace recover`
through the placeholder.
Python 3 standard library only. Exit status 0 only if every check passed.
"""

import json
import os
import re
import select
import shutil
import signal
import struct
import subprocess
import sys
import tempfile
import time
import traceback

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, '..', 'tools'))
import fxt_decode as fxt  # noqa: E402

TRACED = None
TRACE = None
READ_PATHS = None
TMP = None
FAILS = []
CHECKS = [0]
MIB = 1 << 20
BUFFER_MAGIC = struct.pack('<Q', 0x627566ee68656164)
PLACEHOLDER_MAGIC = b'FXTLIVE\n'
PLACEHOLDER_BYTES = 4096
CRASH_SIGNS = ('Sanitizer', 'runtime error', 'Segmentation', 'core dumped', 'Traceback')
WARNING_RE = re.compile(r"trace: warning: (.*) is the raw buffer of a trace that did not finish "
                        r"\(the program crashed or was killed\); recovered (\d+) records")


def check(cond, msg):
    CHECKS[0] += 1
    if not cond:
        FAILS.append(msg)
        print('  FAIL: %s' % msg)
    return cond


def path(name):
    return os.path.join(TMP, name)


def clean_env(**fxtrace):
    """The environment without any FXTRACE_* variable, plus the given ones. The live buffers go
    to TMP/shm unless FXTRACE_SHM_DIR is given ('' = the default, /dev/shm), so that a failed
    test leaves nothing in /dev/shm."""
    env = {k: v for k, v in os.environ.items() if not k.startswith('FXTRACE_')}
    env['FXTRACE_SHM_DIR'] = path('shm')
    env.update(fxtrace)
    return env


def live_buffer_of(p):
    """The live buffer path a placeholder names, or None."""
    try:
        with open(p, 'rb') as f:
            head = f.read(PLACEHOLDER_BYTES)
    except OSError:
        return None
    if head[:8] != PLACEHOLDER_MAGIC:
        return None
    m = re.search(rb'\nbuffer (/[^\n]+)\n', head)
    return m.group(1).decode() if m else None


def raw_image(p):
    """What earlier versions left in the file: the live buffer, then the streamed saves (the
    bytes after the placeholder, as many as the buffer header's streamed_bytes)."""
    with open(live_buffer_of(p), 'rb') as f:
        live = f.read()
    streamed = struct.unpack_from('<Q', live, 104)[0]
    with open(p, 'rb') as f:
        f.seek(PLACEHOLDER_BYTES)
        return live + f.read(streamed)


def run_traced(args, timeout=300, **fxtrace):
    p = subprocess.run([TRACED] + args, env=clean_env(**fxtrace), stdin=subprocess.DEVNULL,
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=timeout)
    return p.returncode, p.stdout.decode(), p.stderr.decode('utf-8', 'replace')


def run_trace(args, timeout=300):
    p = subprocess.run([TRACE] + args, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, timeout=timeout)
    return p.returncode, p.stdout.decode('utf-8', 'replace'), p.stderr.decode('utf-8', 'replace')


def no_crash(err, what):
    for bad in CRASH_SIGNS:
        check(bad not in err, '%s: stderr shows a crash (%s): %s' % (what, bad, err[:500]))


def dropped_from(err):
    """The provider's "fxtrace: N trace records dropped" count, 0 if it said nothing."""
    m = re.findall(r'fxtrace: (\d+) trace records dropped', err)
    check(len(m) <= 1, 'more than one dropped-records message: %s' % err[:500])
    return int(m[0]) if m else 0


def attempted_from(out, what):
    m = re.search(r'^attempted (\d+)$', out, re.M)
    check(m is not None, '%s: traced_program did not print "attempted N": %r' % (what, out))
    return int(m.group(1)) if m else -1


class Archive:
    """An archive decoded by fxt_decode.py, summarized for the checks."""

    def __init__(self, data, what):
        self.trace = fxt.decode(data)
        t = self.trace
        check(t.ok, '%s: fxt_decode.py finds violations: %s' % (what, t.errors[:10]))
        self.unusable = [r for r in t.records if not r['ok']]
        check(not self.unusable, '%s: %d records unusable (unresolved refs?), first: %s'
              % (what, len(self.unusable), self.unusable[:1]))
        # the wall-clock anchors (docs/merge.md#anchors) are kept apart
        self.providers = [r['name'] for r in t.records if r['kind'] == 'provider_info'
                          and r['name'] != b'fxtrace']
        self.overflow_events = sum(1 for r in t.records if r['kind'] == 'provider_event'
                                   and r.get('event_id') == 0)
        self.thread_names = {r['koid']: r['name'] for r in t.records
                             if r['kind'] == 'kernel_object' and r.get('obj_type') == 2}
        self.anchors = [r for r in t.records
                        if r['kind'] == 'event' and r['category'] == b'fxtrace:clock']
        self.events = [r for r in t.records
                       if r['kind'] == 'event' and r['category'] != b'fxtrace:clock']
        self.by_category = {}
        for e in self.events:
            self.by_category[e['category']] = self.by_category.get(e['category'], 0) + 1
        # numbered events: thread arg -> list of n, in archive order; thread arg -> tids
        self.seqs = {}
        self.tids = {}
        for e in self.events:
            if e['category'] != b'test':
                continue
            args = {a['name']: a.get('value') for a in e['args']}
            th = args.get(b'thread')
            self.seqs.setdefault(th, []).append(args.get(b'n'))
            self.tids.setdefault(th, set()).add(e['tid'])


def decode_file(p, what):
    with open(p, 'rb') as f:
        return Archive(f.read(), what)


def fxt_decode_cli_conforms(p, what):
    """fxt_decode.py as a separate process, as a user would run it."""
    r = subprocess.run([sys.executable, os.path.join(HERE, '..', 'tools', 'fxt_decode.py'), p],
                       stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    out = r.stdout.decode()
    check(r.returncode == 0 and 'verdict: CONFORMS' in out,
          '%s: fxt_decode.py: archive does not conform:\n%s' % (what, out[-2000:]))


def dump_summary(p, what, expect_recovered, cut_save=False):
    """Runs `trace dump`; checks exit 0, no skipped record (with cut_save, exactly one: the
    partial record where the file was cut inside its streamed saves), the recovery warning iff
    expected; returns the number of event records."""
    rc, out, err = run_trace(['dump', p])
    no_crash(err, what + ' (trace dump)')
    check(rc == 0, '%s: trace dump exit status %d: %s' % (what, rc, err[:500]))
    m = re.search(r'^-- (\d+) records, (\d+) skipped, (\d+) bytes$', out, re.M)
    if not check(m is not None, '%s: trace dump printed no summary' % what):
        return -1
    records, skipped = int(m.group(1)), int(m.group(2))
    lines = re.findall(r'^skipped .*$', out, re.M)
    if cut_save:
        check(skipped == 1 and len(lines) == 1 and
              'the streamed saves end inside a record' in lines[0],
              '%s: trace dump should skip the one record the cut leaves partial: %d, %r'
              % (what, skipped, lines[:3]))
    else:
        check(skipped == 0, '%s: trace dump skipped %d records' % (what, skipped))
        check(not lines, '%s: trace dump reports skipped records' % what)
    w = WARNING_RE.search(err)
    if expect_recovered:
        if check(w is not None, '%s: trace dump gave no recovery warning: %r' % (what, err[:500])):
            check(w.group(1) == p, '%s: the warning names %r, not the file' % (what, w.group(1)))
            check(int(w.group(2)) == records, '%s: the warning says %s records, dump read %d'
                  % (what, w.group(2), records))
    else:
        check(w is None and 'warning' not in err, '%s: unexpected warning: %s' % (what, err[:500]))
    m = re.search(r'^--   event\s+(\d+)$', out, re.M)
    return int(m.group(1)) if m else 0


def check_threads(a, what):
    """Both threads recorded numbered events, each thread arg on one OS thread, named."""
    check(sorted(a.seqs) == [0, 1], '%s: numbered events of threads %s, expected [0, 1]'
          % (what, sorted(a.seqs)))
    tids = [a.tids.get(th, set()) for th in (0, 1)]
    check(all(len(t) == 1 for t in tids) and tids[0] != tids[1],
          '%s: each worker must be one OS thread of its own: %s' % (what, tids))
    for th in (0, 1):
        for tid in a.tids.get(th, ()):
            check(a.thread_names.get(tid) == b'worker-%d' % th,
                  '%s: thread %d named %r, expected worker-%d'
                  % (what, tid, a.thread_names.get(tid), th))


def no_duplicates(a, what):
    for th, seq in a.seqs.items():
        check(len(seq) == len(set(seq)), '%s: thread %s has %d duplicate events'
              % (what, th, len(seq) - len(set(seq))))


def is_prefix(seq):
    return sorted(seq) == list(range(len(seq)))


def leftovers(directory, base):
    return [n for n in os.listdir(directory) if n.startswith(base)]


# --- normal runs ----------------------------------------------------------------------------

def test_oneshot_complete():
    print('oneshot, everything fits (exit through trace_provider_destroy and through exit)')
    for extra in ([], ['--no-destroy']):
        what = 'oneshot %s' % (' '.join(extra) or 'destroy')
        out_path = path('oneshot-all%s.fxt' % len(extra))
        n = 10000
        rc, out, err = run_traced([str(n)] + extra, FXTRACE_OUTPUT=out_path)
        no_crash(err, what)
        check(rc == 0, '%s: exit status %d: %s' % (what, rc, err[:500]))
        check(err == '', '%s: unexpected stderr: %s' % (what, err[:500]))
        attempted = attempted_from(out, what)
        a = decode_file(out_path, what)
        fxt_decode_cli_conforms(out_path, what)
        check(a.providers == [b'traced_program'], '%s: providers %s' % (what, a.providers))
        check(a.overflow_events == 0, '%s: overflow event without drops' % what)
        check(len(a.events) == attempted, '%s: %d events, attempted %d'
              % (what, len(a.events), attempted))
        check_threads(a, what)
        for th in (0, 1):
            check(a.seqs.get(th) == list(range(n)), '%s: thread %d events are not 0..%d in order'
                  % (what, th, n - 1))
        check(a.by_category == {b'test': 2 * n, b'gfx.paint': 2, b'gfx.layout': 2, b'other': 2},
              '%s: events by category %s' % (what, a.by_category))
        # dump and the reader count every event, the anchors included
        all_events = len(a.events) + len(a.anchors)
        check(dump_summary(out_path, what, False) == all_events,
              '%s: trace dump and fxt_decode.py count different events' % what)
        check_read_paths(out_path, what, False, all_events)
        check(leftovers(TMP, os.path.basename(out_path) + '.tmp') == [],
              '%s: temporary file left behind' % what)


def test_oneshot_drops():
    print('oneshot, 1 MiB buffer overflows: written + dropped == attempted, a prefix per thread')
    out_path = path('oneshot-drop.fxt')
    rc, out, err = run_traced(['100000'], FXTRACE_OUTPUT=out_path, FXTRACE_BUFFER_SIZE='1')
    what = 'oneshot drops'
    no_crash(err, what)
    check(rc == 0, '%s: exit status %d' % (what, rc))
    attempted = attempted_from(out, what)
    dropped = dropped_from(err)
    check(dropped > 0, '%s: nothing dropped from a 1 MiB buffer: %s' % (what, err[:300]))
    check('oneshot mode, 1 MiB' in err, '%s: the drop message does not name the mode and size: %s'
          % (what, err[:300]))
    a = decode_file(out_path, what)
    check(a.providers == [b'traced_program'], '%s: providers %s' % (what, a.providers))
    check(len(a.events) + dropped == attempted, '%s: %d written + %d dropped != %d attempted'
          % (what, len(a.events), dropped, attempted))
    check(a.overflow_events == 1, '%s: %d buffer-overflow events, expected 1'
          % (what, a.overflow_events))
    check(os.path.getsize(out_path) <= MIB, '%s: archive of %d bytes from a 1 MiB buffer'
          % (what, os.path.getsize(out_path)))
    check_threads(a, what)
    for th, seq in a.seqs.items():
        check(seq == list(range(len(seq))), '%s: thread %s kept events are not a prefix' % (what, th))
    dump_summary(out_path, what, False)


def test_circular():
    print('circular, 1 MiB buffer: keeps the newest events')
    out_path = path('circular.fxt')
    n = 100000
    rc, out, err = run_traced([str(n)], FXTRACE_OUTPUT=out_path, FXTRACE_BUFFER_SIZE='1',
                              FXTRACE_BUFFERING_MODE='circular')
    what = 'circular'
    no_crash(err, what)
    check(rc == 0, '%s: exit status %d' % (what, rc))
    attempted_from(out, what)
    a = decode_file(out_path, what)
    check(a.providers == [b'traced_program'], '%s: providers %s' % (what, a.providers))
    check_threads(a, what)
    no_duplicates(a, what)
    for th, seq in a.seqs.items():
        kept = len(seq)
        check(0 < kept < n, '%s: thread %s kept %d of %d events' % (what, th, kept, n))
        check(max(seq) == n - 1, '%s: thread %s lost its newest event (max n %d)'
              % (what, th, max(seq)))
        # the kept events are the newest: all but a few stale ones are in the last `kept`
        newest = sum(1 for s in seq if s >= n - kept)
        check(newest >= kept * 0.99, '%s: thread %s: only %d of %d kept events are among the '
              'newest %d' % (what, th, newest, kept, kept))
        check(min(seq) > 0, '%s: thread %s still has event 0' % (what, th))
    dump_summary(out_path, what, False)


def test_streaming():
    print('streaming, 1 MiB buffer: saves are appended, written + dropped == attempted')
    for n in (100000, 1000000):
        what = 'streaming %d' % n
        out_path = path('streaming-%d.fxt' % n)
        rc, out, err = run_traced([str(n)], FXTRACE_OUTPUT=out_path, FXTRACE_BUFFER_SIZE='1',
                                  FXTRACE_BUFFERING_MODE='streaming')
        no_crash(err, what)
        check(rc == 0, '%s: exit status %d' % (what, rc))
        attempted = attempted_from(out, what)
        dropped = dropped_from(err)
        size = os.path.getsize(out_path)
        if n == 1000000:  # enough events for saves whatever the engine thread's scheduling
            check(size > MIB, '%s: archive of %d bytes, not more than the 1 MiB buffer'
                  % (what, size))
        a = decode_file(out_path, what)
        check(a.providers == [b'traced_program'], '%s: providers %s' % (what, a.providers))
        check([e['name'] for e in a.anchors] == [b'start', b'stop'],
              '%s: wall-clock anchors %s' % (what, [e['name'] for e in a.anchors]))
        check(len(a.events) + dropped == attempted, '%s: %d written + %d dropped != %d attempted'
              % (what, len(a.events), dropped, attempted))
        check(a.overflow_events == (1 if dropped else 0), '%s: %d overflow events, %d dropped'
              % (what, a.overflow_events, dropped))
        check_threads(a, what)
        no_duplicates(a, what)
        for th, seq in a.seqs.items():
            check(seq == sorted(seq), '%s: thread %s events out of order' % (what, th))
        if n == 100000:
            fxt_decode_cli_conforms(out_path, what)
        dump_summary(out_path, what, False)


def test_categories():
    print('FXTRACE_CATEGORIES')
    n = 1000
    cases = [('test', {b'test': 2 * n}),
             ('gfx*', {b'gfx.paint': 2, b'gfx.layout': 2}),
             ('other,gfx.paint', {b'other': 2, b'gfx.paint': 2}),
             ('nothing.enabled', {}),
             ('', {b'test': 2 * n, b'gfx.paint': 2, b'gfx.layout': 2, b'other': 2})]
    for i, (cats, expect) in enumerate(cases):
        what = 'FXTRACE_CATEGORIES=%r' % cats
        out_path = path('categories-%d.fxt' % i)
        rc, out, err = run_traced([str(n)], FXTRACE_OUTPUT=out_path, FXTRACE_CATEGORIES=cats)
        no_crash(err, what)
        check(rc == 0 and err == '', '%s: exit status %d, stderr %s' % (what, rc, err[:300]))
        a = decode_file(out_path, what)
        check(a.by_category == expect, '%s: events by category %s, expected %s'
              % (what, a.by_category, expect))


# --- bad configuration, full disk ------------------------------------------------------------

def untraced_ok(rc, out, err, what, needle, out_path):
    no_crash(err, what)
    check(rc == 0, '%s: exit status %d (the program must run on untraced)' % (what, rc))
    check(attempted_from(out, what) > 0, '%s: the program did not run to the end' % what)
    lines = [l for l in err.splitlines() if l.strip()]
    check(len(lines) >= 1 and all(l.startswith('fxtrace: ') for l in lines),
          '%s: expected "fxtrace:" messages on stderr, got %r' % (what, err[:500]))
    check(needle in err, '%s: the message does not mention %r: %r' % (what, needle, err[:500]))
    check(not os.path.lexists(out_path), '%s: %s was left behind' % (what, out_path))
    d = os.path.dirname(out_path)
    if os.path.isdir(d):
        check(leftovers(d, os.path.basename(out_path)) == [],
              '%s: files left behind: %s' % (what, leftovers(d, os.path.basename(out_path))))


def test_bad_configuration():
    print('bad configuration: the program runs untraced and says why')
    out_path = path('bad.fxt')
    cases = [({'FXTRACE_BUFFERING_MODE': 'bogus'}, 'FXTRACE_BUFFERING_MODE=bogus'),
             ({'FXTRACE_BUFFER_SIZE': '0'}, 'FXTRACE_BUFFER_SIZE=0'),
             ({'FXTRACE_BUFFER_SIZE': 'abc'}, 'FXTRACE_BUFFER_SIZE=abc'),
             ({'FXTRACE_BUFFER_SIZE': '99999'}, 'FXTRACE_BUFFER_SIZE=99999'),
             ({'FXTRACE_BUFFER_SIZE': '-1'}, 'FXTRACE_BUFFER_SIZE=-1')]
    for env, needle in cases:
        what = ' '.join('%s=%s' % kv for kv in env.items())
        rc, out, err = run_traced(['1000'], FXTRACE_OUTPUT=out_path, **env)
        untraced_ok(rc, out, err, what, needle, out_path)
    # unwritable places (root ignores directory permissions: use paths no one can create)
    blocker = path('a-regular-file')
    with open(blocker, 'w') as f:
        f.write('x')
    for target in (path('no-such-dir/x.fxt'), os.path.join(blocker, 'x.fxt')):
        what = 'FXTRACE_OUTPUT=%s' % target
        rc, out, err = run_traced(['1000'], FXTRACE_OUTPUT=target)
        untraced_ok(rc, out, err, what, 'cannot record to %s' % target, target)
    if os.geteuid() != 0:
        ro = path('read-only-dir')
        os.mkdir(ro, 0o555)
        target = os.path.join(ro, 'x.fxt')
        rc, out, err = run_traced(['1000'], FXTRACE_OUTPUT=target)
        untraced_ok(rc, out, err, 'read-only directory', 'cannot record to %s' % target, target)


def test_full_disk():
    print('a full disk (tmpfs of 1 MiB / 1.5 MiB)')
    mnt = path('tmpfs')
    os.mkdir(mnt)
    r = subprocess.run(['mount', '-t', 'tmpfs', '-o', 'size=1m', 'tmpfs', mnt],
                       stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    if r.returncode != 0:
        print('  SKIPPED: cannot mount a tmpfs (%s)' % r.stdout.decode().strip())
        return
    try:
        target = os.path.join(mnt, 'full.fxt')
        rc, out, err = run_traced(['1000'], FXTRACE_OUTPUT=target, FXTRACE_BUFFER_SIZE='4')
        untraced_ok(rc, out, err, 'full disk at start', 'cannot record to %s' % target, target)
        check('No space left on device' in err, 'full disk: the message does not say the disk is '
              'full: %r' % err[:300])
    finally:
        subprocess.run(['umount', mnt])
    # room for the reservation (placeholder + 1 MiB): the archive is written at the end, in the
    # space reserved for it at start
    r = subprocess.run(['mount', '-t', 'tmpfs', '-o', 'size=1536k', 'tmpfs', mnt],
                       stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    if not check(r.returncode == 0, 'second tmpfs mount failed: %s' % r.stdout.decode()):
        return
    try:
        target = os.path.join(mnt, 'fits.fxt')
        what = 'disk with room for the reservation'
        rc, out, err = run_traced(['100000'], FXTRACE_OUTPUT=target, FXTRACE_BUFFER_SIZE='1')
        no_crash(err, what)
        check(rc == 0 and 'cannot' not in err, '%s: exit status %d: %r' % (what, rc, err[:500]))
        check(leftovers(mnt, 'fits.fxt') == ['fits.fxt'], '%s: files in the tmpfs: %s'
              % (what, leftovers(mnt, 'fits.fxt')))
        a = decode_file(target, what)
        check(a.providers == [b'traced_program'] and len(a.events) > 10000,
              '%s: providers %s, %d events' % (what, a.providers, len(a.events)))
    finally:
        subprocess.run(['umount', mnt])
    r = subprocess.run(['mount', '-t', 'tmpfs', '-o', 'size=64m', 'tmpfs', mnt],
                       stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    if not check(r.returncode == 0, 'tmpfs mount failed: %s' % r.stdout.decode()):
        return
    try:
        # the disk fills up during the run: in streaming mode the archive copies the saves
        # appended to the file, beyond the reservation, so it cannot be written; the
        # placeholder and the live buffer stay, and the trace is recovered through them
        target = os.path.join(mnt, 'half.fxt')
        what = 'disk full at the end'
        p = subprocess.Popen([TRACED, '100000', '--wait-stdin'],
                             env=clean_env(FXTRACE_OUTPUT=target, FXTRACE_BUFFER_SIZE='1',
                                           FXTRACE_BUFFERING_MODE='streaming'),
                             stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        line = p.stdout.readline()
        check(line.startswith(b'attempted '), '%s: the program printed %r' % (what, line))
        # fill the tmpfs: no room for the temporary archive
        fd = os.open(os.path.join(mnt, 'filler'), os.O_WRONLY | os.O_CREAT)
        try:
            while os.write(fd, b'\0' * 65536) > 0:
                pass
        except OSError:
            pass
        os.close(fd)
        out, err = p.communicate(b'\n', timeout=120)
        err = err.decode('utf-8', 'replace')
        rc = p.returncode
        no_crash(err, what)
        check(rc == 0, '%s: exit status %d' % (what, rc))
        live = live_buffer_of(target)
        check(re.search(r'fxtrace: cannot finish the archive %s: No space left on device; the '
                        r'trace stays recoverable: the live buffer %s is kept'
                        % (re.escape(target), re.escape(live or '?')), err) is not None,
              '%s: no clear message: %r' % (what, err[:500]))
        check(leftovers(mnt, 'half.fxt') == ['half.fxt'], '%s: files in the tmpfs: %s'
              % (what, leftovers(mnt, 'half.fxt')))
        check(live is not None and os.path.exists(live),
              '%s: the placeholder and the live buffer are not left: %r' % (what, live))
        os.unlink(os.path.join(mnt, 'filler'))
        events = dump_summary(target, what, True)
        check(events > 10000, '%s: only %d events recovered' % (what, events))
        copy = path('half-copy.fxt')
        shutil.copy(target, copy)
    finally:
        subprocess.run(['umount', mnt])
    rc, out, err = run_trace(['recover', copy, '-o', path('half-recovered.fxt')])
    check(rc == 0, '%s: trace recover exit %d: %s' % (what, rc, err))
    a = decode_file(path('half-recovered.fxt'), what + ' (recovered)')
    check(a.providers == [b'recovered'], '%s: providers %s' % (what, a.providers))
    check(len(a.events) == events, '%s: trace recover has %d events, dump %d'
          % (what, len(a.events), events))
    for th, seq in a.seqs.items():
        check(seq == sorted(seq), '%s: thread %s recovered events out of order' % (what, th))

    # a full shared-memory file system: the live buffer cannot be reserved, reported at start
    r = subprocess.run(['mount', '-t', 'tmpfs', '-o', 'size=1m', 'tmpfs', mnt],
                       stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    if not check(r.returncode == 0, 'third tmpfs mount failed: %s' % r.stdout.decode()):
        return
    try:
        target = path('shm-full.fxt')
        rc, out, err = run_traced(['1000'], FXTRACE_OUTPUT=target, FXTRACE_BUFFER_SIZE='4',
                                  FXTRACE_SHM_DIR=mnt)
        untraced_ok(rc, out, err, 'full shared memory', 'cannot create the live trace buffer %s/'
                    % mnt, target)
        check('No space left on device' in err, 'full shared memory: the message does not say '
              'it is full: %r' % err[:300])
        check(os.listdir(mnt) == [], 'full shared memory: left %s' % os.listdir(mnt))
    finally:
        subprocess.run(['umount', mnt])


def test_live_buffer():
    print('the live buffer: in /dev/shm by default, named by the placeholder, removed at the end')
    out_path = path('live.fxt')
    p = subprocess.Popen([TRACED, '1000', '--wait-stdin'],
                         env=clean_env(FXTRACE_OUTPUT=out_path, FXTRACE_SHM_DIR=''),
                         stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    p.stdout.readline()
    live = live_buffer_of(out_path)
    check(live is not None and re.fullmatch(r'/dev/shm/fxtrace-%d-\w{6}' % p.pid, live),
          'live buffer: the placeholder names %r, expected /dev/shm/fxtrace-%d-XXXXXX'
          % (live, p.pid))
    if live:
        with open(live, 'rb') as f:
            check(f.read(8) == BUFFER_MAGIC, 'live buffer: no buffer magic in %s' % live)
        check(os.path.getsize(live) == 4 * MIB, 'live buffer: %d bytes' % os.path.getsize(live))
    out, err = p.communicate(b'\n', timeout=120)
    check(p.returncode == 0 and err == b'', 'live buffer: exit %d, %r' % (p.returncode, err))
    check(not (live and os.path.exists(live)), 'live buffer: %s left after the end' % live)
    a = decode_file(out_path, 'live buffer')
    check(len(a.events) == 2 * 1003, 'live buffer: %d events' % len(a.events))


# --- SIGKILL and recovery ---------------------------------------------------------------------

def streamed_bytes(p):
    try:
        with open(live_buffer_of(p) or p, 'rb') as f:
            head = f.read(128)
        return struct.unpack_from('<Q', head, 104)[0] if len(head) == 128 else 0
    except OSError:
        return 0


def run_until_ready_and_kill(out_path, min_streamed=0, **fxtrace):
    """Runs traced_program --until-killed, waits for "ready" (and, for streaming, until the
    header says min_streamed bytes of saves were appended: on a busy 2-core machine the engine
    thread may not have saved anything yet when the writers reach "ready"), then SIGKILLs it."""
    p = subprocess.Popen([TRACED, '--until-killed'], env=clean_env(FXTRACE_OUTPUT=out_path,
                                                                   **fxtrace),
                         stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE)
    ready = False
    deadline = time.time() + 120
    line = b''
    while time.time() < deadline:
        r, _, _ = select.select([p.stdout], [], [], 1.0)
        if r:
            line = p.stdout.readline()
            ready = line == b'ready\n'
            break
        if p.poll() is not None:
            break
    while ready and time.time() < deadline and streamed_bytes(out_path) < min_streamed:
        time.sleep(0.01)
    p.send_signal(signal.SIGKILL)
    p.wait()
    err = p.stderr.read().decode('utf-8', 'replace')
    p.stdout.close()
    p.stderr.close()
    return ready, p.returncode, err


def check_read_paths(p, what, recovered, events):
    r = subprocess.run([READ_PATHS, p], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    out = r.stdout.decode()
    no_crash(r.stderr.decode(), what + ' (read_paths)')
    check(r.returncode == 0, '%s: read_paths exit %d' % (what, r.returncode))
    expect = 'recovered=%d records=' % recovered
    lines = {l.split()[0]: l for l in out.splitlines() if 'records=' in l}
    check(sorted(lines) == ['fd', 'file', 'memory', 'memory-unaligned'],
          '%s: read_paths printed %r' % (what, out))
    for name, line in lines.items():
        check(expect in line and ' skipped=0 ' in line and 'result=end' in line
              and ' events=%d ' % events in line,
              '%s: reading through %s: %s (expected %s, %d events)'
              % (what, name, line, expect, events))
    records = {re.search(r'records=(\d+)', l).group(1) for l in lines.values()}
    check(len(records) == 1, '%s: the input paths read different record counts: %r'
          % (what, out))
    check('memory unchanged=1' in out, '%s: the reader changed the caller\'s memory' % what)


def test_sigkill(mode, size_mib):
    what = 'SIGKILL %s (%d MiB)' % (mode, size_mib)
    print(what)
    out_path = path('killed-%s.fxt' % mode)
    # streaming: saves worth at least 3 times a little under half the buffer (with the rolling
    # segments, up to 8 per buffer since buffer layout 2, that is about a dozen saves)
    min_streamed = 3 * (size_mib * MIB // 2 - MIB // 4) if mode == 'streaming' else 0
    ready, rc, err = run_until_ready_and_kill(out_path, min_streamed,
                                              FXTRACE_BUFFERING_MODE=mode,
                                              FXTRACE_BUFFER_SIZE=str(size_mib))
    if not check(ready, '%s: the program never said "ready" (stderr %r)' % (what, err[:500])):
        return
    check(rc == -signal.SIGKILL, '%s: exit status %d, expected death by SIGKILL' % (what, rc))
    no_crash(err, what)
    live = live_buffer_of(out_path)
    if not check(live is not None and os.path.dirname(live) == path('shm'),
                 '%s: the output holds no placeholder naming a live buffer in FXTRACE_SHM_DIR: '
                 '%r' % (what, live)):
        return None
    check(os.path.getsize(out_path) >= PLACEHOLDER_BYTES + size_mib * MIB,
          '%s: the output does not reserve the buffer\'s size (%d bytes)'
          % (what, os.path.getsize(out_path)))
    raw = raw_image(out_path)
    check(raw[:8] == BUFFER_MAGIC, '%s: the live buffer does not start with the buffer magic'
          % what)
    image_path = path('killed-%s-image.fxt' % mode)
    with open(image_path, 'wb') as f:
        f.write(raw)
    total_size = struct.unpack_from('<Q', raw, 16)[0]
    streamed = struct.unpack_from('<Q', raw, 104)[0]
    check(total_size == size_mib * MIB, '%s: header total_size %d' % (what, total_size))
    if mode == 'streaming':
        check(streamed >= min_streamed and len(raw) >= total_size + streamed,
              '%s: no streamed saves (streamed_bytes %d, file %d bytes)'
              % (what, streamed, len(raw)))

    events = dump_summary(out_path, what, True)

    # the recovered archive, written out, checked by the independent decoder
    rec_path = path('killed-%s-recovered.fxt' % mode)
    rc, out, err = run_trace(['recover', out_path, '-o', rec_path])
    no_crash(err, what + ' (trace recover)')
    check(rc == 0 and out == '', '%s: trace recover exit %d: %s' % (what, rc, err[:300]))
    fxt_decode_cli_conforms(rec_path, what + ' (trace recover)')
    a = decode_file(rec_path, what + ' (trace recover)')
    check(a.providers == [b'recovered'], '%s: providers %s' % (what, a.providers))
    check(len(a.events) == events, '%s: trace recover has %d events, trace dump %d'
          % (what, len(a.events), events))
    check_threads(a, what)
    no_duplicates(a, what)
    counts = {th: len(seq) for th, seq in a.seqs.items()}
    if mode == 'oneshot':
        for th, seq in a.seqs.items():
            check(is_prefix(seq), '%s: thread %s: the recovered events are not a prefix' % (what, th))
            check(len(seq) >= 100000, '%s: thread %s: %d events recovered, it had recorded '
                  '100000 before "ready"' % (what, th, len(seq)))
    elif mode == 'streaming':
        check(sum(counts.values()) >= 100000, '%s: only %s events recovered' % (what, counts))
        for th, seq in a.seqs.items():
            check(seq == sorted(seq), '%s: thread %s events out of order' % (what, th))
    else:
        for th, seq in a.seqs.items():
            check(max(seq) >= 99999, '%s: thread %s: the newest recovered event is %d, it had '
                  'recorded 100000 before "ready"' % (what, th, max(seq)))
            newest = sum(1 for s in seq if s > max(seq) - len(seq))
            check(newest >= len(seq) * 0.99, '%s: thread %s: the recovered events are not the '
                  'newest (%d of %d)' % (what, th, newest, len(seq)))

    # trace convert: same warning, exit 0, valid JSON with every event
    json_path = path('killed-%s.json' % mode)
    rc, out, err = run_trace(['convert', out_path, '-o', json_path])
    no_crash(err, what + ' (trace convert)')
    check(rc == 0, '%s: trace convert exit %d: %s' % (what, rc, err[:300]))
    check(WARNING_RE.search(err) is not None, '%s: trace convert gave no recovery warning: %r'
          % (what, err[:300]))
    with open(json_path) as f:
        doc = json.load(f)
    evs = doc['traceEvents'] if isinstance(doc, dict) else doc
    instants = sum(1 for e in evs if e.get('ph') in ('i', 'I') and e.get('cat') != 'fxtrace')
    overflows = sum(1 for e in evs if e.get('cat') == 'fxtrace' and e.get('name') ==
                    'buffer overflow')
    check(instants == len(a.events), '%s: JSON has %d instant events, archive %d'
          % (what, instants, len(a.events)))
    check(overflows == a.overflow_events, '%s: JSON has %d overflow events, archive %d'
          % (what, overflows, a.overflow_events))

    # libtrace-reader through memory, FILE* and fd, on the raw image: the same recovered archive
    check_read_paths(image_path, what, True, events)
    # ... and on the placeholder itself: a clear error pointing to trace recover
    r = subprocess.run([READ_PATHS, out_path], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    both = r.stdout.decode() + r.stderr.decode()
    no_crash(both, what + ' (read_paths on the placeholder)')
    check('placeholder of an unfinished file-mode trace' in both and 'trace recover' in both,
          '%s: the reader does not explain the placeholder: %r' % (what, both[:500]))
    # the live buffer read directly is a raw buffer too (without the streamed saves)
    if mode != 'streaming':
        check(dump_summary(live, what + ' (live buffer)', True) == events,
              '%s: the live buffer read directly holds different events' % what)
    # trace recover -o over the placeholder itself: the archive replaces it
    if mode == 'oneshot':
        shutil.copy(out_path, path('in-place.fxt'))
        rc, out, err = run_trace(['recover', path('in-place.fxt'), '-o', path('in-place.fxt')])
        check(rc == 0, '%s: trace recover over the placeholder: exit %d %s' % (what, rc, err))
        a2 = decode_file(path('in-place.fxt'), what + ' (recovered in place)')
        check(len(a2.events) == events, '%s: recovered in place: %d events, expected %d'
              % (what, len(a2.events), events))

    # the raw image through stdin (the reader reads a pipe whole)
    with open(image_path, 'rb') as f:
        p = subprocess.run([TRACE, 'dump', '-'], stdin=f, stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE)
    err = p.stderr.decode()
    check(p.returncode == 0 and 'the input is the raw buffer' in err,
          '%s: trace dump - (stdin): exit %d, %r' % (what, p.returncode, err[:300]))
    os.unlink(live)
    rc, out, err = run_trace(['dump', out_path])
    check(rc == 1 and 'cannot be opened' in err and live in err,
          '%s: trace dump with the live buffer gone: exit %d, %r' % (what, rc, err[:300]))
    return raw


def test_damaged_raw_buffers(raw):
    print('raw buffers that cannot be (fully) recovered')
    total_size = struct.unpack_from('<Q', raw, 16)[0]
    streamed = struct.unpack_from('<Q', raw, 104)[0]
    cases = [('magic only', raw[:8], 'shorter than a buffer header'),
             ('header only', raw[:128], 'shorter than its header says'),
             ('cut in the buffer', raw[:total_size // 2], 'shorter than its header says'),
             ('bad version', raw[:8] + b'\x07' + raw[9:], 'unknown buffer version'),
             ('bad geometry', raw[:16] + struct.pack('<Q', total_size - 4096) + raw[24:],
              'geometry does not match')]
    for name, data, needle in cases:
        p = path('damaged.fxt')
        with open(p, 'wb') as f:
            f.write(data)
        for cmd in (['dump', p], ['convert', p, '-o', path('damaged.json')],
                    ['recover', p, '-o', path('damaged-out.fxt')]):
            rc, out, err = run_trace(cmd)
            what = '%s: trace %s' % (name, cmd[0])
            no_crash(err, what)
            check(rc == 1, '%s: exit status %d, expected 1' % (what, rc))
            check(needle in err and 'recover' in err, '%s: the error does not say why: %r'
                  % (what, err[:300]))
        check(not os.path.exists(path('damaged-out.fxt')), '%s: trace recover left an output'
              % name)
    # a streaming file cut inside its streamed saves: the whole records before the cut remain
    if streamed > 0:
        cut = total_size + streamed // 2 + 3
        p = path('cut-streamed.fxt')
        with open(p, 'wb') as f:
            f.write(raw[:cut])
        events = dump_summary(p, 'cut inside the streamed saves', True, cut_save=True)
        check(events > 0, 'cut inside the streamed saves: no events recovered')
        rc, out, err = run_trace(['recover', p, '-o', path('cut-streamed-recovered.fxt')])
        check(rc == 0, 'cut inside the streamed saves: trace recover exit %d: %s' % (rc, err))
        fxt_decode_cli_conforms(path('cut-streamed-recovered.fxt'), 'cut inside the streamed saves')
    # trace recover on an archive that is already complete
    rc, out, err = run_trace(['recover', path('oneshot-all0.fxt'), '-o', path('x.fxt')])
    check(rc == 1 and 'already a complete FXT archive' in err,
          'trace recover on a finished archive: exit %d, %r' % (rc, err[:300]))
    check(not os.path.exists(path('x.fxt')), 'trace recover on a finished archive wrote output')


def main(argv):
    global TRACED, TRACE, READ_PATHS, TMP
    if len(argv) != 4:
        print('usage: test_file_mode.py TRACED_PROGRAM TRACE READ_PATHS', file=sys.stderr)
        return 2
    TRACED, TRACE, READ_PATHS = (os.path.abspath(a) for a in argv[1:4])
    TMP = tempfile.mkdtemp(prefix='fxtrace-file-mode-')
    os.mkdir(path('shm'))
    tests = [test_oneshot_complete, test_oneshot_drops, test_circular, test_streaming,
             test_categories, test_bad_configuration, test_full_disk, test_live_buffer]
    try:
        for t in tests:
            try:
                t()
            except Exception:
                check(False, '%s raised:\n%s' % (t.__name__, traceback.format_exc()))
        raw_streaming = None
        for mode, size in (('oneshot', 16), ('circular', 4), ('streaming', 4)):
            try:
                raw = test_sigkill(mode, size)
                if mode == 'streaming':
                    raw_streaming = raw
            except Exception:
                check(False, 'test_sigkill(%s) raised:\n%s' % (mode, traceback.format_exc()))
        if check(raw_streaming is not None, 'no streaming raw buffer to damage'):
            try:
                test_damaged_raw_buffers(raw_streaming)
            except Exception:
                check(False, 'test_damaged_raw_buffers raised:\n%s' % traceback.format_exc())
    finally:
        shutil.rmtree(TMP, ignore_errors=True)
    print('%d checks, %d failed' % (CHECKS[0], len(FAILS)))
    return 1 if FAILS else 0


if __name__ == '__main__':
    sys.exit(main(sys.argv))
