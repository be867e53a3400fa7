#!/usr/bin/env python3
"""`trace summary` against figures computed independently here.

Durations, counters and per-thread busy time are computed from `trace convert`'s JSON (the
documented mapping, docs/convert-json.md); providers and scheduling from tests/tools/fxt_decode.py
(a decoder written from the FXT spec only). Percentiles must be within exact/256 of the exact
nearest-rank value (docs/summary.md); every other figure must be equal. Pairs are matched in time
order, as `trace summary` reads the archive (docs/ordered-view.md). Run on a crafted archive
(summary_fixture) and on the demo recorded with `trace record` (every demo:item span counted);
also --time-range for summary, convert and dump, --top/--sort, zstd- and gzip-compressed copies
(the plain archive's JSON), usage errors and a damaged archive.

Usage: test_summary.py TRACE SUMMARY_FIXTURE DEMO TOOLS_DIR
"""

import decimal
import json
import os
import shutil
import subprocess
import sys
import tempfile

TRACE, FIXTURE, DEMO, TOOLS = sys.argv[1:5]
sys.path.insert(0, TOOLS)
import fxt_decode  # noqa: E402

TMP = tempfile.mkdtemp(prefix='fxtrace-summary-')
FAILURES = []
WAKEUP_NAMES = {b'sched_wakeup', b'sched_waking', b'sched_wakeup_new'}


def check(cond, msg):
    if not cond:
        FAILURES.append(msg)
        print('FAIL: ' + msg)


def path(name):
    return os.path.join(TMP, name)


def run(args, timeout=120, env=None):
    p = subprocess.run([TRACE] + args, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                       timeout=timeout, env=env)
    return p.returncode, p.stdout, p.stderr.decode('utf-8', 'replace')


def summary_json(archive, *extra):
    rc, out, err = run(['summary', '--format=json', '--top=0', archive] + list(extra))
    check(rc == 0, 'summary %s %s: exit %d: %s' % (archive, extra, rc, err[:300]))
    return json.loads(out)


def ns_of(us):
    """A JSON microsecond value (Decimal, three decimals) as integer nanoseconds."""
    return int(decimal.Decimal(us) * 1000)


def load_events(archive, *extra):
    rc, out, err = run(['convert', archive] + list(extra))
    check(rc == 0, 'convert %s: exit %d: %s' % (archive, rc, err[:300]))
    return json.loads(out, parse_float=decimal.Decimal)['traceEvents']


# ---- the expected figures ---------------------------------------------------------------------

def union_length(intervals):
    total, cur_b, cur_e = 0, None, None
    for b, e in sorted(intervals):
        if cur_e is None or b > cur_e:
            if cur_e is not None:
                total += cur_e - cur_b
            cur_b, cur_e = b, e
        else:
            cur_e = max(cur_e, e)
    if cur_e is not None:
        total += cur_e - cur_b
    return total


def time_order(events):
    """The events with a timestamp in time order, ties in archive order: the order `trace
    summary` reads records in (docs/ordered-view.md). A complete event's time is its beginning."""
    return sorted((ev for ev in events if 'ts' in ev), key=lambda ev: ns_of(ev['ts']))


def expected_durations(events, keep=lambda begin_ns: True):
    """(category, name) -> list of (length, begin, pid, tid); tid -> (count, intervals); pairs
    matched in time order."""
    durs, threads = {}, {}
    stacks, async_open = {}, {}

    def add(cat, name, b, e, pid, tid, on_thread):
        if not keep(b):
            return
        durs.setdefault((cat, name), []).append((max(e - b, 0), b, pid, tid))
        if on_thread:
            t = threads.setdefault(tid, [0, []])
            t[0] += 1
            if e >= b:
                t[1].append((b, e))

    for ev in time_order(events):
        ph = ev.get('ph')
        if ph not in ('X', 'B', 'E', 'b', 'e'):
            continue
        ts, pid, tid = ns_of(ev['ts']), ev['pid'], ev['tid']
        if ph == 'X':
            add(ev['cat'], ev['name'], ts, ts + ns_of(ev['dur']), pid, tid, True)
        elif ph == 'B':
            stacks.setdefault(tid, []).append((ev['cat'], ev['name'], ts))
        elif ph == 'E':
            st = stacks.get(tid)
            if st:
                cat, name, b = st.pop()
                add(cat, name, b, ts, pid, tid, True)
        elif ph == 'b':
            async_open[(ev['cat'], ev['name'], ev['id2']['local'], pid)] = (ts, pid, tid)
        else:
            o = async_open.pop((ev['cat'], ev['name'], ev['id2']['local'], pid), None)
            if o:
                add(ev['cat'], ev['name'], o[0], ts, o[1], o[2], False)
    return durs, threads


