#!/usr/bin/env python3
"""Concurrent sessions in the trace manager (docs/sessions.md, wire.h "Sessions"), with
fake_provider processes in --multi mode (a child process, with an engine of its own, per
session the provider takes part in) and this script as the controllers (wire.py):

- four sessions at once, each with its own categories, mode and archive; a fifth refused
  with a message naming the limit; the slot freed by one that ends is usable again;
- a provider registering while two sessions run joins both;
- stop, terminate and a client vanishing end only their own session;
- LIST_SESSIONS / STOP_SESSION, and SESSION_STOPPED reaching the session's client;
- per user (as root, with two throwaway users): a session includes only its user's
  providers, and a user neither sees nor stops another user's session;
- `trace list-sessions`, `trace stop ID`, and `trace record` ending cleanly when stopped.

usage: test_sessions.py TRACE_MANAGER FAKE_PROVIDER TRACE TOOLS_DIR DEMO [TEST...]"""

import json
import os
import pwd
import shutil
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.dirname(HERE))
import test_manager as tm  # noqa: E402  (the processes, archives and checks)
import wire  # noqa: E402
from throwaway_users import ThrowawayUsers  # noqa: E402

from test_manager import (CIRCULAR, ONESHOT, STREAMING, Archive, Checked, Manager,  # noqa: E402
                          Provider, begin, check)

TRACE = tm.TRACE
# Long enough for a provider under a sanitizer on a loaded machine to stop: these tests check
# that providers stop (stats state 1), never the timeout (test_manager.py does).
STOP_TIMEOUT_MS = 20000


def events_of(x, provider, category):
    """Events of `category` from every provider-info named `provider` (a --multi provider
    writes one per session, under one name)."""
    ids = [pid for pid, n in x.names.items() if n == provider]
    return [r for r in x.trace.records if r['provider'] in ids and r['kind'] == 'event'
            and r.get('ok') and r.get('category') == category]


class Decoded:
    """An archive decoded and checked, without a copy on disk (Checked keeps one in the
    test's directory, which a process of another user may not write)."""

    def __init__(self, data):
        self.trace = tm.fxt_decode.decode(data)
        check(self.trace.ok and self.trace.truncated_at is None,
              'fxt_decode: %s' % self.trace.errors[:5])
        self.names = {pid: p.name.decode() for pid, p in self.trace.providers.items()}


def session_line(p, session_id, what, timeout=10):
    """The provider child's line for that session: sessions' lines interleave in any order,
    so the lines already read count too."""
    prefix = 'session=%d %s' % (session_id, what)
    deadline = time.time() + timeout
    while True:
        for line in p.seen:
            if line.startswith(prefix):
                return line
        check(time.time() < deadline, 'provider %s: no "%s" line (saw %s)' % (p.name, prefix, p.seen))
        p.wait_for('session=', timeout=max(0.01, deadline - time.time()))


