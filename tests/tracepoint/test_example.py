#!/usr/bin/env python3
"""examples/tracepoints recorded in file mode and through `trace record`:

    test_example.py PATH_TO_TRACE PATH_TO_EXAMPLE [PATH_TO_TRACE_MANAGER]

- `trace dump` prints every typed event as "NAME: TEXT", TEXT being its TP_printk format applied
  to the recorded values (expected texts computed here from the example's values);
- `trace formats` lists the five events in tracefs's layout (category line, name, ID, format:,
  field lines, print fmt);
- the archives conform (tests/tools/fxt_decode.py): typed events are plain instants with named,
  typed arguments, category = TRACE_SYSTEM, and the format records are type-1 blobs;
- `trace convert` shows the fields as JSON args by name, fixed arrays as JSON arrays, a struct as hex;
- with the trace_manager daemon: `trace list-categories` shows the provider's TRACE_SYSTEM.
Python 3 standard library only.
"""

import json
import os
import shutil
import subprocess
import struct
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, '..', 'tools'))
from fxtest import FAILS, check, stop_daemon  # noqa: E402
import fxt_decode as fxt  # noqa: E402


def expected_texts(n):
    out = []
    for i in range(n):
        out.append('tp_demo_send: fd=%d peer=10.0.0.1:80 len=%d' % (i, 100 + i))
        out.append('tp_demo_scalars: c=-5 s=-300 uc=200 us=%x i64=%d u64=%d b=1 d=%.3f f=%g p=0x1234'
                   % (65000, -(1 << 40), (1 << 64) - 1 - i, 3.25, 1.5))
        out.append('tp_demo_arrays: comm=worker flags=READ|SYNC state=%s bytes=de ad be ef 01'
                   % ['idle', 'busy', 'done'][i % 3])
        out.append('tp_demo_read: id=%d bytes=4096' % i)
        if i % 2:
            out.append('tp_demo_write: id=%d bytes=512' % i)
    return out


def run(cmd, env=None, timeout=60):
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env,
                       timeout=timeout, stdin=subprocess.DEVNULL)
    return p.returncode, p.stdout.decode('utf-8', 'replace'), p.stderr.decode('utf-8', 'replace')


def check_archive(trace, path, what, n):
    rc, out, err = run([trace, 'dump', path])
    check(rc == 0, '%s: dump rc %d %s' % (what, rc, err[:300]))
    texts = [line.split(' thread=', 1)[1].split(' ', 1)[1] for line in out.splitlines()
             if line.startswith('event') and 'cat="tp_demo"' in line]
    check(texts == expected_texts(n), '%s: dumped texts\n%s\nexpected\n%s'
          % (what, '\n'.join(texts), '\n'.join(expected_texts(n))))
    rc, out, err = run([trace, 'formats', path])
    check(rc == 0, '%s: formats rc %d %s' % (what, rc, err[:300]))
    names = [line[6:] for line in out.splitlines() if line.startswith('name: ')]
    check(sorted(names) == ['tp_demo_arrays', 'tp_demo_read', 'tp_demo_scalars', 'tp_demo_send',
                            'tp_demo_write'], '%s: formats names %r' % (what, names))
    for needle in ('category: tp_demo\nname: tp_demo_send\nID: ',
                   '\tfield:int fd;\toffset:8;\tsize:4;\tsigned:1;\n',
                   '\tfield:__data_loc char[] peer;\toffset:12;\tsize:4;\tsigned:0;\n',
                   '\tfield:char comm[16];\toffset:8;\tsize:16;\tsigned:0;\n',
                   '\tfield:__data_loc uint8_t[] bytes;',
                   'print fmt: "fd=%d peer=%s len=%zu", REC->fd, __get_str(peer), REC->len\n'):
        check(needle in out, '%s: formats output lacks %r' % (what, needle))
    data = open(path, 'rb').read()
    t = fxt.decode(data)
    check(t.errors == [], '%s: fxt_decode errors: %r' % (what, t.errors[:5]))
    events = [r for r in t.records if r['kind'] == 'event' and r.get('category') == b'tp_demo']
    check(len(events) == len(expected_texts(n)), '%s: %d typed events decoded' % (what, len(events)))
    blobs = [r for r in t.records if r['kind'] == 'blob']
    check(len(blobs) == 5, '%s: %d format blobs' % (what, len(blobs)))
    json_path = path + '.json'
    rc, out, err = run([trace, 'convert', path, '-o', json_path])
    check(rc == 0, '%s: convert rc %d %s' % (what, rc, err[:300]))
    doc = json.load(open(json_path))
    typed = [e for e in doc['traceEvents'] if e.get('cat') == 'tp_demo']
    send = [e for e in typed if e['name'] == 'tp_demo_send']
    check(send and send[0]['args'] == {'fd': 0, 'len': 100, 'peer': '10.0.0.1:80'},
          '%s: JSON args of tp_demo_send: %r' % (what, send[:1]))
    arrays = [e for e in typed if e['name'] == 'tp_demo_arrays']
    check(arrays and arrays[0]['args'].get('quad') == [0, 10, 20, 30]
          and arrays[0]['args'].get('comm') == 'worker'
          and arrays[0]['args'].get('bytes') == [0xde, 0xad, 0xbe, 0xef, 1]
          and arrays[0]['args'].get('pt') == struct.pack('<ii', 3, -4).hex(),
          '%s: JSON args of tp_demo_arrays: %r' % (what, arrays[:1]))


