#!/usr/bin/env python3
"""`trace record --host` (issue 23, second part; docs/multi-host.md).

Two hosts simulated on this machine, each a PID + mount + time namespace (unshare --fork
--kill-child --pid --mount-proc --time --monotonic=OFFSET, offsets 15000 s apart) with its own
trace_manager on its own FXTRACE_SOCKET and a traced program (tests/tools/fifo_peer); COMMAND
is an nsenter prefix into the host. The program on alpha sends N messages through a FIFO to the
one on beta. One `trace record --no-local --host alpha=... --host beta=...` records both; in the
merged archive:
  * each recv comes after its send (to within the reported clock uncertainties) and no later
    than those uncertainties plus a generous delivery bound: the clocks were aligned by the
    round trips alone (time namespaces shift CLOCK_MONOTONIC, so the raw clocks are 15000 s
    apart);
  * the offsets reported (summary, the archive's fxtrace:clock "host" records) are the
    namespaces' offsets to within their uncertainty;
  * the two programs stay two processes though their pids collide, named after their hosts;
    the flows link them; the archive passes tests/tools/fxt_decode.py.
Then: an unreachable host is reported by name with its last error line while the others are
merged (exit 1); a host that drops out mid-trace is reported and the others merged (exit 1);
usage errors.

Skips with a reason when not root or when unshare cannot make time namespaces.

Usage: test_remote.py TRACE TRACE_MANAGER FIFO_PEER FXT_DECODE
"""

import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', 'tools'))
from fxtest import check, status  # noqa: E402
import conversation  # noqa: E402
from conversation import check_merged, check_providers, namespaces_usable  # noqa: E402

TRACE, MANAGER, PEER, DECODE = [os.path.abspath(a) for a in sys.argv[1:5]]
TMP = tempfile.mkdtemp(prefix='fxtrace-remote-')
N = 20
OFFSETS = {'alpha': 5000, 'beta': 20000}


def run(args, timeout=180, **kw):
    return conversation.run(args, timeout=timeout, **kw)


def path(name):
    return os.path.join(TMP, name)


class Host:
    """A simulated host: a namespace holder (sleep), its trace_manager, its socket."""

    def __init__(self, name, offset):
        self.name = name
        self.socket = path(name + '.sock')
        self.manager = self.holder = None
        self.holder = subprocess.Popen(
            ['unshare', '--fork', '--kill-child', '--pid', '--mount-proc', '--time',
             '--monotonic=%d' % offset, 'sleep', '1000'])
        self.pid = None
        deadline = time.time() + 30
        while time.time() < deadline and not self.pid:
            try:
                with open('/proc/%d/task/%d/children' % (self.holder.pid, self.holder.pid)) as f:
                    kids = f.read().split()
                self.pid = int(kids[0]) if kids else None
            except OSError:
                pass
            time.sleep(0.02)
        if not self.pid:
            raise RuntimeError('host %s: no process in the namespace' % name)
        self.prefix = ['nsenter', '-t', str(self.pid), '-p', '-m', '-T', 'env',
                       'FXTRACE_SOCKET=' + self.socket]
        self.manager = subprocess.Popen(self.prefix + [MANAGER, '--log-level', 'warn'],
                                        stderr=subprocess.PIPE)
        while time.time() < deadline and not os.path.exists(self.socket):
            time.sleep(0.02)
        if not os.path.exists(self.socket):
            raise RuntimeError('host %s: trace_manager did not start' % name)

    def command(self):
        return ' '.join(self.prefix)

    def last_pid(self):
        """Runs a process in the namespace; returns its pid there (the last one allocated)."""
        p = run(self.prefix + ['sh', '-c', 'echo $$'])
        return int(p.stdout.decode().strip() or 0)

    def start(self, args):
        return subprocess.Popen(self.prefix + args, stderr=subprocess.PIPE)

    def close(self):
        # the manager first (SIGTERM: it ends in order), then the namespace: unshare
        # ignores SIGTERM while it waits; SIGKILL, and --kill-child ends what it holds
        if self.manager and self.manager.poll() is None:
            self.manager.send_signal(signal.SIGTERM)
            try:
                self.manager.wait(timeout=5)
            except subprocess.TimeoutExpired:
                self.manager.kill()
                self.manager.wait()
        if self.holder and self.holder.poll() is None:
            self.holder.kill()
            self.holder.wait()