def test_four_sessions_and_a_fifth_refused():
    m = Manager(stop_timeout_ms=STOP_TIMEOUT_MS)
    p = Provider(m, 'multi', '--multi', '--all-categories', '--events', 300)
    p.wait_for('registered')
    wanted = [(ONESHOT, ['test']), (CIRCULAR, ['other']), (STREAMING, ['test:sub']),
              (ONESHOT, ['test', 'other'])]
    sessions = []
    for mode, categories in wanted:
        c, a = begin(m, mode=mode, categories=categories)
        check(c.start() == 0, 'start')
        sessions.append((c, a, mode, categories))
    ids = [c.session_id for c, _, _, _ in sessions]
    check(len(set(ids)) == 4 and 0 not in ids, 'session ids %s' % ids)
    listed = sessions[0][0].list_sessions()
    check([s['id'] for s in listed] == ids, 'LIST_SESSIONS %s, expected ids %s' % (listed, ids))
    check([s['categories'] for s in listed] == [w[1] for w in wanted] and
          [s['mode'] for s in listed] == [w[0] for w in wanted] and
          all(s['client_pid'] == os.getpid() and s['client_uid'] == os.getuid() and
              s['start_realtime_ns'] > 0 and s['providers'] == 1 for s in listed),
          'LIST_SESSIONS fields %s' % listed)
    # the fifth: refused, naming the limit, and its archive fd closed without data
    c5 = m.controller()
    a5 = Archive()
    c5.send_raw(wire.message(wire.INITIALIZE_TRACING, wire.strs([]) + wire.u32(1) + wire.u64(0) +
                             wire.u8(0) + wire.u64(0) + wire.u16(0), 7), [a5.give()])
    a5.sent()
    t, rid, payload = c5.recv()
    code, text = wire.parse_error(payload) if t == wire.ERROR else (None, None)
    check(t == wire.ERROR and rid == 7 and code == -16 and
          text == '4 sessions are running (the limit is 4)',
          'a fifth INITIALIZE_TRACING: %r' % ((t, rid, code, text),))
    check(a5.wait(5) == b'', 'the refused fifth client got data')
    for sid in ids:
        session_line(p, sid, 'emitted 300')
    for c, a, mode, categories in sessions:
        stats = c.stop()
        c.terminate()
        x = Checked(a.wait())
        x.dump_ok()
        check(len(stats) == 1 and stats[0]['state'] == 1 and stats[0]['dropped'] == 0,
              'session %d stats %s' % (c.session_id, stats))
        for category in (b'test', b'other', b'test:sub'):
            n = len(events_of(x, 'multi', category))
            expected = 300 if category.decode() in categories else 0
            check(n == expected, 'session %d (%s): %d %s events, expected %d'
                  % (c.session_id, categories, n, category, expected))
        c.close()
    # a slot is free again
    c, a = begin(m)
    check(c.start() == 0 and c.session_id not in ids, 'a session after the four')
    session_line(p, c.session_id, 'emitted 300')
    c.terminate()
    check(len(events_of(Checked(a.wait()), 'multi', b'test')) == 300, 'its events')
    c5.close()
    p.close()
    m.stop()


def test_provider_joins_two_running_sessions():
    m = Manager(stop_timeout_ms=STOP_TIMEOUT_MS)
    ca, aa = begin(m, mode=CIRCULAR, categories=['test'])
    cb, ab = begin(m, mode=ONESHOT, categories=['other'])
    check(ca.start() == 0 and cb.start() == 0, 'start')
    check([s['providers'] for s in ca.list_sessions()] == [0, 0], 'no provider yet')
    p = Provider(m, 'late', '--multi', '--all-categories', '--events', 200)
    p.wait_for('registered')
    session_line(p, ca.session_id, 'emitted 200')
    session_line(p, cb.session_id, 'emitted 200')
    check([s['providers'] for s in ca.list_sessions()] == [1, 1], 'the provider takes part in both')
    for c, a, mine, other in ((ca, aa, b'test', b'other'), (cb, ab, b'other', b'test')):
        c.stop()
        c.terminate()
        x = Checked(a.wait())
        check(len(events_of(x, 'late', mine)) == 200 and not events_of(x, 'late', other),
              'session %d: %d %s events, %d %s events' % (
                  c.session_id, len(events_of(x, 'late', mine)), mine,
                  len(events_of(x, 'late', other)), other))
        c.close()
    p.close()
    m.stop()


def test_stop_terminate_vanish_end_only_their_own():
    m = Manager(stop_timeout_ms=STOP_TIMEOUT_MS)
    p = Provider(m, 'cont', '--multi', '--continuous')
    p.wait_for('registered')
    sessions = [begin(m, mode=CIRCULAR) for _ in range(3)]
    for c, _ in sessions:
        check(c.start() == 0, 'start')
        session_line(p, c.session_id, 'started')
    (c1, a1), (c2, a2), (c3, a3) = sessions
    # one stopped and terminated
    stats = c1.stop()
    check(len(stats) == 1 and stats[0]['state'] == 1, 'stop 1: %s' % stats)
    c1.terminate()
    x1 = Checked(a1.wait())
    check(len(events_of(x1, 'cont', b'test')) > 0, 'session 1 has events')
    # one client vanishes: its session terminates, its archive (results written) closes
    c2.close()
    x2 = Checked(a2.wait())
    check(len(events_of(x2, 'cont', b'test')) > 0, 'session 2 has events')
    # the third runs on: listed as started, its provider child still tracing
    listed = c3.list_sessions()
    check([(s['id'], s['state'], s['providers']) for s in listed] == [(c3.session_id, 'started', 1)],
          'after two ended: %s' % listed)
    check(not any(line.startswith('session=%d stopped' % c3.session_id) for line in p.seen),
          'session 3 was stopped: %s' % p.seen)
    time.sleep(0.2)  # it keeps writing meanwhile
    stats = c3.stop()
    check(len(stats) == 1 and stats[0]['state'] == 1, 'stop 3: %s' % stats)
    c3.terminate()
    x3 = Checked(a3.wait())
    check(len(events_of(x3, 'cont', b'test')) > 0, 'session 3 has events')
    check(m.alive(), 'the manager died')
    c1.close()
    c3.close()
    p.close()
    m.stop()


