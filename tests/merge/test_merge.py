#!/usr/bin/env python3
"""`trace merge` (issue 23, first part; docs/merge.md).

Two programs on two simulated hosts (each in its own PID + mount + time namespace, with
CLOCK_MONOTONIC offsets thousands of seconds apart, when root and unshare allow it; else two
plain processes, and the pid-collision check is skipped with a printed reason) talk through a
FIFO, each traced in file mode into its own archive: every "recv" i happens after "send" i.
After `trace merge`, in the merged archive:
  * each recv comes after its send, and no later than a generous delivery bound (the anchors'
    alignment is exact on one machine; without it they would be thousands of seconds apart);
  * the two programs stay two processes (their pids collided in the namespaces), named after
    their hosts, and the providers too; the flows keep their ids;
  * the archive passes tests/tools/fxt_decode.py; dump, summary and convert read it.
Also: CPU lanes of two hosts are distinct (gen-sample archives, --align=first); a tiny
--order-memory (the spill path) gives the same bytes; compressed inputs and output; bad inputs
(no anchor, not an archive, missing file, wrong --host-names, a full disk).

Usage: test_merge.py TRACE FIFO_PEER FXT_DECODE (tests/tools/fifo_peer)
"""

import gzip
import os
import re
import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', 'tools'))
from fxtest import check, status  # noqa: E402
from conversation import (check_merged, check_providers, events, namespaces_usable,  # noqa: E402
                          run, to_json as convert)

TRACE, PEER, DECODE = sys.argv[1:4]
TMP = tempfile.mkdtemp(prefix='fxtrace-merge-')
N = 20


def path(name):
    return os.path.join(TMP, name)


def to_json(fxt):
    return convert(TRACE, fxt)


def conforms(fxt, what):
    p = run([sys.executable, DECODE, fxt])
    check(p.returncode == 0 and b'verdict: CONFORMS' in p.stdout,
          '%s: fxt_decode: %s' % (what, p.stdout.decode()[-300:] + p.stderr.decode()[-300:]))


def record_conversation(why_not):
    fifo = path('fifo')
    os.mkfifo(fifo)
    a, b = path('alpha.fxt'), path('beta.fxt')

    def cmd(role, offset):
        base = [PEER, role, fifo, str(N)]
        if why_not:
            return base
        return ['unshare', '--pid', '--fork', '--mount-proc', '--time',
                '--monotonic=%d' % offset] + base

    env_b = dict(os.environ, FXTRACE_OUTPUT=b)
    env_a = dict(os.environ, FXTRACE_OUTPUT=a)
    recv = subprocess.Popen(cmd('recv', 20000), env=env_b, stderr=subprocess.PIPE)
    send = subprocess.Popen(cmd('send', 5000), env=env_a, stderr=subprocess.PIPE)
    _, serr = send.communicate(timeout=120)
    _, rerr = recv.communicate(timeout=120)
    check(send.returncode == 0, 'sender: exit %d: %s' % (send.returncode, serr.decode()))
    check(recv.returncode == 0, 'receiver: exit %d: %s' % (recv.returncode, rerr.decode()))
    return a, b


def test_conversation():
    why_not = namespaces_usable()
    if why_not:
        print('SKIP (namespaces): %s: the two hosts are plain processes; the pid-collision and '
              'clock-offset checks are skipped' % why_not)
    a, b = record_conversation(why_not)
    merged = path('merged.fxt')
    p = run([TRACE, 'merge', a, b, '-o', merged, '--host-names=alpha,beta'])
    check(p.returncode == 0, 'merge: exit %d: %s' % (p.returncode, p.stderr.decode()))
    conforms(merged, 'merged')
    for cmd in (['dump', merged], ['summary', merged]):
        q = run([TRACE] + cmd)
        check(q.returncode == 0, '%s: exit %d: %s' % (cmd, q.returncode, q.stderr.decode()[:300]))

    # the inputs alone: pids and clocks as recorded
    ev_a, ev_b = to_json(a), to_json(b)
    sa, rb = events(ev_a, 'send'), events(ev_b, 'recv')
    check(len(sa) == N and len(rb) == N, 'inputs: %d sends, %d receives' % (len(sa), len(rb)))
    if not why_not and sa and rb:
        check(sa[0]['pid'] == rb[0]['pid'],
              'namespaces: the two programs should have the same pid (%s, %s)'
              % (sa[0]['pid'], rb[0]['pid']))
        # the monotonic clocks are 15000 s apart: unaligned, every recv is far from its send
        check(abs(rb[0]['ts'] - sa[0]['ts']) > 1000e6,
              'namespaces: the input clocks should be thousands of seconds apart')

    ev = to_json(merged)
    check_merged(ev, N)
    check_providers(run([TRACE, 'dump', merged]).stdout.decode())
    return a, b, merged


def test_spill_and_compression(a, b, merged):
    small = path('small.fxt')
    p = run([TRACE, 'merge', a, b, '-o', small, '--host-names=alpha,beta', '--order-memory=4K'])
    check(p.returncode == 0, 'merge --order-memory=4K: %s' % p.stderr.decode())
    m = re.search(r'ordered through (\d+) runs', p.stderr.decode())
    check(m is not None and int(m.group(1)) > 2, 'spill: %s' % p.stderr.decode())
    with open(merged, 'rb') as f1, open(small, 'rb') as f2:
        check(f1.read() == f2.read(), 'spill: the output differs from the in-memory merge')
    # gzip inputs, gzip output: the same archive
    for src in (a, b):
        with open(src, 'rb') as f, gzip.open(src + '.gz', 'wb') as g:
            g.write(f.read())
    out = path('merged.fxt.gz')
    p = run([TRACE, 'merge', a + '.gz', b + '.gz', '-o', out, '--host-names=alpha,beta'])
    check(p.returncode == 0, 'merge of .gz: %s' % p.stderr.decode())
    with open(merged, 'rb') as f1, gzip.open(out, 'rb') as f2:
        check(f1.read() == f2.read(), 'compressed: the output differs')


