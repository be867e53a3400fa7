#!/usr/bin/env python3
"""Issue 24's acceptance, through the trace_manager daemon with one real traced program
(session_program: libtrace-provider on the real engine, writing into every session that
enables its category) and real clients (wire.py controllers, `trace record`, `trace stop`):

- a long circular session and a short oneshot one overlapping on the same category: both
  archives complete; the long one has every event, no hole where the short one started or
  stopped; the short one is one unbroken run inside it; a third session on another category
  gets none of those events; the accounting is exact for each (events in the archive plus
  records dropped = events emitted while it ran);
- four sessions at once (four `trace record`s) and a fifth refused, naming the limit; each
  stopped by `trace stop`, each archive complete;
- a provider registering while two sessions run joins both;
- as root, with two throwaway users: another user's session neither sees that user's
  program's events nor can stop the session.

usage: test_sessions_acceptance.py TRACE_MANAGER FAKE_PROVIDER TRACE TOOLS_DIR DEMO
                                   SESSION_PROGRAM [TEST...]"""

import os
import shutil
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
PROGRAM = os.path.abspath(sys.argv[6])
ONLY = sys.argv[7:]
import test_manager as tm  # noqa: E402
import test_sessions as ts  # noqa: E402
from test_manager import CIRCULAR, ONESHOT, Checked, Manager, begin, check  # noqa: E402

NAME = 'session_program'


class Program:
    """session_program, registered with the manager before this returns."""

    def __init__(self, manager, user=None, cwd=None):
        env = dict(os.environ, FXTRACE_SOCKET=manager.path)
        env.pop('FXTRACE_OUTPUT', None)
        extra = {}
        if user:
            uid, gid, groups = user
            extra = dict(user=uid, group=gid, extra_groups=groups)
        self.proc = subprocess.Popen([PROGRAM], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     text=True, env=env, cwd=cwd, **extra)
        tm.PROCESSES.append(self.proc)
        line = self.proc.stdout.readline()
        check(line.startswith('ready '), 'session_program: %r' % line)
        self.pid = int(line.split()[1])
        c = manager.controller()
        deadline = time.time() + 20
        while not any(pid == self.pid for _, pid, _ in c.providers()):
            check(time.time() < deadline, 'session_program did not register')
            time.sleep(0.02)
        c.close()

    def emit(self, k):
        self.proc.stdin.write('emit %d\n' % k)
        self.proc.stdin.flush()
        line = self.proc.stdout.readline()
        check(line.startswith('emitted '), 'session_program: %r' % line)
        return int(line.split()[1])

    def quit(self):
        self.proc.stdin.write('quit\n')
        self.proc.stdin.flush()
        check(self.proc.wait(timeout=30) == 0, 'session_program exit %s' % self.proc.returncode)


def values(x, category):
    """The "n" of every event of `category` from session_program, in archive order."""
    ids = [pid for pid, n in x.names.items() if n == NAME]
    out = []
    for r in x.trace.records:
        if r['provider'] in ids and r['kind'] == 'event' and r.get('ok') and \
                r.get('category') == category:
            out.append({a['name']: a['value'] for a in r['args']}[b'n'])
    return out


def stats_of(stats):
    mine = [s for s in stats if s['name'] == NAME]
    check(len(mine) == 1, 'stats: %s' % stats)
    return mine[0]


def test_long_circular_short_oneshot_and_another_category():
    m = Manager(stop_timeout_ms=ts.STOP_TIMEOUT_MS)
    prog = Program(m)
    cl, al = begin(m, mode=CIRCULAR, categories=['seq'], buffer_mb=32)
    co, ao = begin(m, mode=ONESHOT, categories=['other'], buffer_mb=32)
    check(cl.start() == 0 and co.start() == 0, 'start the long and the other')
    k1, k2, k3 = 5000, 60000, 5000
    prog.emit(k1)
    cs, as_ = begin(m, mode=ONESHOT, categories=['seq'], buffer_mb=1)
    check(cs.start() == 0, 'start the short one')
    prog.emit(k2)  # more than its 1 MiB holds: it drops, counted
    short = stats_of(cs.stop())
    cs.terminate()
    xs = Checked(as_.wait())
    total = prog.emit(k3)
    long_ = stats_of(cl.stop())
    other = stats_of(co.stop())
    cl.terminate()
    co.terminate()
    xl, xo = Checked(al.wait()), Checked(ao.wait())
    for x in (xs, xl, xo):
        x.dump_ok()
    seq_l = values(xl, b'seq')
    check(seq_l == list(range(total)) and long_['dropped'] == 0,
          'the long session: %d events (first %s, last %s), dropped %d; expected all %d in order'
          % (len(seq_l), seq_l[:1], seq_l[-1:], long_['dropped'], total))
    seq_s = values(xs, b'seq')
    check(0 < len(seq_s) < k2 and seq_s == list(range(k1, k1 + len(seq_s))),
          'the short session is not one unbroken run from %d: %d events (first %s, last %s)'
          % (k1, len(seq_s), seq_s[:1], seq_s[-1:]))
    check(len(seq_s) + short['dropped'] == k2,
          'the short session: %d events + %d dropped != %d emitted while it ran'
          % (len(seq_s), short['dropped'], k2))
    seq_o = values(xo, b'other')
    check(seq_o == list(range(total)) and other['dropped'] == 0,
          'the other-category session: %d events, dropped %d; expected %d'
          % (len(seq_o), other['dropped'], total))
    check(not values(xo, b'seq') and not values(xl, b'other') and not values(xs, b'other'),
          'a session got events of a category it did not enable')
    for c in (cl, co, cs):
        c.close()
    prog.quit()
    m.stop()


