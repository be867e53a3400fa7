#!/usr/bin/env python3
"""Issue 18, point 2: a command run by `trace record` starts with standard
input, output and error plus exactly what trace record inherited from its
parent, and nothing fxtrace opened; every descriptor trace record holds while
the command runs is close-on-exec.

usage: test_descriptors.py TRACE FD_REPORT PART
PART: record   without kernel categories (the in-process manager's sockets,
               the archive pipe, the output file), plain, zstd-compressed and
               to standard output (-o -, where the command's stdout is trace's
               stderr)
      kernel   --categories=kernel:sched as root: the kernel reader's
               trace_pipe_raw files and splice pipes are open in trace record
               while the command runs, close-on-exec, and not in the command;
               the tracefs instance is removed at the end. Exit 77 (skip)
               without root or tracefs.
In every run the test hands trace record one extra descriptor (number 37, a
file of its own, not close-on-exec): the command has it, as the same file.
fd_report (tests/trace/fd_report.c) lists the command's descriptors and those
of its parent, trace record.
"""

import os
import subprocess
import sys
import tempfile
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', 'tools'))
from fxtest import FAILS, check, skip_unless_tracefs  # noqa: E402

TRACE, FD_REPORT, PART = sys.argv[1:4]
PASSED_FD = 37


def parse(text):
    """{'self': {fd: target}, 'parent': {fd: (target, cloexec)}}"""
    out = {'self': {}, 'parent': {}}
    for line in text.splitlines():
        parts = line.split(' ')
        if parts[0] == 'self' and len(parts) >= 3:
            out['self'][int(parts[1])] = ' '.join(parts[2:])
        elif parts[0] == 'parent' and len(parts) >= 4:
            out['parent'][int(parts[1])] = (' '.join(parts[2:-1]), parts[-1] == 'cloexec')
    return out


def run_recording(tmp, name, record_args, report_args=()):
    """trace record ... -- fd_report, with PASSED_FD open on a file of ours.
    Returns (report, the passed file's path, trace's CompletedProcess)."""
    passed = os.path.join(tmp, name + '.passed')
    with open(passed, 'w') as f:
        f.write('handed down\n')
    report_path = os.path.join(tmp, name + '.report')
    fd = os.open(passed, os.O_RDONLY)  # close-on-exec in Python: only dup2's copy passes
    os.dup2(fd, PASSED_FD, inheritable=True)
    os.close(fd)
    try:
        cmd = [TRACE, 'record'] + record_args + [
            '--', FD_REPORT, '--out=' + report_path] + list(report_args)
        proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                pass_fds=(PASSED_FD,), stdin=subprocess.DEVNULL)
    finally:
        os.close(PASSED_FD)
    out, err = proc.communicate(timeout=120)
    r = subprocess.CompletedProcess(cmd, proc.returncode, out, err)
    r.pid = proc.pid
    check(r.returncode == 0, '%s: trace record failed (%d): %s' %
          (name, r.returncode, r.stderr.decode(errors='replace')[-800:]))
    try:
        with open(report_path) as f:
            report = parse(f.read())
    except OSError as e:
        check(False, '%s: no report from fd_report: %s' % (name, e))
        report = {'self': {}, 'parent': {}}
    return report, passed, r


def check_command(name, report, passed, stdout_is_stderr=False):
    mine = report['self']
    print('%s: the command has %s' % (name, sorted(mine.items())))
    check(set(mine) == {0, 1, 2, PASSED_FD},
          '%s: the command has descriptors %s, expected 0, 1, 2 and %d: %s' %
          (name, sorted(mine), PASSED_FD, mine))
    check(mine.get(PASSED_FD) == passed,
          '%s: descriptor %d of the command is %r, not the file trace record inherited (%s)' %
          (name, PASSED_FD, mine.get(PASSED_FD), passed))
    if stdout_is_stderr:
        check(mine.get(1) == mine.get(2),
              '%s: with -o - the command\'s stdout is not trace\'s stderr: %s' % (name, mine))


def check_parent(name, report, must_have=None):
    """trace record's own descriptors while the command ran: all but 0, 1,
    2 and the passed one close-on-exec; must_have: a text some target contains."""
    parent = report['parent']
    check(len(parent) > 3, '%s: no list of trace record\'s descriptors' % name)
    for fd, (target, cloexec) in sorted(parent.items()):
        if fd in (0, 1, 2, PASSED_FD):
            continue
        check(cloexec, '%s: trace record holds %d -> %s without close-on-exec' % (name, fd, target))
    if must_have:
        found = [fd for fd, (target, _) in parent.items() if must_have in target]
        check(found, '%s: trace record held no %s while the command ran: %s' %
              (name, must_have, sorted(parent.items())))
        return found
    return []


def part_record(tmp):
    for name, args in (('plain', ['-o', os.path.join(tmp, 'plain.fxt')]),
                       ('zstd', ['--compress=zstd', '-o', os.path.join(tmp, 'z.fxt.zst')]),
                       ('json', ['--format=json', '-o', os.path.join(tmp, 'j.json')]),
                       ('streaming', ['--buffering-mode=streaming', '-o',
                                      os.path.join(tmp, 's.fxt')])):
        report, passed, _ = run_recording(tmp, name, args)
        check_command(name, report, passed)
        check_parent(name, report, must_have='socket:')
    report, passed, r = run_recording(tmp, 'stdout', ['-o', '-'])
    check_command('stdout', report, passed, stdout_is_stderr=True)
    check(len(r.stdout) > 0, 'stdout: no archive on trace record\'s standard output')


def instance_exists(pid):
    """instances/fxtrace-PID: only trace record's own (other recordings on
    the machine may have theirs)"""
    return any(os.path.isdir(os.path.join(base, 'instances', 'fxtrace-%d' % pid))
               for base in ('/sys/kernel/tracing', '/sys/kernel/debug/tracing'))


def part_kernel(tmp):
    skip_unless_tracefs('kernel categories need root (tracefs)')
    for name, args in (('kernel', ['--categories=kernel:sched']),
                       ('kernel-streaming', ['--categories=kernel:sched,kernel:task',
                                             '--buffering-mode=streaming'])):
        out = os.path.join(tmp, name + '.fxt')
        report, passed, r = run_recording(tmp, name, args + ['-o', out],
                                          ['--wait-for=trace_pipe_raw'])
        err = r.stderr.decode(errors='replace')
        check('kernel provider' not in err or 'no kernel events' not in err,
              '%s: the kernel provider did not run: %s' % (name, err[-500:]))
        check_command(name, report, passed)
        raw = check_parent(name, report, must_have='trace_pipe_raw')
        pipes = [fd for fd, (target, _) in report['parent'].items() if target.startswith('pipe:')]
        check(len(pipes) >= 2 * len(raw),
              '%s: %d trace_pipe_raw files but only %d pipe ends in trace record' %
              (name, len(raw), len(pipes)))
        check(not instance_exists(r.pid), '%s: the tracefs instance fxtrace-%d is left behind' %
              (name, r.pid))
        check('EBUSY' not in err and 'busy' not in err.lower(),
              '%s: trace record reported a busy instance: %s' % (name, err[-500:]))


def main():
    with tempfile.TemporaryDirectory() as tmp:
        {'record': part_record, 'kernel': part_kernel}[PART](tmp)
    if FAILS:
        print('%d failure(s)' % len(FAILS))
        return 1
    print('ok')
    return 0


if __name__ == '__main__':
    sys.exit(main())