def test_stop_session_and_session_stopped():
    m = Manager(stop_timeout_ms=STOP_TIMEOUT_MS)
    p = Provider(m, 'p', '--multi', '--events', 100)
    p.wait_for('registered')
    owner, a = begin(m, mode=CIRCULAR)
    check(owner.start() == 0, 'start')
    session_line(p, owner.session_id, 'emitted 100')
    other = m.controller()
    check(other.stop_session(owner.session_id + 100)[:2] == ('error', -2),
          'STOP_SESSION of an unknown id')
    check(other.stop_session(owner.session_id) == ('stopped', owner.session_id), 'STOP_SESSION')
    note = owner.wait_session_stopped()
    check(note == {'id': owner.session_id, 'by_uid': os.getuid(), 'by_pid': os.getpid()},
          'SESSION_STOPPED %s' % note)
    # its own client's STOP_TRACING gets the stop's results, as usual
    stats = owner.stop()
    check(len(stats) == 1 and stats[0]['state'] == 1, 'STOP_RESULT after STOP_SESSION: %s' % stats)
    check([s['state'] for s in other.list_sessions()] == ['stopped'], 'listed as stopped')
    # stopping a stopped session: answered, and its client is not told again
    check(other.stop_session(owner.session_id) == ('stopped', owner.session_id), 'again')
    owner.terminate()
    check(owner.session_stopped == [], 'told twice: %s' % owner.session_stopped)
    x = Checked(a.wait())
    check(len(events_of(x, 'p', b'test')) == 100, 'the archive is complete')
    check(other.list_sessions() == [], 'the session is gone')
    owner.close()
    other.close()
    p.close()
    m.stop()


def test_alerts_and_snapshots_per_session():
    """A provider's alert reaches each session it takes part in (its FIFO in each), and only
    their clients; SNAPSHOT copies the caller's own session only."""
    m = Manager(stop_timeout_ms=STOP_TIMEOUT_MS)
    p = Provider(m, 'alerter', '--multi', '--all-categories', '--events', 50, '--raw-alerts', 3)
    p.wait_for('registered')
    ca, aa = begin(m, mode=CIRCULAR, categories=['test'])
    cb, ab = begin(m, mode=CIRCULAR, categories=['other'])
    check(ca.start() == 0 and cb.start() == 0, 'start')
    for c in (ca, cb):
        session_line(p, c.session_id, 'alerted 3')
        session_line(p, c.session_id, 'emitted 50')
    for c in (ca, cb):
        got = []
        for _ in range(3):
            t, _, payload = c.call(wire.WATCH_ALERT)
            check(t == wire.ALERT, 'session %d: WATCH_ALERT answered with type %d'
                  % (c.session_id, t))
            got.append(wire.parse_alert(payload))
        check([g['name'] for g in got] == ['raw0', 'raw1', 'raw2'] and
              all(g['dropped'] == 0 and g['provider_name'] == 'alerter' for g in got),
              'session %d alerts %s' % (c.session_id, got))
    # a connection without a session hears of none
    lone = m.controller()
    lone.send_raw(wire.message(wire.WATCH_ALERT, b'', 9))
    try:
        reply = lone.recv(timeout=0.3)
    except TimeoutError:
        reply = None
    check(reply is None, 'a connection without a session got %r' % (reply,))
    # snapshots: each session's own buffers; none without a session
    r, w = os.pipe()
    t, _, payload = lone.call(wire.SNAPSHOT, fds=[w])
    os.close(w)
    os.close(r)
    check(t == wire.ERROR and wire.parse_error(payload)[0] == -61,
          'SNAPSHOT without a session: %d %r' % (t, payload))
    for c, mine, other in ((ca, b'test', b'other'), (cb, b'other', b'test')):
        snap = Archive()
        t, _, payload = c.call(wire.SNAPSHOT, fds=[snap.give()])
        snap.sent()
        check(t == wire.SNAPSHOT_RESULT, 'SNAPSHOT: %d %r' % (t, payload))
        x = Checked(snap.wait())
        check(len(events_of(x, 'alerter', mine)) == 50 and not events_of(x, 'alerter', other),
              'session %d snapshot: %d %s, %d %s' % (
                  c.session_id, len(events_of(x, 'alerter', mine)), mine,
                  len(events_of(x, 'alerter', other)), other))
    for c, a in ((ca, aa), (cb, ab)):
        c.terminate()
        Checked(a.wait())
        c.close()
    lone.close()
    p.close()
    m.stop()