def expected_counters(events, keep=lambda ts: True):
    series = {}
    for ev in events:
        if ev.get('ph') != 'C' or not keep(ns_of(ev['ts'])):
            continue
        cid = int(ev['id'], 16) if 'id' in ev else 0
        for k, v in ev.get('args', {}).items():
            series.setdefault((ev['cat'], ev['name'], cid, k), []).append(float(v))
    return series


def nearest_rank(sorted_values, percent):
    rank = max(1, -(-percent * len(sorted_values) // 100))
    return sorted_values[rank - 1]


def timed(rec):
    return 'ts_ns' in rec and rec['kind'] in ('event', 'scheduling', 'log', 'large_blob', 'large')


def expected_providers(records):
    provs = {}
    for r in records:
        k = r['kind']
        if k == 'provider_event':
            provs.setdefault(r['provider_id'], {'records': 0, 'overflows': 0, 'times': []})
            provs[r['provider_id']]['overflows'] += 1
        if r['provider'] == 0:
            continue
        p = provs.setdefault(r['provider'], {'records': 0, 'overflows': 0, 'times': []})
        p['records'] += 1
        if timed(r):
            p['times'].append(r['ts_ns'])
    return provs


def expected_sched(records):
    """The documented rules (docs/summary.md), re-implemented, in time order: per-CPU current
    thread from the first switch seen; runnable from the first wakeup while off-CPU to the next
    switch-in; threads still on a CPU run to the last timestamp of the trace."""
    cpus, th = {}, {}
    last = max(r['ts_ns'] for r in records if timed(r))

    def t(tid):
        return th.setdefault(tid, {'cpu': 0, 'switches': 0, 'waits': [], 'on': False,
                                   'wake': None})

    def wake(tid, ts):
        if tid == 0:
            return
        x = t(tid)
        if not x['on'] and x['wake'] is None:
            x['wake'] = ts

    for r in sorted((r for r in records if timed(r)), key=lambda r: r['ts_ns']):
        if r['kind'] == 'event' and r['event_type'] == 0 and r['category'] == b'kernel:sched' \
                and r['name'] in WAKEUP_NAMES:
            wake(r['tid'], r['ts_ns'])
        if r['kind'] != 'scheduling':
            continue
        ts = r['ts_ns']
        if r['sched_type'] == 2:
            wake(r['tid'], ts)
            continue
        out_tid = r['out_thread'][1] if r['sched_type'] == 0 else r['out_tid']
        in_tid = r['in_thread'][1] if r['sched_type'] == 0 else r['in_tid']
        cur = cpus.get(r['cpu'])
        if cur and cur[0]:
            t(cur[0])['cpu'] += max(0, ts - cur[1])
            t(cur[0])['on'] = False
        if out_tid:
            t(out_tid)['on'] = False
        if in_tid:
            x = t(in_tid)
            if x['wake'] is not None:
                x['waits'].append(ts - x['wake'])
            x['wake'] = None
            x['switches'] += 1
            x['on'] = True
        cpus[r['cpu']] = (in_tid, ts)
    for cur in cpus.values():
        if cur[0]:
            t(cur[0])['cpu'] += max(0, last - cur[1])
    return th


# ---- comparisons ------------------------------------------------------------------------------

def close_percentile(got, exact):
    return abs(got - exact) * 256 <= exact


def compare_durations(what, got, durs, threads):
    rows = {(d['category'], d['name']): d for d in got['durations']}
    check(set(rows) == set(durs), '%s: duration names %s, expected %s'
          % (what, sorted(rows), sorted(durs)))
    for key, inst in durs.items():
        d = rows.get(key)
        if not d:
            continue
        lengths = sorted(x[0] for x in inst)
        slowest = max(inst, key=lambda x: x[0])
        exp = {'count': len(lengths), 'total_ns': sum(lengths),
               'mean_ns': sum(lengths) // len(lengths), 'min_ns': lengths[0],
               'max_ns': lengths[-1]}
        for k, v in exp.items():
            check(d[k] == v, '%s %s: %s = %s, expected %s' % (what, key, k, d[k], v))
        check(d['complete'] + d['pairs'] + d['async'] == d['count'] or what.endswith('range'),
              '%s %s: kinds do not add up: %s' % (what, key, d))
        for p in (50, 90, 99):
            exact = nearest_rank(lengths, p)
            check(close_percentile(d['p%d_ns' % p], exact),
                  '%s %s: p%d = %d, exact %d (bound %d)' % (what, key, p, d['p%d_ns' % p], exact,
                                                          exact // 256))
        # the slowest instance: its length is the max (ties: any of them)
        ties = [x for x in inst if x[0] == slowest[0]]
        check(any(d['slowest']['ts_ns'] == x[1] and d['slowest']['tid'] == x[3] for x in ties),
              '%s %s: slowest %s, expected one of %s' % (what, key, d['slowest'], ties[:3]))
    trows = {t['tid']: t for t in got['threads']}
    for tid, (count, intervals) in threads.items():
        t = trows.get(tid)
        check(t is not None, '%s: thread %d missing' % (what, tid))
        if t is None:
            continue
        check(t['durations'] == count, '%s thread %d: %d durations, expected %d'
              % (what, tid, t['durations'], count))
        busy = union_length(intervals)
        check(t['busy_ns'] == busy, '%s thread %d: busy %d ns, expected %d'
              % (what, tid, t['busy_ns'], busy))


def compare_counters(what, got, series):
    rows = {(c['category'], c['name'], c['id'], c['series']): c for c in got['counters']}
    check(set(rows) == set(series), '%s: counter series %s, expected %s'
          % (what, sorted(rows), sorted(series)))
    for key, values in series.items():
        c = rows.get(key)
        if not c:
            continue
        check(c['samples'] == len(values) and c['min'] == min(values) and
              c['max'] == max(values), '%s %s: %s, expected %d samples %s..%s'
              % (what, key, c, len(values), min(values), max(values)))
        mean = sum(values) / len(values)
        check(abs(c['mean'] - mean) <= 1e-9 * max(1.0, abs(mean)),
              '%s %s: mean %s, expected %s' % (what, key, c['mean'], mean))


def compare_providers(what, got, records):
    provs = expected_providers(records)
    rows = {p['id']: p for p in got['providers']}
    check(set(rows) == set(provs), '%s: providers %s, expected %s'
          % (what, sorted(rows), sorted(provs)))
    for pid, p in provs.items():
        r = rows.get(pid)
        if not r:
            continue
        check(r['records'] == p['records'], '%s provider %d: %d records, expected %d'
              % (what, pid, r['records'], p['records']))
        check(r['overflows'] == p['overflows'] and r['dropped'] == (p['overflows'] > 0),
              '%s provider %d: overflows %d, expected %d' % (what, pid, r['overflows'],
                                                             p['overflows']))
        if p['times']:
            check((r['start_ns'], r['end_ns']) == (min(p['times']), max(p['times'])),
                  '%s provider %d: span %s..%s, expected %s..%s'
                  % (what, pid, r['start_ns'], r['end_ns'], min(p['times']), max(p['times'])))


def compare_sched(what, got, records):
    th = expected_sched(records)
    check(got['trace']['scheduling'], '%s: scheduling not seen' % what)
    rows = {t['tid']: t for t in got['threads']}
    for tid, x in th.items():
        r = rows.get(tid)
        check(r is not None, '%s: thread %d missing' % (what, tid))
        if r is None:
            continue
        check(r['cpu_ns'] == x['cpu'], '%s thread %d: cpu %d ns, expected %d'
              % (what, tid, r['cpu_ns'], x['cpu']))
        check(r['switches'] == x['switches'], '%s thread %d: %d switches, expected %d'
              % (what, tid, r['switches'], x['switches']))
        waits = sorted(x['waits'])
        check(r['wait']['count'] == len(waits), '%s thread %d: %d waits, expected %d'
              % (what, tid, r['wait']['count'], len(waits)))
        if waits:
            check(r['wait']['max_ns'] == waits[-1], '%s thread %d: wait max %d, expected %d'
                  % (what, tid, r['wait']['max_ns'], waits[-1]))
            for p in (50, 99):
                exact = nearest_rank(waits, p)
                check(close_percentile(r['wait']['p%d_ns' % p], exact),
                      '%s thread %d: wait p%d %d, exact %d' % (what, tid, p,
                                                               r['wait']['p%d_ns' % p], exact))
    check(any(x['waits'] for x in th.values()), '%s: the archive has no runnable wait' % what)


# The JSON schema, version 1, as docs/summary.md documents it: exactly these keys.
SCHEMA_KEYS = {
    'top': {'schema', 'version', 'trace', 'providers', 'durations', 'counters', 'threads', 'top'},
    'trace': {'records', 'skipped', 'origin_ns', 'start_ns', 'end_ns', 'time_range', 'scheduling',
              'open_durations', 'unmatched_ends', 'unmatched_async_ends', 'too_deep'},
    'provider': {'id', 'name', 'records', 'overflows', 'dropped', 'start_ns', 'end_ns', 'span_ns'},
    'duration': {'category', 'name', 'count', 'complete', 'pairs', 'async', 'total_ns', 'mean_ns',
                 'min_ns', 'p50_ns', 'p90_ns', 'p99_ns', 'max_ns', 'slowest'},
    'slowest': {'ts_ns', 'pid', 'tid'},
    'counter': {'category', 'name', 'id', 'series', 'samples', 'min', 'mean', 'max'},
    'thread': {'pid', 'tid', 'name', 'durations', 'busy_ns'},
    'thread_sched': {'pid', 'tid', 'name', 'durations', 'busy_ns', 'cpu_ns', 'switches', 'wait'},
}


def check_schema(what, got):
    def same(obj, kind):
        check(set(obj) == SCHEMA_KEYS[kind], '%s: %s keys %s, documented %s'
              % (what, kind, sorted(obj), sorted(SCHEMA_KEYS[kind])))
    same(got, 'top')
    same(got['trace'], 'trace')
    for p in got['providers']:
        same(p, 'provider')
    for d in got['durations']:
        same(d, 'duration')
        same(d['slowest'], 'slowest')
    for c in got['counters']:
        same(c, 'counter')
    for t in got['threads']:
        same(t, 'thread_sched' if got['trace']['scheduling'] else 'thread')
        if got['trace']['scheduling']:
            want = {'count', 'p50_ns', 'p99_ns', 'max_ns'} if t['wait']['count'] else {'count'}
            check(set(t['wait']) == want, '%s: wait keys %s' % (what, sorted(t['wait'])))


def origin_of(records):
    return next(r['ts_ns'] for r in records if timed(r))


def check_archive(what, archive, with_sched):
    records = fxt_decode.decode_file(archive).records
    events = load_events(archive)
    got = summary_json(archive)
    check(got['schema'] == 'fxtrace-summary' and got['version'] == 1, '%s: schema %s %s'
          % (what, got.get('schema'), got.get('version')))
    check_schema(what, got)
    check(got['trace']['origin_ns'] == origin_of(records), '%s: origin %s, expected %s'
          % (what, got['trace']['origin_ns'], origin_of(records)))
    durs, threads = expected_durations(events)
    check(len(durs) >= 3, '%s: too few duration names to test: %s' % (what, sorted(durs)))
    compare_durations(what, got, durs, threads)
    compare_counters(what, got, expected_counters(events))
    compare_providers(what, got, records)
    if with_sched:
        compare_sched(what, got, records)
    else:
        check(not got['trace']['scheduling'], '%s: scheduling seen' % what)
    return records, events, got


def check_time_range(what, archive, records, events, start_s, end_s):
    origin = origin_of(records)
    start_s, end_s = '%.9f' % start_s, '%.9f' % end_s  # no exponent form
    start_ns, end_ns = (int(decimal.Decimal(x) * 10**9) for x in (start_s, end_s))
    lo, hi = origin + start_ns, origin + end_ns
    rng = '--time-range=%s,%s' % (start_s, end_s)

    def keep(ns):
        return lo <= max(ns, origin) <= hi

    got = summary_json(archive, rng)
    check(got['trace']['time_range'] == {'start_ns': start_ns, 'end_ns': end_ns},
          '%s: time_range %s' % (what, got['trace']['time_range']))
    durs, threads = expected_durations(events, keep)
    check(durs, '%s: nothing in the range to compare' % what)
    compare_durations(what + ' range', got, durs, threads)
    compare_counters(what + ' range', got, expected_counters(events, keep))
    # convert keeps exactly the events whose own ts is in the range (metadata always)
    filtered = load_events(archive, rng)
    expect = [e for e in events if 'ts' not in e or keep(ns_of(e['ts']))
              and not (e.get('cat') == 'fxtrace' and e.get('name') == 'buffer overflow')]
    got_ev = [e for e in filtered
              if not (e.get('cat') == 'fxtrace' and e.get('name') == 'buffer overflow')]
    check(got_ev == expect, '%s: convert %s kept %d events, expected %d'
          % (what, rng, len(got_ev), len(expect)))
    # dump prints exactly the timestamped records in the range
    rc, out, err = run(['dump', archive, rng])
    check(rc == 0, '%s: dump %s: exit %d %s' % (what, rng, rc, err))
    lines = [ln for ln in out.decode().splitlines() if ' ts=' in ln]
    n = sum(1 for r in records if timed(r) and keep(r['ts_ns']))
    check(len(lines) == n, '%s: dump %s printed %d timestamped records, expected %d'
          % (what, rng, len(lines), n))


def test_crafted():
    archive = path('crafted.fxt')
    subprocess.run([FIXTURE, archive], check=True)
    verdict = fxt_decode.decode_file(archive)
    check(not verdict.errors,
          'the crafted archive does not conform: %s' % verdict.errors[:3])
    records, events, got = check_archive('crafted', archive, True)
    # The figures the fixture was built with (summary_fixture.c): 100 steps of 1..100 us.
    step = next(d for d in got['durations'] if d['name'] == 'step')
    check((step['count'], step['total_ns'], step['max_ns'], step['p50_ns'], step['p90_ns'],
           step['p99_ns']) == (100, 5050000, 100000, 50000, 90000, 99000) or
          all(close_percentile(step['p%d_ns' % p], p * 1000) for p in (50, 90, 99)),
          'crafted: work:step figures %s' % step)
    check(step['count'] == 100 and step['total_ns'] == 5050000 and step['max_ns'] == 100000,
          'crafted: work:step %s' % step)
    fetch = next(d for d in got['durations'] if d['name'] == 'fetch')
    check(fetch['async'] == 9, 'crafted: net:fetch async spans %s' % fetch)
    check(got['trace']['unmatched_async_ends'] == 1 and got['trace']['open_durations'] == 1,
          'crafted: unmatched/open %s' % got['trace'])
    slow = next(p for p in got['providers'] if p['name'] == 'slow-clock')
    check(slow['dropped'] and slow['overflows'] == 1, 'crafted: slow-clock %s' % slow)
    tick = next(d for d in got['durations'] if d['name'] == 'tick')
    check(tick['total_ns'] == sum(100 * (10 + i) for i in range(10)),
          'crafted: slow:tick at 10 MHz: %s' % tick)
    check_time_range('crafted', archive, records, events, 0.0002, 0.0155)
    check_time_range('crafted', archive, records, events, 0.01, 1)
    # --top / --sort
    got = summary_json(archive, '--top=3', '--sort=count')
    counts = [d['count'] for d in got['durations']]
    check(len(counts) == 3 and counts == sorted(counts, reverse=True) and counts[0] == 3000,
          'crafted: --top=3 --sort=count gave %s' % counts)
    got = summary_json(archive, '--sort=p99')
    p99 = [d['p99_ns'] for d in got['durations']]
    check(p99 == sorted(p99, reverse=True), 'crafted: --sort=p99 gave %s' % p99)
    got = summary_json(archive, '--sort=switches')
    sw = [t['switches'] for t in got['threads']]
    check(sw == sorted(sw, reverse=True), 'crafted: --sort=switches gave %s' % sw)
    rc, out, err = run(['summary', archive])
    text = out.decode()
    check(rc == 0 and 'rand:op' in text and 'Threads' in text and 'wait p99' in text and
          'slow-clock' in text, 'crafted: text output: %s' % text[:400])
    rc, out, err = run(['summary', '--top=2', archive])
    check('Durations (2 of 8, by total)' in out.decode(), 'crafted: --top=2 text: %s'
          % out.decode()[:600])
    return archive


def test_too_deep():
    """Nesting past the documented 256 levels (docs/summary.md): summary_fixture's `deep` archive."""
    archive = path('deep.fxt')
    subprocess.run([FIXTURE, archive, 'deep'], check=True)
    got = summary_json(archive)
    level = [d for d in got['durations'] if d['name'] == 'level']
    check(len(level) == 1 and level[0]['count'] == 256 and level[0]['pairs'] == 256,
          'deep: %s' % level)
    # level i begins at i ns; the first 44 ends close the too-deep levels (uncounted), end j
    # (44 <= j < 300) at 1000 + j ns closes level 299 - j: level i lasts 1299 - 2i ns
    lengths = [1299 - 2 * i for i in range(256)]
    if level:
        check((level[0]['max_ns'], level[0]['min_ns'], level[0]['total_ns']) ==
              (max(lengths), min(lengths), sum(lengths)), 'deep: lengths %s' % level[0])
    t = got['trace']
    check((t['too_deep'], t['unmatched_ends'], t['open_durations']) == (44, 1, 0),
          'deep: too_deep/unmatched/open %s' % t)


def test_demo():
    archive = path('demo.fxt')
    env = dict(os.environ)
    for k in ('FXTRACE_OUTPUT', 'XDG_RUNTIME_DIR'):
        env.pop(k, None)
    env['FXTRACE_SOCKET'] = path('no-manager.sock')
    env['TMPDIR'] = TMP
    rc, out, err = run(['record', '-o', archive, '--', DEMO], env=env, timeout=120)
    check(rc == 0, 'record demo: exit %d: %s' % (rc, err[-400:]))
    if rc != 0:
        return
    records, events, got = check_archive('demo', archive, False)
    check(any(p['name'] == 'demo' for p in got['providers']), 'demo: providers %s'
          % got['providers'])
    # Issue 19, point 5: each demo:item span is begun by the producer and ended by a worker, in
    # other threads' chunks of the archive; read in time order, all 400 pair up.
    item = [d for d in got['durations'] if d['name'] == 'item']
    check(len(item) == 1 and item[0]['async'] == 400 and item[0]['count'] == 400,
          'demo: demo:item spans %s' % item)
    t = got['trace']
    check((t['open_durations'], t['unmatched_ends'], t['unmatched_async_ends']) == (0, 0, 0),
          'demo: open/unmatched %s' % t)
    rc, text, err = run(['summary', archive])
    check(rc == 0 and b'Not counted' not in text, 'demo: text summary: %s' % text[-300:])
    span = (got['trace']['end_ns'] - got['trace']['origin_ns']) / 1e9
    check_time_range('demo', archive, records, events, round(span / 4, 6), round(span / 2, 6))


def run_stdin(args, data, timeout=120):
    p = subprocess.run([TRACE] + args, input=data, stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, timeout=timeout)
    return p.returncode, p.stdout, p.stderr.decode('utf-8', 'replace')


def test_compressed(archives):
    """zstd- and gzip-compressed copies of each archive (recognized by their first bytes), from
    a file and from stdin: the JSON summary is byte for byte the plain archive's."""
    magics = {'zstd': b'\x28\xb5\x2f\xfd', 'gzip': b'\x1f\x8b\x08'}
    for archive in archives:
        if not os.path.exists(archive):
            check(False, 'compressed: no %s to compress' % archive)
            continue
        rc, plain, err = run(['summary', '--format=json', archive])
        check(rc == 0 and json.loads(plain)['durations'],
              'compressed: summary of the plain %s: exit %d: %s' % (archive, rc, err[:300]))
        for codec, suffix in (('zstd', '.zst'), ('gzip', '.gz')):
            what = '%s, %s-compressed' % (os.path.basename(archive), codec)
            if not shutil.which(codec):
                check(False, '%s: no %s program (scripts/install-deps.sh installs it)'
                      % (what, codec))
                continue
            compressed = archive + suffix
            with open(compressed, 'wb') as f:
                subprocess.run([codec, '-c', archive], stdout=f, check=True)
            with open(compressed, 'rb') as f:
                data = f.read()
            check(data.startswith(magics[codec]), '%s: not a %s file' % (what, codec))
            rc, out, err = run(['summary', '--format=json', compressed])
            check(rc == 0 and out == plain, '%s: exit %d, JSON %s the plain archive\'s: %s'
                  % (what, rc, 'identical to' if out == plain else 'differs from', err[:300]))
            rc, out, err = run_stdin(['summary', '--format=json', '-'], data)
            check(rc == 0 and out == plain, '%s, from stdin: exit %d, JSON %s the plain '
                  'archive\'s: %s' % (what, rc, 'identical to' if out == plain else
                                       'differs from', err[:300]))


def test_errors(crafted):
    for args, want in ((['--sort=bogus', crafted], 'unknown field'),
                       (['--time-range=5,1', crafted], 'START <= END'),
                       (['--time-range=abc', crafted], '--time-range'),
                       (['--top=-1', crafted], '--top'),
                       (['--format=xml', crafted], 'unknown format'),
                       (['--order-memory=1K', crafted], '--order-memory'),
                       (['--order-memory=12X', crafted], '--order-memory'),
                       (['--order-memory=', crafted], '--order-memory'),
                       ([], 'missing the input FILE'),
                       ([crafted, crafted], 'expected one input FILE')):
        rc, out, err = run(['summary'] + args)
        check(rc == 2 and want in err, 'summary %s: exit %d, stderr %r' % (args, rc, err))
    for cmd in ('convert', 'dump'):
        rc, out, err = run([cmd, '--time-range=2,1', crafted])
        check(rc == 2 and '--time-range' in err, '%s bad range: exit %d %r' % (cmd, rc, err))
    rc, out, err = run(['summary', path('missing.fxt')])
    check(rc == 1 and 'cannot open' in err, 'missing file: exit %d %r' % (rc, err))
    with open(path('not.fxt'), 'wb') as f:
        f.write(b'this is not a trace at all')
    rc, out, err = run(['summary', path('not.fxt')])
    check(rc == 1 and out == b'' and err, 'not an archive: exit %d out %r err %r'
          % (rc, out[:80], err))
    # truncated inside a record: figures of what came before, exit 1 with the offset
    data = open(crafted, 'rb').read()
    with open(path('cut.fxt'), 'wb') as f:
        f.write(data[:len(data) // 2 + 3])
    rc, out, err = run(['summary', '--format=json', path('cut.fxt')])
    check(rc == 1 and 'byte offset' in err, 'truncated: exit %d %r' % (rc, err))
    got = json.loads(out) if out else {}
    check(got.get('durations'), 'truncated: no figures printed: %r' % out[:200])
    rc, out, err = run(['summary', '--help'])
    check(rc == 0 and b'--time-range' in out, 'summary --help: %d %r' % (rc, out[:100]))


def peak_rss_kb(args):
    # Under AddressSanitizer freed memory waits in a quarantine (256 MB by default) instead of
    # being reused, so the peak grows with the number of allocations, not with what is live;
    # without the quarantine the figure measures the program (other options kept).
    env = dict(os.environ)
    env['ASAN_OPTIONS'] = ':'.join(filter(None, [env.get('ASAN_OPTIONS', ''),
                                                 'quarantine_size_mb=0',
                                                 'thread_local_quarantine_size_kb=0']))
    p = subprocess.Popen([TRACE] + args, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                         env=env)
    _, status, usage = os.wait4(p.pid, 0)
    check(status == 0, '%s: exit status %d' % (args, status))
    return usage.ru_maxrss


def test_constant_memory():
    """The same records repeated 100 times more (21 MB): peak memory grows by no more than the
    ordered view's documented bound (docs/ordered-view.md: --order-memory plus 66 I/O buffers of
    64 KiB for one input), whatever the archive's length; the figures stay bounded by distinct
    names."""
    sizes = {}
    order_memory = 4 << 20
    for repeat in (200, 20000):
        archive = path('sample-%d.fxt' % repeat)
        rc, out, err = run(['gen-sample', '-o', archive, '--repeat', str(repeat)])
        check(rc == 0, 'gen-sample: %s' % err)
        sizes[repeat] = peak_rss_kb(['summary', '--order-memory=%d' % order_memory, archive])
        os.unlink(archive)
    bound_kb = (order_memory + 66 * 64 * 1024) // 1024
    check(sizes[20000] - sizes[200] < bound_kb, 'summary peak RSS grows with the archive: %s KiB '
          '(bound %d KiB)' % (sizes, bound_kb))


def test_damaged_inputs(crafted):
    """Corrupted archives (seeded random byte changes and cuts): a clean exit 0 with valid JSON or
    exit 1 with a message, never a crash or a sanitizer report."""
    import random
    rnd = random.Random(1234)
    data = open(crafted, 'rb').read()
    damaged = path('damaged.fxt')
    for i in range(150):
        b = bytearray(data[:rnd.randrange(8, len(data))] if i % 5 == 0 else data)
        for _ in range(rnd.randrange(1, 20)):
            b[rnd.randrange(8, len(b))] = rnd.randrange(256)
        with open(damaged, 'wb') as f:
            f.write(b)
        rc, out, err = run(['summary', '--format=json', '--time-range=0.001,', damaged])
        sane = rc in (0, 1) and 'Sanitizer' not in err and 'runtime error' not in err
        check(sane, 'damaged input %d: exit %d: %s' % (i, rc, err[-300:]))
        if rc == 0:
            try:
                json.loads(out)
            except ValueError as e:
                check(False, 'damaged input %d: invalid JSON (%s)' % (i, e))
        if not sane:
            shutil.copy(damaged, path('damaged-%d.fxt' % i))
            break


def main():
    crafted = test_crafted()
    test_too_deep()
    test_demo()
    test_compressed([crafted, path('demo.fxt')])
    test_constant_memory()
    test_errors(crafted)
    test_damaged_inputs(crafted)
    if not FAILURES:
        shutil.rmtree(TMP, ignore_errors=True)  # kept for a look when something failed
    if FAILURES:
        print('%d failure(s)' % len(FAILURES))
        return 1
    print('trace summary: all checks passed')
    return 0


if __name__ == '__main__':
    sys.exit(main())
