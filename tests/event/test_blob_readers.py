#!/usr/bin/env python3
"""Large blobs that every reader survives (issue 21, item 3; docs/event-formats.md).

blob_writer writes, for 1 KiB, 40,000 bytes, the largest blob event with one argument
(262,040 bytes), the largest attachment (262,056 bytes) and one byte more, a TRACE_BLOB_ATTACHMENT
and a TRACE_BLOB_EVENT, each followed by an instant. Recorded in file mode (each buffering mode)
and through `trace record`, each archive is checked:

  - tests/tools/fxt12_reader.py, which frames records by their 12-bit size field only as
    Perfetto's importer does (READERS.md), reads it to the end without an error or bytes left
    over, and finds every instant after the blobs, in order, with its argument;
  - tests/tools/fxt_decode.py finds it conforming, with no record of 4096 words or more;
  - `trace dump` shows each blob written at its full size; the ones too large are dropped and
    counted (the program's or trace record's report: 3 records);
  - `trace convert` leaves the 7 blobs out of the JSON and counts them, as before.
Killed by SIGKILL instead of finishing (oneshot, streaming): `trace dump` of the raw buffer shows
the same blobs, and the archive `trace recover` rebuilds passes the checks above. `trace merge`
of two of the archives keeps every blob whole, written again as chains (its strings are inline,
so a chain's head no longer fits 4095 words as it came): none left out.

First, the checker itself is checked: on hand-made archives in the old form (one large record
per blob), it loses the instant after a 40,000-byte blob and stops at a 64 KiB one of zeros.

Usage: test_blob_readers.py BLOB_WRITER TRACE WORKDIR
"""

import os
import re
import shutil
import struct
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, '..', 'tools'))
import fxt12_reader  # noqa: E402
import fxt_decode as fxt  # noqa: E402

SIZES = [1024, 40000, 262040, 262056, 262057]
ATTACHMENTS = [1024, 40000, 262040, 262056]
EVENTS = [1024, 40000, 262040]
DROPPED = 3
FAILS = []


def check(cond, msg):
    if not cond:
        FAILS.append(msg)
        print('  FAIL: ' + msg)
    return cond


def q(*words):
    return struct.pack('<%dQ' % len(words), *words)


