#!/usr/bin/env python3
"""Every descriptor fxtrace opens is close-on-exec (issue 18): a program that
`trace record` runs, or that a traced program execs, must not inherit the
kernel reader's trace_pipe_raw files, the manager's sockets or a provider's
buffers. Flags each call in the C sources that opens a descriptor without its
close-on-exec flag:

  open/openat/open64/openat64      O_CLOEXEC in the flags
  socket/socketpair/accept4        SOCK_CLOEXEC
  pipe2, dup3, mkostemp(s)         O_CLOEXEC
  memfd_create                     MFD_CLOEXEC
  eventfd, timerfd_create,         EFD_CLOEXEC, TFD_CLOEXEC,
  signalfd, epoll_create1,         SFD_CLOEXEC, EPOLL_CLOEXEC,
  inotify_init1                    IN_CLOEXEC
  tracefs_instance_file_open       O_CLOEXEC
  fcntl(F_DUPFD)                   use F_DUPFD_CLOEXEC
  fopen/freopen/popen              'e' in a literal mode string
  recvmsg in a file passing        MSG_CMSG_CLOEXEC (descriptors received
  descriptors (SCM_RIGHTS)         with SCM_RIGHTS)
  pipe, dup, dup2, accept, creat,  always: they have no flag (use the forms
  epoll_create, inotify_init,      above, or O_TMPFILE / mkostemp for
  mkstemp(s), tmpfile,             tmpfile)
  tracefs_cpu_open/alloc_fd        (libtracefs: trace_pipe_raw and its pipes
                                   inheritable; src/kernel/kcpu.h instead)

dup2/dup3 onto standard input, output or error (0, 1, 2, STD*_FILENO) are
allowed: those are meant to cross the exec. opendir(3) and shm_open(3) open
close-on-exec in glibc and are not flagged.

usage: test_cloexec.py SOURCE_DIR   (checks SOURCE_DIR/src and SOURCE_DIR/include)
       test_cloexec.py --selftest   (the checker against known good and bad calls)
"""

import os
import re
import sys

FLAG_RULES = {
    'open': 'O_CLOEXEC', 'open64': 'O_CLOEXEC', 'openat': 'O_CLOEXEC', 'openat64': 'O_CLOEXEC',
    'socket': 'SOCK_CLOEXEC', 'socketpair': 'SOCK_CLOEXEC', 'accept4': 'SOCK_CLOEXEC',
    'pipe2': 'O_CLOEXEC', 'mkostemp': 'O_CLOEXEC', 'mkostemps': 'O_CLOEXEC',
    'memfd_create': 'MFD_CLOEXEC', 'eventfd': 'EFD_CLOEXEC', 'timerfd_create': 'TFD_CLOEXEC',
    'signalfd': 'SFD_CLOEXEC', 'epoll_create1': 'EPOLL_CLOEXEC', 'inotify_init1': 'IN_CLOEXEC',
    'tracefs_instance_file_open': 'O_CLOEXEC',
}
NEVER = {
    'pipe': 'pipe2(fds, O_CLOEXEC)', 'dup': 'fcntl(fd, F_DUPFD_CLOEXEC, 0)',
    'dup2': 'dup3(old, new, O_CLOEXEC)', 'accept': 'accept4(..., SOCK_CLOEXEC)',
    'creat': 'open(..., O_CLOEXEC)', 'epoll_create': 'epoll_create1(EPOLL_CLOEXEC)',
    'inotify_init': 'inotify_init1(IN_CLOEXEC)', 'mkstemp': 'mkostemp(template, O_CLOEXEC)',
    'mkstemps': 'mkostemps(template, n, O_CLOEXEC)', 'tmpfile': 'open(dir, O_TMPFILE | O_CLOEXEC)',
    'tmpfile64': 'open(dir, O_TMPFILE | O_CLOEXEC)',
    # libtracefs opens trace_pipe_raw and its pipes without close-on-exec
    'tracefs_cpu_open': 'kcpu__open() (src/kernel/kcpu.h)',
    'tracefs_cpu_alloc_fd': 'kcpu__open() (src/kernel/kcpu.h)',
}
MODE_FUNCS = {'fopen': 1, 'fopen64': 1, 'freopen': 1, 'popen': 1}  # index of the mode argument
STDIO = {'0', '1', '2', 'STDIN_FILENO', 'STDOUT_FILENO', 'STDERR_FILENO'}
CALL = re.compile(r'(?<![\w.>])(' + '|'.join(
    sorted(set(FLAG_RULES) | set(NEVER) | set(MODE_FUNCS) | {'dup3', 'fcntl', 'recvmsg'},
           key=len, reverse=True)) + r')\s*\(')


