#!/usr/bin/env python3
"""Alerts and the flight recorder (issue 22, docs/flight-recorder.md), with real processes:
`trace record` (its in-process manager) and tests/trace/alert_program.c, which ticks every 20 µs
(TRACE_INSTANT "ticks"/"tick", argument n = 0, 1, ...) and raises TRACE_ALERT at known ticks.

  test_alerts.py TRACE ALERT_PROGRAM TOOLS_DIR

1. stop: --buffering-mode=circular --buffer-size=1 --trigger=flight:stop --duration=0; the program
   raises 'flight' at tick A, ticks until tracing has stopped in it (first tick after: S), then
   more, then idles until killed. trace record prints the alert (name, provider, pid, time) and
   stops; the archive decodes, holds the alert's instant event (alert_sent=true), its ticks run
   without a gap from the oldest kept one to its newest, which is >= A and < S; the oldest is
   > 0 (the buffer wrapped: what is kept is the time before the alert); nothing dropped, and the
   records trace record counted are the ones the decoder finds.
2. a disabled category (--categories=other): the alert does nothing: not printed, no trigger.
3. a storm of 1000 alerts: every one is in the archive as an instant event, sent (alert_sent
   true) + not sent == 1000, some not sent (the limit, 16 a second), and the alerts trace
   record received + those the manager reported lost == the ones sent.
4. a run-time name over 14 characters: cut to 14, printed so, the event so named and marked
   alert_truncated.
5. file mode: FXTRACE_TRIGGER=flight:stop, circular: the archive is complete at the alert while
   the program still runs (idle), with the same tick checks as 1.
6. --duration=0 without a command records until SIGINT, then writes the archive.
7. --trigger=flight:snapshot, two alerts (circular): snapshots 1 and 2 each hold their alert tick
   and the ticks before it without a gap, and the final archive runs to the program's last tick;
   trace record's counts for each snapshot and for the archive are what the decoder finds, with
   nothing dropped.
Every archive is checked with the independent decoder (tests/tools/fxt_decode.py).
"""
import os
import re
import signal
import struct
import subprocess
import sys
import tempfile
import time
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', 'tools'))
from fxtest import FAILS, check  # noqa: E402

TRACE = PROGRAM = TMP = None
fxt = None


def env():
    e = dict(os.environ)
    for k in ('XDG_RUNTIME_DIR', 'FXTRACE_OUTPUT', 'FXTRACE_REGISTER_TIMEOUT', 'FXTRACE_TRIGGER'):
        e.pop(k, None)
    e['FXTRACE_SOCKET'] = os.path.join(TMP, 'no-manager.sock')  # trace record runs its own
    return e


def summary_row(err, name):
    """(records, dropped) from trace record's summary row for `name`."""
    for line in err.splitlines():
        f = line.split()
        if f[:1] == [name] and len(f) >= 8:
            return f[3], int(f[4])
    return None


def read_report(path):
    r = {'alert': [], 'stopped': None, 'last': None}
    try:
        with open(path) as f:
            for line in f:
                k, v = line.split()
                if k == 'alert':
                    r['alert'].append(int(v))
                else:
                    r[k] = int(v)
    except FileNotFoundError:
        pass
    return r


def archive_of(path, what):
    """(ticks in archive order, alert events [(name, sent, truncated)]), or None."""
    with open(path, 'rb') as f:
        t = fxt.decode(f.read())
    if not check(t.ok, '%s: the independent decoder finds errors: %s' % (what, t.errors[:3])):
        return None
    ticks, alerts = [], []
    ids = {r['provider_id'] for r in t.records
           if r['kind'] == 'provider_info' and r.get('name') == b'alert_program'}
    # the provider's records (its data after its provider-info / provider-section records)
    archive_of.records = sum(1 for r in t.records if r['provider'] in ids
                             and r['kind'] not in ('provider_info', 'provider_section',
                                                   'provider_event', 'magic'))
    for r in t.records:
        if r['kind'] != 'event' or r.get('category') != b'ticks':
            continue
        args = {a['name']: a['value'] for a in r['args']}
        if r.get('name') == b'tick':
            ticks.append(args.get(b'n'))
        else:
            check(r['event_type'] == 0, '%s: alert event of type %d' % (what, r['event_type']))
            alerts.append((r.get('name'), args.get(b'alert_sent'), args.get(b'alert_truncated')))
    return ticks, alerts


