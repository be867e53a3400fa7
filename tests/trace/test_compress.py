#!/usr/bin/env python3
"""Compressed archives (zstd, gzip), end to end through the `trace` CLI:

    test_compress.py PATH_TO_TRACE PATH_TO_DEMO [full-disk PATH_TO_STREAM_PRODUCER]

- `trace record --compress` (and by the output name) against a scripted fake manager that
  sends a fixed archive: `zstd -d` / `gunzip` give back exactly those bytes (byte for byte),
  to a regular file, to a pipe on stdout (`-o -`) and to a FIFO;
- with `full-disk PATH_TO_STREAM_PRODUCER` only this, as root (exit status 77, a skip, where no
  tmpfs can be mounted): a full disk (a small tmpfs) under `trace record` (a fake manager's
  fixed archive; a streaming producer with --duration=60 onto 2 MiB: plain, zstd, gzip, JSON,
  JSON zstd), `trace convert` and `trace recover`: exit 1, the message at once (`writing FILE
  failed: No space left on device; stopping the trace`), the recording stopped long before its
  60 s, the file kept and cut after its last complete record (compressed: frame; JSON: event,
  then closed), as the message says: it reads to its end without an error;
- a real `trace record` of the demo, compressed: decompressed, the independent decoder
  (tests/tools/fxt_decode.py) accepts it, and `trace dump` reads the compressed file as the
  decompressed one;
- `trace dump` / `trace convert` read compressed archives from a file and from a pipe with the
  output of the plain archive; a truncated compressed archive gives exactly the records that
  the codec's own decompressor (`zstd -dc`, `gunzip -c`) gets out of it, then a clear message
  and exit 1; a damaged one exit 1 and a message; never a crash;
- `trace recover` of a compressed raw trace buffer, to a compressed output: byte for byte the
  archive it recovers from the plain buffer.
Needs the `zstd` and `gzip` programs (scripts/install-deps.sh; exit status 77 without them).
Exit status 0 only if every check passed.
"""

import json
import os
import re
import shutil
import signal
import stat
import struct
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, '..', 'tools'))
import fxt_decode as fxt  # noqa: E402
import test_record as tr  # noqa: E402  (its fake manager and wire helpers)
from fxtest import CHECKS, FAILS, check, read_bytes, run_tests, write_bytes  # noqa: E402

TRACE = DEMO = PRODUCER = None
TMP = None

DECOMPRESS = {'zstd': ['zstd', '-d', '-c', '-q'], 'gzip': ['gzip', '-d', '-c']}
COMPRESS = {'zstd': ['zstd', '-c', '-q', '-1'], 'gzip': ['gzip', '-c', '-1']}
CRASH_WORDS = ('Traceback', 'Sanitizer', 'runtime error', 'Segmentation', 'core dumped')


class Skip(Exception):
    """A test that cannot run here: alone, the script then exits with 77, which ctest reports
    as a skip (SKIP_RETURN_CODE)."""


def path(name):
    return os.path.join(TMP, name)


def run(args, stdin_data=None, env=None, timeout=120):
    p = subprocess.run([TRACE] + args, input=stdin_data,
                       stdin=None if stdin_data is not None else subprocess.DEVNULL,
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env, timeout=timeout,
                       cwd=TMP)
    return p.returncode, p.stdout, p.stderr.decode('utf-8', 'replace')


def no_crash(err, what):
    for bad in CRASH_WORDS:
        check(bad not in err, '%s: stderr shows a crash (%s): %s' % (what, bad, err[:300]))


def decompress(codec, data):
    p = subprocess.run(DECOMPRESS[codec], input=data, stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE)
    check(p.returncode == 0, '%s -d failed: %s' % (codec, p.stderr[:300]))
    return p.stdout


def compress(codec, data):
    return subprocess.run(COMPRESS[codec], input=data, stdout=subprocess.PIPE, check=True).stdout


def sample_archive(repeat):
    p = path('sample-%d.fxt' % repeat)
    rc, out, err = run(['gen-sample', '-o', p, '--repeat', str(repeat)])
    check(rc == 0, 'gen-sample: %s' % err)
    return read_bytes(p)


# ---- trace record against a fake manager sending a fixed archive ----

