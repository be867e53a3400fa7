#!/usr/bin/env python3
"""Another user never receives, forges or hangs a trace (docs/security.md).

Run as root with two throwaway users, a victim and an attacker, on binaries
installed under a prefix both may read:

1. The attacker creates the victim's fallback socket directory
   /tmp/fxtrace-$UID first (mode 0777, then again 0700 owned by the attacker)
   and listens on manager.sock in it (and again as a symbolic link to a directory of
   the attacker's), holding every connection open without answering. Without XDG_RUNTIME_DIR the victim's
   `trace record` records all the same (a manager of its own in a private
   directory, with a warning naming the directory, its owner and mode);
   `trace list-providers`, `trace list-categories` and `trace_manager` fail
   saying what to do; a traced program says once why it does not trace; and
   the attacker's socket receives no connection from any of them. Root's
   trace_kernel_provider, pointed at an attacker's directory through
   XDG_RUNTIME_DIR, does not connect either.
2. A real trace manager run by the attacker, at a path the victim names in
   FXTRACE_SOCKET: every client of the victim refuses it.

usage: test_socket_trust.py BUILD_DIR DEMO
"""
import os
import pwd
import shutil
import socket
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
from throwaway_users import ThrowawayUsers  # noqa: E402
SYSTEM_PYTHON = '/usr/bin/python3'  # other users may not reach root's own interpreter
failures = []


def check(ok, what, detail=''):
    print(('ok   ' if ok else 'FAIL ') + what)
    if not ok:
        if detail:
            print('     ' + detail.replace('\n', '\n     '))
        failures.append(what)


def skip(why):
    print('SKIP: ' + why)
    sys.exit(77)


class Users(ThrowawayUsers):
    """A victim and an attacker."""

    ROLES = ('victim', 'attacker')

    def __init__(self):
        super().__init__(['fxv', 'fxa'])

    def __enter__(self):
        super().__enter__()
        self.by_role = dict(zip(self.ROLES, self.names))
        return self

    def uid(self, who):
        return pwd.getpwnam(self.by_role[who]).pw_uid


class Setup:
    def __init__(self, build, demo, users, top):
        self.users = users
        self.top = top
        self.prefix = os.path.join(top, 'prefix')
        subprocess.run(['cmake', '--install', build, '--prefix', self.prefix],
                       check=True, stdout=subprocess.DEVNULL)
        shutil.copy(demo, os.path.join(self.prefix, 'bin', 'fxtrace-demo'))
        self.squatter = os.path.join(top, 'squatter.py')  # readable by the attacker
        shutil.copy(os.path.join(HERE, 'squatter.py'), self.squatter)
        os.chmod(self.squatter, 0o644)
        self.bin = os.path.join(self.prefix, 'bin')
        self.sbin = os.path.join(self.prefix, 'sbin')
        for root, dirs, files in os.walk(self.prefix):
            for d in dirs:
                os.chmod(os.path.join(root, d), 0o755)
        self.home = {}
        for who in ('victim', 'attacker'):
            d = os.path.join(top, who)
            os.mkdir(d, 0o700)
            u = pwd.getpwnam(users.by_role[who])
            os.chown(d, u.pw_uid, u.pw_gid)
            self.home[who] = d

    def tool(self, name):
        for d in (self.bin, self.sbin):
            p = os.path.join(d, name)
            if os.path.exists(p):
                return p
        raise FileNotFoundError(name)

    def env(self, **extra):
        e = {'PATH': '/usr/bin:/bin', 'LD_LIBRARY_PATH': os.path.join(self.prefix, 'lib'),
             'HOME': '/nonexistent', 'LANG': 'C'}
        for k in ('ASAN_OPTIONS', 'UBSAN_OPTIONS', 'LSAN_OPTIONS'):
            if k in os.environ:
                e[k] = os.environ[k]
        e.update({k: v for k, v in extra.items() if v is not None})
        return e

    def as_user(self, who):
        """Popen arguments that run a program as `who`, with no group of root's."""
        u = pwd.getpwnam(self.users.by_role[who])
        return {'user': u.pw_uid, 'group': u.pw_gid, 'extra_groups': [], 'cwd': self.home[who]}

    def run_as(self, who, argv, env=None, timeout=60):
        try:
            return subprocess.run(argv, capture_output=True, text=True, timeout=timeout,
                                  env=env or self.env(), **self.as_user(who))
        except subprocess.TimeoutExpired as e:
            return subprocess.CompletedProcess(argv, 'timeout', e.stdout or '', e.stderr or '')