def record(env, out, *extra, **kw):
    return subprocess.Popen([tm.TRACE, 'record', '--duration', '0', '--categories', 'seq',
                             '-o', out] + list(extra), env=env, stderr=subprocess.PIPE,
                            text=True, **kw)


def wait_sessions(m, n, state='started'):
    c = m.controller()
    deadline = time.time() + 30
    while True:
        listed = c.list_sessions()
        if len(listed) == n and all(s['state'] == state and s['providers'] >= 1 for s in listed):
            c.close()
            return listed
        check(time.time() < deadline, 'sessions: %s' % listed)
        time.sleep(0.02)


def test_four_trace_records_and_a_fifth_refused():
    m = Manager(stop_timeout_ms=ts.STOP_TIMEOUT_MS)
    env = dict(os.environ, FXTRACE_SOCKET=m.path)
    env.pop('FXTRACE_OUTPUT', None)
    prog = Program(m)
    outs = [os.path.join(tm.TMP, 'four%d.fxt' % i) for i in range(4)]
    recs = [record(env, out) for out in outs]
    tm.PROCESSES.extend(recs)
    listed = wait_sessions(m, 4)
    check(sorted(s['client_pid'] for s in listed) == sorted(r.pid for r in recs),
          'the four sessions are the four records: %s' % listed)
    fifth = subprocess.run([tm.TRACE, 'record', '--duration', '1', '-o',
                            os.path.join(tm.TMP, 'five.fxt')], env=env, capture_output=True,
                           text=True, timeout=60)
    check(fifth.returncode == 1 and '4 sessions are running (the limit is 4)' in fifth.stderr,
          'the fifth trace record: %d %s' % (fifth.returncode, fifth.stderr))
    check(not os.path.exists(os.path.join(tm.TMP, 'five.fxt')), 'the fifth left its output')
    total = prog.emit(3000)
    for s in listed:
        stop = subprocess.run([tm.TRACE, 'stop', str(s['id'])], env=env, capture_output=True,
                              text=True, timeout=60)
        check(stop.returncode == 0, 'trace stop %d: %s' % (s['id'], stop.stderr))
    for rec, out in zip(recs, outs):
        _, err = rec.communicate(timeout=60)
        check(rec.returncode == 0 and 'stopped by' in err, 'trace record: %d %s'
              % (rec.returncode, err))
        with open(out, 'rb') as f:
            x = Checked(f.read())
        got = values(x, b'seq')
        check(got == list(range(total)), '%s: %d events of %d' % (out, len(got), total))
    prog.quit()
    m.stop()


def test_provider_registering_joins_two_running_sessions():
    m = Manager(stop_timeout_ms=ts.STOP_TIMEOUT_MS)
    ca, aa = begin(m, mode=CIRCULAR, categories=['seq'], buffer_mb=8)
    cb, ab = begin(m, mode=ONESHOT, categories=['seq', 'other'], buffer_mb=8)
    check(ca.start() == 0 and cb.start() == 0, 'start')
    prog = Program(m)
    # its START in each session comes right after its registration; a first batch lets the
    # program's control thread take both before the batch that must be whole in each
    first = prog.emit(1000)
    time.sleep(0.3)
    total = prog.emit(3000)
    sa, sb = stats_of(ca.stop()), stats_of(cb.stop())
    ca.terminate()
    cb.terminate()
    xa, xb = Checked(aa.wait()), Checked(ab.wait())
    for x, st, name, cats in ((xa, sa, 'a', (b'seq',)), (xb, sb, 'b', (b'seq', b'other'))):
        for cat in cats:
            got = values(x, cat)
            check(got and got == list(range(got[0], total)) and got[0] <= first and
                  st['dropped'] == 0,
                  'session %s, %s: %d events (first %s), dropped %d; expected an unbroken run '
                  'from at most %d to %d' % (name, cat, len(got), got[:1], st['dropped'], first,
                                             total - 1))
    check(not values(xa, b'other'), 'session a got category other')
    for c in (ca, cb):
        c.close()
    prog.quit()
    m.stop()