def fake_script(archive, state):
    def script(mtype, rid, payload, fds):
        if mtype == tr.MSG_INITIALIZE_TRACING:
            if fds:
                os.write(fds[0], archive)  # trace's archive thread reads as this writes
                state['fd'] = fds[0]
            return None
        if mtype == tr.MSG_START_TRACING:
            return tr.wire_msg(tr.MSG_START_RESULT, rid, struct.pack('<II', 0, 1))
        if mtype == tr.MSG_TERMINATE_TRACING:
            if 'fd' in state:
                os.close(state.pop('fd'))
            return tr.wire_msg(tr.MSG_TERMINATE_RESULT, rid, struct.pack('<H', 0))
        if mtype == tr.MSG_GET_PROVIDERS:
            # trace record's round trip after the stop, which collects the alerts that came
            # while stopping (protocol version 5): unanswered, it waits out its timeout
            return tr.wire_msg(tr.MSG_PROVIDERS, rid, struct.pack('<H', 0))
        return None  # WATCH_ALERT stays pending: no alert
    return script


def record_fake(archive, args, timeout=60):
    return tr.with_fake(fake_script(archive, {}), ['record', '--duration=0.2'] + args,
                        timeout=timeout)[:3]


def test_record_fixed_archive():
    """Byte for byte: the fixed archive, compressed by trace record, decompresses to itself."""
    archive = sample_archive(6000)  # several MiB: several zstd jobs and blocks
    check(len(archive) > 4 << 20, 'the sample archive is only %d bytes' % len(archive))
    cases = [('zstd', ['--compress=zstd'], 'a.fxt'), ('gzip', ['--compress=gzip'], 'b.fxt'),
             ('zstd', [], 'c.fxt.zst'), ('gzip', [], 'd.fxt.gz'),
             (None, ['--compress=none'], 'e.fxt.zst'), (None, [], 'f.fxt')]
    for codec, flags, name in cases:
        what = 'record %s -o %s' % (' '.join(flags), name)
        rc, out, err = record_fake(archive, flags + ['-o', path(name)])
        check(rc == 0, '%s: exit status %d: %s' % (what, rc, err[:400]))
        if not check(os.path.exists(path(name)), '%s: no output' % what):
            continue
        data = read_bytes(path(name))
        if codec is None:
            check(data == archive, '%s: the plain archive differs from what was sent' % what)
            continue
        check(len(data) * 5 < len(archive), '%s: %d bytes compressed from %d' % (
            what, len(data), len(archive)))
        check('%s-compressed to ' % codec in err, '%s: the summary does not give the compressed '
              'size: %s' % (what, err[:300]))
        check(decompress(codec, data) == archive,
              '%s: %s -d does not give back the archive byte for byte' % (what, codec))
        # and the reader reads the compressed file as the plain one
        rc1, dumped, err1 = run(['dump', path(name)])
        check(rc1 == 0, '%s: trace dump of the compressed file: %s' % (what, err1[:300]))
        write_bytes(path('plain.fxt'), archive)
        rc2, dumped_plain, _ = run(['dump', path('plain.fxt')])
        check(dumped == dumped_plain, '%s: trace dump differs from the plain archive\'s' % what)


def test_record_pipe():
    """--compress to a non-regular output: stdout as a pipe, and a FIFO."""
    archive = sample_archive(2000)
    for codec in ('zstd', 'gzip'):
        rc, out, err = record_fake(archive, ['--compress=' + codec, '-o', '-'])
        check(rc == 0, 'record --compress=%s -o - (a pipe): exit status %d: %s' % (codec, rc,
                                                                                  err[:300]))
        check(decompress(codec, out) == archive,
              'record --compress=%s -o -: stdout does not decompress to the archive' % codec)
    fifo = path('out.fifo.zst')
    os.mkfifo(fifo)
    reader = subprocess.Popen(['cat', fifo], stdout=subprocess.PIPE)
    rc, out, err = record_fake(archive, ['-o', fifo])
    got = reader.communicate(timeout=60)[0]
    check(rc == 0, 'record -o FIFO.zst: exit status %d: %s' % (rc, err[:300]))
    check(decompress('zstd', got) == archive, 'record -o FIFO.zst: not the archive, compressed')
    check(stat.S_ISFIFO(os.stat(fifo).st_mode), 'record -o FIFO.zst: the FIFO is gone')


