#!/usr/bin/env python3
"""Issue 19, point 6: signals leave nothing behind. `trace record` removes
its socket directory ($TMPDIR/fxtrace-record-XXXXXX) and, with kernel
categories, its tracefs instance (instances/fxtrace-PID) on every signal it
can catch, even while a process the command started still runs; after a
SIGKILL the next recording removes them; a live recording's are never
touched by another recording.

usage: test_signals.py TRACE PART
PART: dir      without kernel categories (the socket directory only)
      kernel   --categories=kernel:sched as root (the instance too); exit 77
               (skip) without root or tracefs
Scenarios, each with a command that leaves a child running
(sh -c 'sleep 100 & ...; exec sleep 300': the command outlives every wait of
the test, so one that trace failed to end is seen still running):
  SIGINT, SIGTERM, SIGHUP, SIGQUIT: trace record ends with status 0, the archive
      reads back with `trace dump`, nothing is left;
  SIGINT then SIGTERM at once: trace ends (orderly, or at once by SIGTERM),
      nothing is left;
  SIGSEGV sent to trace record (a crash): it dies of SIGSEGV, nothing is left,
      the command is ended;
  SIGKILL: the directory (with the owner's pid in its owner file) and the
      instance stay; the next recording removes both and says so;
  a live recording: a second recording leaves its directory and instance
      alone; the first then ends normally and removes them.
TMPDIR points to a directory of the test's own, so the directories found
there are this test's.
"""

import os
import re
import resource
import signal
import subprocess
import sys
import tempfile
import time
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', 'tools'))
from fxtest import FAILS, check, skip_unless_tracefs  # noqa: E402

TRACE, PART = sys.argv[1:3]
KERNEL = PART == 'kernel'
CATEGORIES = ['--categories=kernel:sched'] if KERNEL else []


def instances_dir():
    for base in ('/sys/kernel/tracing', '/sys/kernel/debug/tracing'):
        path = os.path.join(base, 'instances')
        if os.path.isdir(path):
            return path
    return None


def instance_exists(pid):
    d = instances_dir()
    return d is not None and os.path.isdir(os.path.join(d, 'fxtrace-%d' % pid))


def live_instances(exclude):
    """fxtrace-PID instances of processes that still run, other than `exclude`: another
    recording on this machine."""
    d = instances_dir()
    found = []
    for name in os.listdir(d) if d else []:
        if not name.startswith('fxtrace-'):
            continue
        try:
            pid = int(name.split('-', 1)[1])
        except ValueError:
            continue
        if pid != exclude and alive(pid):
            found.append(name)
    return found


def socket_dirs(tmpdir):
    return sorted(n for n in os.listdir(tmpdir) if n.startswith('fxtrace-record-'))


