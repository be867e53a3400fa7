#!/usr/bin/env python3
"""Issue 18: a program using libtrace-provider execs a child that has none of
the provider's descriptors, and every descriptor the provider holds is
close-on-exec, in file mode (oneshot and streaming: the buffer in /dev/shm,
the archive) and in manager mode under `trace record` (the manager socket,
the provider's eventfds; the shared buffer is only mapped).

usage: test_exec_descriptors.py EXEC_CHILD FD_REPORT TRACE
exec_child (tests/provider/exec_child.c) creates its provider, then
fork()s and execv()s fd_report (tests/trace/fd_report.c), which lists its own
descriptors and those of its parent, the traced program.
"""

import os
import subprocess
import sys
import tempfile
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', 'tools'))
from fxtest import FAILS, check  # noqa: E402

EXEC_CHILD, FD_REPORT, TRACE = sys.argv[1:4]


def parse(path):
    out = {'self': {}, 'parent': {}}
    try:
        text = open(path).read()
    except OSError as e:
        check(False, 'no report from fd_report: %s' % e)
        return out
    for line in text.splitlines():
        parts = line.split(' ')
        if parts[0] == 'self' and len(parts) >= 3:
            out['self'][int(parts[1])] = ' '.join(parts[2:])
        elif parts[0] == 'parent' and len(parts) >= 4:
            out['parent'][int(parts[1])] = (' '.join(parts[2:-1]), parts[-1] == 'cloexec')
    return out


def check_report(name, report, must_have):
    mine = report['self']
    print('%s: the exec\'d child has %s' % (name, sorted(mine.items())))
    check(set(mine) == {0, 1, 2},
          '%s: the exec\'d child has descriptors %s, expected only 0, 1, 2: %s' %
          (name, sorted(mine), mine))
    parent = report['parent']
    for fd, (target, cloexec) in sorted(parent.items()):
        if fd > 2:
            check(cloexec, '%s: the traced program holds %d -> %s without close-on-exec' %
                  (name, fd, target))
    for text in must_have:
        check(any(text in target for target, _ in parent.values()),
              '%s: the traced program held no %s when it exec\'d (its provider did not run?): %s'
              % (name, text, sorted(parent.items())))


def dump_has_both(name, archive):
    r = subprocess.run([TRACE, 'dump', archive], capture_output=True, text=True, timeout=60)
    check(r.returncode == 0, '%s: trace dump failed: %s' % (name, r.stderr[-500:]))
    for event in ('before', 'after'):
        check('name="%s"' % event in r.stdout, '%s: no event %s in the archive' % (name, event))


def main():
    with tempfile.TemporaryDirectory() as tmp:
        for mode in ('oneshot', 'streaming'):
            name = 'file-' + mode
            archive = os.path.join(tmp, name + '.fxt')
            report = os.path.join(tmp, name + '.report')
            env = dict(os.environ, FXTRACE_OUTPUT=archive, FXTRACE_BUFFERING_MODE=mode)
            env.pop('FXTRACE_SOCKET', None)
            r = subprocess.run([EXEC_CHILD, FD_REPORT, '--out=' + report], env=env,
                               capture_output=True, text=True, timeout=60,
                               stdin=subprocess.DEVNULL)
            check(r.returncode == 0, '%s: exec_child failed (%d): %s' %
                  (name, r.returncode, r.stderr[-500:]))
            check_report(name, parse(report), [archive, '/dev/shm/'])
            dump_has_both(name, archive)

        for mode in ('oneshot', 'streaming'):
            name = 'manager-' + mode
            archive = os.path.join(tmp, name + '.fxt')
            report = os.path.join(tmp, name + '.report')
            env = dict(os.environ)
            env.pop('FXTRACE_OUTPUT', None)
            r = subprocess.run([TRACE, 'record', '--buffering-mode=' + mode, '-o', archive, '--',
                                EXEC_CHILD, FD_REPORT, '--out=' + report], env=env,
                               capture_output=True, text=True, timeout=120,
                               stdin=subprocess.DEVNULL)
            check(r.returncode == 0, '%s: trace record failed (%d): %s' %
                  (name, r.returncode, r.stderr[-500:]))
            check_report(name, parse(report), ['socket:'])
            dump_has_both(name, archive)
    if FAILS:
        print('%d failure(s)' % len(FAILS))
        return 1
    print('ok')
    return 0


if __name__ == '__main__':
    sys.exit(main())
