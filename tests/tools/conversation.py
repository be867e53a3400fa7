"""The two-host conversation that tests/merge/test_merge.py and tests/remote/test_remote.py
record: tests/tools/fifo_peer on "alpha" sends N messages through a FIFO to the one on "beta"
(each "send" i a duration beginning flow 1000+i, each "recv" i a duration ending it), each host
a PID + mount + time namespace when they can be made. Here: whether they can, reading an archive
as JSON, and the checks on the merged archive that both tests make.

Failed checks go to fxtest (check, status)."""
import json
import os
import shutil
import subprocess

from fxtest import check

DELIVERY_BOUND_US = 30e6  # generous: a FIFO write and read on a loaded machine


def run(args, timeout=120, **kw):
    """Runs a command to its end; its output and error bytes are captured."""
    return subprocess.run(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=timeout,
                          **kw)


def namespaces_usable(tools=('unshare',)):
    """None when this process can make PID + mount + time namespaces (root, `tools` on the
    PATH, unshare --time works); else why not."""
    if os.geteuid() != 0:
        return 'not root'
    for tool in tools:
        if not shutil.which(tool):
            return 'no ' + tool
    p = run(['unshare', '--pid', '--fork', '--mount-proc', '--time', '--monotonic=5000', 'true'])
    if p.returncode != 0:
        return 'unshare --time failed: ' + p.stderr.decode().strip()
    return None


def to_json(trace, fxt):
    """The events of `trace convert FXT` (a failed conversion is a failed check)."""
    out = fxt + '.json'
    p = run([trace, 'convert', fxt, '-o', out])
    check(p.returncode == 0, 'convert %s: %s' % (fxt, p.stderr.decode()[:300]))
    with open(out) as f:
        d = json.load(f)
    return d['traceEvents'] if isinstance(d, dict) else d


def events(evs, name):
    """The complete durations named `name`, by their "seq" argument."""
    return {e['args']['seq']: e for e in evs if e.get('name') == name and e.get('ph') == 'X'}


def check_merged(ev, n, uncertainty_us=0.0):
    """Checks the merged conversation in `ev` (JSON events): N sends and N receives; each
    receive after its send (to within `uncertainty_us`, the clocks' alignment) and no later than
    that plus DELIVERY_BOUND_US; the two programs two processes, named after their hosts; the
    flows' ids 1000..1000+N-1, each begun and ended. Returns (sends, recvs) by seq."""
    sends, recvs = events(ev, 'send'), events(ev, 'recv')
    check(len(sends) == n and len(recvs) == n, 'merged: %d sends, %d receives'
          % (len(sends), len(recvs)))
    for i in range(n):
        if i in sends and i in recvs:
            s, r = sends[i], recvs[i]
            check(r['ts'] > s['ts'] - uncertainty_us,
                  'message %d: received at %s before it was sent at %s (uncertainty %.1f us)'
                  % (i, r['ts'], s['ts'], uncertainty_us))
            check(r['ts'] - s['ts'] < uncertainty_us + DELIVERY_BOUND_US,
                  'message %d: received %s us after it was sent' % (i, r['ts'] - s['ts']))
    if sends and recvs:
        check(sends[0]['pid'] != recvs[0]['pid'], 'merged: the two programs share a pid')
        names = {e['pid']: e['args']['name'] for e in ev
                 if e.get('ph') == 'M' and e.get('name') == 'process_name'}
        check(names.get(sends[0]['pid'], '').startswith('alpha: '),
              'merged: the sender is named %r' % names.get(sends[0]['pid']))
        check(names.get(recvs[0]['pid'], '').startswith('beta: '),
              'merged: the receiver is named %r' % names.get(recvs[0]['pid']))
    # flows pass through with their ids: each begun on alpha and ended on beta
    begins = {e['id'] for e in ev if e.get('ph') == 's' and e.get('name') == 'message'}
    ends = {e['id'] for e in ev if e.get('ph') == 'f' and e.get('name') == 'message'}
    want = {'0x%x' % (1000 + i) for i in range(n)}
    check(begins == want and ends == want, 'merged: flow ids %s / %s' % (sorted(begins)[:3],
                                                                         sorted(ends)[:3]))
    return sends, recvs


def check_providers(dump):
    """The peers' providers in `trace dump` text, named after their hosts."""
    for host, prov in (('alpha', 'sender'), ('beta', 'receiver')):
        check('name="%s: %s"' % (host, prov) in dump,
              'merged: no provider "%s: %s"' % (host, prov))