def check_flight(ticks, report, what):
    """Ticks without a gap from the oldest kept to the newest, newest in [A, S), oldest > 0."""
    a = report['alert'][0] if report['alert'] else None
    s = report['stopped']
    if not check(a is not None and s is not None and ticks,
                 '%s: no ticks or an incomplete report %r' % (what, report)):
        return
    first, last = ticks[0], ticks[-1]
    print('   ticks %d..%d in the archive; alert at %d, stopped seen at %d, last %s'
          % (first, last, a, s, report['last']), flush=True)
    check(ticks == list(range(first, last + 1)),
          '%s: the %d ticks are not %d..%d without a gap' % (what, len(ticks), first, last))
    check(first <= a <= last, '%s: the alert tick %d is not in %d..%d' % (what, a, first, last))
    check(last < s, '%s: tick %d is in the archive, but the trace had stopped at %d'
          % (what, last, s))
    check(report['last'] is None or last < report['last'],
          '%s: the archive reaches the program\'s last tick' % what)
    check(first > 0, '%s: tick 0 is still there: the circular buffer did not wrap' % what)


ALERT_LINE = re.compile(r"trace record: alert '([^']*)' from provider 'alert_program' \(pid (\d+)\)"
                        r" at \d\d:\d\d:\d\d\.\d{3} \([+-]\d+\.\d{3} s\)")


def test_stop_circular():
    what = 'circular, --trigger=flight:stop'
    out_file = os.path.join(TMP, 'flight.fxt')
    report = os.path.join(TMP, 'flight.report')
    p = subprocess.run([TRACE, 'record', '--buffering-mode=circular', '--buffer-size=1',
                        '--duration=0', '--trigger=flight:stop', '-o', out_file, '--', PROGRAM,
                        '--alert-at', '50000', '--until-stopped', '--after', '50', '--idle',
                        '--report', report], env=env(), stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, timeout=240)
    err = p.stderr.decode('utf-8', 'replace')
    check(p.returncode == 0, '%s: status %d: %s' % (what, p.returncode, err[-2000:]))
    lines = [m for m in map(ALERT_LINE.search, err.splitlines()) if m]
    check(len(lines) == 1 and lines[0].group(1) == 'flight',
          '%s: expected one printed alert "flight": %s' % (what, err[-2000:]))
    check('trigger flight:stop: stopping' in err, '%s: the trigger is not reported' % what)
    row = summary_row(err, 'alert_program')
    if check(row is not None, '%s: no summary row: %s' % (what, err[-2000:])):
        check(row[1] == 0, '%s: %d dropped' % (what, row[1]))
    got = archive_of(out_file, what)
    if got is None:
        return
    ticks, alerts = got
    check(alerts == [(b'flight', True, None)], '%s: alert events %r' % (what, alerts))
    if row is not None:
        # exact accounting: what trace record counted is what the independent decoder finds
        print('   summary: %s records, %d dropped; decoded: %d records of the provider'
              % (row[0], row[1], archive_of.records), flush=True)
        check(row[0] == str(archive_of.records), '%s: the summary counts %s records, the '
              'archive holds %d' % (what, row[0], archive_of.records))
    check_flight(ticks, read_report(report), what)


def test_disabled_category():
    what = 'alert of a disabled category'
    out_file = os.path.join(TMP, 'disabled.fxt')
    p = subprocess.run([TRACE, 'record', '--categories=other', '--trigger=flight:stop', '-o',
                        out_file, '--', PROGRAM, '--alert-at', '10', '--after', '10'],
                       env=env(), stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=120)
    err = p.stderr.decode('utf-8', 'replace')
    check(p.returncode == 0, '%s: status %d: %s' % (what, p.returncode, err[-2000:]))
    check("alert '" not in err and 'trigger' not in err,
          '%s: an alert was reported: %s' % (what, err[-2000:]))
    got = archive_of(out_file, what)
    if got:
        check(got == ([], []), '%s: events of the disabled category: %r' % (what, got))