def wait_for_file(path, proc, what, timeout=60):
    """Waits until `path` exists and is not empty (the command wrote it), or
    trace record ended; True if it exists."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if os.path.exists(path) and os.path.getsize(path) > 0:
            return True
        if proc.poll() is not None:
            break
        time.sleep(0.02)
    check(False, '%s: the command never started (trace record status %s)' % (what, proc.poll()))
    return False


def alive(pid):
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    with open('/proc/%d/stat' % pid) as f:  # a zombie has ended
        return f.read().rsplit(')', 1)[1].split()[0] != 'Z'


def kill_pid_file(path):
    try:
        pid = int(open(path).read().split()[0])
        os.kill(pid, signal.SIGKILL)
    except (OSError, ValueError, IndexError):
        pass


def no_core():
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))


class Recording:
    """trace record ... -- sh -c 'sleep 100 & echo $! > bg; echo $$ > cmd; exec sleep 300'"""

    def __init__(self, tmp, name, env):
        self.name = name
        self.out = os.path.join(tmp, name + '.fxt')
        self.bg = os.path.join(tmp, name + '.bg')
        self.cmd = os.path.join(tmp, name + '.cmd')
        self.err_path = os.path.join(tmp, name + '.err')
        script = 'sleep 100 & echo $! > %s; echo $$ > %s; exec sleep 300' % (self.bg, self.cmd)
        # stdout and stderr to files: the background sleep keeps what it inherits open
        with open(self.err_path, 'w') as err, open(os.devnull, 'w') as null:
            self.proc = subprocess.Popen(
                [TRACE, 'record'] + CATEGORIES + ['-o', self.out, '--', 'sh', '-c', script],
                stdout=null, stderr=err, stdin=subprocess.DEVNULL, env=env, preexec_fn=no_core)
        self.started = wait_for_file(self.cmd, self.proc, name)

    def wait(self, timeout=90):
        try:
            return self.proc.wait(timeout)
        except subprocess.TimeoutExpired:
            check(False, '%s: trace record did not end' % self.name)
            self.proc.kill()
            return self.proc.wait()

    def stderr(self):
        return open(self.err_path, errors='replace').read()

    def command_pid(self):
        return int(open(self.cmd).read())

    def clean_up(self):
        kill_pid_file(self.bg)
        kill_pid_file(self.cmd)


def check_nothing_left(name, tmpdir, pid):
    left = socket_dirs(tmpdir)
    check(not left, '%s: socket directories left in TMPDIR: %s' % (name, left))
    if KERNEL:
        check(not instance_exists(pid), '%s: the tracefs instance fxtrace-%d is left' % (name, pid))


def dump_ok(name, path):
    r = subprocess.run([TRACE, 'dump', path], capture_output=True, text=True, timeout=60)
    check(r.returncode == 0, '%s: trace dump of the archive failed: %s' % (name, r.stderr[-300:]))


def scenario_signal(tmp, tmpdir, env, sig):
    name = 'SIG' + sig.name[3:]
    rec = Recording(tmp, name, env)
    try:
        if not rec.started:
            return
        if KERNEL:
            check(instance_exists(rec.proc.pid), '%s: no instance while recording' % name)
        check(len(socket_dirs(tmpdir)) == 1, '%s: no socket directory while recording' % name)
        rec.proc.send_signal(sig)
        status = rec.wait()
        check(status == 0, '%s: trace record exited %d: %s' % (name, status, rec.stderr()[-500:]))
        check('stopping' in rec.stderr(), '%s: no "stopping" message: %s' % (name, rec.stderr()))
        check(alive(int(open(rec.bg).read())), '%s: the command\'s child is not running: the '
              'scenario does not test what it should' % name)
        check_nothing_left(name, tmpdir, rec.proc.pid)
        dump_ok(name, rec.out)
    finally:
        rec.clean_up()


def scenario_twice(tmp, tmpdir, env):
    name = 'SIGINT+SIGTERM'
    rec = Recording(tmp, 'twice', env)
    try:
        if not rec.started:
            return
        rec.proc.send_signal(signal.SIGINT)
        rec.proc.send_signal(signal.SIGTERM)
        status = rec.wait()
        # Sent back to back, the two may be taken by two of trace's threads in either order:
        # the one handled second ends trace at once, by that signal; or both land before the
        # stop began, which then ends in order (0).
        check(status in (0, -signal.SIGTERM, -signal.SIGINT),
              '%s: trace record ended with %d, neither 0 nor killed by one of the signals'
              % (name, status))
        check_nothing_left(name, tmpdir, rec.proc.pid)
    finally:
        rec.clean_up()


def scenario_crash(tmp, tmpdir, env):
    name = 'SIGSEGV'
    rec = Recording(tmp, 'crash', env)
    try:
        if not rec.started:
            return
        command = rec.command_pid()
        rec.proc.send_signal(signal.SIGSEGV)
        status = rec.wait()
        check(status == -signal.SIGSEGV, '%s: trace record ended with %d, not by SIGSEGV' %
              (name, status))
        check_nothing_left(name, tmpdir, rec.proc.pid)
        deadline = time.monotonic() + 30
        while alive(command) and time.monotonic() < deadline:
            time.sleep(0.02)
        check(not alive(command), '%s: the command (pid %d) still runs' % (name, command))
    finally:
        rec.clean_up()


def scenario_kill(tmp, tmpdir, env):
    name = 'SIGKILL'
    rec = Recording(tmp, 'killed', env)
    try:
        if not rec.started:
            return
        rec.proc.send_signal(signal.SIGKILL)
        rec.wait()
        pid = rec.proc.pid
        left = socket_dirs(tmpdir)
        check(len(left) == 1, '%s: expected the dead recording\'s directory, found %s' %
              (name, left))
        if left:
            owner = os.path.join(tmpdir, left[0], 'owner')
            check(os.path.exists(owner) and open(owner).read().split()[0] == str(pid),
                  '%s: the directory\'s owner file does not name pid %d' % (name, pid))
        if KERNEL:
            check(instance_exists(pid), '%s: the instance fxtrace-%d is gone already' % (name, pid))
        others_recording = live_instances(exclude=pid)
        r = subprocess.run([TRACE, 'record'] + CATEGORIES + ['-o', os.path.join(tmp, 'next.fxt'),
                                                             '--', 'true'],
                           capture_output=True, text=True, timeout=120, env=env)
        others_recording += [i for i in live_instances(exclude=pid) if i not in others_recording]
        check(r.returncode == 0, '%s: the next recording failed: %s' % (name, r.stderr[-500:]))
        check_nothing_left(name + ' then another recording', tmpdir, pid)
        check('pid %d' % pid in r.stderr and 'removed' in r.stderr,
              '%s: the next recording did not say it removed the directory: %s' %
              (name, r.stderr))
        if KERNEL and not re.search(r'removed \d+ tracefs instance', r.stderr):
            # Any recording as root removes dead recordings' instances at its start: when
            # another one ran on this machine meanwhile (a second test run: seen), it may
            # have removed this one first. That it is gone is asserted above; which
            # recording removed it cannot be told from here.
            print('note: %s: the next recording did not remove the instance itself; another '
                  'recording on this machine did (%s)' % (name, ', '.join(others_recording) or
                                                          'it had ended already'))
    finally:
        rec.clean_up()


def scenario_live(tmp, tmpdir, env):
    name = 'live'
    rec = Recording(tmp, 'live', env)
    try:
        if not rec.started:
            return
        mine = socket_dirs(tmpdir)
        r = subprocess.run([TRACE, 'record'] + CATEGORIES + ['-o', os.path.join(tmp, 'second.fxt'),
                                                             '--', 'true'],
                           capture_output=True, text=True, timeout=120, env=env)
        check(r.returncode == 0, '%s: the second recording failed: %s' % (name, r.stderr[-500:]))
        check('removed' not in r.stderr,
              '%s: the second recording removed something: %s' % (name, r.stderr))
        check(socket_dirs(tmpdir) == mine and len(mine) == 1,
              '%s: the live recording\'s directory changed: %s, then %s' %
              (name, mine, socket_dirs(tmpdir)))
        if mine:
            check(os.path.exists(os.path.join(tmpdir, mine[0], 'manager.sock')),
                  '%s: the live recording\'s socket was removed' % name)
        if KERNEL:
            check(instance_exists(rec.proc.pid), '%s: the live recording\'s instance was removed'
                  % name)
        check(rec.proc.poll() is None, '%s: the live recording ended' % name)
        rec.proc.send_signal(signal.SIGINT)
        status = rec.wait()
        check(status == 0, '%s: the live recording failed after the second one: %s' %
              (name, rec.stderr()[-500:]))
        check_nothing_left(name, tmpdir, rec.proc.pid)
        dump_ok(name, rec.out)
    finally:
        rec.clean_up()


def main():
    if KERNEL:
        skip_unless_tracefs('kernel categories need root (tracefs)')
    with tempfile.TemporaryDirectory() as tmp:
        tmpdir = os.path.join(tmp, 't')  # short: the socket path has a limit
        os.mkdir(tmpdir)
        env = dict(os.environ, TMPDIR=tmpdir)
        # no manager there: each recording runs its own, with a socket directory in TMPDIR
        env['FXTRACE_SOCKET'] = os.path.join(tmpdir, 'none.sock')
        for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP, signal.SIGQUIT):
            scenario_signal(tmp, tmpdir, env, sig)
        scenario_twice(tmp, tmpdir, env)
        scenario_crash(tmp, tmpdir, env)
        scenario_kill(tmp, tmpdir, env)
        scenario_live(tmp, tmpdir, env)
    if FAILS:
        print('%d failure(s)' % len(FAILS))
        return 1
    print('ok')
    return 0


if __name__ == '__main__':
    sys.exit(main())