def old_form_archive(payload):
    """magic, provider 1, string 1 = "after", an attachment as one large record (the form before
    chains), then an instant named "after". Returns (archive, offset of the instant)."""
    out = q(0x0016547846040010)
    out += q(0 | 2 << 4 | 1 << 16 | 1 << 20 | 1 << 52) + b'p'.ljust(8, b'\0')
    out += q(2 | 2 << 4 | 1 << 16 | 5 << 32) + b'after'.ljust(8, b'\0')
    words = 3 + (len(payload) + 7) // 8
    out += q(15 | words << 4 | 1 << 40, 1 | 1 << 16, len(payload))
    out += payload.ljust((len(payload) + 7) // 8 * 8, b'\0')
    at = len(out)
    out += q(4 | 5 << 4 | 1 << 32 | 1 << 48, 100, 1, 2, 0)
    return out, at


def test_checker():
    pattern = bytes((i * 131 + (i >> 9)) & 0xff for i in range(40000))
    data, at = old_form_archive(pattern)
    r = fxt12_reader.read(data)
    check(not any(e['offset'] == at for e in r['events']),
          'fxt12_reader read the instant after a 40,000-byte large record: it does not frame by '
          '12-bit sizes')
    data, at = old_form_archive(b'\0' * 65536)
    r = fxt12_reader.read(data)
    check(r['error'] is not None and 'size 0' in r['error'],
          'fxt12_reader did not stop at a 64 KiB large record of zeros: %r' % r['error'])
    # the same records with a small blob: read whole
    data, at = old_form_archive(pattern[:1024])
    r = fxt12_reader.read(data)
    check([e['offset'] for e in r['events']] == [at] and r['error'] is None and not r['leftover'],
          'fxt12_reader: a 1 KiB large record then an instant: %r' % r)


def run(args, env=None):
    p = subprocess.run(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env,
                       timeout=120)
    return p.returncode, p.stdout.decode('utf-8', 'replace'), p.stderr.decode('utf-8', 'replace')


def check_dump(trace, archive, what):
    rc, out, err = run([trace, 'dump', archive])
    check(rc == 0 and 'warning: %s:' % archive not in err,
          '%s: trace dump: exit %d, %s' % (what, rc, err[:300]))
    attachments = [int(m) for m in re.findall(r' blob-attachment .* size=(\d+)$', out, re.M)]
    events = [int(m) for m in re.findall(r' blob-event .* size=(\d+)$', out, re.M)]
    check(attachments == ATTACHMENTS, '%s: trace dump shows attachments of %r bytes, expected %r'
          % (what, attachments, ATTACHMENTS))
    check(events == EVENTS, '%s: trace dump shows blob events of %r bytes, expected %r'
          % (what, events, EVENTS))
    check(not re.search(r'^blob ', out, re.M), '%s: trace dump shows a blob record outside a '
          'large blob' % what)


def check_archive(trace, archive, what):
    with open(archive, 'rb') as f:
        data = f.read()
    r = fxt12_reader.read(data)
    check(r['error'] is None and r['leftover'] == 0,
          '%s: the 12-bit reader stopped (%s) or left %d bytes' % (what, r['error'],
                                                                   r['leftover']))
    # the wall-clock anchors (docs/merge.md#anchors) are not the test's
    got = [(e['name'], e['args'].get('size')) for e in r['events']
           if e['category'] != 'fxtrace:clock']
    want = []
    for s in SIZES:
        want += [('after-attachment', s), ('after-event', s)]
    want.append(('end', None))
    check(got == want, '%s: the 12-bit reader found the instants %r, expected %r'
          % (what, got[:12], want))
    check(r['invalid'] == 0, '%s: %d records the 12-bit reader could not read'
          % (what, r['invalid']))

    t = fxt.decode(data)
    check(not t.errors, '%s: fxt_decode: %s' % (what, t.errors[:5]))
    big = [(x['offset'], x['words']) for x in t.records if x['words'] >= 4096]
    check(not big, '%s: records of 4096 words or more: %r' % (what, big))

    check_dump(trace, archive, what)

    rc, out, err = run([trace, 'convert', archive, '-o', archive + '.json'])
    check(rc == 0, '%s: trace convert: exit %d, %s' % (what, rc, err[:300]))
    check(re.search(r'left out: %d blob\(s\)' % (len(ATTACHMENTS) + len(EVENTS)), err),
          '%s: trace convert does not count %d blobs left out: %s'
          % (what, len(ATTACHMENTS) + len(EVENTS), err[:300]))


def check_merged(trace, a, b, merged):
    """trace merge of archives a and b: every blob of both, whole, and no record a 12-bit
    reader misframes."""
    what = 'trace merge'
    rc, out, err = run([trace, 'merge', a, b, '-o', merged, '--host-names=one,two'])
    if not check(rc == 0, '%s: exit %d: %s' % (what, rc, err[:300])):
        return
    check('too large' not in err, '%s: left records out: %s' % (what, err[:300]))
    with open(merged, 'rb') as f:
        data = f.read()
    r = fxt12_reader.read(data)
    check(r['error'] is None and r['leftover'] == 0 and r['invalid'] == 0,
          '%s: the 12-bit reader stopped (%s), left %d bytes, could not read %d records'
          % (what, r['error'], r['leftover'], r['invalid']))
    t = fxt.decode(data)
    check(not t.errors, '%s: fxt_decode: %s' % (what, t.errors[:5]))
    big = [(x['offset'], x['words']) for x in t.records if x['words'] >= 4096]
    check(not big, '%s: records of 4096 words or more: %r' % (what, big))
    rc, out, err = run([trace, 'dump', merged])
    check(rc == 0, '%s: trace dump: exit %d, %s' % (what, rc, err[:300]))
    attachments = sorted(int(m) for m in re.findall(r' blob-attachment .* size=(\d+)$', out, re.M))
    events = sorted(int(m) for m in re.findall(r' blob-event .* size=(\d+)$', out, re.M))
    check(attachments == sorted(ATTACHMENTS * 2), '%s: attachments of %r bytes, expected %r'
          % (what, attachments, sorted(ATTACHMENTS * 2)))
    check(events == sorted(EVENTS * 2), '%s: blob events of %r bytes, expected %r'
          % (what, events, sorted(EVENTS * 2)))


def main():
    writer, trace, work = sys.argv[1], sys.argv[2], sys.argv[3]
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(os.path.join(work, 'shm'))
    os.makedirs(os.path.join(work, 'tmp'))
    test_checker()
    args = [writer] + [str(s) for s in SIZES]
    base = {k: v for k, v in os.environ.items() if not k.startswith('FXTRACE_')}

    for mode in ('oneshot', 'circular', 'streaming'):
        archive = os.path.join(work, mode + '.fxt')
        env = dict(base, FXTRACE_OUTPUT=archive, FXTRACE_BUFFERING_MODE=mode,
                   FXTRACE_SHM_DIR=os.path.join(work, 'shm'))
        rc, out, err = run(args, env)
        what = 'file mode, ' + mode
        if not check(rc == 0, '%s: blob_writer exit %d: %s' % (what, rc, err[:300])):
            continue
        check(re.search(r'fxtrace: %d trace records dropped' % DROPPED, err),
              '%s: the %d blobs too large are not counted as dropped: %s' % (what, DROPPED, err))
        check_archive(trace, archive, what)

    check_merged(trace, os.path.join(work, 'oneshot.fxt'), os.path.join(work, 'circular.fxt'),
                 os.path.join(work, 'merged.fxt'))

    # killed before the end: the raw buffer read by trace dump, then rebuilt by trace recover
    for mode in ('oneshot', 'streaming'):
        raw = os.path.join(work, 'killed-%s.fxt' % mode)
        env = dict(base, FXTRACE_OUTPUT=raw, FXTRACE_BUFFERING_MODE=mode,
                   FXTRACE_SHM_DIR=os.path.join(work, 'shm'), BLOB_WRITER_KILL='1')
        rc, out, err = run(args, env)
        what = 'killed, %s' % mode
        if not check(rc == -9, '%s: blob_writer exit %d: %s' % (what, rc, err[:300])):
            continue
        check_dump(trace, raw, what + ', the raw buffer')
        recovered = os.path.join(work, 'recovered-%s.fxt' % mode)
        rc, out, err = run([trace, 'recover', raw, '-o', recovered])
        if check(rc == 0, '%s: trace recover: exit %d, %s' % (what, rc, err[:300])):
            check_archive(trace, recovered, what + ', recovered')

    archive = os.path.join(work, 'record.fxt')
    env = dict(base, FXTRACE_SOCKET=os.path.join(work, 'no-manager.sock'),
               TMPDIR=os.path.join(work, 'tmp'))
    env.pop('XDG_RUNTIME_DIR', None)
    rc, out, err = run([trace, 'record', '-o', archive, '--'] + args, env)
    if check(rc == 0, 'trace record: exit %d: %s' % (rc, err[:500])):
        check(re.search(r"provider 'blob_writer' \(pid \d+\) dropped %d records" % DROPPED, err),
              'trace record: the %d blobs too large are not reported dropped: %s'
              % (DROPPED, err[:500]))
        check_archive(trace, archive, 'trace record')

    if FAILS:
        print('%d check(s) failed' % len(FAILS))
        return 1
    print('ok')
    return 0


if __name__ == '__main__':
    sys.exit(main())
