#!/usr/bin/env python3
"""Issue 19, points 1 and 2: damaged records are reported, and `trace recover` never writes an
archive a reader rejects.

    test_damage.py PATH_TO_TRACE PATH_TO_DEMO

1. Size fields too large. In the demo's archive (file mode), the size field of one event record
   is enlarged, at several positions and by several amounts: to cover the next one or three
   records exactly (FXT lets a reader skip words it does not understand: `trace dump`, `convert`
   and `summary` exit 0, and each warns once, on stderr, with the record's offset and the number
   of words skipped; dump counts it in its closing counts), onto the middle of the next record
   (what follows is garbage: any damage found there names the damaged record's offset too), past
   the end of the file (the error names the record's own offset, not the end of the file); and a
   large record whose 32-bit size runs past the end (the reader skips such records without
   reading them: the error named the end of the file).
2. `trace recover` on the live buffer of a demo killed while streaming in file mode, damaged:
   a zeroed record header in the streamed saves, `streamed_bytes` off a record boundary, size
   fields too large in the saves and in the buffer, and random words (many seeds). Each time
   recover exits 0, its last line counts the records recovered (as many as `trace dump` reads
   back) and what it left out and why, and the archive it writes is one `trace dump` reads
   with no skipped record, no warning and exit status 0 (and, for the fixed patterns,
   tests/tools/fxt_decode.py finds it conforming). A random word in the buffer's header may make
   it unusable: then recover exits 1 and writes nothing.
Python 3 standard library only.
"""

import os
import random
import re
import signal
import struct
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, '..', 'tools'))
import fxt_decode as fxt  # noqa: E402
import fxtest  # noqa: E402
from fxtest import read_bytes, run_tests, status, write_bytes  # noqa: E402
from test_cli import Writer  # noqa: E402  (the hand-built archive writer)

TRACE = DEMO = None
TMP = None
CRASH_WORDS = ('Traceback', 'Sanitizer', 'runtime error', 'Segmentation', 'core dumped')


def check(cond, msg):
    return fxtest.check(cond, msg, '  ')


def path(name):
    return os.path.join(TMP, name)


def run(args, timeout=120):
    """Runs trace; returns (rc, stdout text, stderr text)."""
    p = subprocess.run([TRACE] + args, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, timeout=timeout)
    out, err = p.stdout.decode('utf-8', 'replace'), p.stderr.decode('utf-8', 'replace')
    for bad in CRASH_WORDS:
        check(bad not in err, 'trace %s: a crash (%s): %s' % (args[0], bad, err[-500:]))
    return p.returncode, out, err


