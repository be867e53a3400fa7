#!/usr/bin/env python3
"""Runs a command and says which resource it used up: per-thread CPU of the command and its
descendants, the machine's CPU use, its pressure stall information (PSI) for CPU and I/O, and
the disks' write rate. bench/run uses it on the sustained-streaming trials (issue 12: which
resource sets the zero-loss limit).

usage: bench/resource_sample.py --out FILE [--interval S] -- COMMAND [ARGS...]

The command's stdout and stderr pass through; its exit status is this program's. FILE gets one
line of key=value fields:
  wall_s          the command's wall time
  cpus            CPUs online
  busy            the machine's CPU time in use (not idle, not iowait), in CPUs (0..cpus)
  psi_cpu_some    share of the wall time in which some runnable task waited for a CPU
  psi_io_some     share in which some task stalled on I/O; psi_io_full: all non-idle tasks did
  disk_write_mb_s MB (10^6) written per second to the block devices (not loop, ram, zram)
  threads         per thread name of the command's processes: CPU seconds per wall second
                  (1.0 = one CPU busy all the time), as NAME:CPUS,NAME:CPUS...; threads of one
                  name are summed
Thread CPU is read from /proc every --interval seconds (default 0.2), the last reading of each
thread counting: a thread's last interval before it ends is missed (at most 0.2 s of CPU).
"""

import argparse
import os
import subprocess
import sys
import time

TICK = os.sysconf('SC_CLK_TCK')


def read(path):
    try:
        with open(path) as f:
            return f.read()
    except OSError:
        return None


def machine_cpu():
    """(busy, all) jiffies of the whole machine."""
    fields = [int(x) for x in read('/proc/stat').split('\n', 1)[0].split()[1:]]
    idle = fields[3] + (fields[4] if len(fields) > 4 else 0)  # idle + iowait
    used = sum(fields[:8])  # guest time is inside user time already
    return used - idle, used


def psi_total(resource, kind):
    text = read('/proc/pressure/' + resource)
    if text is None:
        return None
    for line in text.splitlines():
        if line.startswith(kind + ' '):
            return int(line.rsplit('total=', 1)[1])
    return None


def disks():
    names = [d for d in os.listdir('/sys/block') if not d.startswith(('loop', 'ram', 'zram'))]
    sectors = 0
    for line in (read('/proc/diskstats') or '').splitlines():
        f = line.split()
        if len(f) > 9 and f[2] in names:
            sectors += int(f[9])
    return sectors * 512


def stat_fields(text):
    """(comm, ppid, utime + stime) from a /proc stat line."""
    head, rest = text.rsplit(')', 1)
    comm = head.split('(', 1)[1]
    f = rest.split()
    return comm, int(f[1]), int(f[11]) + int(f[12])


def tree(root):
    """The pids of root and its descendants."""
    parents = {}
    for name in os.listdir('/proc'):
        if name.isdigit():
            text = read('/proc/%s/stat' % name)
            if text:
                parents[int(name)] = stat_fields(text)[1]
    pids = {root}
    grew = True
    while grew:
        grew = False
        for pid, ppid in parents.items():
            if ppid in pids and pid not in pids:
                pids.add(pid)
                grew = True
    return pids


def sample_threads(root, seen):
    for pid in tree(root):
        try:
            tids = os.listdir('/proc/%d/task' % pid)
        except OSError:
            continue
        for tid in tids:
            text = read('/proc/%d/task/%s/stat' % (pid, tid))
            if text:
                comm, _, ticks = stat_fields(text)
                seen[(pid, int(tid))] = (comm, ticks)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument('--out', required=True)
    ap.add_argument('--interval', type=float, default=0.2)
    ap.add_argument('command', nargs=argparse.REMAINDER)
    o = ap.parse_args()
    cmd = o.command[1:] if o.command[:1] == ['--'] else o.command
    if not cmd:
        ap.error('no command')
    busy0, all0 = machine_cpu()
    psi0 = {k: psi_total(*k) for k in (('cpu', 'some'), ('io', 'some'), ('io', 'full'))}
    disk0 = disks()
    t0 = time.monotonic()
    child = subprocess.Popen(cmd)
    seen = {}
    while child.poll() is None:
        sample_threads(child.pid, seen)
        time.sleep(o.interval)
    wall = time.monotonic() - t0
    busy1, all1 = machine_cpu()
    cpus = os.cpu_count() or 1
    fields = ['wall_s=%.2f' % wall, 'cpus=%d' % cpus,
              'busy=%.2f' % (cpus * (busy1 - busy0) / max(1, all1 - all0))]
    for (res, kind), before in psi0.items():
        after = psi_total(res, kind)
        if before is not None and after is not None:
            fields.append('psi_%s_%s=%.3f' % (res, kind, (after - before) / 1e6 / wall))
    fields.append('disk_write_mb_s=%.1f' % ((disks() - disk0) / 1e6 / wall))
    by_name = {}
    for comm, ticks in seen.values():
        by_name[comm] = by_name.get(comm, 0) + ticks
    fields.append('threads=' + ','.join('%s:%.2f' % (n.replace(' ', '_'), t / TICK / wall)
                                        for n, t in sorted(by_name.items(), key=lambda x: -x[1])))
    with open(o.out, 'w') as f:
        f.write(' '.join(fields) + '\n')
    return child.returncode


if __name__ == '__main__':
    sys.exit(main())
