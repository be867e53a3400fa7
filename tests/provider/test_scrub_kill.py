#!/usr/bin/env python3
"""A process killed in the middle of a chunk's scrub (circular mode, file mode): its raw
buffer reads with nothing skipped and no old records taken for current ones.

  test_scrub_kill.py SCRUB_KILL TRACE

scrub_kill (tests/provider/scrub_kill.c) SIGKILLs itself halfway through clearing a reused
chunk (half-way through one of the clear's 1 KiB pieces). Then `trace dump` of its output (the placeholder naming the live
buffer) must report 0 skipped records and no damage, and the events' "n" must rise without
a step back in each rolling buffer (the old records of the half-cleared chunk are from an
earlier switch: taking them would put a run of older numbers among the newest)."""
import os
import re
import signal
import subprocess
import sys
import tempfile


def main():
    scrub_kill, trace = sys.argv[1:3]
    fails = []
    with tempfile.TemporaryDirectory(prefix='fxtrace-scrub-') as tmp:
        out = os.path.join(tmp, 'killed.fxt')
        env = {k: v for k, v in os.environ.items() if not k.startswith('FXTRACE_')}
        env.update(FXTRACE_OUTPUT=out, FXTRACE_BUFFERING_MODE='circular',
                   FXTRACE_BUFFER_SIZE='1', FXTRACE_SHM_DIR=tmp)
        p = subprocess.run([scrub_kill], env=env, capture_output=True, text=True, timeout=120)
        if p.returncode != -signal.SIGKILL:
            print('FAIL: scrub_kill exit status %d (expected SIGKILL): %s'
                  % (p.returncode, p.stderr))
            return 1
        d = subprocess.run([trace, 'dump', out], capture_output=True, text=True, timeout=120)
        print(d.stderr.strip())
        summary = [l for l in d.stdout.splitlines() if l.startswith('-- ') and 'skipped' in l]
        print(summary[0] if summary else 'no summary line')
        if d.returncode != 0:
            fails.append('trace dump exit %d' % d.returncode)
        if not summary or ' 0 skipped' not in summary[0]:
            fails.append('trace dump skipped records: %r' % summary)
        if 'damaged' in d.stderr:
            fails.append('trace dump reports damage: %s' % d.stderr.strip())
        ns = [int(m.group(1)) for m in re.finditer(r'"n"=uint64:(\d+)', d.stdout)]
        backs = [(a, b) for a, b in zip(ns, ns[1:]) if b <= a]
        print('%d events, n %s..%s, %d step(s) back' % (len(ns), ns[0] if ns else '-',
                                                       ns[-1] if ns else '-', len(backs)))
        # the archive holds the older rolling buffer, then the current one: one step back at
        # most would be wrong too (each buffer's numbers follow the other's), so none at all
        if not ns or backs:
            fails.append('events out of order (old records taken for current ones): %s'
                         % backs[:5])
    for f in fails:
        print('FAIL: ' + f)
    print('ok' if not fails else '%d failure(s)' % len(fails))
    return 1 if fails else 0


if __name__ == '__main__':
    sys.exit(main())