class Squatter:
    """squatter.py run as the attacker; counts the connections it accepted."""

    def __init__(self, setup, sock_path, log, mkdir_mode=None, symlink_to=None):
        self.log = log
        self.path = sock_path
        argv = [SYSTEM_PYTHON, setup.squatter, sock_path, log]
        if mkdir_mode:
            argv += ['--mkdir', mkdir_mode]
        if symlink_to:
            argv += ['--symlink', symlink_to]
        self.proc = subprocess.Popen(argv, stdout=subprocess.PIPE, text=True, env=setup.env(),
                                     **setup.as_user('attacker'))
        line = self.proc.stdout.readline()
        if line.strip() != 'READY':
            raise RuntimeError('the squatter did not start')

    def connections(self):
        """Connections before this call: a last one of our own, once logged,
        proves every earlier one was accepted and logged (accept is FIFO)."""
        with socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET) as s:
            s.connect(self.path)
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            if os.path.exists(self.log):
                with open(self.log) as f:
                    n = f.read().count('connection')
                if n > 0:
                    os.remove(self.log)  # the squatter appends anew
                    return n - 1
            time.sleep(0.02)
        raise RuntimeError('the squatter logged nothing')

    def stop(self):
        self.proc.kill()
        self.proc.wait()


def remove_path(p):
    if os.path.islink(p):
        os.unlink(p)
    else:
        shutil.rmtree(p, ignore_errors=True)


def squatted_default(setup, mode):
    """mode: '0777' or '0700' (a directory the attacker made), or 'symlink' (a symbolic link
    to the attacker's directory)."""
    victim_uid = setup.users.uid('victim')
    directory = '/tmp/fxtrace-%d' % victim_uid
    remove_path(directory)
    log = os.path.join(setup.home['attacker'], 'log')
    target = os.path.join(setup.home['attacker'], 'lure')
    if mode == 'symlink':
        sq = Squatter(setup, directory + '/manager.sock', log, symlink_to=target)
        what = 'squatted %s (a symbolic link)' % directory
        shown = 'symbolic link'
    else:
        sq = Squatter(setup, directory + '/manager.sock', log, mkdir_mode=mode)
        what = 'squatted %s (mode %s)' % (directory, mode)
        shown = 'mode 0' + mode.lstrip('0')
    env = setup.env()  # no XDG_RUNTIME_DIR, no FXTRACE_SOCKET
    attacker = setup.users.by_role['attacker']
    try:
        out = os.path.join(setup.home['victim'], 'victim.fxt')
        r = setup.run_as('victim', [setup.tool('trace'), 'record', '--duration=1', '-o', out,
                                    '--', setup.tool('fxtrace-demo')], env)
        check(r.returncode == 0, what + ': trace record still records', r.stderr)
        check('warning: not looking for a trace manager in ' + directory in r.stderr and
              attacker in r.stderr and shown in r.stderr,
              what + ': trace record warns, naming the directory, its owner and mode', r.stderr)
        d = setup.run_as('victim', [setup.tool('trace'), 'dump', out], env)
        check(d.returncode == 0 and 'name="produce all"' in d.stdout,
              what + ": the archive holds the demo's own events", d.stderr[-2000:])
        for sub in ('list-providers', 'list-categories'):
            r = setup.run_as('victim', [setup.tool('trace'), sub], env, timeout=30)
            check(r.returncode == 1 and directory in r.stderr and 'XDG_RUNTIME_DIR' in r.stderr
                  and 'FXTRACE_SOCKET' in r.stderr,
                  what + ': trace %s fails and says what to do' % sub,
                  'exit %s: %s' % (r.returncode, r.stderr))
        r = setup.run_as('victim', [setup.tool('trace_manager')], env, timeout=30)
        check(r.returncode not in (0, 'timeout') and directory in r.stderr and
              'FXTRACE_SOCKET' in r.stderr,
              what + ': trace_manager refuses to start there',
              'exit %s: %s' % (r.returncode, r.stderr))
        r = setup.run_as('victim', [setup.tool('fxtrace-demo')], env, timeout=60)
        check(r.returncode == 0 and r.stderr.count('not tracing') == 1 and
              directory in r.stderr,
              what + ': a traced program says once why it does not trace',
              'exit %s: %s' % (r.returncode, r.stderr))
        n = sq.connections()
        check(n == 0, what + ': the squatter received no connection (%d)' % n)
    finally:
        sq.stop()
        remove_path(directory)
        remove_path(target)


