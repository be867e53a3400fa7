#!/usr/bin/env python3
"""A hostile user's fake trace manager: listens on SOCKET (SOCK_SEQPACKET,
mode 0777 so that anybody may connect) and appends one line to LOG for every
connection it accepts, then answers nothing and keeps the connection open
(a client that waited for an answer would hang). With --mkdir MODE it first
creates the socket's directory with that mode, as a squatter of another
user's default location would; with --symlink DIR it listens in DIR
(created 0777) and makes the socket's directory a symbolic link to it.
Writes READY to its stdout once listening; runs until killed.

usage: squatter.py SOCKET LOG [--mkdir MODE | --symlink DIR]
"""
import os
import socket
import sys


def main():
    path, log = sys.argv[1], sys.argv[2]
    bind_at = path
    if len(sys.argv) > 4 and sys.argv[3] == '--mkdir':
        directory = os.path.dirname(path)
        os.mkdir(directory)
        os.chmod(directory, int(sys.argv[4], 8))
    if len(sys.argv) > 4 and sys.argv[3] == '--symlink':
        target = sys.argv[4]
        os.mkdir(target)
        os.chmod(target, 0o777)
        bind_at = os.path.join(target, os.path.basename(path))
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    listener.bind(bind_at)
    os.chmod(bind_at, 0o777)
    if bind_at != path:
        os.symlink(os.path.dirname(bind_at), os.path.dirname(path))
    listener.listen(16)
    print('READY', flush=True)
    held = []
    while True:
        conn, _ = listener.accept()
        with open(log, 'a') as f:
            f.write('connection\n')
        held.append(conn)


if __name__ == '__main__':
    main()