def test_malformed_session_calls():
    m = Manager(stop_timeout_ms=STOP_TIMEOUT_MS)
    c = m.controller()
    for mtype, payload in ((wire.LIST_SESSIONS, b'x'), (wire.STOP_SESSION, b''),
                           (wire.STOP_SESSION, wire.u32(1) + b'x')):
        t, _, p = c.call(mtype, payload)
        check(t == wire.ERROR and wire.parse_error(p)[0] == -74,
              'malformed type %d: %d %r' % (mtype, t, p))
    check(c.list_sessions() == [], 'the connection still works')
    # a provider connection may not list or stop sessions
    pc = wire.Conn(m.path, role=wire.ROLE_PROVIDER)
    t, _, p = pc.call(wire.LIST_SESSIONS)
    check(t == wire.ERROR and wire.parse_error(p)[0] == -38, 'LIST_SESSIONS from a provider: %d' % t)
    pc.close()
    c.close()
    m.stop()


# ---- per user (root) --------------------------------------------------------------------------

def Users():
    """Two throwaway users in a throwaway group (the manager's --group)."""
    return ThrowawayUsers(['fxsa', 'fxsb'], group_prefix='fxg')


class Holder:
    """A controller in a child process running as another user: holds a session and does
    what it is told (one JSON line per command and per answer)."""

    def __init__(self, manager, ids, **initialize):
        self.cmd_r, self.cmd_w = os.pipe()
        self.ans_r, self.ans_w = os.pipe()
        self.pid = os.fork()
        if self.pid == 0:
            os.close(self.cmd_w)
            os.close(self.ans_r)
            code = 0
            try:
                uid, gid, groups = ids
                os.setgroups(groups)
                os.setgid(gid)
                os.setuid(uid)
                self._serve(manager.path, initialize)
            except BaseException as e:  # noqa: BLE001
                os.write(self.ans_w, (json.dumps({'exception': repr(e)}) + '\n').encode())
                code = 1
            os._exit(code)
        os.close(self.cmd_r)
        os.close(self.ans_w)
        self.answers = os.fdopen(self.ans_r)
        self.session_id = self.ask('start')['session_id']

    def _serve(self, path, initialize):
        c = wire.Conn(path)
        a = None
        commands = os.fdopen(self.cmd_r)
        for line in commands:
            cmd = json.loads(line)
            if cmd[0] == 'start':
                a = Archive()
                c.initialize(a.give(), **initialize)
                a.sent()
                answer = {'error': c.start(), 'session_id': c.session_id}
            elif cmd[0] == 'list':
                answer = {'sessions': c.list_sessions()}
            elif cmd[0] == 'stop_session':
                answer = {'result': list(c.stop_session(cmd[1]))}
            elif cmd[0] == 'wait_stopped':
                answer = {'note': c.wait_session_stopped()}
            elif cmd[0] == 'finish':
                c.stop()
                c.terminate()
                x = Decoded(a.wait())
                answer = {'events': {n: len(events_of(x, n, b'test')) for n in cmd[1]},
                          'told': c.session_stopped}
            os.write(self.ans_w, (json.dumps(answer) + '\n').encode())
            if cmd[0] == 'finish':
                return

    def ask(self, *cmd):
        os.write(self.cmd_w, (json.dumps(list(cmd)) + '\n').encode())
        line = self.answers.readline()
        check(line, 'the holder process ended')
        answer = json.loads(line)
        check('exception' not in answer, 'holder: %s' % answer.get('exception'))
        return answer

    def close(self):
        os.close(self.cmd_w)
        os.waitpid(self.pid, 0)
        self.answers.close()


