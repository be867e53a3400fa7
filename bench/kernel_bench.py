#!/usr/bin/env python3
"""Kernel provider benchmark (issue 10): CPU time per kernel event and the highest scheduler-event
rate kept with zero ftrace overruns, for fxtrace's trace_kernel_provider and for Debian's
`trace-cmd record`, on the same events (sched_switch, sched_waking, sched_wakeup_new) and the same
ftrace buffer size per CPU, under a context-switch storm (`stress-ng --switch 1 --switch-freq F`).

usage: bench/kernel_bench.py [--quick] [--build BUILD_DIR] [--seconds S] [--buffer-kb KB]
                             [--stressors N] [--sessions [--freq F] [--rounds N]]
Root only. Not a test: it prints a table to paste into bench/RESULTS.md.

fxtrace runs as in production: trace_manager + trace_kernel_provider daemons, `trace record
--buffering-mode=streaming` writing the archive to a file; its CPU time is the kernel provider
process's (utime + stime from /proc). trace-cmd runs `trace-cmd record -b KB -e ... sleep S`
beside the same storm; its CPU time is trace-cmd's and its per-CPU readers' (RUSAGE_CHILDREN), its
events are counted in `trace-cmd report`, its losses in `trace-cmd report --stat`. Where the
kernel forbids the function tracer's files (EPERM) or /proc/sys is read-only, trace-cmd would stop
while resetting them, so it runs with bench/tracecmd_shim.c preloaded (those opens go to
/dev/null; no function tracing is used). CPU per event subtracts each tracer's CPU in a trial
without the storm (its fixed cost per trace).

--sessions (issue 24) measures fxtrace only: the kernel provider's CPU per kernel event with one
and with two `trace record`s on kernel:sched at once (each event written into both), at one
storm rate (--freq), the two interleaved over --rounds.

For each tracer the storm's rate is doubled until the tracer loses events (ftrace overrun or
dropped), then bisected; the figure is the highest offered rate with zero loss, and the events
per second ftrace produced at it.
"""

import argparse
import os
import re
import resource
import shutil
import signal
import subprocess
import sys
import tempfile
import time

EVENTS = ['sched:sched_switch', 'sched:sched_waking', 'sched:sched_wakeup_new']


