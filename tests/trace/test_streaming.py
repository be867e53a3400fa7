#!/usr/bin/env python3
"""Issue 4's streaming acceptance, with real processes, and a provider exiting normally
mid-trace.

  test_streaming.py TRACE STREAM_PRODUCER STREAM_CHECK TOOLS_DIR

1. exit mid-trace: `trace record -- stream_producer 0.2 20000` (oneshot, room for all): the
   producer calls trace_provider_destroy and exits while the trace runs; the manager must see
   an orderly stop (summary state "terminated", no "went away" warning), and every one of its
   20000 events must be in the archive (checked with the independent decoder).
2. streaming: `trace record --buffering-mode=streaming --buffer-size=1 -- stream_producer 10`,
   a producer recording as fast as it can — far faster than the manager saves 512 KiB rolling
   buffers — for 10 s. Then events in the archive + records dropped == events attempted,
   exactly, no event twice; and the peak VmRSS of the `trace record` process (which runs the
   manager in-process) stays under a bound that does not grow with the trace (the archive is
   typically over a GiB; how large depends on the machine, so it is reported, not asserted).
3. the same streaming recording compressed, with `--compress=zstd` and to a `*.fxt.zst`: the
   same counts (stream_check reads the compressed archive), and the same memory bound — the
   compressor's memory is constant too (docs/architecture.md).
"""
import os
import re
import subprocess
import sys
import tempfile
import threading
import time

FAILS = []
RSS_BOUND_KIB = 64 * 1024   # the archive is ~1.5 GiB: buffering it would be far above this
# Under AddressSanitizer the client's own footprint is about four times larger (shadow memory,
# redzones, the allocator's size-class regions: 6-16 MiB plain, 55-66 MiB with ASan, measured
# 2026-11-26), so its bound is twice as high: still a tenth of the archive.
RSS_BOUND_ASAN_KIB = 128 * 1024


def rss_bound_kib(trace):
    """The peak RSS `trace record` must stay under: RSS_BOUND_ASAN_KIB when `trace` was built
    with AddressSanitizer (its runtime's name is in the binary), else RSS_BOUND_KIB."""
    with open(trace, 'rb') as f:
        return RSS_BOUND_ASAN_KIB if b'AddressSanitizer' in f.read() else RSS_BOUND_KIB
ZSTD_MAGIC = b'\x28\xb5\x2f\xfd'


def check(cond, msg):
    if not cond:
        FAILS.append(msg)
        print('FAIL: ' + msg, flush=True)
    return cond


def summary_row(err, name):
    """(records, dropped, durable, state) from trace record's summary row for `name`."""
    for line in err.splitlines():
        f = line.split()
        if f[:1] == [name] and len(f) >= 8:
            return int(f[3]) if f[3] != '-' else None, int(f[4]), f[5], ' '.join(f[7:])
    return None


def attempted_of(out):
    m = re.search(rb'stream_producer: attempted (\d+) events', out)
    return int(m.group(1)) if m else None


def env(tmp):
    e = dict(os.environ)
    e.pop('XDG_RUNTIME_DIR', None)
    e['FXTRACE_SOCKET'] = os.path.join(tmp, 'no-manager.sock')  # trace record runs its own
    # Under AddressSanitizer, freed memory sits in a quarantine (256 MiB by default) that would
    # count in the client's RSS; keep it small so the RSS bound measures the client itself.
    # Other builds ignore the variable.
    asan = e.get('ASAN_OPTIONS', '')
    e['ASAN_OPTIONS'] = (asan + ':' if asan else '') + 'quarantine_size_mb=1'
    return e