def to_json(fxt):
    return conversation.to_json(TRACE, fxt)


def wait_files_command(*files):
    # the local command after --: its exit ends the recording
    return [sys.executable, '-c',
            'import os,sys,time\n'
            'd=time.time()+120\n'
            'while time.time()<d and not all(os.path.exists(f) for f in sys.argv[1:]):\n'
            '  time.sleep(0.05)\n'] + list(files)


def clock_records(ev):
    return {e['args']['host']: e['args'] for e in ev
            if e.get('cat') == 'fxtrace:clock' and e.get('name') == 'host'}


def ns_pid(nsenter):
    """The pid, in its namespace, of what the nsenter process `nsenter` runs (its child)."""
    deadline = time.time() + 30
    while time.time() < deadline:
        try:
            with open('/proc/%d/task/%d/children' % (nsenter.pid, nsenter.pid)) as f:
                kids = f.read().split()
            if kids:
                with open('/proc/%s/status' % kids[0]) as f:
                    for line in f:
                        if line.startswith('NSpid:'):
                            return int(line.split()[-1])
        except OSError:
            pass
        time.sleep(0.02)
    return 0


def test_conversation(hosts):
    fifo = path('fifo')
    os.mkfifo(fifo)
    done_a, done_b = path('alpha.done'), path('beta.done')
    # colliding pids: namespaces allocate pids in sequence. Both are brought to the same last
    # pid (short processes in the one behind); the sender starts and its pid in alpha is
    # read; beta is brought to the pid before it, so the receiver gets the same pid
    last = {h: hosts[h].last_pid() for h in ('alpha', 'beta')}
    for h in ('alpha', 'beta'):
        while 0 < last[h] < max(last.values()):
            last[h] = hosts[h].last_pid()
    send = hosts['alpha'].start([PEER, 'send', fifo, str(N), done_a])
    target = ns_pid(send)
    last = last['beta']
    while 0 < last < target - 1:
        last = hosts['beta'].last_pid()
    check(last == target - 1, 'beta\'s last pid %d, the sender\'s %d' % (last, target))
    recv = hosts['beta'].start([PEER, 'recv', fifo, str(N), done_b])
    out = path('hosts.fxt')
    p = run([TRACE, 'record', '--no-local', '--categories=merge',
             '--host', 'alpha=' + hosts['alpha'].command(),
             '--host', 'beta=' + hosts['beta'].command(),
             '--remote-trace=' + TRACE, '-o', out, '--'] + wait_files_command(done_a, done_b))
    err = p.stderr.decode()
    check(p.returncode == 0, 'record --host: exit %d: %s' % (p.returncode, err))
    for peer, what in ((send, 'sender'), (recv, 'receiver')):
        try:
            _, perr = peer.communicate(timeout=60)
            check(peer.returncode == 0, '%s: exit %d: %s' % (what, peer.returncode, perr.decode()))
        except subprocess.TimeoutExpired:
            peer.kill()
            check(False, '%s did not end' % what)
    if not os.path.exists(out):
        return None
    for host in ('alpha', 'beta'):
        check(re.search(r'  %s: clock offset [+-]\d' % host, err) is not None,
              'record: no clock line for %s: %s' % (host, err))

    p = run([sys.executable, DECODE, out])
    check(p.returncode == 0 and b'verdict: CONFORMS' in p.stdout,
          'fxt_decode: %s' % (p.stdout.decode()[-300:] + p.stderr.decode()[-300:]))

    ev = to_json(out)
    clocks = clock_records(ev)
    check(set(clocks) == {'alpha', 'beta'}, 'clock records: %s' % clocks)
    unc_us = 0
    for host, args in clocks.items():
        # this test's clock is CLOCK_MONOTONIC outside any namespace: the offsets are the
        # namespaces' to within the uncertainty (and the clock's reading, a few us)
        want = OFFSETS[host] * 1e9
        u = args['uncertainty_ns']
        check(abs(args['offset_ns'] - want) <= u + 1e6,
              '%s: offset %d ns, want %d +- %d' % (host, args['offset_ns'], want, u))
        check(0 < u < 1e9, '%s: uncertainty %d ns' % (host, u))
        # the rate is applied only when significant (docs/multi-host.md#clocks); the record
        # says which, and drift_ppb is 0 unless applied
        rule = ('end_offset_ns' in args and
                args['end_offset_ns'] != args['offset_ns'] and
                abs(args['end_offset_ns'] - args['offset_ns']) >
                u + args['end_uncertainty_ns'] and
                abs(args['measured_ppb']) <= 500000)
        check(('rate_applied' in args) == ('end_offset_ns' in args),
              '%s: rate_applied present: %s' % (host, args))
        if 'rate_applied' in args:
            check(args['rate_applied'] or args['drift_ppb'] == 0,
                  '%s: a rate not applied but drift_ppb %s' % (host, args['drift_ppb']))
            check(not args['rate_applied'] or rule,
                  '%s: a rate applied that is not significant: %s' % (host, args))
        unc_us += u / 1000.0
    print('clock uncertainty: %s' % {h: a['uncertainty_ns'] for h, a in clocks.items()})
    # the clock records are on the reserved koid 0, not the recorder's pid (with --no-local,
    # that could be a far process's)
    for e in ev:
        if e.get('cat') == 'fxtrace:clock' and e.get('name') == 'host':
            check(e.get('pid') == 0 and e.get('tid') == 0,
                  'clock record on pid %s tid %s' % (e.get('pid'), e.get('tid')))

    sends, recvs = check_merged(ev, N, unc_us)
    if sends and recvs:
        # the acceptance's colliding pids, arranged above: both peers have the same pid on
        # their hosts, and only the hosts' koid bases (i x 2^22) part them
        low = (1 << 22) - 1
        check(sends[0]['pid'] & low == recvs[0]['pid'] & low and sends[0]['pid'] & low > 0,
              'merged: the peers\' pids did not collide on their hosts: %d and %d'
              % (sends[0]['pid'], recvs[0]['pid']))
    d = run([TRACE, 'dump', out]).stdout.decode()
    # the peers' names at their stops (src/engine/stop_names.h): `name_at` is a time on
    # the host's clock, mapped onto the timeline as the timestamps are (within minutes of the
    # last message, not the namespaces' thousands of seconds away)
    name_at = [int(v) / 1000.0 for v in re.findall(r'"name_at"=uint64:(\d+)', d)]
    check(len(name_at) >= 2, 'merged: %d names at a stop' % len(name_at))
    if sends and recvs:
        first = min(e['ts'] for e in sends.values())
        last = max(e['ts'] for e in recvs.values())
        for t in name_at:
            check(first - unc_us <= t <= last + 600e6,
                  'merged: name_at %.0f us off the timeline [%.0f, %.0f]' % (t, first, last))
    check_providers(d)
    s = run([TRACE, 'summary', out])
    text = s.stdout.decode()
    check(s.returncode == 0, 'summary: exit %d: %s' % (s.returncode, s.stderr.decode()))
    for host in ('alpha', 'beta'):
        check(re.search(r'^\s*%s\s+[+-]\d+\.\d+ s\s+\+-' % host, text, re.M) is not None,
              'summary: no clock line for %s:\n%s' % (host, text[:1500]))
    s = run([TRACE, 'summary', '--format=json', out])
    check(s.returncode == 0, 'summary json: exit %d' % s.returncode)
    if s.returncode == 0:
        got = {h['name']: h for h in json.loads(s.stdout).get('hosts', [])}
        check(set(got) == {'alpha', 'beta'}, 'summary json: hosts %s' % sorted(got))
        for host, h in got.items():
            check(set(h) == {'name', 'offset_ns', 'uncertainty_ns', 'drift_ppb', 'rate_applied'} and
                  h['rate_applied'] == clocks.get(host, {}).get('rate_applied') and
                  h['offset_ns'] == clocks.get(host, {}).get('offset_ns') and
                  h['uncertainty_ns'] == clocks.get(host, {}).get('uncertainty_ns'),
                  'summary json: %s: %s, archive %s' % (host, h, clocks.get(host)))
    return out