def frames(data, start=0, end=None, chunk=None):
    """(offset, type, words) of the records framed by size from start to end. With chunk, a
    rolling buffer read by the scan rule (docs/buffer-layout.md): a zero header ends a chunk's
    data, and the scan goes on at the next chunk boundary."""
    end = len(data) if end is None else end
    out = []
    off = start
    while off + 8 <= end:
        h = struct.unpack_from('<Q', data, off)[0]
        if h == 0 and chunk:
            off = start + ((off - start) // chunk + 1) * chunk
            continue
        t = h & 15
        w = (h >> 4) & (0xFFFFFFFF if t == 15 else 0xFFF)
        if w == 0 or off + w * 8 > end:
            break
        out.append((off, t, w))
        off += w * 8
    return out


def with_size(data, off, words):
    """data with the record at off given a size field of `words`."""
    d = bytearray(data)
    h = struct.unpack_from('<Q', d, off)[0]
    mask = (0xFFFFFFFF if h & 15 == 15 else 0xFFF) << 4
    struct.pack_into('<Q', d, off, (h & ~mask) | (words << 4))
    return bytes(d)


DUMP_COUNTS = re.compile(r'^-- (\d+) records, (\d+) skipped, (\d+) bytes$', re.M)


def dump_counts(out):
    m = DUMP_COUNTS.search(out)
    return (int(m.group(1)), int(m.group(2))) if m else (None, None)


# --- 1. size fields too large ------------------------------------------------------------------

def demo_archive():
    p = path('demo.fxt')
    env = dict(os.environ, FXTRACE_OUTPUT=p)
    r = subprocess.run([DEMO, '300'], env=env, stdout=subprocess.DEVNULL,
                       stderr=subprocess.DEVNULL, timeout=120)
    check(r.returncode == 0 and os.path.exists(p), 'the demo did not write its archive')
    return read_bytes(p)


def warned_once(cmd, err, off, skipped_words):
    """The one warning of `trace CMD` about the record at off, with the words it skipped."""
    lines = [l for l in err.splitlines() if 'warning' in l and 'size field' in l]
    want = 'at byte offset %d: ' % off
    mine = [l for l in lines if want in l]
    check(len(mine) == 1, '%s: %d warnings name offset %d, expected 1: %r'
          % (cmd, len(mine), off, lines[:3]))
    if mine:
        check('%d words skipped' % skipped_words in mine[0],
              '%s: the warning does not say %d words were skipped: %r'
              % (cmd, skipped_words, mine[0]))


def test_enlarged_sizes():
    data = demo_archive()
    recs = frames(data)
    check(sum(w for _, _, w in recs) * 8 == len(data), 'the demo archive does not frame')
    events = [i for i, (_, t, _) in enumerate(recs) if t == 4 and i + 4 < len(recs)]
    base_rc, base_out, _ = run(['dump', path('demo.fxt')])
    base_records, _ = dump_counts(base_out)
    check(base_rc == 0 and base_records == len(recs), 'dump of the demo archive: %d, %s records'
          % (base_rc, base_records))
    for where in (0.1, 0.5, 0.9):
        i = events[int(len(events) * where)]
        off, _, words = recs[i]
        for covered in (1, 3):
            extra = sum(w for _, _, w in recs[i + 1:i + 1 + covered])
            what = 'event at %d (%d%%) covering the next %d' % (off, where * 100, covered)
            p = path('enlarged.fxt')
            write_bytes(p, with_size(data, off, words + extra))
            rc, out, err = run(['dump', p])
            check(rc == 0, '%s: dump exit %d: %s' % (what, rc, err[-300:]))
            warned_once(what + ': dump', err, off, extra)
            records, skipped = dump_counts(out)
            check(records == len(recs) - covered and skipped == 0,
                  '%s: dump read %s records (%s skipped), expected %d' % (
                      what, records, skipped, len(recs) - covered))
            check(re.search(r'^-- 1 of them with a size field past their contents', out, re.M),
                  '%s: the closing counts do not count the record' % what)
            rc, out, err = run(['convert', p, '-o', path('enlarged.json')])
            check(rc == 0, '%s: convert exit %d: %s' % (what, rc, err[-300:]))
            warned_once(what + ': convert', err, off, extra)
            rc, out, err = run(['summary', p])
            check(rc == 0, '%s: summary exit %d: %s' % (what, rc, err[-300:]))
            warned_once(what + ': summary', err, off, extra)
        # onto the second word of the next record: what follows is framed from garbage
        extra = recs[i + 1][2] + 1
        what = 'event at %d onto the middle of the next record' % off
        p = path('garbage.fxt')
        write_bytes(p, with_size(data, off, words + extra))
        for cmd in (['dump', p], ['convert', p, '-o', path('garbage.json')], ['summary', p]):
            rc, out, err = run(cmd)
            check(rc in (0, 1), '%s: %s exit %d' % (what, cmd[0], rc))
            warned_once('%s: %s' % (what, cmd[0]), err, off, extra)
            if rc == 1 and cmd[0] == 'dump':
                # the fatal error names its own offset, and the damaged record if right before
                m = re.search(r'at byte offset (\d+): (.*)$', err.strip().splitlines()[-1])
                check(m is not None and int(m.group(1)) < len(data),
                      '%s: the error names no offset inside the file: %r' % (what, err[-300:]))
    # the last event record, past the end of the file: the error names the record
    i = [k for k, (_, t, _) in enumerate(recs) if t == 4][-1]
    off, _, words = recs[i]
    p = path('past-end.fxt')
    write_bytes(p, with_size(data, off, 4095))
    for cmd in (['dump', p], ['convert', p, '-o', path('past-end.json')], ['summary', p]):
        rc, out, err = run(cmd)
        check(rc == 1 and ('at byte offset %d: truncated archive' % off) in err,
              'last event past the end: %s exit %d, the error does not name offset %d: %r'
              % (cmd[0], rc, off, err[-300:]))
    # a large record (32-bit size) past the end: skipped unread, the error named the file's end
    w = Writer()
    w.provider_info(1, b'p')
    w.event(fxt.EV_INSTANT, 1, (1, 2), b'c', b'n')
    off = w.offset()
    w.large_blob_event(b'c', b'blob', 2, (1, 2), [], b'x' * 40)
    w.event(fxt.EV_INSTANT, 3, (1, 2), b'c', b'n')
    p = path('large.fxt')
    write_bytes(p, with_size(w.bytes(), off, 1 << 20))
    rc, out, err = run(['dump', p])
    check(rc == 1 and ('at byte offset %d: truncated archive' % off) in err,
          'large record past the end: dump exit %d, the error does not name offset %d: %r'
          % (rc, off, err[-300:]))


# --- 2. trace recover on damaged live buffers --------------------------------------------------

def killed_streaming_demo(min_saves=256 * 1024):
    """The raw image of a demo killed while streaming in file mode, after at least min_saves
    bytes of saves: its live buffer, then the streamed saves its placeholder file holds. None if
    it could not be made."""
    out = path('live.fxt')
    env = dict(os.environ, FXTRACE_OUTPUT=out, FXTRACE_BUFFERING_MODE='streaming',
               FXTRACE_BUFFER_SIZE='1', FXTRACE_SHM_DIR=TMP)
    p = subprocess.Popen([DEMO, '100000000'], env=env, stdout=subprocess.DEVNULL,
                         stderr=subprocess.DEVNULL)
    def live_buffer():
        head = read_bytes(out)[:4096] if os.path.exists(out) else b''
        names = [l[len(b'buffer '):].decode() for l in head.split(b'\n')
                 if l.startswith(b'buffer ')]
        return names if head.startswith(b'FXTLIVE') else []

    def streamed_bytes():  # what the live buffer's header says was saved so far
        live = live_buffer()
        if len(live) != 1 or not os.path.exists(live[0]):
            return 0
        with open(live[0], 'rb') as f:
            head = f.read(128)
        return struct.unpack_from('<Q', head, 104)[0] if len(head) == 128 else 0

    deadline = time.time() + 60
    while time.time() < deadline and streamed_bytes() < min_saves:
        time.sleep(0.05)
    p.send_signal(signal.SIGKILL)
    p.wait()
    live = live_buffer()
    if not check(len(live) == 1 and os.path.exists(live[0]),
                 'the killed demo left no placeholder naming its live buffer'):
        return None
    buf = read_bytes(live[0])
    os.unlink(live[0])
    total, streamed = struct.unpack_from('<Q', buf, 16)[0], struct.unpack_from('<Q', buf, 104)[0]
    saves = read_bytes(out)[4096:4096 + streamed]
    check(total == len(buf) and streamed > 0 and len(saves) == streamed,
          'the killed demo: buffer of %d bytes (header %d), %d of %d bytes of saves'
          % (len(buf), total, len(saves), streamed))
    return buf + saves


LAST_LINE = re.compile(r'^trace recover: (\d+) records recovered; (.*)$')


def recovered_ok(what, image, strict_decoder=False):
    """Runs trace recover on image; checks what it writes. Returns (the records it recovered,
    its last line), or (None, None) when it could not recover (an unusable header)."""
    p, out = path('damaged.img'), path('recovered.fxt')
    write_bytes(p, image)
    if os.path.exists(out):
        os.unlink(out)
    rc, _, err = run(['recover', p, '-o', out])
    lines = err.strip().splitlines()
    if rc == 1 and any('cannot be recovered' in l for l in lines):
        check(not os.path.exists(out), '%s: recover failed but wrote %s' % (what, out))
        return None, None
    if not check(rc == 0 and lines, '%s: recover exit %d: %s' % (what, rc, err[-500:])):
        return None, None
    m = LAST_LINE.match(lines[-1])
    if not check(m is not None, '%s: recover\'s last line counts nothing: %r' % (what, lines[-1])):
        return None, None
    recovered, rest = int(m.group(1)), m.group(2)
    left_out = [l for l in lines if l.startswith('trace recover: left out at byte offset')]
    stretches = re.search(r'left out (\d+) stretch', rest)
    if left_out:
        check(stretches is not None and
              int(stretches.group(1)) >= len(left_out) and 'damaged data' in rest,
              '%s: %d records left out, the last line says %r' % (what, len(left_out), rest))
    else:
        check(rest.startswith('nothing left out') or 'stretch' not in rest,
              '%s: the last line says %r, with no record reported left out' % (what, rest))
    rc, dump_out, dump_err = run(['dump', out])
    records, skipped = dump_counts(dump_out)
    check(rc == 0 and skipped == 0 and records == recovered and dump_err == '',
          '%s: dump of the recovered archive: exit %d, %s records (recover said %d), %s skipped, '
          'stderr %r' % (what, rc, records, recovered, skipped, dump_err[-300:]))
    check('size field past' not in dump_out, '%s: dump warns about the recovered archive' % what)
    if strict_decoder:
        t = fxt.decode(read_bytes(out))
        check(t.ok, '%s: fxt_decode.py refuses the recovered archive: %s' % (what, t.errors[:3]))
    return recovered, lines[-1]


def current_segment_events(image):
    """The first 50 event records of the buffer's current rolling segment (docs/buffer-layout.md:
    segment = switch count % segment_count, byte 11) that another record follows in the same
    chunk: a zeroed header there is damage, not a chunk's end."""
    durable, rolling = struct.unpack_from('<QQ', image, 24)
    alloc = struct.unpack_from('<Q', image, 88)[0]  # switches << 40 | next free offset
    current = (alloc >> 40) % image[11]
    start = 128 + durable + current * rolling
    chunk = struct.unpack_from('<I', image, 72)[0]
    # the scan stops at the allocation offset: past it, chunks not claimed since the segment's
    # last round still hold that round's records, which recover never reads
    recs = frames(image, start, start + min(rolling, alloc & ((1 << 40) - 1)), chunk)
    return [r for r, nxt in zip(recs, recs[1:])
            if r[1] == 4 and (r[0] - start) // chunk == (nxt[0] - start) // chunk][:50]


def test_recover_damaged():
    # the demo may be killed just after a switch, with its current segment nearly empty: the
    # buffer's own damage cases need some 30 records there, so a few kills are allowed
    for _ in range(4):
        image = killed_streaming_demo()
        if image is None or len(current_segment_events(image)) > 30:
            break
    if image is None:
        return
    total = struct.unpack_from('<Q', image, 16)[0]
    streamed = struct.unpack_from('<Q', image, 104)[0]
    saves = frames(image, total, total + streamed)
    check(sum(w for _, _, w in saves) * 8 == streamed, 'the saves do not frame')
    clean, last = recovered_ok('undamaged', image, True)
    if clean is None:
        return
    check(last.endswith('; nothing left out'), 'undamaged: recover says %r' % last)
    for where in (0.2, 0.5, 0.8):
        i = int(len(saves) * where)
        off, _, words = saves[i]
        d = bytearray(image)
        d[off:off + 8] = bytes(8)
        got, last = recovered_ok('zeroed header in the saves at %d' % off, bytes(d), True)
        check(got is not None and clean - 2 <= got <= clean and 'left out 1 stretch' in last,
              'zeroed header: %s records recovered of %d: %r' % (got, clean, last))
        # a size field too large: recover cuts it to its contents and reads on
        extra = sum(w for _, _, w in saves[i + 1:i + 4])
        got, last = recovered_ok('size too large in the saves at %d' % off,
                                 with_size(image, off, words + extra), True)
        check(got == clean and 'nothing left out; 1 record(s) cut to their contents' in last,
              'size too large: %s records recovered of %d: %r' % (got, clean, last))
        got, last = recovered_ok('size onto garbage in the saves at %d' % off,
                                 with_size(image, off, words + saves[i + 1][2] + 1), True)
        check(got is not None and got >= clean - 2, 'size onto garbage: %s records of %d'
              % (got, clean))
    for cut in (12, 4, 1, 1001):
        d = bytearray(image)
        struct.pack_into('<Q', d, 104, streamed - cut)
        got, last = recovered_ok('streamed_bytes %d bytes short' % cut, bytes(d), True)
        check(got is not None and got < clean and 'left out 1 stretch' in last,
              'streamed_bytes %d bytes short: %s records of %d: %r' % (cut, got, clean, last))
    # a size field too large in the buffer's current rolling segment, whose records the archive
    # ends with
    buffer_recs = current_segment_events(image)
    if check(len(buffer_recs) > 10, 'no records found in the current rolling buffer'):
        off, _, words = buffer_recs[5]
        got, last = recovered_ok('size too large in the buffer at %d' % off,
                                 with_size(image, off, words + 6), True)
        check(got == clean and '1 record(s) cut to their contents' in last,
              'size too large in the buffer: %s records recovered of %d: %r'
              % (got, clean, last))
    # a zeroed header inside a chunk of the buffer, before committed records: damage (a chunk is
    # cleared before reuse), not the end of the chunk's data; dump reports it too
    if len(buffer_recs) > 30:
        off = buffer_recs[20][0]
        d = bytearray(image)
        d[off:off + 8] = bytes(8)
        got, last = recovered_ok('zeroed header in the buffer at %d' % off, bytes(d), True)
        check(got is not None and clean - 2 <= got < clean and 'left out 1 stretch' in last,
              'zeroed header in the buffer: %s records recovered of %d: %r' % (got, clean, last))
        rc, out, err = run(['dump', path('damaged.img')])
        records, skipped = dump_counts(out)
        check(rc == 0 and skipped == 1, 'zeroed header in the buffer: dump exit %d, %s skipped'
              % (rc, skipped))
    # one damaged header word that makes the scan re-read a rolling buffer the saves hold (or
    # skip one they do not): the header's fields are checked against each other, and the last
    # line says so (not done: the duplicates themselves are still written)
    for field, name in ((56, 'rolling_data_end[1]'), (48, 'rolling_data_end[0]'),
                        (88, 'rolling_alloc'), (120, 'saves_done')):
        for value in (0x123456789abcdef8, (1 << 64) - 1):
            d = bytearray(image)
            if struct.unpack_from('<Q', d, field)[0] == value:
                continue
            struct.pack_into('<Q', d, field, value)
            got, last = recovered_ok('%s set to 0x%x' % (name, value), bytes(d))
            check(got is None or "the buffer's header is damaged" in last,
                  '%s set to 0x%x: %s records of %d, the last line says %r'
                  % (name, value, got, clean, last))
    # random words anywhere after the header, and a few over it
    for seed in range(120):
        rnd = random.Random(seed)
        d = bytearray(image)
        first = 0 if seed % 20 == 0 else 128
        for _ in range(rnd.choice((1, 2, 5, 20, 100))):
            off = rnd.randrange(first // 8, len(d) // 8) * 8
            struct.pack_into('<Q', d, off, rnd.getrandbits(64))
        recovered_ok('random words, seed %d' % seed, bytes(d), seed % 10 == 0)


def test_streamed_bytes_short():
    """streamed_bytes smaller than the saves the file holds by more than one save (damage: the
    provider publishes it after each save, so only one save can be past it): the rest of the
    file is read as saves, checked, and the last line says so."""
    image = killed_streaming_demo(4 << 20)
    if image is None:
        return
    total = struct.unpack_from('<Q', image, 16)[0]
    durable, rolling = struct.unpack_from('<QQ', image, 24)
    streamed = struct.unpack_from('<Q', image, 104)[0]
    saves = frames(image, total, total + streamed)
    if not check(streamed > 3 * (durable + rolling), 'only %d bytes of saves' % streamed):
        return
    clean, last = recovered_ok('undamaged, 4 MiB of saves', image)
    if clean is None:
        return
    boundary = saves[len(saves) // 4][0] - total  # a record boundary, several saves back
    for short, what in ((boundary, 'an earlier record boundary'), (33, '33, off a boundary')):
        d = bytearray(image)
        struct.pack_into('<Q', d, 104, short)
        got, last = recovered_ok('streamed_bytes set to %s' % what, bytes(d))
        if got is None:
            continue
        m = re.search(r"streamed_bytes \((\d+)\) is short of the file's saves: (\d+) more bytes "
                      r"read as saves \((\d+) records\)", last)
        if check(m is not None, 'streamed_bytes set to %s: the last line does not say so: %r'
                 % (what, last)):
            check(int(m.group(1)) == short and int(m.group(2)) == streamed - short,
                  'streamed_bytes set to %s: %r' % (what, last))
        check(clean - 2 <= got <= clean, 'streamed_bytes set to %s: %d records recovered of %d'
              % (what, got, clean))


def main():
    global TRACE, DEMO, TMP
    if len(sys.argv) != 3:
        print('usage: test_damage.py PATH_TO_TRACE PATH_TO_DEMO', file=sys.stderr)
        return 2
    TRACE, DEMO = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2])
    tests = [
        ('size fields too large: dump, convert, summary', test_enlarged_sizes),
        ('trace recover on damaged live buffers', test_recover_damaged),
        ('streamed_bytes short of the saves', test_streamed_bytes_short),
    ]
    with tempfile.TemporaryDirectory(prefix='fxtrace-damage-') as TMP:
        run_tests(tests)
    return status()


if __name__ == '__main__':
    sys.exit(main())
