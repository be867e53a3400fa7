#!/usr/bin/env python3
"""End-to-end tests of the `trace` CLI: test_cli.py PATH_TO_TRACE

gen-sample -> strict independent decoding (tests/tools/fxt_decode.py) -> convert -> JSON checks
(check_convert.py, event by event), dump, stdin/stdout, error handling, string escaping, and
hand-built archives covering edge cases of docs/convert-json.md.
Python 3 standard library only. Exit status 0 only if every check passed.
"""

import base64
import json
import os
import re
import resource
import signal
import stat
import struct
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, '..', 'tools'))
sys.path.insert(0, HERE)
import fxt_decode as fxt  # noqa: E402
import fxtest  # noqa: E402
from fxtest import read_bytes, run_tests, status, write_bytes  # noqa: E402
import check_convert  # noqa: E402

TRACE = None
TMP = None


def check(cond, msg):
    return fxtest.check(cond, msg, '  ')


def run(args, stdin=None, input_bytes=None, preexec=None, timeout=120):
    """Run the trace binary; returns (rc, stdout bytes, stderr text)."""
    if stdin is None and input_bytes is None:
        stdin = subprocess.DEVNULL
    p = subprocess.run([TRACE] + args, stdin=stdin, input=input_bytes, stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, preexec_fn=preexec, timeout=timeout)
    return p.returncode, p.stdout, p.stderr.decode('utf-8', 'replace')


def path(name):
    return os.path.join(TMP, name)


def clean_failure(rc, err, what, expect_rc=None):
    """A failure must be a plain non-zero exit with a message: no crash, no traceback."""
    check(rc != 0, '%s: exit status is 0, expected a failure' % what)
    check(rc > 0, '%s: killed by signal %d (crash)' % (what, -rc))
    if expect_rc is not None:
        check(rc == expect_rc, '%s: exit status %d, expected %d' % (what, rc, expect_rc))
    check(err.strip() != '', '%s: nothing on stderr' % what)
    for bad in ('Traceback', 'Sanitizer', 'runtime error', 'Segmentation', 'core dumped'):
        check(bad not in err, '%s: stderr shows a crash (%s): %s' % (what, bad, err[:300]))


def convert_ok(archive_path, json_path, what):
    rc, out, err = run(['convert', archive_path, '-o', json_path])
    check(rc == 0, '%s: convert exit status %d; stderr: %s' % (what, rc, err[:500]))
    check(out == b'', '%s: convert -o FILE wrote to stdout' % what)
    return rc, err


def json_tool_ok(json_path, what):
    p = subprocess.run([sys.executable, '-m', 'json.tool', json_path], stdout=subprocess.DEVNULL,
                       stderr=subprocess.PIPE)
    check(p.returncode == 0, '%s: python3 -m json.tool rejects the output: %s'
          % (what, p.stderr.decode()[:300]))


