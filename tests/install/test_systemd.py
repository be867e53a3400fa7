#!/usr/bin/env python3
"""The systemd units as `cmake --install` installs them, and socket activation with real processes.

1. `systemd-analyze verify` accepts the installed trace_manager.socket and trace_manager.service
   (written for the install's prefix, so ExecStart names the installed trace_manager; MANPATH at
   its man pages so that the Documentation= pages are found), with nothing on stderr; the socket unit listens on /run/fxtrace/manager.sock as a
   SOCK_SEQPACKET socket, the service reads TRACE_MANAGER_OPTIONS. With KERNEL=1 (the kernel
   provider is built) trace_kernel_provider.service too: it starts the installed
   trace_kernel_provider as root, with FXTRACE_SOCKET=/run/fxtrace/manager.sock, after and
   requiring trace_manager.socket; with KERNEL=0 it is not installed.
2. The installed trace_manager started the way systemd starts it: a listening socket on fd 3,
   LISTEN_FDS=1, LISTEN_PID=its pid — by systemd-socket-activate (systemd's own tool: the manager
   is started at the first connection) and by hand here. A client lists providers and records the
   demo through it; SIGTERM ends it with status 0 and the socket file (the activator's) stays.
3. Wrong activation: two sockets, a stream socket, malformed variables fail clearly; LISTEN_PID of
   another process is ignored (the manager binds its own socket).

Usage: test_systemd.py BUILD_DIR DEMO verify|activation KERNEL  (two ctest tests; verify exits
77, skipped, when systemd-analyze is missing; KERNEL is 1 when trace_kernel_provider is built)
"""

import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time

BUILD, DEMO, PART, KERNEL = sys.argv[1:5]
KERNEL = KERNEL == '1'
TMP = tempfile.mkdtemp(prefix='fxtrace-systemd-')
PREFIX = os.path.join(TMP, 'prefix')
FAILURES = []


def check(cond, msg):
    if not cond:
        FAILURES.append(msg)
        print('FAIL: ' + msg)


def path(name):
    return os.path.join(TMP, name)


TRACE = os.path.join(PREFIX, 'bin', 'trace')
MANAGER = os.path.join(PREFIX, 'bin', 'trace_manager')
UNITS = os.path.join(PREFIX, 'lib', 'systemd', 'system')
KPROVIDER = os.path.join(PREFIX, 'bin', 'trace_kernel_provider')
KUNIT = os.path.join(UNITS, 'trace_kernel_provider.service')


def client_env(sock):
    env = dict(os.environ)
    for k in ('FXTRACE_OUTPUT', 'XDG_RUNTIME_DIR', 'LISTEN_PID', 'LISTEN_FDS'):
        env.pop(k, None)
    env['FXTRACE_SOCKET'] = sock
    return env


def test_verify():
    socket_unit = open(os.path.join(UNITS, 'trace_manager.socket')).read()
    service = open(os.path.join(UNITS, 'trace_manager.service')).read()
    # written at install time for the install's prefix
    check('ExecStart=%s $TRACE_MANAGER_OPTIONS' % MANAGER in service,
          'the service does not start the installed trace_manager with TRACE_MANAGER_OPTIONS: %s'
          % service)
    check('EnvironmentFile=-%s/etc/default/trace_manager' % PREFIX in service,
          'the service has no optional EnvironmentFile under the prefix: %s' % service)
    check('ListenSequentialPacket=/run/fxtrace/manager.sock' in socket_unit,
          'the socket unit does not listen on /run/fxtrace/manager.sock: %s' % socket_unit)
    units = ['./trace_manager.socket', './trace_manager.service']
    if KERNEL:
        kunit = open(KUNIT).read().splitlines()
        for line in ('ExecStart=%s' % KPROVIDER, 'User=root',
                     'Environment=FXTRACE_SOCKET=/run/fxtrace/manager.sock',
                     'Requires=trace_manager.socket',
                     'After=trace_manager.socket trace_manager.service',
                     'PartOf=trace_manager.service', 'Restart=on-failure',
                     'WantedBy=multi-user.target'):
            check(line in kunit, 'trace_kernel_provider.service lacks %r: %s' % (line, kunit))
        units.append('./trace_kernel_provider.service')
    else:
        check(not os.path.exists(KUNIT),
              'trace_kernel_provider.service is installed without the program')
    env = dict(os.environ, MANPATH=os.path.join(PREFIX, 'share', 'man'))
    p = subprocess.run(['systemd-analyze', 'verify'] + units, cwd=UNITS, env=env,
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=60)
    out = (p.stdout + p.stderr).decode('utf-8', 'replace')
    check(p.returncode == 0 and out.strip() == '',
          'systemd-analyze verify: exit %d: %s' % (p.returncode, out))


def wait_for(cond, timeout=10):
    end = time.time() + timeout
    while time.time() < end:
        if cond():
            return True
        time.sleep(0.05)
    return cond()


def exercise(sock, what):
    """A client lists the providers and records the demo through the manager at sock."""
    env = client_env(sock)
    p = subprocess.run([TRACE, 'list-providers'], env=env, stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, timeout=60)
    check(p.returncode == 0 and b'NAME' in p.stdout,
          '%s: list-providers: exit %d %r %r' % (what, p.returncode, p.stdout, p.stderr))
    out = path('%s.fxt' % what.replace(' ', '-'))
    p = subprocess.run([TRACE, 'record', '-o', out, '--', DEMO, '50'], env=env,
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=120)
    err = p.stderr.decode('utf-8', 'replace')
    check(p.returncode == 0 and 'demo' in err and 'terminated' in err,
          '%s: record: exit %d: %s' % (what, p.returncode, err[-500:]))
    p = subprocess.run([TRACE, 'summary', '--format=json', out], stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, timeout=60)
    check(p.returncode == 0 and b'"name":"demo"' in p.stdout,
          '%s: summary of the recording: %d %r' % (what, p.returncode, p.stderr))