def strip_comments(text):
    """The text with comments blanked (newlines kept), strings untouched."""
    out, i, n = [], 0, len(text)
    while i < n:
        c = text[i]
        if c in '"\'':
            j = i + 1
            while j < n and text[j] != c:
                j += 2 if text[j] == '\\' else 1
            out.append(text[i:j + 1])
            i = j + 1
        elif text.startswith('/*', i):
            j = text.find('*/', i + 2)
            j = n if j < 0 else j + 2
            out.append(re.sub(r'[^\n]', ' ', text[i:j]))
            i = j
        elif text.startswith('//', i):
            j = text.find('\n', i)
            j = n if j < 0 else j
            out.append(' ' * (j - i))
            i = j
        else:
            out.append(c)
            i += 1
    return ''.join(out)


def mask_strings(code):
    """code with the insides of string and character literals blanked (same
    length), so that a call's name is never found inside one."""
    return re.sub(r'"(?:\\.|[^"\\\n])*"|\'(?:\\.|[^\'\\\n])*\'',
                  lambda m: m.group(0)[0] + ' ' * (len(m.group(0)) - 2) + m.group(0)[-1], code)


def arguments(text, start):
    """The top-level arguments of the call whose '(' is at text[start - 1]."""
    args, depth, i, cur = [], 0, start, []
    while i < len(text):
        c = text[i]
        if c in '"\'':
            j = i + 1
            while j < len(text) and text[j] != c:
                j += 2 if text[j] == '\\' else 1
            cur.append(text[i:j + 1])
            i = j + 1
            continue
        if c in '([{':
            depth += 1
        elif c in ')]}':
            if depth == 0:
                args.append(''.join(cur).strip())
                return args
            depth -= 1
        elif c == ',' and depth == 0:
            args.append(''.join(cur).strip())
            cur = []
            i += 1
            continue
        cur.append(c)
        i += 1
    return None


def is_declaration(text, pos):
    """A prototype or definition rather than a call: a type name just before."""
    before = text[max(0, pos - 40):pos].rstrip()
    return re.search(r'\b(int|void|FILE\s*\*|ssize_t|char\s*\*)\s*\**$', before) is not None


def check_text(text):
    """[(line, message)] for the calls in `text` that open without close-on-exec."""
    code = strip_comments(text)
    passes_fds = 'SCM_RIGHTS' in code
    problems = []
    for m in CALL.finditer(mask_strings(code)):
        name = m.group(1)
        if is_declaration(code, m.start()):
            continue
        args = arguments(code, m.end())
        if args is None:
            continue
        line = code.count('\n', 0, m.start()) + 1
        joined = ' '.join(args)
        if name in NEVER:
            if name == 'dup2' and len(args) == 2 and args[1] in STDIO:
                continue
            problems.append((line, '%s() has no close-on-exec flag: use %s' % (name, NEVER[name])))
        elif name in FLAG_RULES:
            if not re.search(r'\b%s\b' % FLAG_RULES[name], joined):
                problems.append((line, '%s() without %s' % (name, FLAG_RULES[name])))
        elif name == 'dup3':
            if len(args) == 3 and args[1] not in STDIO and not re.search(r'\bO_CLOEXEC\b', args[2]):
                problems.append((line, 'dup3() without O_CLOEXEC'))
        elif name == 'fcntl':
            if len(args) >= 2 and re.fullmatch(r'F_DUPFD', args[1]):
                problems.append((line, 'fcntl(F_DUPFD): use F_DUPFD_CLOEXEC'))
        elif name == 'recvmsg':
            if passes_fds and not re.search(r'\bMSG_CMSG_CLOEXEC\b', joined):
                problems.append((line, 'recvmsg() in a file that receives descriptors '
                                       '(SCM_RIGHTS) without MSG_CMSG_CLOEXEC'))
        elif name in MODE_FUNCS:
            k = MODE_FUNCS[name]
            mode = args[k] if len(args) > k else ''
            lit = re.fullmatch(r'"([^"]*)"', mode)
            if not lit:
                problems.append((line, '%s() with a mode that is not a literal string: cannot '
                                       'tell it has "e"' % name))
            elif 'e' not in lit.group(1):
                problems.append((line, '%s() with mode "%s": add "e" (close-on-exec)' %
                                 (name, lit.group(1))))
    return problems