def test_storm():
    what = 'a storm of 1000 alerts'
    out_file = os.path.join(TMP, 'storm.fxt')
    p = subprocess.run([TRACE, 'record', '-o', out_file, '--', PROGRAM, '--name', 'storm',
                        '--storm', '1000'], env=env(), stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, timeout=120)
    err = p.stderr.decode('utf-8', 'replace')
    check(p.returncode == 0, '%s: status %d: %s' % (what, p.returncode, err[-2000:]))
    got = archive_of(out_file, what)
    if got is None:
        return
    _, alerts = got
    row = summary_row(err, 'alert_program')
    if check(row is not None, '%s: no summary row: %s' % (what, err[-2000:])):
        check(row[1] == 0 and row[0] == str(archive_of.records),
              '%s: summary %s records, %d dropped; the archive holds %d'
              % (what, row[0], row[1], archive_of.records))
    sent = sum(1 for a in alerts if a[1] is True)
    not_sent = sum(1 for a in alerts if a[1] is False)
    check(len(alerts) == 1000 and sent + not_sent == 1000,
          '%s: %d alert events (%d sent, %d not), expected 1000' % (what, len(alerts), sent,
                                                                   not_sent))
    check(sent >= 1 and not_sent >= 1, '%s: %d sent, %d not: no limit?' % (what, sent, not_sent))
    check(re.search(r'fxtrace: %d alert\(s\) of this trace were not sent' % not_sent, err),
          '%s: the program does not report its %d unsent alerts: %s' % (what, not_sent, err[-2000:]))
    received = sum(1 for line in err.splitlines() if ALERT_LINE.search(line))
    m = re.search(r'trace record: (\d+) alert\(s\) received, (\d+) lost in the trace manager', err)
    if check(m is not None, '%s: no alert totals: %s' % (what, err[-2000:])):
        check(int(m.group(1)) == received, '%s: %s received, %d printed'
              % (what, m.group(1), received))
        check(received + int(m.group(2)) == sent,
              '%s: %d received + %s lost in the manager != %d sent' % (what, received,
                                                                        m.group(2), sent))


def test_truncated_name():
    what = 'a run-time name of 17 characters'
    out_file = os.path.join(TMP, 'long.fxt')
    p = subprocess.run([TRACE, 'record', '--trigger=flight_recorde:stop', '-o', out_file, '--',
                        PROGRAM, '--name', 'flight_recorder_x', '--alert-at', '5',
                        '--until-stopped'], env=env(), stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, timeout=120)
    err = p.stderr.decode('utf-8', 'replace')
    check(p.returncode == 0, '%s: status %d: %s' % (what, p.returncode, err[-2000:]))
    lines = [m.group(1) for m in map(ALERT_LINE.search, err.splitlines()) if m]
    check(lines == ['flight_recorde'], '%s: printed alerts %r' % (what, lines))
    check('cut to 14' in err, '%s: the cut is not reported: %s' % (what, err[-2000:]))
    got = archive_of(out_file, what)
    if got:
        check(got[1] == [(b'flight_recorde', True, True)], '%s: alert events %r' % (what, got[1]))


def test_file_mode():
    what = 'file mode, FXTRACE_TRIGGER=flight:stop'
    out_file = os.path.join(TMP, 'file-mode.fxt')
    report = os.path.join(TMP, 'file-mode.report')
    e = env()
    e.update(FXTRACE_OUTPUT=out_file, FXTRACE_BUFFERING_MODE='circular', FXTRACE_BUFFER_SIZE='1',
             FXTRACE_TRIGGER='flight:stop', FXTRACE_SHM_DIR=TMP)
    p = subprocess.Popen([PROGRAM, '--alert-at', '50000', '--until-stopped', '--after', '50',
                          '--idle', '--report', report], env=e, stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE)
    try:
        deadline = time.monotonic() + 200
        while read_report(report)['last'] is None and time.monotonic() < deadline:
            if p.poll() is not None:
                break
            time.sleep(0.05)
        # the engine thread finishes the archive right after the stop, and renames it over the
        # placeholder in one step: once the file starts with the FXT magic record, it is whole
        magic = struct.pack('<Q', 0x0016547846040010)
        while time.monotonic() < deadline:
            with open(out_file, 'rb') as f:
                if f.read(8) == magic:
                    break
            time.sleep(0.05)
        check(p.poll() is None, '%s: the program ended (status %s)' % (what, p.returncode))
        rep = read_report(report)
        if check(rep['last'] is not None, '%s: no report' % what):
            got = archive_of(out_file, what)
            if got:
                ticks, alerts = got
                check(alerts == [(b'flight', True, None)], '%s: alert events %r' % (what, alerts))
                check_flight(ticks, rep, what)
    finally:
        p.kill()
        _, errb = p.communicate(timeout=60)
    err = errb.decode('utf-8', 'replace')
    check("alert 'flight' (FXTRACE_TRIGGER): finishing the archive" in err,
          '%s: the trigger is not reported: %s' % (what, err[-1000:]))
    leftovers = [n for n in os.listdir(TMP) if n.startswith('fxtrace-')]
    check(not leftovers, '%s: the live buffer was left: %r' % (what, leftovers))