def stop(proc, what):
    proc.send_signal(signal.SIGTERM)
    try:
        rc = proc.wait(timeout=30)
    except subprocess.TimeoutExpired:
        proc.kill()
        rc = proc.wait()
    log = proc.stderr.read().decode('utf-8', 'replace') if proc.stderr else ''
    check(rc == 0, '%s: the manager exited with %d: %s' % (what, rc, log[-500:]))
    return log


def test_systemd_socket_activate():
    tool = shutil.which('systemd-socket-activate')
    if not tool:
        print('note: systemd-socket-activate is missing; tested with LISTEN_FDS set here only')
        return
    sock = path('activate.sock')
    proc = subprocess.Popen([tool, '--seqpacket', '-l', sock, MANAGER, '--log-level', 'debug'],
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                            env=client_env('/nonexistent/should-not-be-used.sock'))
    check(wait_for(lambda: os.path.exists(sock)), 'systemd-socket-activate did not listen')
    exercise(sock, 'systemd-socket-activate')
    log = stop(proc, 'systemd-socket-activate')
    check('socket passed by the service manager' in log and 'listening on %s' % sock in log,
          'systemd-socket-activate: the manager did not take the passed socket: %s' % log[-800:])
    check(os.path.exists(sock), 'the manager removed the socket file it was passed')


def spawn_with_fds(socks, listen_pid='self', listen_fds=None, args=()):
    """trace_manager with socks on fds 3.. and the activation variables, as systemd starts it."""
    script = 'LISTEN_PID=%s LISTEN_FDS=%s exec "$0" "$@"' % (
        '$$' if listen_pid == 'self' else listen_pid,
        len(socks) if listen_fds is None else listen_fds)
    fds = [s.fileno() for s in socks]

    def place():
        # dup everything above the targets first, so that no target is overwritten early
        high = [os.dup2(fd, 100 + i) for i, fd in enumerate(fds)]
        for i, fd in enumerate(high):
            os.dup2(fd, 3 + i)
            os.set_inheritable(3 + i, True)

    env = client_env('/nonexistent/unused.sock')
    return subprocess.Popen(['sh', '-c', script, MANAGER, '--log-level', 'debug'] + list(args),
                            preexec_fn=place, pass_fds=tuple(range(3, 3 + len(socks))),
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env)


def listening(name, kind=socket.SOCK_SEQPACKET):
    s = socket.socket(socket.AF_UNIX, kind)
    s.bind(path(name))
    s.listen(16)
    return s


def test_listen_fds_by_hand():
    s = listening('byhand.sock')
    proc = spawn_with_fds([s])
    s.close()
    exercise(path('byhand.sock'), 'LISTEN_FDS by hand')
    log = stop(proc, 'LISTEN_FDS by hand')
    check('socket passed by the service manager' in log,
          'LISTEN_FDS by hand: the manager did not take fd 3: %s' % log[-500:])
    check(os.path.exists(path('byhand.sock')), 'the manager removed the passed socket file')


def run_to_end(proc):
    try:
        rc = proc.wait(timeout=30)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()
        return None, 'did not exit'
    return rc, proc.stderr.read().decode('utf-8', 'replace')


def test_wrong_activation():
    a, b = listening('two-a.sock'), listening('two-b.sock')
    rc, err = run_to_end(spawn_with_fds([a, b]))
    check(rc == 2 and 'expected one' in err, 'two sockets: exit %s: %s' % (rc, err))
    st = listening('stream.sock', socket.SOCK_STREAM)
    rc, err = run_to_end(spawn_with_fds([st]))
    check(rc == 1 and 'SOCK_SEQPACKET' in err, 'a stream socket: exit %s: %s' % (rc, err))
    rc, err = run_to_end(spawn_with_fds([a], listen_fds='x'))
    check(rc == 2 and 'LISTEN_FDS' in err, 'LISTEN_FDS=x: exit %s: %s' % (rc, err))
    # LISTEN_PID of another process: not for us; the manager binds --socket itself
    own = path('own.sock')
    proc = spawn_with_fds([a], listen_pid='1', args=('--socket', own))
    check(wait_for(lambda: os.path.exists(own)), 'LISTEN_PID=1: the manager did not bind --socket')
    exercise(own, 'LISTEN_PID of another process')
    log = stop(proc, 'LISTEN_PID of another process')
    check('passed by the service manager' not in log, 'LISTEN_PID=1 was taken: %s' % log[-300:])
    check(not os.path.exists(own), 'the manager left its own socket file behind')
    for s in (a, b, st):
        s.close()


def main():
    if PART == 'verify' and not shutil.which('systemd-analyze'):
        print('SKIP: systemd-analyze is missing (apt-get install systemd)')
        return 77
    subprocess.run(['cmake', '--install', BUILD, '--prefix', PREFIX], check=True,
                   stdout=subprocess.DEVNULL)
    for f in (TRACE, MANAGER, os.path.join(UNITS, 'trace_manager.socket'),
              os.path.join(UNITS, 'trace_manager.service')) + ((KPROVIDER, KUNIT) if KERNEL else ()):
        check(os.path.exists(f), 'not installed: %s' % f)
    if FAILURES:
        return 1
    if PART == 'verify':
        test_verify()
    else:
        test_systemd_socket_activate()
        test_listen_fds_by_hand()
        test_wrong_activation()
    shutil.rmtree(TMP, ignore_errors=True)
    if FAILURES:
        print('%d failure(s)' % len(FAILURES))
        return 1
    print('systemd units and socket activation: ok')
    return 0


if __name__ == '__main__':
    sys.exit(main())