def cpu_seconds(pid):
    with open('/proc/%d/stat' % pid) as f:
        fields = f.read().rsplit(')', 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf('SC_CLK_TCK')


class NoStorm:
    def wait(self):
        pass


STRESSORS = 1


def storm(freq, seconds):
    if freq == 0:  # the tracer's fixed cost per trace, subtracted from the CPU per event
        return NoStorm()
    return subprocess.Popen(['stress-ng', '--switch', str(STRESSORS), '--switch-freq', str(freq), '-t',
                             str(seconds), '--quiet'], stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)


class Fxtrace:
    name = 'fxtrace trace_kernel_provider'

    def __init__(self, build, tmp, buffer_kb):
        self.trace = os.path.join(build, 'trace')
        self.tmp = tmp
        self.sock = os.path.join(tmp, 'manager.sock')
        self.env = dict(os.environ, FXTRACE_SOCKET=self.sock,
                        FXTRACE_KERNEL_BUFFER_KB=str(buffer_kb))
        self.manager = subprocess.Popen([os.path.join(build, 'src/manager/trace_manager'),
                                         '--socket', self.sock], env=self.env,
                                        stderr=subprocess.DEVNULL)
        for _ in range(100):
            if os.path.exists(self.sock):
                break
            time.sleep(0.05)
        self.kp = subprocess.Popen([os.path.join(build, 'trace_kernel_provider')], env=self.env,
                                   stderr=subprocess.DEVNULL)
        time.sleep(0.5)

    def trial(self, freq, seconds, sessions=1):
        """One trial; with sessions > 1, that many `trace record`s on kernel:sched started
        back to back (each with a buffer of its own; the kernel provider writes every event
        into each): the records of the session that got most, the drops of all, and the
        provider's CPU over all of them."""
        before = cpu_seconds(self.kp.pid)
        s = storm(freq, seconds + 1)
        time.sleep(0.3)
        procs = []
        for i in range(sessions):
            out = os.path.join(self.tmp, 'k%d.fxt' % i)
            procs.append((out, subprocess.Popen(
                [self.trace, 'record', '--categories=kernel:sched', '--buffering-mode=streaming',
                 '--buffer-size=64', '-o', out, '--duration=%g' % seconds], env=self.env,
                stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)))
        records, dropped = 0, 0
        for out, p in procs:
            err = p.communicate()[1]
            row = [l.split() for l in err.split('\n')
                   if l.strip().startswith('trace_kernel_provider ')]
            if not row:
                raise RuntimeError('no kernel provider in the summary: ' + err[-400:])
            records, dropped = max(records, int(row[0][3])), dropped + int(row[0][4])
            os.unlink(out)
        cpu = cpu_seconds(self.kp.pid) - before
        s.wait()
        return records, dropped, cpu

    def close(self):
        for p in (self.kp, self.manager):
            p.send_signal(signal.SIGTERM)
            p.wait(timeout=30)


class TraceCmd:
    name = 'trace-cmd record'

    def __init__(self, build, tmp, buffer_kb):
        self.tmp, self.kb = tmp, buffer_kb
        # bench/tracecmd_shim.c: trace-cmd resets the function tracer's files even when it
        # records only events; kernels that forbid them (EPERM) and a read-only
        # /proc/sys/kernel/ftrace_enabled would stop it, so those opens go to /dev/null
        self.shim = os.path.join(tmp, 'tracecmd_shim.so')
        src = os.path.join(os.path.dirname(os.path.abspath(__file__)), 'tracecmd_shim.c')
        subprocess.run(['cc', '-shared', '-fPIC', '-O2', '-o', self.shim, src, '-ldl'],
                       check=True)

    def trial(self, freq, seconds):
        out = os.path.join(self.tmp, 'k.dat')
        cmd = ['trace-cmd', 'record', '-b', str(self.kb)] + sum([['-e', e] for e in EVENTS], []) \
            + ['-o', out, 'sleep', str(seconds)]
        s = storm(freq, seconds + 1)
        time.sleep(0.3)
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        r = subprocess.run(cmd, capture_output=True, text=True,
                           env=dict(os.environ, LD_PRELOAD=self.shim))
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        s.wait()
        if r.returncode != 0 or not os.path.exists(out):
            raise RuntimeError('trace-cmd record failed: ' + (r.stdout + r.stderr)[-200:])
        stat = subprocess.run(['trace-cmd', 'report', '-i', out, '--stat'], capture_output=True,
                              text=True).stdout
        lost = sum(int(x) for x in re.findall(r'^overrun: (\d+)', stat, re.M)) + \
            sum(int(x) for x in re.findall(r'^dropped events: (\d+)', stat, re.M))
        report = subprocess.Popen(['trace-cmd', 'report', '-i', out], stdout=subprocess.PIPE,
                                  stderr=subprocess.DEVNULL, text=True)
        events = sum(1 for line in report.stdout if ': sched_' in line)
        report.wait()
        cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
        os.unlink(out)
        return events, lost, cpu

    def close(self):
        pass


def measure(tracer, seconds, start, limit, steps):
    """Highest zero-loss rate (doubling, then bisection) and the CPU per event at it."""
    events, lost, idle_cpu = tracer.trial(0, seconds)
    print('  no storm: %d events, %.3f s CPU (fixed cost per trace, subtracted below)' %
          (events, idle_cpu), flush=True)
    good, bad = None, None
    freq = start
    while freq <= limit:
        events, lost, cpu = tracer.trial(freq, seconds)
        print('  %-8d switches/s offered: %9d events, %7d lost, %.3f s CPU' %
              (freq, events, lost, cpu), flush=True)
        if lost == 0:
            good = (freq, events, cpu)
            freq *= 2
        else:
            bad = freq
            break
    for _ in range(steps if bad and good else 0):
        mid = (good[0] + bad) // 2
        events, lost, cpu = tracer.trial(mid, seconds)
        print('  %-8d switches/s offered: %9d events, %7d lost, %.3f s CPU' %
              (mid, events, lost, cpu), flush=True)
        if lost == 0:
            good = (mid, events, cpu)
        else:
            bad = mid
    if good:
        good = (good[0], good[1], max(0.0, good[2] - idle_cpu))
    return good, bad


def sessions_cost(build, tmp, buffer_kb, seconds, freq, rounds):
    """The kernel provider's CPU per kernel event with 1 and 2 sessions on kernel:sched
    (docs/kernel-provider.md, Sessions), at one storm rate, rounds interleaved."""
    tracer = Fxtrace(build, tmp, buffer_kb)
    points = {1: [], 2: []}  # (events, cpu) of every trial, the no-storm ones included
    try:
        idle = {}
        for n in (1, 2):
            events, _, idle[n] = tracer.trial(0, seconds, n)
            points[n].append((events, idle[n]))
            print('  %d session(s), no storm: %.3f s CPU (subtracted below)' % (n, idle[n]),
                  flush=True)
        runs = {1: [], 2: []}
        for i in range(rounds):
            # half and full rate in turn: the slope below needs different event counts
            f = freq if i % 2 == 0 else freq // 2
            for n in (1, 2):
                events, lost, cpu = tracer.trial(f, seconds, n)
                points[n].append((events, cpu))
                per = 1e9 * max(0.0, cpu - idle[n]) / events if events else 0
                runs[n].append(per)
                print('  %d session(s), %d switches/s offered: %9d events, %7d lost, %.3f s CPU, '
                      '%.0f ns per event' % (n, f, events, lost, cpu, per), flush=True)
    finally:
        tracer.close()
    print('\n| sessions on kernel:sched | CPU per kernel event (minus the no-storm trial), '
          'min / median of %d | least-squares slope of CPU against events |' % rounds)
    print('|---|---|---|')
    for n in (1, 2):
        v = sorted(runs[n])
        xs, ys = [p[0] for p in points[n]], [p[1] for p in points[n]]
        mx, my = sum(xs) / len(xs), sum(ys) / len(ys)
        sxx = sum((x - mx) ** 2 for x in xs)
        slope = sum((x - mx) * (y - my) for x, y in zip(xs, ys)) / sxx if sxx else 0
        print('| %d | %.0f / %.0f ns | %.0f ns |' % (n, v[0], v[len(v) // 2], 1e9 * slope))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    ap.add_argument('--quick', action='store_true', help='2 s trials, 2 bisection steps')
    ap.add_argument('--build', default='build-bench', help='build folder (default build-bench)')
    ap.add_argument('--seconds', type=float, help='trial length (default 5, --quick 2)')
    ap.add_argument('--buffer-kb', type=int, default=4096, help='ftrace buffer per CPU (4096)')
    ap.add_argument('--stressors', type=int, default=1,
                    help='stress-ng --switch instances (default 1; more for a bigger storm)')
    ap.add_argument('--sessions', action='store_true',
                    help='fxtrace only: CPU per event with 1 and 2 sessions on kernel:sched')
    ap.add_argument('--freq', type=int, default=50000,
                    help='--sessions: switches/s offered (default 50000)')
    ap.add_argument('--rounds', type=int, default=3, help='--sessions: rounds (default 3)')
    a = ap.parse_args()
    global STRESSORS
    STRESSORS = a.stressors
    if os.geteuid() != 0:
        sys.exit('kernel_bench: needs root (tracefs)')
    for tool in ('stress-ng', 'trace-cmd'):
        if not shutil.which(tool):
            sys.exit('kernel_bench: %s is missing (apt-get install %s)' % (tool, tool))
    if not os.path.exists(os.path.join(a.build, 'trace_kernel_provider')):
        subprocess.run(['cmake', '-S', '.', '-B', a.build, '-DCMAKE_BUILD_TYPE=Release',
                        '-DFXTRACE_TESTS=OFF'], check=True, stdout=subprocess.DEVNULL)
        subprocess.run(['cmake', '--build', a.build, '-j2', '--target', 'trace',
                        'trace_kernel_provider', 'trace_manager'], check=True,
                       stdout=subprocess.DEVNULL)
    seconds = a.seconds or (2 if a.quick else 5)
    steps = 2 if a.quick else 4
    results = []
    tmp = tempfile.mkdtemp(prefix='fxtrace-kbench-')
    if a.sessions:
        try:
            print('== fxtrace trace_kernel_provider, 1 and 2 sessions (%g s trials, %d KiB per '
                  'CPU)' % (seconds, a.buffer_kb), flush=True)
            sessions_cost(a.build, tmp, a.buffer_kb, seconds, a.freq, a.rounds)
        finally:
            shutil.rmtree(tmp, ignore_errors=True)
        return 0
    try:
        for cls in (Fxtrace, TraceCmd):
            tracer = cls(a.build, tmp, a.buffer_kb)
            print('== %s (%g s trials, %d KiB per CPU)' % (tracer.name, seconds, a.buffer_kb),
                  flush=True)
            try:
                good, bad = measure(tracer, seconds, 25000, 3200000, steps)
                results.append((tracer.name, good, bad))
            except RuntimeError as e:
                print('  skipped: %s' % e)
                results.append((tracer.name + ' (could not run: %s)' % str(e)[:80], None, None))
            finally:
                tracer.close()
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    print('\n| tracer | highest zero-loss storm (switches/s offered) | kernel events/s at it | '
          'CPU per event (minus the no-storm trial) |')
    print('|---|---|---|---|')
    for name, good, bad in results:
        if not good:
            print('| %s | - | - | - |' % name)
            continue
        freq, events, cpu = good
        print('| %s | %d%s | %.0f | %.0f ns |' % (
            name, freq, '' if bad else ' (no loss up to the storm\'s limit)', events / seconds,
            1e9 * cpu / events if events else 0))
    return 0


if __name__ == '__main__':
    sys.exit(main())