def kernel_provider_not_lured(setup):
    """Root's kernel provider with XDG_RUNTIME_DIR set to a directory in which
    the attacker made fxtrace/ and listens."""
    kp = os.path.join(setup.bin, 'trace_kernel_provider')
    if not os.path.exists(kp):
        kp = os.path.join(setup.sbin, 'trace_kernel_provider')
    if not os.path.exists(kp):
        print('(no trace_kernel_provider in this build: that part skipped)')
        return
    runtime = tempfile.mkdtemp(dir=setup.top)
    os.chmod(runtime, 0o1777)
    log = os.path.join(setup.home['attacker'], 'klog')
    sq = Squatter(setup, runtime + '/fxtrace/manager.sock', log, mkdir_mode='0755')
    try:
        r = subprocess.run([kp], env=setup.env(XDG_RUNTIME_DIR=runtime), capture_output=True,
                           text=True, timeout=60)
        check(r.returncode != 0 and 'not tracing' in r.stderr and runtime in r.stderr,
              "root's trace_kernel_provider does not register in another user's directory",
              'exit %s: %s' % (r.returncode, r.stderr))
        n = sq.connections()
        check(n == 0, 'the squatter received no connection from trace_kernel_provider (%d)' % n)
    finally:
        sq.stop()


def foreign_manager_refused(setup):
    """FXTRACE_SOCKET names a real trace_manager that the attacker runs (and
    whose socket it opened to everybody): the victim's clients refuse it."""
    shared = tempfile.mkdtemp(dir=setup.top)
    os.chmod(shared, 0o1777)
    sock = os.path.join(shared, 'manager.sock')
    attacker_env = setup.env(FXTRACE_SOCKET=sock)
    manager = subprocess.Popen([setup.tool('trace_manager')], env=attacker_env,
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                               **setup.as_user('attacker'))
    try:
        deadline = time.monotonic() + 30
        while not os.path.exists(sock) and time.monotonic() < deadline:
            time.sleep(0.02)
        r = setup.run_as('attacker', ['chmod', '0666', sock])
        check(r.returncode == 0, "the attacker's manager listens, open to everybody", r.stderr)
        env = setup.env(FXTRACE_SOCKET=sock)
        attacker = setup.users.by_role['attacker']
        out = os.path.join(setup.home['victim'], 'refused.fxt')
        r = setup.run_as('victim', [setup.tool('trace'), 'record', '--duration=1', '-o', out], env)
        check(r.returncode not in (0, 'timeout') and 'refusing the trace manager' in r.stderr and
              attacker in r.stderr,
              "trace record refuses another user's manager named in FXTRACE_SOCKET",
              'exit %s: %s' % (r.returncode, r.stderr))
        check(not os.path.exists(out) or os.path.getsize(out) == 0,
              'nothing of the foreign manager was written as the archive')
        r = setup.run_as('victim', [setup.tool('trace'), 'list-providers'], env, timeout=30)
        check(r.returncode == 1 and 'refusing the trace manager' in r.stderr,
              "trace list-providers refuses another user's manager",
              'exit %s: %s' % (r.returncode, r.stderr))
        r = setup.run_as('victim', [setup.tool('fxtrace-demo')], env)
        check(r.returncode == 0 and r.stderr.count('not tracing') == 1 and attacker in r.stderr,
              "a traced program refuses another user's manager, once",
              'exit %s: %s' % (r.returncode, r.stderr))
        r = subprocess.run([setup.tool('trace'), 'list-providers'], env=env, capture_output=True,
                           text=True, timeout=30)
        check(r.returncode == 1 and 'refusing the trace manager' in r.stderr,
              "root refuses a non-root user's manager too", r.stderr)
    finally:
        manager.terminate()
        manager.wait(timeout=30)


def main():
    build, demo = sys.argv[1], sys.argv[2]
    if os.geteuid() != 0:
        skip('needs root to create throwaway users')
    for tool in ('useradd', 'userdel', SYSTEM_PYTHON):
        if not shutil.which(tool):
            skip('%s is not installed' % tool)
    top = tempfile.mkdtemp(prefix='fxtrace-security-')
    os.chmod(top, 0o755)
    try:
        with Users() as users:
            setup = Setup(build, demo, users, top)
            squatted_default(setup, '0777')
            squatted_default(setup, '0700')
            squatted_default(setup, 'symlink')
            kernel_provider_not_lured(setup)
            foreign_manager_refused(setup)
    finally:
        shutil.rmtree(top, ignore_errors=True)
    if failures:
        print('%d failed' % len(failures))
        sys.exit(1)
    print('all passed')


if __name__ == '__main__':
    main()
