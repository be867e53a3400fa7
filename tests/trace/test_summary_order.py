#!/usr/bin/env python3
"""`trace summary` reads archives in time order (issue 19, point 5; docs/ordered-view.md).

order_fixture writes the same records twice: sorted by time, and shuffled the way fxtrace's
engine lays them out in streaming mode (per-thread chunks, rolling-buffer saves, complete
durations written when they end, async spans ended on another thread than the one that began
them, a few records committed late). The fixture reports how far the shuffled file is from time
order; the summaries of both must be the same byte for byte (JSON and text, with and without
--time-range), also when the records spill to TMPDIR with a tiny --order-memory and when the
shuffled archive comes through a pipe; and the figures are the ones the fixture was built with.

Usage: test_summary_order.py TRACE ORDER_FIXTURE
"""

import json
import os
import shutil
import subprocess
import sys
import tempfile

TRACE, FIXTURE = sys.argv[1:3]
TMP = tempfile.mkdtemp(prefix='fxtrace-summary-order-')
FAILURES = []


def check(cond, msg):
    if not cond:
        FAILURES.append(msg)
        print('FAIL: ' + msg)


def summary(args, stdin=None, env=None):
    p = subprocess.run([TRACE, 'summary'] + args, input=stdin, stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, timeout=120, env=env)
    check(p.returncode == 0, 'summary %s: exit %d: %s' % (args, p.returncode,
                                                          p.stderr.decode()[:300]))
    return p.stdout


def main():
    sorted_path = os.path.join(TMP, 'sorted.fxt')
    shuffled_path = os.path.join(TMP, 'shuffled.fxt')
    out = subprocess.run([FIXTURE, sorted_path, shuffled_path], check=True,
                         stdout=subprocess.PIPE, timeout=60).stdout.decode()
    facts = {}
    for line in out.splitlines():
        key, _, value = line.rpartition(' ')
        facts[key] = int(value)
    items = facts['items']
    # the shuffled archive is far from time order, in the way that broke the summary
    check(facts['async ends before their begin in the file'] > items // 10,
          'the shuffled archive has too few async ends before their begin: %s' % facts)
    check(facts['records earlier than one before them'] > facts['events'] // 10,
          'the shuffled archive is nearly in time order: %s' % facts)
    with open(sorted_path, 'rb') as f:
        sorted_bytes = f.read()
    with open(shuffled_path, 'rb') as f:
        shuffled_bytes = f.read()
    check(len(sorted_bytes) == len(shuffled_bytes) and sorted_bytes != shuffled_bytes,
          'the two archives should hold the same records in another order')

    want = summary(['--format=json', '--top=0', sorted_path])
    got = json.loads(want)
    # the figures the fixture was built with
    rows = {d['name']: d for d in got['durations']}
    check(rows.get('item', {}).get('async') == items and rows['item']['count'] == items,
          'sorted: item spans %s' % rows.get('item'))
    check(rows.get('process', {}).get('pairs') == items, 'sorted: process %s'
          % rows.get('process'))
    for name in ('produce', 'compute'):
        check(rows.get(name, {}).get('complete') == items, 'sorted: %s %s'
              % (name, rows.get(name)))
    check(rows.get('main', {}).get('complete') == 1, 'sorted: main %s' % rows.get('main'))
    t = got['trace']
    check((t['open_durations'], t['unmatched_ends'], t['unmatched_async_ends']) == (0, 0, 0),
          'sorted: open/unmatched %s' % t)
    names = sorted(th['name'] for th in got['threads'])
    check(names == ['producer', 'worker-1', 'worker-2', 'worker-3'], 'threads %s' % names)

    # the shuffled archive: the same summary, however it is read
    env = dict(os.environ, TMPDIR=TMP)
    for what, args, stdin in (
            ('shuffled', [shuffled_path], None),
            ('shuffled, spilled to TMPDIR', ['--order-memory=4K', shuffled_path], None),
            ('shuffled, from a pipe, spilled', ['--order-memory=4K', '-'], shuffled_bytes)):
        got = summary(['--format=json', '--top=0'] + args, stdin=stdin, env=env)
        check(got == want, '%s: the JSON summary differs from the sorted archive\'s:\n%s\n%s'
              % (what, got.decode()[:600], want.decode()[:600]))
    check(sorted(os.listdir(TMP)) == ['shuffled.fxt', 'sorted.fxt'],
          'files left in TMPDIR: %s' % os.listdir(TMP))
    # 4K really spills: a TMPDIR that does not exist is an error that says so
    missing = os.path.join(TMP, 'missing')
    p = subprocess.run([TRACE, 'summary', '--order-memory=4K', shuffled_path],
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=60,
                       env=dict(os.environ, TMPDIR=missing))
    err = p.stderr.decode()
    check(p.returncode == 1 and missing in err and 'TMPDIR' in err and not p.stdout,
          'unusable TMPDIR: exit %d, stderr %r' % (p.returncode, err))
    # ... which the default budget never needs for this archive
    p = subprocess.run([TRACE, 'summary', shuffled_path], stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, timeout=60, env=dict(os.environ, TMPDIR=missing))
    check(p.returncode == 0, 'default --order-memory: exit %d %r' % (p.returncode, p.stderr))
    span_s = (json.loads(want)['trace']['end_ns'] - json.loads(want)['trace']['origin_ns']) / 1e9
    for extra in (['--top=5'], ['--time-range=%.9f,%.9f' % (span_s / 4, span_s / 2)],
                  ['--time-range=%.9f,' % (span_s / 3), '--format=json']):
        a = summary(extra + [sorted_path])
        b = summary(extra + ['--order-memory=4K', shuffled_path])
        check(a == b, 'summary %s differs between the archives:\n%s\n%s'
              % (extra, a.decode()[:600], b.decode()[:600]))

    if not FAILURES:
        shutil.rmtree(TMP, ignore_errors=True)  # kept for a look when something failed
        print('trace summary in time order: all checks passed')
        return 0
    print('%d failure(s); files in %s' % (len(FAILURES), TMP))
    return 1


if __name__ == '__main__':
    sys.exit(main())
