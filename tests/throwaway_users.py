"""Throwaway users (and optionally a group) for the tests that run as root and need other
users: created under names no account has, removed at the end whatever happens.

Names are never derived from the test's pid alone: pids wrap (pid_max is 32768 on a 2-CPU
machine) and an account left by a run that was killed before its cleanup would make the
next run with that pid fail in useradd ("already exists", exit 9). Processes still running
as a user at the end are killed first, since userdel refuses a user that owns a process
and would otherwise leave the account behind.
"""
import grp
import os
import pwd
import secrets
import signal
import subprocess
import time

USERADD_NAME_IN_USE = 9
GROUPADD_NAME_IN_USE = 9


def _free(name):
    for lookup in (pwd.getpwnam, grp.getgrnam):
        try:
            lookup(name)
            return False
        except KeyError:
            pass
    return True


def _pids_of(uid):
    pids = []
    for entry in os.listdir('/proc'):
        if not entry.isdigit():
            continue
        try:
            if os.stat('/proc/' + entry).st_uid != uid:
                continue
            with open('/proc/%s/stat' % entry) as f:
                state = f.read().rsplit(')', 1)[1].split()[0]
        except (FileNotFoundError, ProcessLookupError, IndexError):
            continue
        if state not in ('Z', 'X'):  # the dead hold nothing; their parents reap them
            pids.append(int(entry))
    return pids


def _kill_all_of(uid, timeout=10.0):
    """SIGKILL every live process of uid until none is left; the pids still alive after
    the timeout."""
    deadline = time.monotonic() + timeout
    while True:
        pids = _pids_of(uid)
        if not pids or time.monotonic() > deadline:
            return pids
        for pid in pids:
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        time.sleep(0.05)


class ThrowawayUsers:
    """`with ThrowawayUsers(['fxsa', 'fxsb'], group_prefix='fxg') as u:` makes users
    u.names[0], u.names[1] (each prefix plus one random tag), members of u.group if a
    group prefix is given."""

    def __init__(self, prefixes, group_prefix=None, attempts=20):
        self.prefixes = list(prefixes)
        self.group_prefix = group_prefix
        self.attempts = attempts
        self.names = []
        self.group = None
        self._made_users = []
        self._made_group = None

    def _pick(self):
        for _ in range(self.attempts):
            tag = secrets.token_hex(3)
            names = [p + tag for p in self.prefixes]
            group = self.group_prefix + tag if self.group_prefix else None
            if all(_free(n) for n in names + ([group] if group else [])):
                return names, group
        raise RuntimeError('no free throwaway user names after %d tries' % self.attempts)

    def __enter__(self):
        try:
            self._create()
        except BaseException:
            self._remove()
            raise
        return self

    def _create(self):
        for _ in range(self.attempts):
            self.names, self.group = self._pick()
            if self.group:
                r = subprocess.run(['groupadd', self.group])
                if r.returncode == GROUPADD_NAME_IN_USE:
                    continue  # taken between the look-up and groupadd: another tag
                r.check_returncode()
                self._made_group = self.group
            extra = ['-G', self.group] if self.group else []
            for name in self.names:
                r = subprocess.run(['useradd', '--no-create-home', '--home-dir', '/nonexistent',
                                    '--shell', '/bin/sh'] + extra + [name])
                if r.returncode == USERADD_NAME_IN_USE:
                    break
                r.check_returncode()
                self._made_users.append(name)
            else:
                return
            self._remove()  # a name was taken under us: start again with another tag
        raise RuntimeError('useradd kept finding the names taken')

    def _remove(self):
        problems = []
        for name in self._made_users:
            uid = pwd.getpwnam(name).pw_uid
            left = _kill_all_of(uid)
            if left:
                problems.append('processes of %s still running: %s' % (name, left))
            r = subprocess.run(['userdel', name], capture_output=True, text=True)
            if r.returncode != 0:
                problems.append('userdel %s: exit %d: %s' % (name, r.returncode, r.stderr.strip()))
        self._made_users = []
        if self._made_group:
            r = subprocess.run(['groupdel', self._made_group], capture_output=True, text=True)
            if r.returncode != 0:
                problems.append('groupdel %s: exit %d: %s' % (self._made_group, r.returncode,
                                                            r.stderr.strip()))
            self._made_group = None
        return problems

    def __exit__(self, exc_type, exc, tb):
        problems = self._remove()
        for p in problems:
            print('throwaway users: ' + p, flush=True)
        if problems and exc_type is None:
            raise RuntimeError('throwaway users left behind: ' + '; '.join(problems))
        return False

    def uid(self, i):
        return pwd.getpwnam(self.names[i]).pw_uid

    def ids(self, i):
        """uid, primary gid and the supplementary groups (the throwaway group, if any)."""
        u = pwd.getpwnam(self.names[i])
        groups = [grp.getgrnam(self.group).gr_gid] if self.group else []
        return u.pw_uid, u.pw_gid, groups