def test_unreachable(hosts):
    out = path('unreachable.fxt')
    gone = 'sh -c "echo ssh: connect to host gamma port 22: Connection refused >&2; exit 255"'
    p = run([TRACE, 'record', '--no-local', '--categories=merge', '--duration=1',
             '--host', 'alpha=' + hosts['alpha'].command(), '--host', 'gamma=' + gone,
             '--remote-trace=' + TRACE, '-o', out])
    err = p.stderr.decode()
    check(p.returncode == 1, 'unreachable: exit %d: %s' % (p.returncode, err))
    check(re.search(r'host gamma: .*Connection refused', err) is not None,
          'unreachable: gamma not reported with its last error: %s' % err)
    check(os.path.exists(out), 'unreachable: no archive of the other hosts')
    if os.path.exists(out):
        d = run([TRACE, 'dump', out]).stdout.decode()
        check('name="alpha: fxtrace"' in d, 'unreachable: alpha not merged')
        check('gamma' not in d or 'name="gamma:' not in d, 'unreachable: gamma in the archive')
    # no host at all reachable: exit 1, nothing written
    out2 = path('none.fxt')
    p = run([TRACE, 'record', '--no-local', '--duration=1', '--host', 'gamma=' + gone,
             '--remote-trace=' + TRACE, '-o', out2])
    check(p.returncode == 1 and b'gamma' in p.stderr and not os.path.exists(out2),
          'none reachable: exit %d: %s' % (p.returncode, p.stderr.decode()))
    # a remote trace that is not there
    p = run([TRACE, 'record', '--no-local', '--duration=1',
             '--host', 'alpha=' + hosts['alpha'].command(),
             '--remote-trace=/nonexistent/trace', '-o', path('missing.fxt')])
    check(p.returncode == 1 and re.search(rb'host alpha: .*nonexistent', p.stderr) is not None,
          'missing remote trace: exit %d: %s' % (p.returncode, p.stderr.decode()))


