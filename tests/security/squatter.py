#!/usr/bin/env python3
"""A hostile user's fake trace manager: listens on SOCKET (SOCK_SEQPACKET,
mode 0777 so that anybody may connect) and appends one line to LOG for every
connection it accepts, then answers nothing. With --mkdir MODE it first
creates the socket's directory with that mode, as a squatter of another
user's default location would. Writes READY to its stdout once listening;
runs until killed.

usage: squatter.py SOCKET LOG [--mkdir MODE]
"""
import os
import socket
import sys


def main():
    path, log = sys.argv[1], sys.argv[2]
    if len(sys.argv) > 4 and sys.argv[3] == '--mkdir':
        directory = os.path.dirname(path)
        os.mkdir(directory)
        os.chmod(directory, int(sys.argv[4], 8))
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    listener.bind(path)
    os.chmod(path, 0o777)
    listener.listen(16)
    print('READY', flush=True)
    while True:
        conn, _ = listener.accept()
        with open(log, 'a') as f:
            f.write('connection\n')
        conn.close()


if __name__ == '__main__':
    main()