def test_cpu_lanes():
    s1, s2 = path('s1.fxt'), path('s2.fxt')
    for s in (s1, s2):
        check(run([TRACE, 'gen-sample', '-o', s]).returncode == 0, 'gen-sample')
    out = path('lanes.fxt')
    p = run([TRACE, 'merge', s1, s2, '-o', out, '--host-names=h1,h2', '--align=first'])
    check(p.returncode == 0, 'merge --align=first: %s' % p.stderr.decode())
    check(b'--align=first' in p.stderr, 'merge --align=first: no warning')
    conforms(out, 'lanes')

    def cpus(fxt, prefix=''):
        found = {}
        provider_names = {}
        for line in run([TRACE, 'dump', fxt]).stdout.decode().splitlines():
            m = re.search(r'provider-info id=(\d+) name="([^"]*)"', line)
            if m:
                provider_names[m.group(1)] = m.group(2)
            m = re.match(r'scheduling\s+provider=(\d+) .* cpu=(\d+)', line)
            if m:
                host = provider_names.get(m.group(1), '').split(':')[0]
                found.setdefault(host, set()).add(int(m.group(2)))
        return found

    one = cpus(s1)
    lanes = cpus(out)
    orig = set().union(*one.values()) if one else set()
    check(orig != set(), 'gen-sample has no scheduling records')
    check(lanes.get('h1') == orig, 'h1 lanes %s, want %s' % (lanes.get('h1'), orig))
    width = max(orig) + 1 if orig else 0
    check(lanes.get('h2') == {c + width for c in orig},
          'h2 lanes %s, want %s' % (lanes.get('h2'), {c + width for c in orig}))


def test_lanes_past_255():
    # 130 hosts of 2 CPUs: lanes up to 259, past the 8-bit CPU field of legacy context switches
    s1 = path('s1.fxt')
    inputs = []
    for i in range(130):
        p = path('many-%03d.fxt' % i)
        shutil.copyfile(s1, p)
        inputs.append(p)
    out = path('many.fxt')
    p = run([TRACE, 'merge'] + inputs + ['-o', out, '--align=first'])
    check(p.returncode == 0, 'merge of 130: exit %d: %s' % (p.returncode, p.stderr.decode()[-300:]))
    m = re.search(rb'(\d+) legacy context switches past CPU lane 255 written as context switch',
                  p.stderr)
    check(m is not None and int(m.group(1)) > 0, 'merge of 130: no widened switches reported')
    conforms(out, 'merge of 130')
    d = run([TRACE, 'dump', out]).stdout.decode()
    high = [int(c) for c in re.findall(r'^scheduling .* cpu=(\d+)', d, re.M) if int(c) > 255]
    check(high != [] and max(high) == 259, 'merge of 130: lanes past 255: %s' % high[-3:])
    check(not re.search(r'context-switch \(legacy\) .* cpu=(25[6-9])', d),
          'merge of 130: a legacy context switch past lane 255')


def test_bad_inputs(a, b):
    sample = path('s1.fxt')
    out = path('bad.fxt')
    p = run([TRACE, 'merge', a, sample, '-o', out])
    check(p.returncode == 1 and b'no wall-clock anchor' in p.stderr,
          'no anchor: exit %d: %s' % (p.returncode, p.stderr.decode()))
    check(not os.path.exists(out), 'no anchor: an output was written')
    junk = path('junk.fxt')
    with open(junk, 'wb') as f:
        f.write(b'this is not an archive at all\n' * 10)
    p = run([TRACE, 'merge', a, junk, '-o', out])
    check(p.returncode == 1 and b'junk.fxt' in p.stderr,
          'junk: exit %d: %s' % (p.returncode, p.stderr.decode()))
    p = run([TRACE, 'merge', a, path('missing.fxt'), '-o', out])
    check(p.returncode == 1 and b'missing.fxt' in p.stderr,
          'missing: exit %d: %s' % (p.returncode, p.stderr.decode()))
    p = run([TRACE, 'merge', a, b, '-o', out, '--host-names=only'])
    check(p.returncode == 2, 'host names: exit %d: %s' % (p.returncode, p.stderr.decode()))
    p = run([TRACE, 'merge', a, b])
    check(p.returncode == 2, 'no output: exit %d' % p.returncode)
    p = run([TRACE, 'merge', a, a, '-o', out])
    check(p.returncode == 2 and b'--host-names' in p.stderr,
          'same names: exit %d: %s' % (p.returncode, p.stderr.decode()))
    if os.path.exists('/dev/full'):
        p = run([TRACE, 'merge', a, b, '-o', '/dev/full', '--host-names=x,y'])
        check(p.returncode == 1 and b'No space left' in p.stderr,
              'full disk: exit %d: %s' % (p.returncode, p.stderr.decode()))
    else:
        print('SKIP (full disk): no /dev/full')


try:
    a, b, merged = test_conversation()
    test_spill_and_compression(a, b, merged)
    test_cpu_lanes()
    test_lanes_past_255()
    test_bad_inputs(a, b)
finally:
    shutil.rmtree(TMP, ignore_errors=True)
sys.exit(status())