def test_users_see_and_stop_only_their_own():
    if os.geteuid() != 0:
        print('test_users_see_and_stop_only_their_own: SKIPPED (needs root for throwaway users)')
        return
    for tool in ('useradd', 'userdel', 'groupadd', 'groupdel'):
        if not shutil.which(tool):
            print('test_users_see_and_stop_only_their_own: SKIPPED (%s is missing)' % tool)
            return
    with Users() as users:
        m = Manager('--group', users.group, stop_timeout_ms=STOP_TIMEOUT_MS)
        os.chmod(tm.TMP, 0o755)
        a_ids, b_ids = users.ids(0), users.ids(1)

        def provider_as(ids, name):
            uid, gid, groups = ids
            p = Provider.__new__(Provider)
            p.name = name
            p.proc = subprocess.Popen([tm.PROVIDER, '--socket', m.path, '--name', name, '--multi',
                                       '--events', '50'], stdout=subprocess.PIPE, text=True,
                                      user=uid, group=gid, extra_groups=groups)
            tm.PROCESSES.append(p.proc)
            p.lines = tm.queue.Queue()
            p.seen = []
            tm.threading.Thread(target=p._read, daemon=True).start()
            return p
        pa = provider_as(a_ids, 'of-a')
        pb = provider_as(b_ids, 'of-b')
        pr = Provider(m, 'of-root', '--multi', '--events', 50)
        for p in (pa, pb, pr):
            p.wait_for('registered')
        ha = Holder(m, a_ids, mode=CIRCULAR)
        hb = Holder(m, b_ids, mode=CIRCULAR)
        cr, ar = begin(m, mode=CIRCULAR)
        check(cr.start() == 0, 'root starts')
        for p, sessions in ((pa, (ha, cr)), (pb, (hb, cr)), (pr, (cr,))):
            for h in sessions:
                session_line(p, h.session_id, 'emitted 50')
        # each sees its own; root sees all
        seen_a = [s['id'] for s in ha.ask('list')['sessions']]
        seen_b = [s['id'] for s in hb.ask('list')['sessions']]
        seen_root = [s['id'] for s in cr.list_sessions()]
        check(seen_a == [ha.session_id] and seen_b == [hb.session_id] and
              seen_root == [ha.session_id, hb.session_id, cr.session_id],
              'listed: a %s, b %s, root %s' % (seen_a, seen_b, seen_root))
        listed_a = ha.ask('list')['sessions'][0]
        check(listed_a['client_uid'] == a_ids[0] and listed_a['providers'] == 1,
              "a's session: %s" % listed_a)
        # b cannot stop a's session: it does not exist for b
        result = hb.ask('stop_session', ha.session_id)['result']
        check(result[:2] == ['error', -2], "b stopping a's session: %s" % result)
        check([s['state'] for s in cr.list_sessions()] == ['started'] * 3, 'all still started')
        # root may: a's client is told who did it
        check(cr.stop_session(ha.session_id) == ('stopped', ha.session_id), 'root stops a')
        note = ha.ask('wait_stopped')['note']
        check(note == {'id': ha.session_id, 'by_uid': 0, 'by_pid': os.getpid()},
              'SESSION_STOPPED to a: %s' % note)
        # a's archive holds a's provider only, b's b's, root's every one
        names = ['of-a', 'of-b', 'of-root']
        got_a = ha.ask('finish', names)['events']
        got_b = hb.ask('finish', names)['events']
        check(got_a == {'of-a': 50, 'of-b': 0, 'of-root': 0}, "a's archive: %s" % got_a)
        check(got_b == {'of-a': 0, 'of-b': 50, 'of-root': 0}, "b's archive: %s" % got_b)
        cr.stop()
        cr.terminate()
        x = Checked(ar.wait())
        got_root = {n: len(events_of(x, n, b'test')) for n in names}
        check(got_root == {'of-a': 50, 'of-b': 50, 'of-root': 50}, "root's archive: %s" % got_root)
        for h in (ha, hb):
            h.close()
        cr.close()
        for p in (pa, pb, pr):
            p.close()
        m.stop()