SELFTEST_BAD = [
    'int f(void) { return open("x", O_RDONLY); }',
    'void f(void) { int fd = openat(d,\n "x",\n O_RDONLY | O_NONBLOCK); }',
    'void f(void) { socket(AF_UNIX, SOCK_STREAM, 0); }',
    'void f(int s) { accept(s, NULL, NULL); }',
    'void f(int s) { accept4(s, NULL, NULL, SOCK_NONBLOCK); }',
    'void f(int* p) { pipe(p); }',
    'void f(int* p) { pipe2(p, O_NONBLOCK); }',
    'void f(int a) { dup(a); }',
    'void f(int a) { dup2(a, 7); }',
    'void f(int a) { dup3(a, 7, 0); }',
    'void f(int a) { fcntl(a, F_DUPFD, 3); }',
    'void f(void) { memfd_create("x", MFD_ALLOW_SEALING); }',
    'void f(void) { fopen("/proc/self/comm", "r"); }',
    'void f(const char* m) { fopen("x", m); }',
    'void f(void) { tmpfile(); }',
    'void f(char* t) { mkstemp(t); }',
    'void f(void) { epoll_create(1); }',
    'void f(void) { epoll_create1(0); }',
    'void f(void) { eventfd(0, EFD_NONBLOCK); }',
    'void f(void) { timerfd_create(CLOCK_MONOTONIC, 0); }',
    'int x = SCM_RIGHTS; void f(int s, struct msghdr* m) { recvmsg(s, m, 0); }',
    'void f(void) { FILE* g = cond ? stdout : fopen(path, "wb"); }',
    'void f(void) { tcpu[cpu] = tracefs_cpu_open(instance, cpu, true); }',
    'void f(void) { tracefs_instance_file_open(instance, "trace_pipe", O_RDONLY); }',
]
SELFTEST_GOOD = [
    'int f(void) { return open("x", O_RDONLY | O_CLOEXEC); }',
    'void f(void) { int fd = openat(d,\n "x",\n O_RDONLY | O_CLOEXEC); }',
    'void f(void) { socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0); }',
    'void f(int s) { accept4(s, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK); }',
    'void f(int* p) { pipe2(p, O_CLOEXEC | O_NONBLOCK); }',
    'void f(void) { dup2(STDERR_FILENO, STDOUT_FILENO); }',
    'void f(int a) { fcntl(a, F_DUPFD_CLOEXEC, 3); fcntl(a, F_SETFL, 0); }',
    'void f(void) { memfd_create("x", MFD_CLOEXEC | MFD_ALLOW_SEALING); }',
    'void f(void) { fopen("/proc/self/comm", "re"); fopen(p, "wbe"); }',
    'void f(char* t) { mkostemp(t, O_CLOEXEC); }',
    'void f(void) { epoll_create1(EPOLL_CLOEXEC); eventfd(0, EFD_CLOEXEC); }',
    'int x = SCM_RIGHTS; void f(int s, struct msghdr* m) { recvmsg(s, m, MSG_CMSG_CLOEXEC); }',
    'void f(int s, struct msghdr* m) { recvmsg(s, m, 0); }',  # no descriptors passed here
    '/* open("x", O_RDONLY) in a comment */ void f(void) { puts("pipe(p)"); }',
    'void f(struct ops* o) { o->open(x); o.pipe(p); reopen(x); my_dup(y); }',
    'int open(const char* path, int flags, ...);',
]


def selftest():
    failed = 0
    for snippet in SELFTEST_BAD:
        if not check_text(snippet):
            print('FAIL: not flagged: %r' % snippet)
            failed += 1
    for snippet in SELFTEST_GOOD:
        problems = check_text(snippet)
        if problems:
            print('FAIL: flagged %r: %s' % (snippet, problems))
            failed += 1
    print('selftest: %d bad calls flagged, %d good ones passed, %d wrong' %
          (len(SELFTEST_BAD), len(SELFTEST_GOOD), failed))
    return failed


def main():
    if len(sys.argv) != 2:
        print(__doc__)
        return 2
    failed = selftest()
    if sys.argv[1] == '--selftest':
        return 1 if failed else 0
    root = sys.argv[1]
    checked = 0
    for top in ('src', 'include'):
        for directory, _, files in os.walk(os.path.join(root, top)):
            for name in sorted(files):
                if not name.endswith(('.c', '.h', '.cc')):
                    continue
                path = os.path.join(directory, name)
                with open(path, encoding='utf-8', errors='replace') as f:
                    text = f.read()
                checked += 1
                for line, message in check_text(text):
                    print('FAIL: %s:%d: %s' % (os.path.relpath(path, root), line, message))
                    failed += 1
    if checked == 0:
        print('FAIL: no source file under %s/src' % root)
        return 1
    if failed == 0:
        print('ok: every descriptor opened in %d source files is close-on-exec' % checked)
    return 1 if failed else 0


if __name__ == '__main__':
    sys.exit(main())