def test_record_flags_and_json():
    """A bad --compress value is a usage error; JSON output compresses too."""
    rc, out, err = run(['record', '--compress=lz4', '-o', path('bad.fxt'), '--', 'true'])
    check(rc == 2 and "unknown compression 'lz4'" in err,
          'record --compress=lz4: exit status %d: %s' % (rc, err[:300]))
    check(not os.path.exists(path('bad.fxt')), 'record --compress=lz4 created its output')
    archive = sample_archive(50)
    rc, out, err = record_fake(archive, ['--format=json', '-o', path('t.json.gz')])
    check(rc == 0, 'record --format=json -o t.json.gz: exit status %d: %s' % (rc, err[:300]))
    if check(os.path.exists(path('t.json.gz')), 'record -o t.json.gz: no output'):
        doc = json.loads(decompress('gzip', read_bytes(path('t.json.gz'))))
        events = doc['traceEvents'] if isinstance(doc, dict) else doc
        check(len(events) > 10, 'record -o t.json.gz: only %d JSON events' % len(events))


def mount_tmpfs(name, size):
    mnt = path(name)
    os.mkdir(mnt)
    r = subprocess.run(['mount', '-t', 'tmpfs', '-o', 'size=' + size, 'tmpfs', mnt],
                       stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    if r.returncode != 0:  # not root, or no tmpfs here
        raise Skip('cannot mount a tmpfs (%s)' % r.stdout.decode().strip())
    return mnt


def fill(mnt, leave):
    """Fills the file system at mnt but about `leave` bytes (a file named filler)."""
    st = os.statvfs(mnt)
    free = st.f_bavail * st.f_frsize
    with open(os.path.join(mnt, 'filler'), 'wb') as f:
        f.write(b'\0' * max(0, free - leave))


def clear(mnt):
    for name in os.listdir(mnt):
        os.unlink(os.path.join(mnt, name))


def kept_at(err, out_file):
    """N of 'kept FILE: cut at byte N' (the message says where the file was cut), or None."""
    m = re.search(r'kept %s: cut at byte (\d+)' % re.escape(out_file), err)
    return int(m.group(1)) if m else None


def check_dump_clean(what, out_file):
    """trace dump reads the kept file to its end: exit 0, no error, records."""
    rc, out, err = run(['dump', out_file])
    check(rc == 0 and 'error' not in err.lower() and 'truncat' not in err.lower(),
          '%s: trace dump of the kept file: exit status %d: %s' % (what, rc, err[:400]))
    check(out.count(b'\n') > 10, '%s: the kept file holds only %d records' %
          (what, out.count(b'\n')))


def check_kept_fxt(what, out_file, err, codec):
    """The kept archive: cut where the message says, whole records only, read
    without an error (compressed: the codec's own tool reads it too)."""
    at = kept_at(err, out_file)
    if not check(at is not None and os.path.exists(out_file),
                 '%s: no "kept %s: cut at byte N" or no file: %s' % (what, out_file, err[:500])):
        return None
    data = read_bytes(out_file)
    check(len(data) == at, '%s: the file has %d bytes, the message says %d' % (what, len(data), at))
    plain = decompress(codec, data) if codec else data  # checks the tool's exit status 0
    if len(plain) < 4 << 20:
        t = fxt.decode(plain)
        check(t.ok, '%s: the kept archive is not whole records: %s' % (what, t.errors[:3]))
    else:  # the decoder is slow on tens of MiB: the framing alone (FXT.md §6)
        at = 0
        while at + 8 <= len(plain):
            header, = struct.unpack_from('<Q', plain, at)
            words = (header >> 4) & (0xffffffff if header & 0xf == 15 else 0xfff)
            if words == 0:
                break
            at += words * 8
        check(at == len(plain), '%s: the kept archive ends inside a record (%d of %d bytes)' %
              (what, at, len(plain)))
    check_dump_clean(what, out_file)
    return plain


def dump_records(p):
    """The records trace dump reads in p (its closing counts), or None."""
    rc, out, err = run(['dump', p])
    m = re.search(rb'^-- (\d+) records, 0 skipped', out, re.M)
    return int(m.group(1)) if rc == 0 and m else None


def check_recover_counts(what, err, kept, whole):
    """recover's last line counts the records in the kept file (`kept`, as trace dump reads
    them), and says how many of the `whole` recovery were not written."""
    last = err.strip().splitlines()[-1] if err.strip() else ''
    m = re.match(r'trace recover: (\d+) records recovered; .*; (\d+) not written: '
                 r'the write failed', last)
    if check(m is not None and kept is not None and whole is not None,
             '%s: the last line does not say what was not written: %r' % (what, last)):
        check(int(m.group(1)) == kept, '%s: recover says %s records recovered, the kept file '
              'holds %d' % (what, m.group(1), kept))
        check(int(m.group(1)) + int(m.group(2)) <= whole,
              '%s: %s + %s records, more than the %d of the whole recovery'
              % (what, m.group(1), m.group(2), whole))


def test_full_disk():
    """A full disk: the failure said at once, the trace stopped, the file kept and cut after its
    last complete record (compressed: frame), exit status 1; for trace record (FXT plain and
    compressed, JSON), convert and recover."""
    # 1. a fixed archive from a fake manager onto a 64 KiB tmpfs
    mnt = mount_tmpfs('small', '64k')
    try:
        archive = sample_archive(6000)  # about 200 KiB compressed: more than the disk holds
        for flags, name, codec in ((['--compress=zstd'], 'full.fxt.zst', 'zstd'),
                                   ([], 'full.fxt.gz', 'gzip'), ([], 'full.fxt', None)):
            what = 'full disk, record %s -o %s' % (' '.join(flags), name)
            out_file = os.path.join(mnt, name)
            rc, out, err = record_fake(archive, flags + ['-o', out_file])
            check(rc == 1, '%s: exit status %d, expected 1: %s' % (what, rc, err[:400]))
            check('writing %s failed: No space left on device; stopping the trace' % out_file
                  in err, '%s: no clear message: %s' % (what, err[:400]))
            if codec:
                # the first frame holds 4 MiB of the archive: it cannot fit, nothing is whole
                check('removed %s: not one complete record fit in it' % out_file in err and
                      not os.path.exists(out_file),
                      '%s: a file without a complete frame is left: %s' % (what, err[:400]))
            else:
                plain = check_kept_fxt(what, out_file, err, None)
                if plain is not None:
                    check(archive.startswith(plain) and len(plain) > 8,
                          '%s: the kept file is not the first %d bytes of the archive' %
                          (what, len(plain)))
            no_crash(err, what)
            clear(mnt)
    finally:
        subprocess.run(['umount', mnt])

    # 2. real streaming recordings onto a 2 MiB tmpfs: full within a fraction of a second
    mnt = mount_tmpfs('full2m', '2m')
    try:
        for flags, name, codec in (([], 'rec.fxt', None), (['--compress=zstd'], 'rec.fxt.zst',
                                                            'zstd'),
                                   ([], 'rec.fxt.gz', 'gzip'),
                                   (['--format=json'], 'rec.json', None),
                                   (['--format=json'], 'rec.json.zst', 'zstd')):
            what = 'full 2 MiB disk, record --duration=60 %s -o %s' % (' '.join(flags), name)
            out_file = os.path.join(mnt, name)
            start = time.monotonic()
            rc, out, err = run(['record', '--buffering-mode=streaming', '--duration=60'] + flags +
                               ['-o', out_file, '--', PRODUCER, '60'], env=private_env(),
                               timeout=180)
            took = time.monotonic() - start
            print('   %s: ended after %.1f s' % (what, took), flush=True)
            check(rc == 1, '%s: exit status %d, expected 1: %s' % (what, rc, err[:600]))
            # a functional property, with a wide margin: it stops at the error, not at 60 s
            check(took < 45, '%s: ran %.0f s: the full disk did not stop it' % (what, took))
            check('writing %s failed: No space left on device; stopping the trace' % out_file
                  in err, '%s: no message: %s' % (what, err[:600]))
            if '--format=json' in flags:
                at = kept_at(err, out_file)
                check(at is not None and 'after the last complete event, then closed' in err,
                      '%s: no "kept ... closed" message: %s' % (what, err[:600]))
                if check(os.path.exists(out_file), '%s: the file was removed' % what):
                    data = read_bytes(out_file)
                    text = decompress(codec, data) if codec else data
                    try:
                        events = json.loads(text)['traceEvents']
                        check(len(events) > 100, '%s: only %d events kept' % (what, len(events)))
                    except ValueError as e:
                        check(False, '%s: the kept JSON does not parse: %s' % (what, e))
            else:
                check_kept_fxt(what, out_file, err, codec)
            no_crash(err, what)
            clear(mnt)

        # 3. convert and recover onto the same disk, filled but a little
        big = path('big.fxt')
        write_bytes(big, sample_archive(3000))
        fill(mnt, 64 << 10)
        out_file = os.path.join(mnt, 'big.json')
        what = 'full disk, convert'
        rc, out, err = run(['convert', big, '-o', out_file])
        check(rc == 1, '%s: exit status %d, expected 1: %s' % (what, rc, err[:400]))
        check('writing %s failed: No space left on device' % out_file in err and
              'after the last complete event, then closed' in err and
              kept_at(err, out_file) is not None, '%s: messages: %s' % (what, err[:400]))
        try:
            events = json.loads(read_bytes(out_file))['traceEvents']
            check(len(events) > 100, '%s: only %d events kept' % (what, len(events)))
        except (OSError, ValueError) as e:
            check(False, '%s: the kept JSON: %s' % (what, e))
        no_crash(err, what)
        clear(mnt)

        raw = make_raw_buffer()
        if raw is not None:
            rc, out, err = run(['recover', raw, '-o', path('whole-recovered.fxt')])
            whole = read_bytes(path('whole-recovered.fxt')) if rc == 0 else b''
            check(len(whole) > 32 << 10, 'recover: only %d bytes recovered' % len(whole))
            fill(mnt, len(whole) // 2)
            out_file = os.path.join(mnt, 'recovered.fxt')
            what = 'full disk, recover'
            rc, out, err = run(['recover', raw, '-o', out_file])
            check(rc == 1, '%s: exit status %d, expected 1: %s' % (what, rc, err[:400]))
            check('writing %s failed: No space left on device' % out_file in err,
                  '%s: no message: %s' % (what, err[:400]))
            plain = check_kept_fxt(what, out_file, err, None)
            if plain is not None:
                check(whole.startswith(plain) and len(plain) < len(whole),
                      '%s: the kept file is not a cut of the whole recovery' % what)
                check_recover_counts(what, err, dump_records(out_file), dump_records(
                    path('whole-recovered.fxt')))
            no_crash(err, what)
            clear(mnt)
            # compressed: the frame cut off holds records handed to the writer, not kept
            fill(mnt, len(whole) // 4)
            out_file = os.path.join(mnt, 'recovered.fxt.gz')
            what = 'full disk, recover -o .fxt.gz'
            rc, out, err = run(['recover', raw, '-o', out_file])
            check(rc == 1, '%s: exit status %d, expected 1: %s' % (what, rc, err[:400]))
            kept = dump_records(out_file) if os.path.exists(out_file) else 0
            check_recover_counts(what, err, kept, dump_records(path('whole-recovered.fxt')))
            no_crash(err, what)
            clear(mnt)
    finally:
        subprocess.run(['umount', mnt])


# ---- a real recording ----

def private_env():
    os.makedirs(path('tmpdir'), exist_ok=True)
    return tr.env_with(FXTRACE_SOCKET=path('no-manager.sock'), XDG_RUNTIME_DIR=None,
                       TMPDIR=path('tmpdir'))


def test_record_demo():
    for codec, name, mode in (('zstd', 'demo.fxt.zst', 'streaming'),
                              ('gzip', 'demo.fxt.gz', 'oneshot')):
        what = 'record the demo to %s (%s)' % (name, mode)
        rc, out, err = run(['record', '--buffering-mode=' + mode, '-o', path(name), '--', DEMO,
                            '200'], env=private_env())
        check(rc == 0, '%s: exit status %d: %s' % (what, rc, err[:600]))
        check('warning' not in err, '%s: warnings: %s' % (what, err[:600]))
        if not check(os.path.exists(path(name)), '%s: no archive' % what):
            continue
        plain = decompress(codec, read_bytes(path(name)))
        t = fxt.decode(plain)
        check(t.ok, '%s: the independent decoder finds errors: %s' % (what, t.errors[:3]))
        events = [r for r in t.records if r['kind'] == 'event']
        produced = [r for r in events if r.get('name') == b'produce']
        check(len(produced) >= 200, '%s: %d produce events for 200 items' % (what,
                                                                             len(produced)))
        write_bytes(path('demo-plain.fxt'), plain)
        rc1, d1, e1 = run(['dump', path(name)])
        rc2, d2, e2 = run(['dump', path('demo-plain.fxt')])
        check(rc1 == 0 and d1 == d2, '%s: trace dump of the compressed archive differs (%d, %s)'
              % (what, rc1, e1[:300]))


# ---- reading compressed archives ----

def record_lines(dump_out):
    """trace dump's record lines: its output without the closing counts ('-- ...')."""
    return [line for line in dump_out.split(b'\n') if line and not line.startswith(b'-- ')]


def decoded_before_failure(codec, cut, what):
    """What the codec's own decompressor (zstd -dc, gunzip -c) writes for a cut file: the
    bytes it decoded before it found the input ends early."""
    p = subprocess.run(DECOMPRESS[codec], input=cut, stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE)
    check(p.returncode != 0, '%s: %s -d accepts the cut file' % (what, codec))
    return p.stdout


def check_truncated(codec, cut, what, want_dump, want_json):
    """trace dump / convert of the cut compressed file, from a file and from a pipe: exactly
    the records of want_dump and the JSON want_json, then 'truncated' and exit status 1."""
    write_bytes(path('cut'), cut)
    for source, args, stdin in (('file', [path('cut')], None), ('pipe', ['-'], cut)):
        w = '%s (%s)' % (what, source)
        rc, out, err = run(['dump'] + args, stdin_data=stdin)
        check(rc == 1 and 'truncated' in err, '%s: dump rc %d: %s' % (w, rc, err[:300]))
        no_crash(err, w)
        got, want = record_lines(out), record_lines(want_dump)
        if got != want:
            first = next((i for i, (a, b) in enumerate(zip(got, want)) if a != b),
                         min(len(got), len(want)))
            check(False, '%s: dump printed %d records, the decompressor\'s output has %d; '
                  'first difference at record %d: %r vs %r' % (
                      w, len(got), len(want), first, got[first:first + 1],
                      want[first:first + 1]))
        rc, out, err = run(['convert'] + args, stdin_data=stdin)
        check(rc == 1 and 'truncated' in err, '%s: convert rc %d: %s' % (w, rc, err[:300]))
        check(out == want_json, '%s: convert wrote %d events, the decompressor\'s output '
              'converts to %d' % (w, out.count(b'"ph":'), want_json.count(b'"ph":')))


def test_truncated(codec, archive, data):
    """A compressed file cut short: exactly the records the codec's own decompressor gets out
    of the cut file, then the damage (exit 1). The cuts: inside the frame (member) at several
    points, in its first bytes, in its trailer, and inside the second of two frames."""
    _, dump_all, _ = run(['dump', path('r.fxt')])
    total = len(record_lines(dump_all))
    half = len(archive) // 2 + 5  # inside a record: it continues in the second frame
    first = compress(codec, archive[:half])
    two = first + compress(codec, archive[half:])
    cuts = [(data, int(len(data) * f), 'at %d%%' % (f * 100)) for f in (0.3, 0.5, 0.7, 0.99)]
    cuts += [(two, len(first) + 20, 'just inside the second of two frames'),
             (two, len(first) + (len(two) - len(first)) // 2, 'inside the second of two frames'),
             (data, 10, 'in its first bytes')]  # the frame or gzip header: no record at all
    for whole, at, where in cuts:
        what = '%s cut %s (byte %d of %d)' % (codec, where, at, len(whole))
        write_bytes(path('cut-decompressed.fxt'), decoded_before_failure(codec, whole[:at], what))
        # exit 0 or 1: the decompressor's output may end between two records
        _, want_dump, _ = run(['dump', path('cut-decompressed.fxt')])
        _, want_json, _ = run(['convert', path('cut-decompressed.fxt')])
        n = len(record_lines(want_dump))
        # inside the frame, the test means something only if the decompressor got records
        # out, but not all
        check(n == 0 if at == 10 else 0 < n < total,
              '%s: the decompressor\'s output has %d of %d records' % (what, n, total))
        check_truncated(codec, whole[:at], what, want_dump, want_json)
    # In the trailer (zstd's content checksum, gzip's CRC32 and size): every block is whole,
    # so every record is there, and still exit 1. The reference is the whole archive: zstd -dc
    # (1.5) writes less here, as it stops at the premature end without draining the last
    # block its decoder holds.
    for missing in (1, 4):
        check_truncated(codec, data[:-missing], '%s without its last %d bytes' % (
            codec, missing), dump_all, run(['convert', path('r.fxt')])[1])


def test_damaged(codec, data):
    """Damaged bytes in the frame, from a file and from a pipe: exit 1 and a message, never a
    crash. The codec's checksum catches it at the end of the frame at the latest (zstd's
    content checksum, gzip's CRC32); the garbage decoded before may fail FXT framing first."""
    for at in (len(data) // 3, len(data) // 2, len(data) - 3):
        bad = bytearray(data)
        bad[at] ^= 0x5a
        write_bytes(path('damaged'), bytes(bad))
        for source, args, stdin in (('file', [path('damaged')], None),
                                    ('pipe', ['-'], bytes(bad))):
            what = '%s with byte %d of %d damaged (%s)' % (codec, at, len(data), source)
            rc, out, err = run(['dump'] + args, stdin_data=stdin)
            check(rc == 1 and ('damaged' in err or 'corrupt' in err),
                  '%s: dump rc %d: %s' % (what, rc, err[:300]))
            no_crash(err, what)


def test_read_compressed():
    archive = sample_archive(3000)
    write_bytes(path('r.fxt'), archive)
    rc, dump_plain, err = run(['dump', path('r.fxt')])
    check(rc == 0, 'dump of the plain archive: %s' % err[:300])
    rc, json_plain, err = run(['convert', path('r.fxt')])
    check(rc == 0, 'convert of the plain archive: %s' % err[:300])
    for codec in ('zstd', 'gzip'):
        data = compress(codec, archive)
        name = path('r.fxt.' + ('zst' if codec == 'zstd' else 'gz'))
        write_bytes(name, data)
        for source, args, stdin in (('file', [name], None), ('pipe', ['-'], data)):
            what = '%s from a %s' % (codec, source)
            rc, out, err = run(['dump'] + args, stdin_data=stdin)
            check(rc == 0 and out == dump_plain, 'dump %s: rc %d, output differs: %s' % (
                what, rc, err[:300]))
            rc, out, err = run(['convert'] + args, stdin_data=stdin)
            check(rc == 0 and out == json_plain, 'convert %s: rc %d, output differs: %s' % (
                what, rc, err[:300]))
        # two frames (members) one after the other read as one archive
        rc, out, err = run(['dump', '-'], stdin_data=data + compress(codec, b''))
        check(rc == 0 and out == dump_plain, 'dump %s followed by an empty frame: rc %d %s' % (
            codec, rc, err[:300]))
        test_truncated(codec, archive, data)
        test_damaged(codec, data)
        # trailing garbage after the last frame
        rc, out, err = run(['dump', '-'], stdin_data=data + b'garbage!')
        check(rc == 1 and 'damaged' in err, '%s + garbage: dump rc %d: %s' % (codec, rc,
                                                                             err[:300]))


def make_raw_buffer():
    """The raw trace buffer a traced program leaves when it is killed (file mode)."""
    raw = path('killed.fxt')
    env = tr.env_with(FXTRACE_OUTPUT=raw)
    p = subprocess.Popen([DEMO, '100000000'], env=env, stdout=subprocess.DEVNULL,
                         stderr=subprocess.DEVNULL)
    deadline = time.time() + 30
    while time.time() < deadline and (not os.path.exists(raw) or os.path.getsize(raw) == 0):
        time.sleep(0.05)
    time.sleep(0.5)
    p.send_signal(signal.SIGKILL)
    p.wait()
    # The output file is the placeholder naming the live buffer in shared
    # memory (docs/file-mode.md): that buffer is the raw trace buffer.
    lines = read_bytes(raw).split(b'\n')
    live = [l[len(b'buffer '):].decode() for l in lines[:8] if l.startswith(b'buffer ')]
    if not check(lines[0] == b'FXTLIVE' and len(live) == 1 and os.path.exists(live[0]),
                 'the killed program left no placeholder naming its live buffer: %r' % lines[:3]):
        return None
    LIVE_BUFFERS.append(live[0])
    return live[0]


LIVE_BUFFERS = []  # removed at the end: a killed program's live buffer stays in /dev/shm


def test_recover():
    raw = make_raw_buffer()
    if raw is None:
        return
    rc, out, err = run(['recover', raw, '-o', path('recovered.fxt')])
    if not check(rc == 0, 'recover of the plain raw buffer: rc %d: %s' % (rc, err[:300])):
        return
    plain = read_bytes(path('recovered.fxt'))
    check(fxt.decode(plain).ok, 'recover: the independent decoder refuses the archive')
    raw_data = read_bytes(raw)
    for codec, suffix in (('zstd', 'zst'), ('gzip', 'gz')):
        write_bytes(path('killed.fxt.' + suffix), compress(codec, raw_data))
        out_name = path('recovered.fxt.' + suffix)
        rc, out, err = run(['recover', path('killed.fxt.' + suffix), '-o', out_name])
        check(rc == 0, 'recover of a %s raw buffer: rc %d: %s' % (codec, rc, err[:300]))
        check(os.path.exists(out_name) and decompress(codec, read_bytes(out_name)) == plain,
              'recover to *.%s: not byte for byte the plain recovery, compressed' % suffix)
        rc, out, err = run(['dump', path('killed.fxt.' + suffix)])
        check(rc == 0 and 'raw buffer' in err, 'dump of a %s raw buffer: rc %d: %s' % (
            codec, rc, err[:300]))
        cut = compress(codec, raw_data)[:200]
        rc, out, err = run(['recover', '-', '-o', path('cut-recovered.fxt')], stdin_data=cut)
        check(rc == 1 and 'truncated' in err, 'recover of a truncated %s raw buffer: rc %d: %s'
              % (codec, rc, err[:300]))
        no_crash(err, 'recover, truncated')


def main():
    global TRACE, DEMO, PRODUCER, TMP
    if len(sys.argv) not in (3, 5) or sys.argv[3:4] not in ([], ['full-disk']):
        print('usage: test_compress.py PATH_TO_TRACE PATH_TO_DEMO [full-disk PATH_TO_STREAM_PRODUCER]',
              file=sys.stderr)
        return 2
    if len(sys.argv) == 5:
        PRODUCER = os.path.abspath(sys.argv[4])
    TRACE = tr.TRACE = os.path.abspath(sys.argv[1])
    DEMO = os.path.abspath(sys.argv[2])
    for tool in ('zstd', 'gzip'):
        if not shutil.which(tool):
            print('SKIPPED: no %s program (scripts/install-deps.sh installs it)' % tool)
            return 77
    # The full-disk test needs root (a tmpfs mount): it runs alone (`full-disk`, its own ctest
    # test), so that where it cannot run ctest reports it skipped and the rest still counts.
    if sys.argv[3:4] == ['full-disk']:
        tests = [('full disk: record, convert, recover', test_full_disk)]
    else:
        tests = [
            ('record --compress: byte for byte (fake manager)', test_record_fixed_archive),
            ('record --compress to a pipe and a FIFO', test_record_pipe),
            ('record --compress=BAD, JSON compressed', test_record_flags_and_json),
            ('record the demo compressed', test_record_demo),
            ('dump / convert of compressed, truncated and damaged archives',
             test_read_compressed),
            ('recover: compressed input and output', test_recover),
        ]
    with tempfile.TemporaryDirectory(prefix='fxtrace-compress-') as TMP:
        tr.TMP = TMP
        skipped = run_tests(tests, skip=Skip)
    for live in LIVE_BUFFERS:
        os.unlink(live)
    print('%d checks, %d failure(s), %d skipped' % (CHECKS[0], len(FAILS), len(skipped)))
    if FAILS:
        return 1
    return 77 if skipped else 0


if __name__ == '__main__':
    sys.exit(main())