def test_drop_out(hosts):
    # beta's channel is killed (its whole process group: nsenter and what runs in the
    # namespace) by the local command, which runs once every host has started tracing: a
    # host dropping out mid-trace, whatever the machine's load. In streaming mode beta's
    # archive begins before the stop (its first records); beta's channel goes through `tee`,
    # which writes to the channel before the copy the killer waits for, so those bytes are in
    # the channel's pipe before the kill, whatever the load, and must be kept.
    out = path('drop.fxt')
    pidfile, copy = path('beta.pid'), path('beta.channel')
    wrapped = ('sh -c \'echo $$ > %s; "$0" "$@" | tee %s\' %s'
               % (pidfile, copy, hosts['beta'].command()))
    magic = '0x0016547846040010'  # the FXT magic record, little-endian in the channel
    killer = [sys.executable, '-c',
              'import os,signal,struct,sys,time\n'
              'magic=struct.pack("<Q",int(sys.argv[3],16))\n'
              'd=time.time()+120\n'
              'while time.time()<d:\n'
              '  try:\n'
              '    if magic in open(sys.argv[2],"rb").read(): break\n'
              '  except OSError: pass\n'
              '  time.sleep(0.02)\n'
              'os.killpg(int(open(sys.argv[1]).read()), signal.SIGKILL)\n'
              'time.sleep(1)\n', pidfile, copy, magic]
    p = run([TRACE, 'record', '--no-local', '--buffering-mode=streaming',
             '--host', 'alpha=' + hosts['alpha'].command(), '--host', 'beta=' + wrapped,
             '--remote-trace=' + TRACE, '-o', out, '--'] + killer)
    err = p.stderr.decode()
    check(p.returncode == 1, 'drop out: exit %d: %s' % (p.returncode, err))
    check(re.search(r'host beta dropped out during the trace: .*\(the [1-9][0-9.]* [KM]?i?B it '
                    r'sent are merged\)', err) is not None,
          'drop out: not reported, or nothing it sent kept: %s' % err)
    check(os.path.exists(out), 'drop out: no archive')
    if os.path.exists(out):
        d = run([TRACE, 'dump', out]).stdout.decode()
        check('name="alpha: fxtrace"' in d, 'drop out: alpha not merged: %s' % err)
        # what beta sent before it was killed (its archive's first records) is in the output
        check('name="beta: fxtrace"' in d, 'drop out: beta\'s data not kept: %s' % err)