def test_other_users_session():
    if os.geteuid() != 0:
        print('test_other_users_session: SKIPPED (needs root for throwaway users)')
        return
    for tool in ('useradd', 'userdel', 'groupadd', 'groupdel'):
        if not shutil.which(tool):
            print('test_other_users_session: SKIPPED (%s is missing)' % tool)
            return
    with ts.Users() as users:
        m = Manager('--group', users.group, stop_timeout_ms=ts.STOP_TIMEOUT_MS)
        os.chmod(tm.TMP, 0o755)
        env = dict(os.environ, FXTRACE_SOCKET=m.path)
        env.pop('FXTRACE_OUTPUT', None)
        dirs, ids = [], []
        for i in range(2):
            d = os.path.join(tm.TMP, 'user%d' % i)
            os.mkdir(d)
            uid, gid, groups = users.ids(i)
            os.chown(d, uid, gid)
            dirs.append(d)
            ids.append(users.ids(i))

        def as_user(i):
            uid, gid, groups = ids[i]
            return dict(user=uid, group=gid, extra_groups=groups, cwd=dirs[i])
        prog = Program(m, user=ids[0], cwd=dirs[0])  # user a's program
        outs = [os.path.join(dirs[i], 'mine.fxt') for i in range(2)]
        recs = [record(env, outs[i], **as_user(i)) for i in range(2)]
        tm.PROCESSES.extend(recs)
        listed = wait_sessions_any(m, 2)
        by_pid = {s['client_pid']: s for s in listed}
        sa, sb = by_pid[recs[0].pid], by_pid[recs[1].pid]
        check(sa['providers'] == 1 and sb['providers'] == 0,
              "a's session has a's program, b's none: %s" % listed)
        total = prog.emit(2000)
        # b sees only b's session and cannot stop a's
        ls = subprocess.run([tm.TRACE, 'list-sessions'], env=env, capture_output=True, text=True,
                            timeout=30, **as_user(1))
        rows = [r.split()[0] for r in ls.stdout.splitlines()[1:]]
        check(ls.returncode == 0 and rows == [str(sb['id'])], "b's list-sessions: %s %s"
              % (ls.stdout, ls.stderr))
        stop = subprocess.run([tm.TRACE, 'stop', str(sa['id'])], env=env, capture_output=True,
                              text=True, timeout=30, **as_user(1))
        check(stop.returncode == 1 and 'no session %d' % sa['id'] in stop.stderr,
              "b stopping a's session: %d %s" % (stop.returncode, stop.stderr))
        c = m.controller()
        check([s['state'] for s in c.list_sessions()] == ['started', 'started'],
              "a's session still runs")
        c.close()
        for i, s in ((1, sb), (0, sa)):  # each stops their own
            stop = subprocess.run([tm.TRACE, 'stop', str(s['id'])], env=env, capture_output=True,
                                  text=True, timeout=30, **as_user(i))
            check(stop.returncode == 0, 'stopping their own: %s' % stop.stderr)
        for rec in recs:
            _, err = rec.communicate(timeout=60)
            check(rec.returncode == 0, 'trace record: %d %s' % (rec.returncode, err))
        with open(outs[0], 'rb') as f:
            xa = Checked(f.read())
        with open(outs[1], 'rb') as f:
            xb = Checked(f.read())
        check(values(xa, b'seq') == list(range(total)), "a's archive lacks a's events")
        check(not xb.has(NAME) and not values(xb, b'seq'),
              "b's archive has a's program: %s" % xb.names)
        prog.quit()
        m.stop()


def wait_sessions_any(m, n):
    c = m.controller()
    deadline = time.time() + 30
    while True:
        listed = c.list_sessions()
        if len(listed) == n and all(s['state'] == 'started' for s in listed):
            c.close()
            return listed
        check(time.time() < deadline, 'sessions: %s' % listed)
        time.sleep(0.02)


TESTS = [v for k, v in sorted(globals().items()) if k.startswith('test_')]


def main():
    return tm.run_tests(TESTS, ONLY)


if __name__ == '__main__':
    sys.exit(main())