def check_convert_ok(archive_path, json_path, what):
    """Run check_convert.py as a separate process, as a user would."""
    p = subprocess.run([sys.executable, os.path.join(HERE, 'check_convert.py'), archive_path,
                        json_path], stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    ok = check(p.returncode == 0, '%s: check_convert.py failed:\n%s'
               % (what, p.stdout.decode()[-3000:]))
    return ok


def decode_conforms(archive_path, what):
    p = subprocess.run([sys.executable, os.path.join(HERE, '..', 'tools', 'fxt_decode.py'),
                        archive_path], stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    out = p.stdout.decode()
    check(p.returncode == 0 and 'verdict: CONFORMS' in out,
          '%s: archive does not conform to FXT.md:\n%s' % (what, out[-3000:]))
    return fxt.decode(read_bytes(archive_path))


# --- a small FXT writer, from FXT.md, for hand-built archives --------------------------------

def q(*ws):
    return b''.join(struct.pack('<Q', w & 0xFFFFFFFFFFFFFFFF) for w in ws)


def padded(b):
    return b + b'\0' * ((8 - len(b) % 8) % 8)


class Writer:
    """Builds records; string refs are int (table index) or bytes (inline, b'' = empty ref);
    thread refs are int (table index) or a (pid, tid) tuple (inline)."""

    def __init__(self, magic=True):
        self.buf = bytearray(q(fxt.MAGIC_WORD) if magic else b'')

    def raw(self, b):
        self.buf += b
        return self

    def offset(self):
        return len(self.buf)

    def rec(self, header, body):
        n = 1 + len(body) // 8
        assert len(body) % 8 == 0 and n < 4096
        self.buf += q(header | (n << 4)) + body
        return self

    @staticmethod
    def sref(s):
        """-> (16-bit ref, inline stream bytes)."""
        if isinstance(s, int):
            return s, b''
        if s == b'':
            return 0, b''
        return 0x8000 | len(s), padded(s)

    @staticmethod
    def tref(t):
        if isinstance(t, int):
            return t, b''
        return 0, q(t[0], t[1])

    def provider_info(self, pid, name=b''):
        return self.rec(0 | 1 << 16 | pid << 20 | len(name) << 52, padded(name))

    def provider_section(self, pid):
        return self.rec(0 | 2 << 16 | pid << 20, b'')

    def overflow(self, pid):
        return self.rec(0 | 3 << 16 | pid << 20, b'')

    def init(self, tps):
        return self.rec(1, q(tps))

    def string(self, idx, s):
        return self.rec(2 | idx << 16 | len(s) << 32, padded(s))

    def thread(self, idx, pid, tid):
        return self.rec(3 | idx << 16, q(pid, tid))

    @staticmethod
    def args(args):
        out = b''
        for name, t, v in args:
            nref, nstream = Writer.sref(name)
            hi = 0
            tail = b''
            if t == fxt.ARG_NULL:
                pass
            elif t in (fxt.ARG_INT32, fxt.ARG_UINT32):
                hi = v & 0xFFFFFFFF
            elif t in (fxt.ARG_INT64, fxt.ARG_UINT64, fxt.ARG_POINTER, fxt.ARG_KOID):
                tail = q(v)
            elif t == fxt.ARG_DOUBLE:
                tail = struct.pack('<d', v)
            elif t == fxt.ARG_STRING:
                vref, vstream = Writer.sref(v)
                hi = vref
                tail = vstream
            elif t == fxt.ARG_BOOL:
                hi = 1 if v else 0
            elif t == fxt.ARG_BLOB:
                hi = len(v)
                tail = padded(v)
            else:   # raw unknown type: v = payload bytes (multiple of 8)
                tail = v
            size = 1 + (len(nstream) + len(tail)) // 8
            out += q(t | size << 4 | nref << 16 | hi << 32) + nstream + tail
        return out

    def event(self, etype, ts, thread, cat, name, args=(), payload=None, scope=0):
        t, tb = self.tref(thread)
        c, cb = self.sref(cat)
        n, nb = self.sref(name)
        body = q(ts) + tb + cb + nb + self.args(args)
        if payload is not None:
            body += q(payload)
        if etype == fxt.EV_INSTANT and scope is not None:
            body += q(scope)
        return self.rec(4 | etype << 16 | len(args) << 20 | t << 24 | c << 32 | n << 48, body)

    def kobj(self, otype, koid, name, args=()):
        n, nb = self.sref(name)
        return self.rec(7 | otype << 16 | n << 24 | len(args) << 40, q(koid) + nb +
                        self.args(args))

    def log(self, ts, thread, msg):
        t, tb = self.tref(thread)
        return self.rec(9 | len(msg) << 16 | t << 32, q(ts) + tb + padded(msg))

    def blob(self, name, payload, btype=1):
        n, nb = self.sref(name)
        return self.rec(5 | n << 16 | len(payload) << 32 | btype << 48, nb + padded(payload))

    def userobj(self, ptr, proc, name, args=()):
        if isinstance(proc, int) and proc > 0xFF:
            p, pb = 0, q(proc)
        else:
            p, pb = proc, b''
        n, nb = self.sref(name)
        return self.rec(6 | p << 16 | n << 24 | len(args) << 40, q(ptr) + pb + nb +
                        self.args(args))

    def legacy_cswitch(self, ts, cpu, out_t, in_t, state=3):
        o, ob = self.tref(out_t)
        i, ib = self.tref(in_t)
        return self.rec(8 | cpu << 16 | state << 24 | o << 28 | i << 36, q(ts) + ob + ib)

    def large_blob_event(self, cat, name, ts, thread, args, payload):
        c, cb = self.sref(cat)
        n, nb = self.sref(name)
        t, tb = self.tref(thread)
        body = q(c | n << 16 | len(args) << 32 | t << 36) + cb + nb + q(ts) + tb + \
            self.args(args) + q(len(payload)) + padded(payload)
        words = 1 + len(body) // 8
        self.buf += q(15 | words << 4) + body
        return self

    def bytes(self):
        return bytes(self.buf)


# --- tests -----------------------------------------------------------------------------------

def test_decoder_selftest():
    fails = fxt.selftest()
    check(not fails, 'fxt_decode selftest (FXT.md §12 examples): %s' % fails)
    # the Python writer must agree with the worked example §12.3 byte for byte
    w = Writer()
    w.event(fxt.EV_INSTANT, 1000, (0x1234, 0x5678), b'cat', b'hello',
            [(b'x', fxt.ARG_INT32, 42)], scope=0)
    ex = bytes.fromhex('9400100003800580e803000000000000341200000000000078560000000000006361740000'
                       '00000068656c6c6f00000021000180' '2a000000780000000000000000000000000000'
                       '00')
    check(w.bytes()[8:] == ex, 'test writer disagrees with FXT.md §12.3')


def test_sample(repeat):
    what = 'gen-sample --repeat %d' % repeat if repeat else 'gen-sample'
    arc = path('sample%d.fxt' % repeat)
    js = path('sample%d.json' % repeat)
    args = ['gen-sample', '-o', arc] + (['--repeat', str(repeat)] if repeat else [])
    rc, out, err = run(args)
    if not check(rc == 0 and os.path.exists(arc), '%s failed (%d): %s' % (what, rc, err)):
        return None
    trace = decode_conforms(arc, what)
    if not repeat:
        kinds = set(r['kind'] for r in trace.records)
        need = {'magic', 'provider_info', 'provider_section', 'provider_event', 'init', 'string',
                'thread', 'event', 'blob', 'userspace_object', 'kernel_object', 'scheduling',
                'log', 'large_blob'}
        check(need <= kinds, 'sample lacks record kinds %s' % sorted(need - kinds))
        etypes = set(r['event_type'] for r in trace.records if r['kind'] == 'event')
        check(etypes == set(range(11)), 'sample lacks event types %s'
              % sorted(set(range(11)) - etypes))
        atypes = set(a['type'] for r in trace.records for a in r.get('args', []))
        check(atypes == set(range(11)), 'sample lacks argument types %s'
              % sorted(set(range(11)) - atypes))
        scopes = set(r.get('scope') for r in trace.records if r.get('event_type') == 0
                     and r['kind'] == 'event')
        check({0, 1, 2} <= scopes, 'sample lacks instant scopes: has %s' % scopes)
        sched = set(r['sched_type'] for r in trace.records if r['kind'] == 'scheduling')
        check(sched == {0, 1, 2}, 'sample scheduling sub-types %s' % sched)
        fmts = set(r['format'] for r in trace.records if r['kind'] == 'large_blob')
        check(fmts == {0, 1}, 'sample large blob formats %s' % fmts)
        tps = set(r['ticks_per_second'] for r in trace.records if r['kind'] == 'init')
        # fxtrace writes 1 tick = 1 ns (READERS.md); other rates come from the edge-case archive
        check(tps == {10 ** 9}, 'sample uses tick rates other than 1 GHz: %s' % tps)
    rc, err = convert_ok(arc, js, what)
    json_tool_ok(js, what)
    check_convert_ok(arc, js, what)
    # the records JSON cannot hold are counted and named in one closing line on stderr
    n_blob = sum(1 for r in trace.records if r['kind'] in ('blob', 'large_blob'))
    n_obj = sum(1 for r in trace.records if r['kind'] == 'userspace_object')
    # scheduling records go to the systemTraceEvents string (json_systrace.c): none left out
    n_sched = 0
    lines = [ln for ln in err.split('\n') if re.search(r'\bblob', ln)]
    ok = len(lines) == 1
    if ok:
        for n, word in ((n_blob, 'blob'), (n_obj, 'userspace object'), (n_sched, 'scheduling')):
            m = re.search(r'(\d+) %s' % word, lines[0])
            ok = ok and m is not None and int(m.group(1)) == n
    check(ok, '%s: stderr should name and count in one line %d blobs, %d userspace objects, '
          '%d scheduling records: %s' % (what, n_blob, n_obj, n_sched, err[-500:]))
    return trace


def test_repeat_grows(t1, t3):
    if t1 is None or t3 is None:
        check(False, 'repeat: sample archives missing')
        return
    e1 = sum(1 for r in t1.records if r['kind'] == 'event')
    e3 = sum(1 for r in t3.records if r['kind'] == 'event')
    check(e3 > e1, '--repeat 3 did not add events (%d vs %d)' % (e3, e1))


def test_stdio():
    arc = path('sample0.fxt')
    ref = read_bytes(path('sample0.json'))
    with open(arc, 'rb') as f:
        rc, out, err = run(['convert', '-'], stdin=f)
    check(rc == 0 and out == ref, 'convert - (stdin) to stdout differs from convert -o FILE '
          '(rc %d): %s' % (rc, err[:300]))
    rc, out, err = run(['convert', arc, '-o', '-'], input_bytes=b'')
    check(rc == 0 and out == ref, 'convert FILE -o - differs from convert -o FILE (rc %d)' % rc)
    rc, out, err = run(['convert', arc, '--format=json'])
    check(rc == 0 and out == ref, 'convert --format=json to stdout differs (rc %d)' % rc)
    with open(arc, 'rb') as f:
        rc, out, err = run(['convert', '-', '-o', path('stdin.json')], stdin=f)
    check(rc == 0 and read_bytes(path('stdin.json')) == ref,
          'convert - -o FILE differs (rc %d)' % rc)
    # a larger archive through a pipe: the output must match the file conversion
    big = path('big.fxt')
    rc, _, err = run(['gen-sample', '-o', big, '--repeat', '300'])
    check(rc == 0, 'gen-sample --repeat 300: %s' % err)
    rc, _, err = run(['convert', big, '-o', path('big.json')])
    check(rc == 0, 'convert big: %s' % err[:300])
    p = subprocess.run('cat %s | %s convert - | cat' % (big, TRACE), shell=True,
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    check(p.returncode == 0 and p.stdout == read_bytes(path('big.json')),
          'convert through pipes differs from the file conversion')
    check_convert_ok(big, path('big.json'), 'repeat 300')


DUMP_TYPE = {'magic': 'metadata', 'provider_info': 'metadata', 'provider_section': 'metadata',
             'provider_event': 'metadata', 'trace_info': 'metadata', 'metadata': 'metadata',
             'init': 'initialization', 'string': 'string', 'thread': 'thread', 'event': 'event',
             'blob': 'blob', 'userspace_object': 'userspace object',
             'kernel_object': 'kernel object', 'scheduling': 'scheduling', 'log': 'log',
             'large_blob': 'large', 'large': 'large'}


def check_dump(arc, what, expect_rc=0):
    trace = fxt.decode(read_bytes(arc))
    rc, out, err = run(['dump', arc])
    check(rc == expect_rc, '%s: dump exit status %d, expected %d; %s' % (what, rc, expect_rc,
                                                                        err[:300]))
    if rc < 0:
        return
    lines = out.decode('utf-8', 'replace').split('\n')
    if lines and lines[-1] == '':
        lines.pop()
    recs = [ln for ln in lines if not ln.startswith('--')]
    tail = [ln for ln in lines if ln.startswith('--')]
    check(len(recs) == len(trace.records), '%s: dump printed %d record lines, the archive has %d'
          ' records (before any damage)' % (what, len(recs), len(trace.records)))
    for i, (ln, r) in enumerate(zip(recs, trace.records)):
        want = DUMP_TYPE[r['kind']]
        if not check(ln.startswith(want + ' ') or ln == want,
                     '%s: dump line %d is %r, expected a %s record' % (what, i + 1, ln[:80],
                                                                      want)):
            break
        if 'ts' in r:
            m = re.search(r'\((\d+) ticks\)', ln)
            if not check(m and int(m.group(1)) == r['ts'], '%s: dump line %d: ticks %s, '
                         'expected %d' % (what, i + 1, m and m.group(1), r['ts'])):
                break
    m = re.match(r'-- (\d+) records', tail[0]) if tail else None
    check(m and int(m.group(1)) == len(trace.records), '%s: dump total line %r, expected %d '
          'records' % (what, tail[:1], len(trace.records)))
    counts = {}
    for r in trace.records:
        counts[DUMP_TYPE[r['kind']]] = counts.get(DUMP_TYPE[r['kind']], 0) + 1
    got = {}
    for ln in tail[1:]:
        m = re.match(r'--\s+(.*?)\s+(\d+)$', ln)
        if m:
            got[m.group(1)] = int(m.group(2))
    got = {k: v for k, v in got.items() if v}
    check(got == counts, '%s: dump counts by type %s, expected %s' % (what, got, counts))


def test_dump():
    check_dump(path('sample0.fxt'), 'dump sample')
    check_dump(path('sample3.fxt'), 'dump sample --repeat 3')
    with open(path('sample0.fxt'), 'rb') as f:
        rc, out, err = run(['dump', '-'], stdin=f)
    rc2, out2, _ = run(['dump', path('sample0.fxt')])
    check(rc == 0 and out == out2, 'dump - (stdin) differs from dump FILE')


def test_errors():
    sample = path('sample0.fxt')
    # nonexistent input
    out = path('e1.json')
    rc, o, err = run(['convert', path('does-not-exist.fxt'), '-o', out])
    clean_failure(rc, err, 'nonexistent input')
    check('does-not-exist.fxt' in err, 'nonexistent input: stderr does not name the file: %s'
          % err)
    check(not os.path.exists(out), 'nonexistent input: output file was created')
    rc, o, err = run(['dump', path('does-not-exist.fxt')])
    clean_failure(rc, err, 'dump nonexistent input')

    # input that is not FXT: the output must not be created, an existing one not touched
    txt = path('text.txt')
    write_bytes(txt, b'hello, this is plain text and not an FXT archive\n')
    out = path('e2.json')
    rc, o, err = run(['convert', txt, '-o', out])
    clean_failure(rc, err, 'text input')
    check(not os.path.exists(out), 'text input: output file was created')
    write_bytes(out, b'keep me')
    rc, o, err = run(['convert', txt, '-o', out])
    clean_failure(rc, err, 'text input, existing output')
    check(os.path.exists(out) and read_bytes(out) == b'keep me',
          'text input: an existing output file was changed before the input was validated')
    rc, o, err = run(['convert', txt])
    clean_failure(rc, err, 'text input to stdout')
    check(o == b'', 'text input: something was written to stdout: %r' % o[:100])
    for name, data in (('empty.fxt', b''), ('short.fxt', b'\x10\x00\x04'),
                       ('bigendian.fxt', struct.pack('>Q', fxt.MAGIC_WORD) + b'\0' * 8)):
        write_bytes(path(name), data)
        rc, o, err = run(['convert', path(name), '-o', path(name + '.json')])
        clean_failure(rc, err, 'convert %s' % name)
        check(not os.path.exists(path(name + '.json')), '%s: output created' % name)
        rc, o, err = run(['dump', path(name)])
        clean_failure(rc, err, 'dump %s' % name)

    # output that is the input itself (also through another name): refused, archive intact
    self_arc = path('self.fxt')
    write_bytes(self_arc, read_bytes(sample))
    os.link(self_arc, path('self-link.fxt'))
    for out_name in (self_arc, path('self-link.fxt')):
        rc, o, err = run(['convert', self_arc, '-o', out_name])
        clean_failure(rc, err, 'convert onto its own input', expect_rc=1)
        check('input' in err, 'convert onto its own input: stderr does not say why: %s' % err)
        check(read_bytes(self_arc) == read_bytes(sample),
              'convert onto its own input: archive changed')

    # output into a nonexistent directory
    rc, o, err = run(['convert', sample, '-o', path('no/such/dir/out.json')])
    clean_failure(rc, err, 'output in a nonexistent directory')
    check('no/such/dir' in err, 'nonexistent directory: stderr does not name the path: %s' % err)

    # output device that is full: a character device node (1,7) is /dev/full. Running as root,
    # use a private node so that a converter that wrongly unlinks it cannot remove /dev/full.
    full = '/dev/full'
    if os.geteuid() == 0:
        full = path('full')
        try:
            os.mknod(full, stat.S_IFCHR | 0o666, os.makedev(1, 7))
        except OSError:
            full = None
    if full is not None:
        rc, o, err = run(['convert', sample, '-o', full])
        clean_failure(rc, err, 'output to a full device', expect_rc=1)
        check(os.path.exists(full) and stat.S_ISCHR(os.stat(full).st_mode),
              'output to a full device: the converter removed the device node %s (only a '
              'regular file it created may be removed)' % full)
    else:
        check(False, 'cannot create a full-device node to test ENOSPC')

    # a regular output file that cannot be written to the end (file-size limit -> EFBIG):
    # exit 1, message, and the file kept, cut after its last complete event and closed
    big = path('big.fxt')
    out = path('efbig.json')

    def limit():
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        resource.setrlimit(resource.RLIMIT_FSIZE, (65536, 65536))
    rc, o, err = run(['convert', big, '-o', out], preexec=limit)
    clean_failure(rc, err, 'output larger than the file-size limit', expect_rc=1)
    check(os.path.exists(out), 'output write failure: the partial output file was removed')
    if os.path.exists(out):
        kept = open(out, 'rb').read()
        check(0 < len(kept) <= 65536, 'output write failure: %d bytes kept' % len(kept))
        check('kept %s: cut at byte %d, after the last complete event, then closed' % (out, len(kept) - 4)
              in err, 'output write failure: no message of where the file was cut: %s' % err)
        try:
            events = json.loads(kept)['traceEvents']
            check(len(events) > 10, 'output write failure: only %d events kept' % len(events))
        except ValueError as e:
            check(False, 'output write failure: the kept JSON does not parse: %s' % e)

    # usage errors
    for args, what in ((['convert', '--bogus', sample], 'unknown flag'),
                       (['convert'], 'missing input argument'),
                       (['convert', sample, '-o'], 'missing -o value'),
                       (['convert', sample, '--format=xml'], 'unknown format'),
                       (['convert', sample, sample], 'two inputs'),
                       (['dump'], 'dump without input'),
                       (['dump', '--bogus', sample], 'dump unknown flag'),
                       (['frobnicate'], 'unknown command'),
                       ([], 'no command'),
                       (['gen-sample'], 'gen-sample without -o')):
        rc, o, err = run(args)
        clean_failure(rc, err, what, expect_rc=2)
    rc, o, err = run(['convert', '--bogus', sample])
    check('--bogus' in err, 'unknown flag: stderr does not name it: %s' % err)

    # help
    rc, o, err = run(['--help'])
    check(rc == 0 and b'Usage' in o, 'trace --help: rc %d, stdout %r' % (rc, o[:100]))
    check(b'convert' in o and b'dump' in o, 'trace --help does not list convert and dump')
    check(b'gen-sample' not in o, 'trace --help shows the hidden gen-sample command')
    for cmd in ('convert', 'dump'):
        rc, o, err = run([cmd, '--help'])
        check(rc == 0 and b'Usage' in o, 'trace %s --help: rc %d' % (cmd, rc))


def test_truncated():
    """Cut the sample mid-record at every record: exit 1, offset on stderr, valid JSON with
    exactly the events before the cut."""
    data = read_bytes(path('sample0.fxt'))
    trace = fxt.decode(data)
    cuts = []
    for r in trace.records[1:]:
        if r['words'] > 1:
            cuts.append(r['offset'] + 8 * (r['words'] // 2) + (3 if r['words'] == 2 else 0))
    cuts.append(len(data) - 4)          # not a multiple of 8
    cuts.append(len(data) - 1)
    nok = 0
    for cut in cuts:
        arc = path('cut.fxt')
        js = path('cut.json')
        write_bytes(arc, data[:cut])
        rc, o, err = run(['convert', arc, '-o', js])
        what = 'archive cut at byte %d' % cut
        clean_failure(rc, err, what, expect_rc=1)
        t = fxt.decode(data[:cut])
        check(t.truncated_at is not None, '%s: the decoder does not see the damage' % what)
        if t.truncated_at is not None:
            check(str(t.truncated_at) in err, '%s: stderr does not give the offset %d: %s'
                  % (what, t.truncated_at, err[:300]))
        if not check(os.path.exists(js), '%s: no JSON written' % what):
            continue
        jtext = read_bytes(js).decode('utf-8', 'replace')
        fails = check_convert.check(data[:cut], jtext)
        if not check(not fails, '%s: %s' % (what, '\n'.join(fails[:8]))):
            break
        nok += 1
    check(nok == len(cuts), 'truncation: %d of %d cuts passed' % (nok, len(cuts)))
    # dump of a truncated archive: exit 1, the records before the cut
    write_bytes(path('cut.fxt'), data[:cuts[len(cuts) // 2]])
    check_dump(path('cut.fxt'), 'dump truncated', expect_rc=1)
    # size field 0 partway: fatal corruption
    sz0 = data[:trace.records[20]['offset']] + b'\0' * 8 + data[trace.records[20]['offset']:]
    write_bytes(path('zero.fxt'), sz0)
    rc, o, err = run(['convert', path('zero.fxt'), '-o', path('zero.json')])
    clean_failure(rc, err, 'record with size 0', expect_rc=1)
    if check(os.path.exists(path('zero.json')), 'size 0: no JSON written'):
        fails = check_convert.check(sz0, read_bytes(path('zero.json')).decode('utf-8', 'replace'))
        check(not fails, 'size 0 partway: %s' % '\n'.join(fails[:8]))


def test_skipped_records():
    """Records a reader must skip (unknown type, bad string/thread ref) are reported with
    their offset and the rest is converted."""
    w = Writer()
    w.provider_info(1, b'p').init(10 ** 9).string(1, b'cat').thread(1, 10, 11)
    w.event(fxt.EV_DUR_BEGIN, 100, 1, 1, b'before')
    off_unknown = w.offset()
    w.rec(12 | 7 << 16, q(1, 2))                        # unassigned record type 12
    off_badstr = w.offset()
    w.event(fxt.EV_DUR_BEGIN, 200, 1, 1, 9)             # string index 9 never defined
    off_badthr = w.offset()
    w.event(fxt.EV_DUR_BEGIN, 300, 7, 1, b'badthread')  # thread index 7 never defined
    off_badev = w.offset()
    w.rec(4 | 14 << 16, q(400, 0))                      # unknown event type 14
    off_badmeta = w.offset()
    w.rec(0 | 9 << 16, q(0))                            # unknown metadata type 9
    off_badlarge = w.offset()
    w.raw(q(15 | 2 << 4 | 5 << 36, 0))                  # unknown large record type 5
    off_badfmt = w.offset()
    w.raw(q(15 | 3 << 4 | 0 << 36 | 7 << 40, 0, 0))     # large blob, unknown format 7
    # an argument of unknown type 12 is skipped by its size, the event is kept
    w.event(fxt.EV_INSTANT, 450, 1, 1, b'unknown-arg', [(b'a', fxt.ARG_INT32, 1),
                                                       (b'z', 12, q(7, 8)),
                                                       (b'b', fxt.ARG_INT32, 2)])
    w.event(fxt.EV_DUR_END, 500, 1, 1, b'after', [(b'x', fxt.ARG_INT32, 5)])
    arc = path('skip.fxt')
    write_bytes(arc, w.bytes())
    t = fxt.decode(w.bytes())
    check(sum(1 for r in t.records if not r['ok']) == 7, 'decoder should mark 7 records unusable')
    rc, o, err = run(['convert', arc, '-o', path('skip.json')])
    check(rc >= 0 and os.path.exists(path('skip.json')), 'skipped records: convert crashed')
    for off in (off_unknown, off_badstr, off_badthr, off_badev, off_badmeta, off_badlarge,
                off_badfmt):
        check(str(off) in err, 'skipped record at offset %d not reported on stderr: %s'
              % (off, err[:500]))
    if os.path.exists(path('skip.json')):
        check_convert_ok(arc, path('skip.json'), 'skipped records')
    # more than 10 skipped records: the first 10 offsets, then a count
    w = Writer()
    w.provider_info(1, b'p')
    offs = []
    for i in range(15):
        offs.append(w.offset())
        w.rec(13, q(i))
    w.event(fxt.EV_INSTANT, 5, (1, 2), b'c', b'kept')
    write_bytes(arc, w.bytes())
    rc, o, err = run(['convert', arc, '-o', path('skip.json')])
    check(rc >= 0, 'many skipped records: crash')
    for i, off in enumerate(offs):
        found = re.search(r'\b%d\b' % off, err) is not None
        check(found == (i < 10), 'many skipped records: offset %d %s on stderr' %
              (off, 'missing' if i < 10 else 'reported, only the first 10 should be'))
    check(re.search(r'\b15\b', err), 'many skipped records: no total count (15) on stderr: %s'
          % err[-300:])
    check_convert_ok(arc, path('skip.json'), 'many skipped records')


def mutate_and_expect_failure():
    """check_convert itself must catch wrong output: mutate a correct JSON in many ways."""
    arc = read_bytes(path('sample0.fxt'))
    good = read_bytes(path('sample0.json')).decode()
    check(not check_convert.check(arc, good, require_conformance=True),
          'check_convert rejects the good sample JSON')
    lines = good.split('\n')

    def first_line(sub):
        for i, ln in enumerate(lines):
            if sub in ln:
                return i
        raise AssertionError('no line with %r' % sub)

    def replace_in(sub, old, new):
        ls = list(lines)
        i = first_line(sub)
        assert old in ls[i], (old, ls[i])
        ls[i] = ls[i].replace(old, new, 1)
        return '\n'.join(ls)

    def drop(sub):
        ls = list(lines)
        i = first_line(sub)
        if i == len(ls) - 3 or not ls[i].endswith(','):   # last event: fix the comma
            ls[i - 1] = ls[i - 1].rstrip(',')
        del ls[i]
        return '\n'.join(ls)

    def swap(sub1, sub2):
        ls = list(lines)
        i, j = first_line(sub1), first_line(sub2)
        ls[i], ls[j] = ls[j], ls[i]
        return '\n'.join(ls)

    def dup(sub):
        ls = list(lines)
        i = first_line(sub)
        ls.insert(i, ls[i] if ls[i].endswith(',') else ls[i] + ',')
        return '\n'.join(ls)

    muts = {
        'ts off by 1 ns': replace_in('"ph":"B"', '"ts":1001.000', '"ts":1001.001'),
        'ts not 3 digits': replace_in('"ph":"B"', '"ts":1001.000', '"ts":1001.0'),
        'ts in ns': replace_in('"ph":"B"', '"ts":1001.000', '"ts":1001000'),
        'dur': replace_in('"ph":"X"', '"dur":0.750', '"dur":0.751'),
        'scope': replace_in('"s":"t"', '"s":"t"', '"s":"p"'),
        'no scope': replace_in('"s":"t"', ',"s":"t"', ''),
        'counter id': replace_in('"id":"0x2a"', '"id":"0x2a"', '"id":"0x2b"'),
        'counter id 0 present': replace_in('"ph":"C"', '"pid"', '"id":"0x0","pid"'),
        'non-numeric counter arg kept': replace_in('"ph":"C"', '"ratio":0.5', '"ratio":0.5,'
                                                   '"label":"not numeric"'),
        'async id': replace_in('"ph":"b"', '"local":"0x1001"', '"local":"4097"'),
        'async id global': replace_in('"ph":"b"', '"id2":{"local":"0x1001"}', '"id":"0x1001"'),
        'flow bp missing': replace_in('"ph":"f"', ',"bp":"e"', ''),
        'flow bp on s': replace_in('"ph":"s"', '"id":"0x100400000001"',
                                   '"id":"0x100400000001","bp":"e"'),
        'koid': replace_in('"#4102"', '"#4102"', '"4102"'),
        'pointer': replace_in('"ptr"', '"0x7ffd1234abcd"', '"140724908895181"'),
        'blob': replace_in('3q2+7wE=', '3q2+7wE=', '3q2+7wE'),
        'bool as int': replace_in('"flag":true', '"flag":true', '"flag":1'),
        'null': replace_in('"null":null', '"null":null', '"null":0'),
        'uint32 as float': replace_in('4000000000', '4000000000', '4000000000.0'),
        'int64 sign': replace_in('-5000000000', '-5000000000', '5000000000'),
        'u64': replace_in('18000000000000000000', '18000000000000000000',
                          '18000000000000000001'),
        'double': replace_in('"dbl":3.25', '"dbl":3.25', '"dbl":3.2500000000000001'),
        'string arg': replace_in('"inline value"', '"inline value"', '"inline valuE"'),
        'arg order': replace_in('"count":7', '"count":7,"name":"indexed string value"',
                                '"name":"indexed string value","count":7'),
        'args dropped': replace_in('"ph":"E"', ',"args":{"bytes":"3q2+7wE="}', ''),
        'pid': replace_in('"ph":"B"', '"pid":4100', '"pid":4101'),
        'tid': replace_in('"ph":"B"', '"tid":4101', '"tid":4100'),
        'cat': replace_in('"ph":"B"', '"cat":"sample"', '"cat":"Sample"'),
        'ph': replace_in('"ph":"n"', '"ph":"n"', '"ph":"i"'),
        'key order': replace_in('"ph":"B"', '"cat":"sample","name":"DoWork"',
                                '"name":"DoWork","cat":"sample"'),
        'thread name': replace_in('"thread_name"', '"main"', '"Main"'),
        'thread name pid': replace_in('"thread_name"', '"pid":4100', '"pid":4101'),
        'process name tid': replace_in('"process_name"', '"tid":0', '"tid":4100'),
        'log message': replace_in('"cat":"log"', '\\t', '\\u0009'),
        'log scope': replace_in('"cat":"log"', '"s":"g"', '"s":"t"'),
        'overflow ts': replace_in('buffer overflow', '"ts":2500005.000', '"ts":1003.400'),
        'overflow provider': replace_in('buffer overflow', '"second-provider"', '"p"'),
        'missing overflow': drop('buffer overflow'),
        'missing event': drop('"ph":"t"'),
        'missing last event': drop('"ts":2003.000'),
        'missing M event': drop('"thread_name"'),
        'extra event': dup('"ph":"X"'),
        'swapped events': swap('"ph":"b"', '"ph":"n"'),
        'overflow moved late': swap('buffer overflow', '"name":"tick"'),
        'displayTimeUnit': good.replace('"displayTimeUnit":"ns"', '"displayTimeUnit":"ms"', 1),
        'two events on a line': good.replace('},\n{"cat":"net"', '},{"cat":"net"', 1),
        'not JSON': good[:-3],
    }
    for name, text in muts.items():
        check(text != good, 'mutation %r did not change the text' % name)
        fails = check_convert.check(arc, text)
        check(fails, 'check_convert accepted a wrong JSON (mutation %r)' % name)


def edge_archive():
    """Hand-built archive exercising mapping corners of docs/convert-json.md."""
    w = Writer()
    nan = float('nan')
    w.provider_info(1, b'edge')
    w.init(3 * 10 ** 9)                                 # 3 GHz: ns = floor(ticks / 3)
    w.overflow(1)                                       # before the provider's first event
    w.string(1, b'cat').string(2, b'ev').thread(1, 100, 101)
    w.thread(2, 100, (1 << 63) | 5)                     # vthread koid
    w.kobj(1, 100, b'edge-proc', [(b'extra', fxt.ARG_UINT64, 1)])
    w.kobj(1, 200, b'')                                 # process without a name: no M
    w.kobj(2, 101, b'main', [(b'process', fxt.ARG_KOID, 100)])
    w.kobj(2, (1 << 63) | 5, b'vthread', [(b'x', fxt.ARG_INT32, 1),
                                            (b'process', fxt.ARG_KOID, 100)])
    w.kobj(2, 102, b'orphan')                           # no process arg: no M
    w.kobj(2, 103, b'wrongtype', [(b'process', fxt.ARG_UINT64, 100)])   # not a koid: no M
    w.kobj(4, 104, b'channel')                          # other object type: no M
    w.event(fxt.EV_INSTANT, 1, 1, 1, 2, scope=None)    # no scope word -> "t"
    w.event(fxt.EV_INSTANT, 2, 2, 1, 2, scope=1)
    w.event(fxt.EV_INSTANT, (1 << 64) - 1, 1, b'', b'', scope=2)   # empty cat/name, huge ts
    doubles = [nan, float('inf'), float('-inf'), -0.0, 0.0, 0.1, 1e300, 5e-324, 1.5e-7,
               123456789012345678.0, -2.5, 1e16, 2.0 ** 53 + 2]
    w.event(fxt.EV_DUR_BEGIN, 10, 1, 1, 2,
            [(b'd%d' % i, fxt.ARG_DOUBLE, d) for i, d in enumerate(doubles[:15])])
    w.event(fxt.EV_DUR_END, 11, 1, 1, 2,
            [(b'i32min', fxt.ARG_INT32, -2 ** 31), (b'i32max', fxt.ARG_INT32, 2 ** 31 - 1),
             (b'u32max', fxt.ARG_UINT32, 2 ** 32 - 1), (b'i64min', fxt.ARG_INT64, -2 ** 63),
             (b'i64max', fxt.ARG_INT64, 2 ** 63 - 1), (b'u64max', fxt.ARG_UINT64, 2 ** 64 - 1),
             (b'p0', fxt.ARG_POINTER, 0), (b'pmax', fxt.ARG_POINTER, 2 ** 64 - 1),
             (b'k0', fxt.ARG_KOID, 0), (b'kmax', fxt.ARG_KOID, 2 ** 64 - 1),
             (b'f', fxt.ARG_BOOL, False), (b'empty', fxt.ARG_STRING, b''),
             (b'blob0', fxt.ARG_BLOB, b''), (b'blob8', fxt.ARG_BLOB, b'12345678'),
             (b'', fxt.ARG_STRING, b'empty name')])
    w.event(fxt.EV_DUR_COMPLETE, 1000, 1, 1, 2, payload=998)        # 333 -> 332 ns: -1 ns
    w.event(fxt.EV_DUR_COMPLETE, 1001, 1, 1, 2, payload=1005)       # 333 -> 335 ns (floor)
    w.event(fxt.EV_DUR_COMPLETE, 7, 1, 1, 2, payload=7)             # zero dur
    w.event(fxt.EV_DUR_COMPLETE, 3 * 10 ** 9, 1, 1, 2, payload=0)   # 1 s -> 0: -1000000 us
    w.event(fxt.EV_COUNTER, 20, 1, 1, 2, [(b's', fxt.ARG_STRING, b'x'),
                                          (b'b', fxt.ARG_BOOL, True)], payload=0)  # no args
    w.event(fxt.EV_COUNTER, 21, 1, 1, 2, [(b'u', fxt.ARG_UINT32, 3), (b'n', fxt.ARG_NULL, None),
                                          (b'd', fxt.ARG_DOUBLE, nan)],
            payload=2 ** 64 - 1)
    w.event(fxt.EV_ASYNC_BEGIN, 30, (7, 8), b'inline', b'async', payload=0)
    w.event(fxt.EV_ASYNC_END, 31, (0, 0), b'inline', b'async', payload=0)   # unknown thread
    w.event(fxt.EV_FLOW_BEGIN, 40, 1, 1, 2, payload=2 ** 64 - 1)
    w.event(fxt.EV_FLOW_END, 41, 1, 1, 2, payload=0xabcdef)
    w.log(50, 1, b'')
    w.log(51, (9, 10), b'inline thread log')
    w.blob(b'b', b'xyz')
    w.userobj(0x1000, 1, b'obj', [(b'a', fxt.ARG_INT32, 1)])
    w.legacy_cswitch(60, 0, 1, 2)
    w.large_blob_event(b'c', b'n', 61, 1, [(b'a', fxt.ARG_INT32, 1)], b'\1' * 20)
    # provider 2: no initialization record -> 1 tick = 1 ns; overflow with no event after it
    w.provider_info(2, b'no-init')
    w.string(1, b'p2').thread(1, 300, 301)
    w.event(fxt.EV_INSTANT, 123456789, 1, 1, 1)
    w.overflow(2)
    # back to provider 1: its tables and tick rate are still in force
    w.provider_section(1)
    w.string(1, b'cat-redefined')                       # re-registering replaces
    w.event(fxt.EV_INSTANT, 3000, 1, 1, 2, [(b'many%d' % i, fxt.ARG_INT32, i)
                                            for i in range(15)])
    # provider 3 (empty name) overflows and never writes an event
    w.provider_info(3, b'')
    w.overflow(3)
    return w.bytes()


def test_edge_archive():
    data = edge_archive()
    arc = path('edge.fxt')
    js = path('edge.json')
    write_bytes(arc, data)
    t = fxt.decode(data)
    check(t.ok, 'edge archive does not conform (test bug): %s' % t.errors[:5])
    rc, err = convert_ok(arc, js, 'edge archive')
    if not os.path.exists(js):
        return
    json_tool_ok(js, 'edge archive')
    check_convert_ok(arc, js, 'edge archive')
    # a few independent, hand-computed expectations
    doc = json.loads(read_bytes(js))
    evs = doc['traceEvents']
    meta = sorted((e['name'], e['pid'], e['tid'], e['args']['name']) for e in evs
                  if e.get('ph') == 'M')
    check(meta == [('process_name', 100, 0, 'edge-proc'), ('thread_name', 100, 101, 'main'),
                   ('thread_name', 100, 2 ** 31 - 1, 'vthread')],
          'edge: metadata events %s' % meta)
    vt = [e for e in evs if e.get('ph') == 'M' and e['tid'] == 2 ** 31 - 1]
    check(vt and vt[0]['args'].get('koid') == '#%d' % ((1 << 63) | 5),
          'edge: the vthread\'s M event must keep its koid: %s' % vt)
    # the begin (tick 10) and end (tick 11) are both at 3 ns: one complete event of duration 0
    # with the arguments of both (Perfetto's sorter could put the end first)
    pair = [e for e in evs if e.get('ph') in ('B', 'E', 'X')][0]
    check(pair['ph'] == 'X' and pair['dur'] == 0 and pair['ts'] == 0.003
          and 'd0' in pair['args'] and 'i32min' in pair['args'],
          'edge: the begin/end pair at one ns must be an X of dur 0: %s' % pair)
    dur = [e for e in evs if e.get('ph') == 'X'][1:]
    check([e.get('dur') for e in dur] == [-0.001, 0.002, 0.0, -1000000.0]
          and [e['ts'] for e in dur] == [0.333, 0.333, 0.002, 1000000.0],
          'edge: complete events %s' % dur)
    jtext = read_bytes(js).decode()
    check('"dur":-0.001' in jtext and '"dur":-1000000.000' in jtext,
          'edge: negative durations must read -0.001 and -1000000.000')
    check('"ts":6148914691236517.205' in jtext, 'edge: ts of 2^64-1 ticks at 3 GHz')
    check('"d3":-0,' in jtext, 'edge: -0.0 must print as -0')
    b = pair['args']
    check(b['d0'] == 'NaN' and b['d1'] == 'Infinity' and b['d2'] == '-Infinity'
          and b['d5'] == 0.1 and b['d7'] == 5e-324 and b['d12'] == 2 ** 53 + 2,
          'edge: double args %s' % b)
    ov = [e for e in evs if e.get('name') == 'buffer overflow']
    check(len(ov) == 3, 'edge: expected 3 buffer-overflow instants, got %d' % len(ov))
    check('overflow' in err, 'edge: no overflow warning on stderr')
    e = pair['args']
    check(e['blob8'] == base64.b64encode(b'12345678').decode() and e['blob0'] == ''
          and e['kmax'] == '#18446744073709551615' and e['pmax'] == '0xffffffffffffffff'
          and e['u64max'] == 2 ** 64 - 1 and e['i64min'] == -2 ** 63 and e[''] == 'empty name',
          'edge: integer / pointer / koid / blob args %s' % e)
    c = [e for e in evs if e.get('ph') == 'C']
    # the counter without a numeric argument is left out, a NaN value dropped
    check(len(c) == 1 and c[0].get('id') == '0xffffffffffffffff' and c[0].get('args') == {'u': 3},
          'edge: counters %s' % c)
    check('4 non-numeric or non-finite counter argument(s), 1 counter(s) without' in err,
          'edge: the counters left out are not counted: %s' % err)


# invalid UTF-8 pieces and their expected text (one U+FFFD per bad byte)
R = '\ufffd'
BAD_UTF8 = [
    (b'a\x80b', 'a' + R + 'b'),                          # stray continuation byte
    (b'\xff\xfe', R * 2),                                # bytes never valid
    (b'\xc0\xaf', R * 2),                                # overlong '/'
    (b'\xe0\x80\x80', R * 3),                            # overlong NUL, 3 bytes
    (b'\xe2\x82A', R * 2 + 'A'),                         # truncated 3-byte sequence
    (b'\xed\xa0\x80', R * 3),                            # surrogate U+D800
    (b'\xf4\x90\x80\x80', R * 4),                        # above U+10FFFF
    (b'\xf5\x80\x80\x80', R * 4),                        # F5 lead byte
    (b'end\xf0\x9f\x98', 'end' + R * 3),                 # truncated at the end of the string
]
GOOD = [
    (b'\x01\x1f\x7f', '\x01\x1f\x7f'),
    (b'\b\f\n\r\t', '\b\f\n\r\t'),
    (b'q"b\\s/', 'q"b\\s/'),
    ('é€😀'.encode(), 'é€😀'),
    (b'\xef\xbf\xbd', R),                               # a real U+FFFD stays one
]


def test_names_at_stop():
    """The systrace lines name a task by its name at their time: an engine's name at a stop (a
    thread kernel-object record with a uint64 `name_at`, src/engine/stop_names.h) counts from its
    `name_at` on, as a task event does, in an archive without a names section (`trace recover`'s):
    before it, the last name the archive gives the thread."""
    w = Writer()
    w.provider_info(1, b'recovered')
    w.init(10 ** 9)
    # oneshot: the names at the stop are in chunk 0, before the thread's own first record
    w.kobj(2, 42, b'renamed', [(b'process', fxt.ARG_KOID, 40), (b'name_at', fxt.ARG_UINT64, 5000)])
    w.kobj(2, 42, b'main', [(b'process', fxt.ARG_KOID, 40)])
    w.legacy_cswitch(1000, 0, (40, 42), (0, 0))
    w.legacy_cswitch(9000, 0, (40, 42), (0, 0))
    arc, js = path('names-at-stop.fxt'), path('names-at-stop.json')
    write_bytes(arc, w.bytes())
    rc, _ = convert_ok(arc, js, 'names at a stop')
    if rc != 0:
        return
    with open(js) as f:
        text = json.load(f).get('systemTraceEvents', '')
    names = re.findall(r' (\d+\.\d+): sched_switch: prev_comm=(\S+) prev_pid=42 ', text)
    check(names == [('0.000001000', 'main'), ('0.000009000', 'renamed')],
          'names at a stop: the switches of thread 42 name it %s: %s' % (names, text[:600]))


def test_escaping():
    pieces = GOOD + BAD_UTF8
    w = Writer()
    pname = b'prov\x80"\n'
    w.provider_info(1, pname)
    w.overflow(1)
    w.init(10 ** 9).thread(1, 1, 2)
    w.kobj(1, 1, b'proc\xc0\xaf\x7f')
    w.kobj(2, 2, b'thr\xed\xa0\x80\t', [(b'process', fxt.ARG_KOID, 1)])
    for i, (raw, _) in enumerate(pieces):
        w.event(fxt.EV_INSTANT, 10 + i, 1, b'c' + raw, b'n' + raw,
                [(b'k' + raw, fxt.ARG_STRING, b'v' + raw)], scope=0)
    w.log(99, 1, b'log' + b''.join(p for p, _ in pieces))
    data = w.bytes()
    arc = path('escape.fxt')
    js = path('escape.json')
    write_bytes(arc, data)
    t = fxt.decode(data)
    check(t.ok, 'escape archive does not conform (test bug): %s' % t.errors[:3])
    convert_ok(arc, js, 'escaping')
    if not os.path.exists(js):
        return
    raw = read_bytes(js)
    try:
        jtext = raw.decode('utf-8')
    except UnicodeDecodeError as e:
        check(False, 'escaping: output is not valid UTF-8: %s' % e)
        return
    json_tool_ok(js, 'escaping')
    check_convert_ok(arc, js, 'escaping')
    for c in range(0x20):
        check(chr(c) not in jtext.replace('\n', '') if c == 10 else chr(c) not in jtext,
              'escaping: raw control character U+%04X in the output' % c)
    check('\x7f' not in jtext and '\\u007f' in jtext.lower(),
          'escaping: U+007F must be written as \\u007f')
    check('\\b\\f\\n\\r\\t' in jtext, 'escaping: \\b \\f \\n \\r \\t must be escaped by name')
    check('\\"' in jtext and '\\\\' in jtext, 'escaping: quote/backslash escapes missing')
    # the text tools put no raw control character on the terminal either (docs/security.md):
    # names, arguments and the log message are escaped; only their own line breaks remain
    for sub in (['dump', arc], ['summary', arc]):
        rc, out, err = run(sub)
        check(rc == 0, 'escaping: trace %s: rc %d %s' % (sub[0], rc, err[:300]))
        bad = sorted({'%02x' % c for c in out if (c < 0x20 and c != 0x0a) or c == 0x7f})
        check(not bad, 'escaping: raw control bytes %s in the output of trace %s' % (bad, sub[0]))
    # check_convert must notice a wrong replacement count (e.g. maximal-subpart decoding)
    for old, new in (('n' + R * 2 + 'A', 'n' + R + 'A'), ('n' + R * 3 + '"', 'n' + R + '"')):
        for o, n in ((old, new), (old.replace(R, '\\ufffd'), new.replace(R, '\\ufffd'))):
            if o in jtext:
                check(check_convert.check(data, jtext.replace(o, n, 1)),
                      'check_convert accepted %r instead of %r' % (n, o))
                break
        else:
            check(False, 'escaping: %r not found in the output' % old)
    evs = json.loads(jtext)['traceEvents']
    inst = [e for e in evs if e.get('ph') == 'i' and e.get('cat', '').startswith('c')]
    check(len(inst) == len(pieces), 'escaping: %d instants, expected %d' % (len(inst),
                                                                           len(pieces)))
    for e, (rawp, exp) in zip(inst, pieces):
        check(e['cat'] == 'c' + exp and e['name'] == 'n' + exp
              and e.get('args') == {'k' + exp: 'v' + exp},
              'escaping: %r became cat=%r name=%r args=%r, expected %r'
              % (rawp, e['cat'], e['name'], e.get('args'), exp))
    log = [e for e in evs if e.get('cat') == 'log']
    check(log and log[0]['args']['message'] == 'log' + ''.join(x for _, x in pieces),
          'escaping: log message %r' % (log and log[0]['args']['message']))
    meta = {e['name']: e['args']['name'] for e in evs if e.get('ph') == 'M'}
    check(meta == {'process_name': 'proc' + R * 2 + '\x7f', 'thread_name': 'thr' + R * 3 + '\t'},
          'escaping: metadata names %r' % meta)
    ov = [e for e in evs if e.get('name') == 'buffer overflow']
    check(ov and ov[0]['args'].get('provider_name') == 'prov' + R + '"\n',
          'escaping: overflow provider name %r' % (ov and ov[0]['args']))


def main():
    global TRACE, TMP
    if len(sys.argv) != 2:
        print('usage: test_cli.py PATH_TO_TRACE', file=sys.stderr)
        return 2
    TRACE = os.path.abspath(sys.argv[1])
    tests = [
        ('decoder self-test', test_decoder_selftest),
        ('gen-sample, decode, convert, check', lambda: STATE.update(t1=test_sample(0))),
        ('gen-sample --repeat 3', lambda: STATE.update(t3=test_sample(3))),
        ('repeat adds events', lambda: test_repeat_grows(STATE.get('t1'), STATE.get('t3'))),
        ('stdin / stdout', test_stdio),
        ('dump', test_dump),
        ('check_convert catches wrong JSON', mutate_and_expect_failure),
        ('errors', test_errors),
        ('truncated / corrupt archives', test_truncated),
        ('skipped records', test_skipped_records),
        ('edge-case archive', test_edge_archive),
        ('string escaping and invalid UTF-8', test_escaping),
        ('names at a stop in the systrace lines', test_names_at_stop),
    ]
    with tempfile.TemporaryDirectory(prefix='fxtrace-cli-') as TMP:
        run_tests(tests)
    return status()


STATE = {}

if __name__ == '__main__':
    sys.exit(main())