# ---- the trace command --------------------------------------------------------------------

def test_trace_list_sessions_stop_and_record():
    """`trace record` stopped by `trace stop ID`: it ends as at the end of --duration,
    saying who stopped it, with a complete archive; `trace list-sessions` shows it."""
    m = Manager(stop_timeout_ms=STOP_TIMEOUT_MS)
    env = dict(os.environ, FXTRACE_SOCKET=m.path)
    env.pop('FXTRACE_OUTPUT', None)
    p = Provider(m, 'p', '--multi', '--events', 100)
    p.wait_for('registered')
    out = os.path.join(tm.TMP, 'stopped.fxt')
    rec = subprocess.Popen([TRACE, 'record', '--duration', '0', '--buffering-mode', 'circular',
                            '--categories', 'test', '-o', out], env=env, stderr=subprocess.PIPE,
                           text=True)
    tm.PROCESSES.append(rec)
    line = p.wait_for('session=')
    sid = int(line.split()[0].split('=')[1])
    session_line(p, sid, 'emitted 100')
    ls = subprocess.run([TRACE, 'list-sessions'], env=env, capture_output=True, text=True,
                        timeout=30)
    rows = [r.split() for r in ls.stdout.splitlines()[1:]]
    user = pwd.getpwuid(os.getuid()).pw_name
    check(ls.returncode == 0 and ls.stdout.startswith('ID ') and len(rows) == 1 and
          rows[0][:5] == [str(sid), str(rec.pid), user, 'circular', 'started'] and
          rows[0][-1] == 'test' and rows[0][-2] == '1',
          'list-sessions: %d %s %s' % (ls.returncode, ls.stdout, ls.stderr))
    bad = subprocess.run([TRACE, 'stop', str(sid + 50)], env=env, capture_output=True, text=True,
                         timeout=30)
    check(bad.returncode == 1 and 'no session %d' % (sid + 50) in bad.stderr,
          'stop of an unknown id: %d %s' % (bad.returncode, bad.stderr))
    usage = subprocess.run([TRACE, 'stop', 'x'], env=env, capture_output=True, text=True)
    check(usage.returncode == 2, 'stop x: %d' % usage.returncode)
    stop = subprocess.run([TRACE, 'stop', str(sid)], env=env, capture_output=True, text=True,
                          timeout=30)
    check(stop.returncode == 0 and 'session %d stopped' % sid in stop.stdout,
          'trace stop: %d %s %s' % (stop.returncode, stop.stdout, stop.stderr))
    _, err = rec.communicate(timeout=60)
    check(rec.returncode == 0, 'trace record exit %d: %s' % (rec.returncode, err))
    check('session %d stopped by %s (pid ' % (sid, user) in err and 'wrote ' in err,
          'trace record said: %s' % err)
    with open(out, 'rb') as f:
        x = Checked(f.read())
    check(len(events_of(x, 'p', b'test')) == 100, 'the archive is complete')
    ls = subprocess.run([TRACE, 'list-sessions'], env=env, capture_output=True, text=True,
                        timeout=30)
    check(ls.returncode == 0 and len(ls.stdout.splitlines()) == 1 and 'no session' in ls.stderr,
          'list-sessions when none runs: %s %s' % (ls.stdout, ls.stderr))
    p.close()
    m.stop()


TESTS = [v for k, v in sorted(globals().items()) if k.startswith('test_')]


def main():
    return tm.run_tests(TESTS, sys.argv[6:])


if __name__ == '__main__':
    sys.exit(main())