def test_exit_mid_trace(trace, producer, tools, tmp):
    sys.path.insert(0, tools)
    import fxt_decode
    out_file = os.path.join(tmp, 'exit.fxt')
    p = subprocess.run([trace, 'record', '--buffer-size=8', '-o', out_file, '--', producer,
                        '5', '20000'], env=env(tmp), stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, timeout=60)
    err = p.stderr.decode('utf-8', 'replace')
    check(p.returncode == 0, 'exit mid-trace: status %d: %s' % (p.returncode, err))
    check(attempted_of(p.stdout) == 20000, 'exit mid-trace: producer output %r' % p.stdout)
    row = summary_row(err, 'stream_producer')
    if check(row is not None, 'exit mid-trace: no summary row: %s' % err):
        check(row[3] == 'terminated', 'exit mid-trace: state "%s", expected "terminated" (an '
              'orderly stop, not a death): %s' % (row[3], err))
        check(row[1] == 0, 'exit mid-trace: %d dropped' % row[1])
    check('went away' not in err and 'warning' not in err, 'exit mid-trace: warnings: %s' % err)
    with open(out_file, 'rb') as f:
        t = fxt_decode.decode(f.read())
    check(t.ok, 'exit mid-trace: decoder errors: %s' % t.errors[:3])
    ticks = [r for r in t.records if r['kind'] == 'event' and r.get('name') == b'tick']
    check(len(ticks) == 20000, 'exit mid-trace: %d tick events in the archive, expected 20000'
          % len(ticks))


