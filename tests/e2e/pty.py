#!/usr/bin/python3
# pty.py: runs a command on a terminal this script owns, the way a person's terminal would run
# it, and plays a script of steps against it (tests/e2e/pty.sh).
#
# usage: pty.py TRANSCRIPT [STEP]... -- CMD [ARG]...
#   size:R:C      window size before the start (default 24x80)
#   expect:TEXT   wait until the output so far contains TEXT (\n \r \x03 escapes; 20 s at most)
#   send:TEXT     type TEXT (same escapes)
#   sleep:S       wait S seconds
#   wait:PATH     wait until the file PATH exists (20 s at most)
#   resize:R:C    change the window size (the terminal sends SIGWINCH to its foreground group)
#   kill:SIG      send signal SIG (a number) to CMD
#   modes         print modes=same or modes=changed: the terminal's modes now against before
# CMD is the session leader with the terminal as its controlling terminal. At the end (CMD
# exited; 60 s at most) the output goes to TRANSCRIPT and stdout gets three lines:
#   rc=N            CMD's exit status (128+N for signal N, as a shell says), or rc=timeout
#   termios=same    the terminal's modes are what they were before CMD started (else: changed)
#   tty=MAJ:MIN     the terminal's device number, hex as stat(1) %t:%T
import fcntl
import os
import select
import signal
import struct
import sys
import termios
import time


def unescape(s):
    return s.encode().decode('unicode_escape').encode('latin-1')


def main():
    transcript = sys.argv[1]
    args = sys.argv[2:]
    sep = args.index('--')
    steps, cmd = args[:sep], args[sep + 1:]
    rows, cols = 24, 80
    for s in steps:
        if s.startswith('size:'):
            _, r, c = s.split(':')
            rows, cols = int(r), int(c)
    master, replica = os.openpty()
    fcntl.ioctl(master, termios.TIOCSWINSZ, struct.pack('HHHH', rows, cols, 0, 0))
    before = termios.tcgetattr(master)
    st = os.fstat(replica)
    pid = os.fork()
    if pid == 0:
        os.close(master)
        os.setsid()
        fcntl.ioctl(replica, termios.TIOCSCTTY, 0)
        for fd in (0, 1, 2):
            os.dup2(replica, fd)
        if replica > 2:
            os.close(replica)
        os.execvp(cmd[0], cmd)
    os.close(replica)
    out = bytearray()
    status = None

    def pump(timeout):
        nonlocal status
        r, _, _ = select.select([master], [], [], timeout)
        if r:
            try:
                data = os.read(master, 65536)
            except OSError:
                data = b''
            out.extend(data)
        if status is None:
            w, s = os.waitpid(pid, os.WNOHANG)
            if w:
                status = s

    for s in steps:
        kind, _, arg = s.partition(':')
        if kind == 'expect':
            want = unescape(arg)
            end = time.time() + 20
            while want not in out and time.time() < end:
                pump(0.05)
        elif kind == 'send':
            os.write(master, unescape(arg))
        elif kind == 'wait':
            end = time.time() + 20
            while not os.path.exists(arg) and time.time() < end:
                pump(0.05)
        elif kind == 'sleep':
            end = time.time() + float(arg)
            while time.time() < end:
                pump(0.05)
        elif kind == 'resize':
            _, r, c = s.split(':')
            fcntl.ioctl(master, termios.TIOCSWINSZ, struct.pack('HHHH', int(r), int(c), 0, 0))
        elif kind == 'kill':
            os.kill(pid, int(arg))
        elif kind == 'modes':
            now = termios.tcgetattr(master)
            print('modes=%s' % ('same' if now == before else 'changed'), flush=True)
    end = time.time() + 60
    while status is None and time.time() < end:
        pump(0.05)
    # what is still in the terminal after CMD exited
    while True:
        r, _, _ = select.select([master], [], [], 0.2)
        if not r:
            break
        try:
            data = os.read(master, 65536)
        except OSError:
            break
        if not data:
            break
        out.extend(data)
    after = termios.tcgetattr(master)
    with open(transcript, 'wb') as f:
        f.write(out)
    if status is None:
        os.kill(pid, signal.SIGKILL)
        os.waitpid(pid, 0)
        print('rc=timeout')
    elif os.WIFSIGNALED(status):
        print('rc=%d' % (128 + os.WTERMSIG(status)))
    else:
        print('rc=%d' % os.WEXITSTATUS(status))
    print('termios=%s' % ('same' if before == after else 'changed'))
    print('tty=%x:%x' % (os.major(st.st_rdev), os.minor(st.st_rdev)))


main()
