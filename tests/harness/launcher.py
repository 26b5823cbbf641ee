"""The ``dsh`` the suite's children run: a dsh forked by this worker's fork server, else a real one.

``dsh_under_test`` writes this file as an executable ``dsh`` (run by ``python -IS``: no site, no
imports but the standard library's) beside ``dsh-real``, the real start. With the server's socket
in ``DSH_TEST_FORKSERVER``, no terminal on the standard descriptors and the server willing, the
launcher hands its descriptors to a forked dsh, passes on the signals it gets, and ends as that
dsh ended (its exit code, or killed by its signal). Otherwise it becomes ``dsh-real``.
"""

import array
import json
import os
import signal
import socket
import sys

_MAX_FDS = 64  # as many as the fork server takes in one message
_FORWARDED = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP, signal.SIGQUIT, signal.SIGUSR1,
              signal.SIGUSR2, signal.SIGWINCH, signal.SIGCONT, signal.SIGALRM)


_PENDING: list[int] = []  # signals that came before there was a dsh to pass them to


def _real() -> None:
    """Become the real start; a signal that came meanwhile ends this process as it would end a
    dsh that had not yet started."""
    for number in _FORWARDED:
        signal.signal(number, signal.SIG_DFL)
    for number in _PENDING:
        os.kill(os.getpid(), number)
    real = os.path.join(os.path.dirname(os.path.abspath(__file__)), "dsh-real")
    os.execv(real, [real, *sys.argv[1:]])


def _send_on(pid: int, number: int) -> None:
    try:
        os.kill(pid, number)
    except ProcessLookupError:  # the dsh has ended; its end is on its way to this process
        pass


def _open_fds() -> list[int]:
    found = []
    for name in os.listdir("/proc/self/fd"):
        fd = int(name)
        try:
            os.fstat(fd)
        except OSError:
            continue  # the listing's own descriptor, closed by now
        found.append(fd)
    return sorted(found)


def _connect(path: str) -> socket.socket | None:
    link = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    try:
        link.connect(path)
    except OSError:
        link.close()
        return None
    return link


def main() -> None:
    path = os.environ.get("DSH_TEST_FORKSERVER", "")
    if not path or any(os.isatty(fd) for fd in (0, 1, 2) if _is_open(fd)):
        _real()
    child = [0]

    def forward(number: int, _frame: object) -> None:
        if child[0]:
            _send_on(child[0], number)
        else:
            _PENDING.append(number)

    for number in _FORWARDED:
        signal.signal(number, forward)
    fds = _open_fds()
    link = _connect(path) if len(fds) <= _MAX_FDS else None
    if link is None:
        _real()
        return
    umask = os.umask(0)
    os.umask(umask)
    body = json.dumps({"argv": [os.path.abspath(__file__), *sys.argv[1:]],
                       "env": dict(os.environ), "cwd": os.getcwd(), "umask": umask,
                       "targets": fds}).encode()
    try:
        link.sendmsg([body], [(socket.SOL_SOCKET, socket.SCM_RIGHTS, array.array("i", fds))])
        reply = link.recv(64)
    except OSError:  # too large a message (an environment of megabytes): start for real
        reply = b""
    if not reply.startswith(b"P "):
        link.close()
        _real()
        return
    child[0] = int(reply[2:])
    # the dsh holds the descriptors now: this process's copies must not keep a pipe open
    null = os.open(os.devnull, os.O_RDWR)
    for fd in fds:
        if fd != link.fileno():
            if fd <= 2:
                os.dup2(null, fd)
            else:
                os.close(fd)
    os.close(null)
    for number in _PENDING:
        _send_on(child[0], number)
    ended = link.recv(64)
    if ended.startswith(b"X "):
        os._exit(int(ended[2:]) & 0xFF)
    if ended.startswith(b"S "):
        number = int(ended[2:])
        if number != signal.SIGKILL:
            signal.signal(number, signal.SIG_DFL)
        signal.pthread_sigmask(signal.SIG_UNBLOCK, [number])
        os.kill(os.getpid(), number)
        os._exit(128 + number)
    os._exit(255)  # the fork server went away without a word


def _is_open(fd: int) -> bool:
    try:
        os.fstat(fd)
    except OSError:
        return False
    return True


if __name__ == "__main__":
    main()
