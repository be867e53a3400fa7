"""What the Python tests share: recording failed checks, running a list of tests, reading and
writing whole files, skipping without tracefs, stopping a trace_manager daemon. A test script
puts tests/tools on sys.path and imports what it uses.

Failures are kept, not raised, so that one run reports every broken check; the script's exit
status comes from `status()` (0, or 1 after any failure)."""
import os
import signal
import subprocess
import sys
import traceback

FAILS = []   # the messages of failed checks, in order
CHECKS = [0]  # checks made (a list so that importers see the count change)


def check(cond, msg, indent=''):
    """Counts a check; a false `cond` records and prints `msg`. Returns `cond`."""
    CHECKS[0] += 1
    if not cond:
        FAILS.append(msg)
        print('%sFAIL: %s' % (indent, msg), flush=True)
    return cond


def status():
    """The exit status for the checks made so far, after a closing line."""
    print('%d checks, %d failure(s)' % (CHECKS[0], len(FAILS)), flush=True)
    return 1 if FAILS else 0


def run_tests(tests, skip=()):
    """Runs each (name, function) of `tests` in order, under a line `== name`, then `ok` or
    `FAILED`. A test that raises fails (its traceback is the failure's message) and the tests
    after it still run; one that raises an exception of a class in `skip` is skipped (`SKIPPED:`
    and its message). Returns the names of the tests skipped."""
    skipped = []
    for name, fn in tests:
        before = len(FAILS)
        print('== %s' % name, flush=True)
        try:
            fn()
        except skip as why:
            skipped.append(name)
            print('   SKIPPED: %s' % why, flush=True)
            continue
        except Exception:
            FAILS.append('%s: test raised:\n%s' % (name, traceback.format_exc()))
            print(FAILS[-1])
        print('   %s' % ('ok' if len(FAILS) == before else 'FAILED'), flush=True)
    return skipped


def read_bytes(path):
    """The whole file's bytes."""
    with open(path, 'rb') as f:
        return f.read()


def write_bytes(path, data):
    """Writes `data` as the whole file."""
    with open(path, 'wb') as f:
        f.write(data)


def skip_unless_tracefs(why='the kernel provider needs root (tracefs)'):
    """Exits with ctest's skip status (77) unless this runs as root with tracefs mounted (it is
    mounted here if it can be)."""
    if os.geteuid() != 0:
        print('SKIP: ' + why)
        sys.exit(77)
    with open('/proc/mounts') as mounts:
        have = any(line.split()[2] == 'tracefs' for line in mounts)
    if not have:
        r = subprocess.run(['mount', '-t', 'tracefs', 'nodev', '/sys/kernel/tracing'],
                           capture_output=True)
        if r.returncode != 0:
            print('SKIP: tracefs is not available: ' + r.stderr.decode().strip())
            sys.exit(77)


def stop_daemon(d, timeout=20):
    """Stops a trace_manager (or any child) with SIGTERM, killing it after `timeout` seconds.
    True when it exited on SIGTERM."""
    d.send_signal(signal.SIGTERM)
    try:
        d.wait(timeout=timeout)
        return True
    except subprocess.TimeoutExpired:
        d.kill()
        d.wait()
        return False