def test_usage():
    for args, what in ((['--host', 'nocommand'], 'no ='),
                       (['--host', '=ssh x'], 'no name'),
                       (['--no-local'], '--no-local alone'),
                       (['--host', 'a=true', '--format=json'], 'json'),
                       (['--host', 'a=true', '--trigger=x:stop'], 'trigger'),
                       (['--host', 'a=env', '--host', 'a=env'], 'one name twice'),
                       (['--host', 'n' * 256 + '=env'], 'NAME of 256 bytes')):
        p = run([TRACE, 'record'] + args + ['-o', path('usage.fxt')])
        check(p.returncode == 2, 'usage %s: exit %d: %s' % (what, p.returncode,
                                                           p.stderr.decode()))
    p = run([TRACE, 'record', '--host', 'a=ssh "x', '--no-local', '-o', path('usage.fxt')])
    check(p.returncode == 1 and b'unterminated' in p.stderr,
          'bad COMMAND: exit %d: %s' % (p.returncode, p.stderr.decode()))


def test_long_name():
    """A NAME of 255 bytes (the most) goes whole into the archive's clock record and its
    processes' names (the clock records' buffer overflowed with a longer one: a crash)."""
    name = 'h' * 255
    out = path('long-name.fxt')
    p = run([TRACE, 'record', '--no-local', '--categories=merge', '--duration=1',
             '--host', name + '=env FXTRACE_SOCKET=' + path('long-name.sock'),
             '--remote-trace=' + TRACE, '-o', out])
    err = p.stderr.decode()
    check(p.returncode == 0, 'long name: exit %d: %s' % (p.returncode, err[-2000:]))
    if p.returncode == 0:
        clocks = clock_records(to_json(out))
        check(list(clocks) == [name], 'long name: clock records of %s' % [h[:20] for h in clocks])


# A far end that speaks the protocol (remote.h) but whose clock lies: HELLO, then each
# CLOCK answered with the far time given as argv[1]; it ignores the trace words after it.
LIAR = r'''
import struct, sys
far = int(sys.argv[1])
out, inp = sys.stdout.buffer, sys.stdin.buffer
def frame(t, payload):
    out.write(struct.pack('<II', t, len(payload)) + payload)
    out.flush()
frame(1, b'fxtrace-remote\0' + struct.pack('<I', 1) + b'liar\0')
while True:
    head = inp.read(8)
    if len(head) < 8:
        break
    t, n = struct.unpack('<II', head)
    payload = inp.read(n)
    if t == 2:
        frame(3, payload[:8] + struct.pack('<Q', far))
    else:
        break
'''


def test_lying_clock():
    """A far clock reading 0, or past INT64_MAX ns, is refused by name (exit 1); the honest
    host is still merged (its clock offset was once clamped to 0 silently)."""
    liar = path('liar.py')
    with open(liar, 'w') as f:
        f.write(LIAR)
    for far in (0, 2 ** 64 - 1):
        out = path('liar.fxt')
        p = run([TRACE, 'record', '--no-local', '--categories=merge', '--duration=1',
                 '--host', 'good=env FXTRACE_SOCKET=' + path('liar-good.sock'),
                 '--host', 'liar=%s %s %d' % (sys.executable, liar, far),
                 '--remote-trace=' + TRACE, '-o', out])
        err = p.stderr.decode()
        check(p.returncode == 1, 'lying clock %d: exit %d: %s' % (far, p.returncode, err[-2000:]))
        check(re.search(r'host liar: its clock exchange is implausible \(its clock read %d ns\)'
                        % far, err) is not None, 'lying clock %d: not refused: %s' % (far, err))
        if os.path.exists(out):
            clocks = clock_records(to_json(out))
            check(list(clocks) == ['good'], 'lying clock %d: clock records of %s'
                  % (far, list(clocks)))
        else:
            check(False, 'lying clock %d: no archive' % far)


def test_far_stderr_escaped():
    """The far end's standard error is echoed and quoted with its control bytes escaped (as
    archive text is), never raw: an escape sequence could retitle or redraw the terminal."""
    out = path('noisy.fxt')
    noisy = 'sh -c "printf \'ssh: \\033]0;pwned\\007\\033[31mrefused\\n\' >&2; exit 255"'
    p = run([TRACE, 'record', '--no-local', '--categories=merge', '--duration=1',
             '--host', 'good=env FXTRACE_SOCKET=' + path('noisy-good.sock'),
             '--host', 'noisy=' + noisy, '--remote-trace=' + TRACE, '-o', out])
    err = p.stderr.decode()
    check(p.returncode == 1, 'noisy: exit %d: %s' % (p.returncode, err[-2000:]))
    check('\x1b' not in err and '\x07' not in err, 'noisy: raw control bytes: %r' % err)
    check(err.count(r'ssh: \x1b]0;pwned\x07\x1b[31mrefused') >= 2,
          'noisy: the escaped line is not echoed and quoted: %r' % err)