def main():
    if len(sys.argv) not in (3, 4):
        print(__doc__)
        return 2
    trace, example = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2])
    manager = os.path.abspath(sys.argv[3]) if len(sys.argv) == 4 else None
    tmp = tempfile.mkdtemp(prefix='fxtrace-tp-')
    try:
        return check_example(trace, example, manager, tmp)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def check_example(trace, example, manager, tmp):
    base = dict(os.environ)
    base.pop('FXTRACE_OUTPUT', None)
    base['FXTRACE_SOCKET'] = os.path.join(tmp, 'none.sock')

    # file mode
    path = os.path.join(tmp, 'file.fxt')
    env = dict(base, FXTRACE_OUTPUT=path)
    rc, out, err = run([example, '4'], env=env)
    check(rc == 0, 'file mode: rc %d %s' % (rc, err[:300]))
    check_archive(trace, path, 'file mode', 4)

    # a malformed format record: reported with its offset, skipped; formats exits 1, dump goes on
    data = open(path, 'rb').read()
    i = data.find(b'category: tp_demo\nname: tp_demo_send')
    check(i > 0, 'file mode: no tp_demo_send format in the archive')
    bad = os.path.join(tmp, 'bad.fxt')
    open(bad, 'wb').write(data[:i] + b'xategory' + data[i + 8:])
    rc, out, err = run([trace, 'formats', bad])
    check(rc == 1 and 'bad format: no \'category:\' line' in err and 'byte offset' in err,
          'formats of a bad format: rc %d, %s' % (rc, err[:300]))
    check('name: tp_demo_scalars' in out, 'formats of a bad format: the good ones are not listed')
    rc, out, err = run([trace, 'dump', bad])
    check(rc == 0 and 'bad format: no \'category:\' line' in out,
          'dump of a bad format: rc %d, %s' % (rc, err[:300]))
    check('tp_demo_send:' not in out and 'tp_demo_scalars: c=-5' in out,
          'dump of a bad format: events without their format must keep their arguments')
    rc, out, err = run([trace, 'formats', os.path.join(tmp, 'missing.fxt')])
    check(rc == 1 and err.strip() != '', 'formats of a missing file: rc %d' % rc)
    rc, out, err = run([trace, 'formats'])
    check(rc == 2, 'formats without FILE: rc %d' % rc)

    # trace record (its in-process manager)
    path = os.path.join(tmp, 'record.fxt')
    rc, out, err = run([trace, 'record', '-o', path, '--', example, '3'], env=base)
    if 'start trace_manager first' in err:
        print('trace record has no in-process manager here: skipped that part')
    else:
        check(rc == 0, 'trace record: rc %d %s' % (rc, err[:300]))
        check_archive(trace, path, 'trace record', 3)

    # the daemon: list-categories shows TRACE_SYSTEM
    if manager:
        sock = os.path.join(tmp, 'daemon.sock')
        d = subprocess.Popen([manager, '--socket', sock], stdout=subprocess.DEVNULL,
                             stderr=subprocess.DEVNULL)
        prog = None
        try:
            for _ in range(100):
                if os.path.exists(sock):
                    break
                time.sleep(0.05)
            env = dict(base, FXTRACE_SOCKET=sock)
            prog = subprocess.Popen([example, '100000', '10'], env=env, stdout=subprocess.DEVNULL)
            found = False
            for _ in range(100):
                rc, out, err = run([trace, 'list-categories'], env=env)
                if rc == 0 and 'tp_demo' in out:
                    found = True
                    break
                time.sleep(0.05)
            check(found, 'list-categories never showed tp_demo: %r %s' % (out, err[:200]))
            check('TRACE_EVENT() events' in out, 'list-categories: no description: %r' % out)
        finally:
            if prog:
                prog.kill()
                prog.wait()
            stop_daemon(d)
    if FAILS:
        print('%d failure(s)' % len(FAILS))
        return 1
    print('ok')
    return 0


if __name__ == '__main__':
    sys.exit(main())
