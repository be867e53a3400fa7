#!/usr/bin/env python3
"""A provider that damages its own shared buffer is reported, not lost without a word:

    test_damaged_provider.py PATH_TO_TRACE PATH_TO_SCRIBBLER

For each way scribbler damages its buffer header (the first 128 bytes zeroed, only the magic,
the version flipped), `trace record -- scribbler MODE` in every buffering mode prints a warning
naming the provider, what was wrong and that its records could not be read, exits with the
command's status (0), and writes an archive `trace dump` reads. Undamaged ("none"): no such
warning and the provider's 200 events are in the archive.
"""
import os
import subprocess
import sys
import tempfile

TRACE, SCRIBBLER = sys.argv[1], sys.argv[2]
failures = []


def check(ok, what, detail=''):
    print(('ok   ' if ok else 'FAIL ') + what)
    if not ok:
        print('     ' + detail[-3000:].replace('\n', '\n     '))
        failures.append(what)


def main():
    env = dict(os.environ)
    for k in ('FXTRACE_OUTPUT', 'FXTRACE_SOCKET'):
        env.pop(k, None)
    with tempfile.TemporaryDirectory() as tmp:
        env['XDG_RUNTIME_DIR'] = tmp  # no daemon here: trace record runs its own manager
        for mode in ('oneshot', 'circular', 'streaming'):
            for damage in ('header', 'magic', 'version', 'none'):
                what = '%s, %s' % (mode, damage)
                out = os.path.join(tmp, '%s-%s.fxt' % (mode, damage))
                r = subprocess.run([TRACE, 'record', '--buffering-mode=' + mode,
                                    '--categories=scribble', '-o', out, '--', SCRIBBLER, damage],
                                   capture_output=True, text=True, env=env, timeout=120)
                check(r.returncode == 0 and 'scribbled ' + damage in r.stdout,
                      what + ': the command ran and its status passed through',
                      'exit %d\n%s' % (r.returncode, r.stderr))
                warning = "warning: provider 'scribbler' (pid "
                warned = [line for line in r.stderr.splitlines()
                          if warning in line and 'damaged its trace buffer' in line]
                d = subprocess.run([TRACE, 'dump', out], capture_output=True, text=True,
                                   timeout=60)
                check(d.returncode == 0, what + ': trace dump reads the archive', d.stderr)
                if damage == 'none':
                    check(not warned, what + ': no damage warning', r.stderr)
                    n = d.stdout.count('name="before"') + d.stdout.count('name="after"')
                    check(n == 200, what + ': all 200 events are in the archive (%d)' % n,
                          r.stderr)
                    continue
                check(len(warned) == 1 and 'header is unusable' in warned[0] and
                      'could not be read' in warned[0],
                      what + ': one warning says what was wrong and what was lost', r.stderr)
    if failures:
        print('%d failed' % len(failures))
        sys.exit(1)
    print('all passed')


if __name__ == '__main__':
    main()