def fxt_string(text):
    b = text.encode()
    return b + b'\0' * (-len(b) % 8)


def fxt_host_clock(provider, host, ts):
    """A provider-info record and an fxtrace:clock "host" instant (docs/multi-host.md
    #metadata) on provider `provider`, written here by FXT.md's layout."""
    import struct
    name = b'fxtrace'
    info = struct.pack('<Q', 0 | (1 + 1) << 4 | 1 << 16 | provider << 20 | len(name) << 52)
    info += fxt_string('fxtrace')
    init = struct.pack('<QQ', 1 | 2 << 4, 1000000000)
    args = b''
    nargs = 0
    for key, kind, value in (('host', 6, host), ('offset_ns', 3, 5), ('uncertainty_ns', 4, 7),
                             ('drift_ppb', 3, 0)):
        k = fxt_string(key)
        ref = 0x8000 | len(key.encode())
        if kind == 6:
            v = fxt_string(value)
            body = k + v
            head = 6 | (1 + len(body) // 8) << 4 | ref << 16 | (0x8000 | len(value.encode())) << 32
        else:
            body = k + struct.pack('<q' if kind == 3 else '<Q', value)
            head = kind | (1 + len(body) // 8) << 4 | ref << 16
        args += struct.pack('<Q', head) + body
        nargs += 1
    cat, nm = fxt_string('fxtrace:clock'), fxt_string('host')
    body = struct.pack('<QQQ', ts, 0, 0) + cat + nm + args
    head = (4 | (1 + len(body) // 8) << 4 | 0 << 16 | nargs << 20 | 0 << 24 |
            (0x8000 | len('fxtrace:clock')) << 32 | (0x8000 | len('host')) << 48)
    return info + init + struct.pack('<Q', head) + body


def test_summary_hosts():
    """trace summary lists at most 64 hosts and counts the rest ("and N more", hosts_omitted);
    it reads host records only from the reserved provider 0xffffffff: no other can add one."""
    import struct
    out = path('many-hosts.fxt')
    with open(out, 'wb') as f:
        f.write(struct.pack('<Q', 0x0016547846040010))
        f.write(fxt_host_clock(7, 'forged', 500))  # first: not kept out by the limit
        for i in range(66):
            f.write(fxt_host_clock(0xffffffff, 'h%02d' % i, 1000 + i))
    p = run([TRACE, 'summary', '--format=json', out])
    check(p.returncode == 0, 'many hosts: exit %d: %s' % (p.returncode, p.stderr.decode()))
    if p.returncode == 0:
        got = json.loads(p.stdout)
        names = [h['name'] for h in got.get('hosts', [])]
        check(names == ['h%02d' % i for i in range(64)], 'many hosts: listed %s' % names)
        check(got.get('hosts_omitted') == 2, 'many hosts: omitted %s' % got.get('hosts_omitted'))
    p = run([TRACE, 'summary', out])
    text = p.stdout.decode()
    check(p.returncode == 0 and 'Hosts (64 listed and 2 more' in text and 'forged' not in text,
          'many hosts: text %s' % text[:800])


def timed(f, *args):
    t = time.time()
    r = f(*args)
    print('%s: %.1f s' % (f.__name__, time.time() - t))
    return r


try:
    timed(test_usage)
    timed(test_long_name)
    timed(test_lying_clock)
    timed(test_far_stderr_escaped)
    timed(test_summary_hosts)
    why_not = namespaces_usable(('unshare', 'nsenter'))
    if why_not:
        print('SKIP (namespaces): %s: the simulated hosts need PID, mount and time namespaces'
              % why_not)
    else:
        hosts = {}
        try:
            for name, offset in OFFSETS.items():
                hosts[name] = Host.__new__(Host)
                hosts[name].__init__(name, offset)
            timed(test_conversation, hosts)
            timed(test_unreachable, hosts)
            timed(test_drop_out, hosts)
        finally:
            for h in hosts.values():
                h.close()
finally:
    shutil.rmtree(TMP, ignore_errors=True)
sys.exit(status())