def test_streaming(trace, producer, checker, tmp, name, flags):
    """`trace record -o NAME FLAGS` of the producer; NAME and FLAGS may ask for compression."""
    out_file = os.path.join(tmp, name)
    start = time.monotonic()
    p = subprocess.Popen([trace, 'record', '--buffering-mode=streaming', '--buffer-size=1',
                          '-o', out_file] + flags + ['--', producer, '10'], env=env(tmp),
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    peak = [0]
    samples = [0]

    def sample():
        while p.poll() is None:
            try:
                with open('/proc/%d/status' % p.pid) as f:
                    for line in f:
                        if line.startswith('VmRSS:'):
                            peak[0] = max(peak[0], int(line.split()[1]))
                            samples[0] += 1
            except (OSError, ValueError):
                pass
            time.sleep(0.05)
    sampler = threading.Thread(target=sample)
    sampler.start()
    out, errb = p.communicate(timeout=60)
    sampler.join()
    elapsed = time.monotonic() - start
    err = errb.decode('utf-8', 'replace')
    check(p.returncode == 0, 'streaming: status %d: %s' % (p.returncode, err))
    attempted = attempted_of(out)
    row = summary_row(err, 'stream_producer')
    if not check(attempted and row, 'streaming: no count or summary row: %r %s' % (out, err)):
        return
    records, dropped, durable, state = row
    what = 'streaming to %s%s' % (name, ''.join(' ' + f for f in flags))
    size = os.path.getsize(out_file)
    with open(out_file, 'rb') as f:
        magic = f.read(4)
    compressed = name.endswith('.zst') or '--compress=zstd' in flags
    check((magic == ZSTD_MAGIC) == compressed, '%s: the file starts with %r (compressed: %s)'
          % (what, magic, compressed))
    # stream_check reads it with libtrace-reader: compressed or not, the same counts
    c = subprocess.run([checker, out_file, str(attempted)], stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, timeout=120)
    os.unlink(out_file)  # over a GiB uncompressed
    counts = dict(kv.split('=') for kv in c.stdout.decode().split())
    counts = {k: int(v) for k, v in counts.items()}
    events = counts.get('events', 0)
    archive_bytes = counts.get('bytes', 0)  # the FXT archive's, decompressed
    print('   attempted %d events in 10 s (%.1f M/s); %d in the archive (%.1f M/s, %.0f MiB, '
          '%.0f MiB on disk), %d dropped; trace record peak VmRSS %d KiB over %d samples; '
          '%.1f s in all' % (attempted, attempted / 10e6, events, events / 10e6,
                             archive_bytes / 2**20, size / 2**20, dropped, peak[0], samples[0],
                             elapsed), flush=True)
    check(c.returncode == 0 and counts.get('error') == 0 and counts.get('skipped') == 0,
          '%s: the archive does not read cleanly: %s %s' % (what, c.stdout, c.stderr[-500:]))
    check(counts.get('duplicates') == 0 and counts.get('out_of_range') == 0
          and counts.get('no_arg') == 0, '%s: bad events: %s' % (what, c.stdout))
    # The producer exits while its saves lag far behind: its provider waits, bounded (5 s),
    # for the manager to acknowledge the pending save, then stops and sends STOPPED
    # ("terminated"). On a disk slower than about 6 MB/s the manager holds that
    # acknowledgement longer (its output queue is above 32 MiB) and the provider exits first
    # ("exited"): which one depends on the disk's speed, so either is accepted here; the
    # orderly stop itself is asserted by the exit-mid-trace test, and the exact accounting
    # below holds in both cases.
    check(state in ('terminated', 'exited'), '%s: state "%s", expected "terminated" or '
          '"exited": %s' % (what, state, err[-2000:]))
    if state == 'exited':
        print('   note: the provider exited before its last save was acknowledged (slow disk)')
    # How much the producer outran the saves, and how large the archive grew, depend on the
    # machine's speed and load (a parallel build beside it halves them): reported, not
    # asserted. Everything asserted here holds however slow the disk or CPU is.
    if dropped == 0:
        print('   note: nothing dropped: the producer was not faster than the saves here')
    bound = rss_bound_kib(trace)
    if archive_bytes < 2 * bound * 1024:
        print('   note: the archive (%d bytes) is under twice the memory bound on this machine'
              % archive_bytes)
    if not compressed:
        check(archive_bytes == size, '%s: stream_check read %d bytes of a %d-byte file'
              % (what, archive_bytes, size))
    # DROPPED counts every record the engine could not write, metadata included. In streaming,
    # string and thread records go to the durable buffer and are dropped only when it is full;
    # with it under 100%, every dropped record is a tick event, so the counts compare exactly.
    check(durable != '100%', '%s: the durable buffer filled (%s)' % (what, durable))
    check(events + dropped == attempted,
          '%s: %d received + %d dropped = %d, attempted %d (off by %d)'
          % (what, events, dropped, events + dropped, attempted, attempted - events - dropped))
    check(samples[0] >= 5, '%s: only %d memory samples' % (what, samples[0]))
    check(peak[0] < bound, '%s: trace record peak VmRSS %d KiB >= %d KiB for a '
          '%d-byte archive (%d bytes on disk)' % (what, peak[0], bound, archive_bytes, size))


def main():
    if len(sys.argv) != 5:
        print('usage: test_streaming.py TRACE STREAM_PRODUCER STREAM_CHECK TOOLS_DIR',
              file=sys.stderr)
        return 2
    trace, producer, checker, tools = [os.path.abspath(a) for a in sys.argv[1:]]
    with tempfile.TemporaryDirectory(prefix='fxtrace-streaming-') as tmp:
        for name, fn, args in (('provider exiting normally mid-trace', test_exit_mid_trace,
                                (trace, producer, tools, tmp)),
                               ('streaming faster than the saves, 10 s', test_streaming,
                                (trace, producer, checker, tmp, 'stream.fxt', [])),
                               ('the same, --compress=zstd', test_streaming,
                                (trace, producer, checker, tmp, 'stream.fxt',
                                 ['--compress=zstd'])),
                               ('the same, to a .fxt.zst', test_streaming,
                                (trace, producer, checker, tmp, 'stream.fxt.zst', []))):
            before = len(FAILS)
            print('== %s' % name, flush=True)
            fn(*args)
            print('   %s' % ('ok' if len(FAILS) == before else 'FAILED'), flush=True)
    print('%d failure(s)' % len(FAILS))
    return 1 if FAILS else 0


if __name__ == '__main__':
    sys.exit(main())