def test_duration_zero():
    what = '--duration=0 without a command'
    out_file = os.path.join(TMP, 'forever.fxt')
    p = subprocess.Popen([TRACE, 'record', '--duration=0', '-o', out_file], env=env(),
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    time.sleep(3)  # long past any default; how long exactly does not matter
    check(p.poll() is None, '%s: ended by itself (status %s)' % (what, p.returncode))
    p.send_signal(signal.SIGINT)
    _, errb = p.communicate(timeout=120)
    err = errb.decode('utf-8', 'replace')
    check(p.returncode == 0, '%s: status %d after SIGINT: %s' % (what, p.returncode, err[-1000:]))
    with open(out_file, 'rb') as f:
        t = fxt.decode(f.read())
    check(t.ok and t.records and t.records[0]['kind'] == 'magic',
          '%s: the archive is not valid: %s' % (what, t.errors[:3]))


SNAPSHOT_LINE = re.compile(r"trace record: snapshot (\d+) \(alert 'flight'\): wrote .*\n"
                           r"trace record:   provider 'alert_program' \(pid \d+\): (\d+) records, "
                           r"(\d+) dropped, (\d+) discarded")


def test_snapshot_trigger():
    what = 'circular, --trigger=flight:snapshot, two alerts'
    out_file = os.path.join(TMP, 'snap.fxt')
    report = os.path.join(TMP, 'snap.report')
    p = subprocess.run([TRACE, 'record', '--buffering-mode=circular', '--buffer-size=1',
                        '--trigger=flight:snapshot', '-o', out_file, '--', PROGRAM,
                        '--alert-at', '20000', '--alert-at', '40000', '--after', '20000',
                        '--wait-for', os.path.join(TMP, 'snap'), '--report', report],
                       env=env(), stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=240)
    err = p.stderr.decode('utf-8', 'replace')
    check(p.returncode == 0, '%s: status %d: %s' % (what, p.returncode, err[-2000:]))
    rep = read_report(report)
    if not check(len(rep['alert']) == 2 and rep['last'] is not None,
                 '%s: incomplete report %r' % (what, rep)):
        return
    # trace record's line per snapshot and provider: its records and drops (exact accounting)
    counted = {int(m.group(1)): (int(m.group(2)), int(m.group(3)), int(m.group(4)))
               for m in SNAPSHOT_LINE.finditer(err)}
    check(sorted(counted) == [1, 2], '%s: snapshot lines for %s, expected 1 and 2: %s'
          % (what, sorted(counted), err[-2000:]))
    for k, tick in enumerate(rep['alert'], 1):
        got = archive_of(os.path.join(TMP, 'snap.%d.fxt' % k), '%s, snapshot %d' % (what, k))
        if not got:
            continue
        if k in counted:
            records, dropped, discarded = counted[k]
            check(dropped == 0 and discarded == 0 and records == archive_of.records,
                  '%s: snapshot %d: trace record counts %d records (%d dropped, %d discarded), '
                  'the independent decoder %d' % (what, k, records, dropped, discarded,
                                                  archive_of.records))
        ticks = got[0]
        check(ticks and tick in ticks, '%s: snapshot %d lacks its alert tick %d' % (what, k, tick))
        if ticks and tick in ticks:
            upto = ticks[:ticks.index(tick) + 1]
            check(upto == list(range(upto[0], tick + 1)), '%s: snapshot %d: the ticks before the '
                  'alert have a gap' % (what, k))
            print('   snapshot %d: ticks %d..%d, alert at %d' % (k, ticks[0], ticks[-1], tick),
                  flush=True)
    got = archive_of(out_file, what + ', final archive')
    row = summary_row(err, 'alert_program')
    if check(row is not None, '%s: no summary row: %s' % (what, err[-2000:])) and got:
        check(row[1] == 0 and row[0] == str(archive_of.records), '%s: the summary counts %s '
              'records (%d dropped), the archive holds %d' % (what, row[0], row[1],
                                                             archive_of.records))
    if got:
        ticks = got[0]
        check(ticks and ticks[-1] == rep['last'] and ticks == list(range(ticks[0], ticks[-1] + 1)),
              '%s: the final archive does not run to the program\'s last tick %d without a gap'
              % (what, rep['last']))


def main():
    global TRACE, PROGRAM, TMP, fxt
    TRACE, PROGRAM, tools = sys.argv[1:4]
    sys.path.insert(0, tools)
    import fxt_decode
    fxt = fxt_decode
    with tempfile.TemporaryDirectory(prefix='fxtrace-alerts-') as TMP:
        for name, test in (('stop in circular mode', test_stop_circular),
                           ('disabled category', test_disabled_category),
                           ('storm', test_storm),
                           ('truncated name', test_truncated_name),
                           ('file mode trigger', test_file_mode),
                           ('--duration=0', test_duration_zero),
                           ('snapshot trigger', test_snapshot_trigger)):
            print('== ' + name, flush=True)
            test()
    if FAILS:
        print('%d failure(s)' % len(FAILS))
        return 1
    print('ok')
    return 0


if __name__ == '__main__':
    sys.exit(main())
