"""The suite's fork server: one process per worker that has imported dsh and its SDKs once, and
forks a dsh for each ``dsh`` the tests start, so a start costs a fork instead of ~1 CPU-s of
imports (the MCP and OpenAI SDKs build some thousand pydantic classes).

Run as a script, with ``-P`` (no folder of this file on the children's path): ``python -P
forkserver.py SOCKET``. ``harness/launcher.py`` (the ``dsh`` on every
child's PATH) sends its arguments, environment, working directory and open descriptors over
SOCKET (a ``SOCK_SEQPACKET`` Unix socket); the server forks, the child becomes that dsh (its
descriptors, environment, arguments, folder, umask, a process group of its own) and the server
tells the launcher the child's pid, then how it ended. A launcher that goes away takes its dsh
with it (SIGKILL). The server refuses, and the launcher starts a dsh for real, when the child's
Python would start differently (``PYTHON*`` or locale variables not the server's).
"""

from __future__ import annotations

import array
import ast
import atexit
import gc
import importlib
import json
import os
import pkgutil
import selectors
import signal
import socket
import sys
import threading
from dataclasses import dataclass, field
from pathlib import Path

# what decides how Python starts: a request that changes any of these is started for real
_STARTUP = ("LANG", "LC_ALL", "LC_CTYPE")
_MAX_FDS = 64
_MAX_MESSAGE = 1 << 20


def _startup_env(env: dict[str, str]) -> dict[str, str]:
    return {k: v for k, v in env.items() if k.startswith("PYTHON") or k in _STARTUP}


def _preload() -> None:
    """Import every dsh module and every module one of them names, at its top or in a function."""
    import dsh_cli

    for info in pkgutil.walk_packages(dsh_cli.__path__, "dsh_cli."):
        if not info.name.endswith("__main__"):
            _try_import(info.name)
    for name in sorted(_named_modules(Path(dsh_cli.__file__).parent)):
        _try_import(name)


def _named_modules(package: Path) -> set[str]:
    names: set[str] = set()
    for source in package.rglob("*.py"):
        for node in ast.walk(ast.parse(source.read_bytes())):
            if isinstance(node, ast.Import):
                names.update(alias.name for alias in node.names)
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                names.add(node.module)
    return {name for name in names if not name.startswith("dsh_cli")}


def _try_import(name: str) -> None:
    try:
        importlib.import_module(name)
    except Exception:  # what cannot load here loads (or fails) in the child
        pass


@dataclass
class _Request:
    argv: list[str]
    env: dict[str, str]
    cwd: str
    umask: int
    targets: list[int]
    fds: list[int] = field(default_factory=list)


def _receive(conn: socket.socket) -> _Request | None:
    fds = array.array("i")
    message, ancillary, _flags, _addr = conn.recvmsg(
        _MAX_MESSAGE, socket.CMSG_SPACE(_MAX_FDS * fds.itemsize))
    for level, kind, data in ancillary:
        if level == socket.SOL_SOCKET and kind == socket.SCM_RIGHTS:
            fds.frombytes(data[: len(data) - (len(data) % fds.itemsize)])
    try:
        body = json.loads(message)
        if len(body["targets"]) != len(fds):  # descriptors lost on the way: start for real
            raise ValueError("descriptors missing")
        return _Request(argv=body["argv"], env=body["env"], cwd=body["cwd"],
                        umask=body["umask"], targets=body["targets"], fds=list(fds))
    except (ValueError, KeyError, TypeError):  # nothing sent (the launcher went away), or not ours
        for fd in fds:
            os.close(fd)
        return None


class _Server:
    """Accepts launchers, forks their dsh, reports each one's end."""

    def __init__(self, path: str) -> None:
        self.path = path
        self.startup = _startup_env(dict(os.environ))
        self.selector = selectors.DefaultSelector()
        self.children: dict[int, socket.socket | None] = {}  # pid → its launcher's link
        self.links: dict[socket.socket, int] = {}
        self.wake_read, self.wake_write = os.pipe()
        os.set_blocking(self.wake_read, False)
        os.set_blocking(self.wake_write, False)
        self.listener = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        self.stopping = False

    def serve(self) -> _Request | None:
        """Serve until told to stop (returns None) or, in a forked child, its request."""
        signal.set_wakeup_fd(self.wake_write)
        signal.signal(signal.SIGCHLD, lambda *_: None)
        signal.signal(signal.SIGTERM, self._stop)
        signal.signal(signal.SIGINT, self._stop)
        staging = f"{self.path}.{os.getpid()}"
        self.listener.bind(staging)
        self.listener.listen(128)
        os.rename(staging, self.path)  # launchers see the socket only once it is listening
        self.selector.register(self.listener, selectors.EVENT_READ)
        self.selector.register(self.wake_read, selectors.EVENT_READ)
        while not self.stopping:
            for key, _ in self.selector.select():
                if key.fileobj is self.listener:
                    conn, _ = self.listener.accept()
                    self.selector.register(conn, selectors.EVENT_READ)
                elif key.fileobj == self.wake_read:
                    self._drain()
                    self._reap()
                else:
                    request = self._readable(key.fileobj)  # type: ignore[arg-type]
                    if request is not None:
                        return request
        for pid in self.children:
            _kill(pid)
        return None

    def _stop(self, *_: object) -> None:
        self.stopping = True

    def _drain(self) -> None:
        try:
            while os.read(self.wake_read, 512):
                pass
        except BlockingIOError:
            pass

    def _readable(self, conn: socket.socket) -> _Request | None:
        pid = self.links.get(conn)
        if pid is not None:  # a launcher sends once: anything more is its going away
            self._forget(conn)
            self.children[pid] = None
            _kill(pid)
            return None
        try:
            request = _receive(conn)
        except OSError:
            request = None
        if request is None:
            self._forget(conn)
            return None
        if (_startup_env(request.env) != self.startup or not _alike(_peer(conn))
                or threading.active_count() > 1):
            _send(conn, b"R")
            self._forget(conn)
            for fd in request.fds:
                os.close(fd)
            return None
        pid = os.fork()
        if pid == 0:
            self._become(request)
            return request
        for fd in request.fds:
            os.close(fd)
        self.children[pid] = conn
        self.links[conn] = pid
        _send(conn, b"P %d" % pid)
        return None

    def _forget(self, conn: socket.socket) -> None:
        self.selector.unregister(conn)
        self.links.pop(conn, None)
        conn.close()

    def _reap(self) -> None:
        while self.children:
            try:
                pid, status = os.waitpid(-1, os.WNOHANG)
            except ChildProcessError:
                return
            if pid == 0:
                return
            conn = self.children.pop(pid, None)
            if conn is None:
                continue
            if os.WIFSIGNALED(status):
                _send(conn, b"S %d" % os.WTERMSIG(status))
            else:
                _send(conn, b"X %d" % os.waitstatus_to_exitcode(status))
            self._forget(conn)

    def _become(self, request: _Request) -> None:
        """In the child: drop the server's state and take on the launcher's process."""
        signal.set_wakeup_fd(-1)
        for number in range(1, signal.NSIG):
            if number in (signal.SIGKILL, signal.SIGSTOP):
                continue
            try:
                signal.signal(number, signal.SIG_DFL)
            except (OSError, ValueError):
                pass
        signal.signal(signal.SIGINT, signal.default_int_handler)
        signal.signal(signal.SIGPIPE, signal.SIG_IGN)  # as Python's own start leaves it
        signal.pthread_sigmask(signal.SIG_SETMASK, [])
        self.selector.close()
        self.listener.close()
        for conn in list(self.links):
            conn.close()
        os.close(self.wake_read)
        os.close(self.wake_write)
        os.setpgid(0, 0)
        high = [_dup_high(fd) for fd in request.fds]
        for fd in request.fds:
            os.close(fd)
        for number in (0, 1, 2):
            if number not in request.targets:
                os.close(number)
        for target, fd in zip(request.targets, high, strict=True):
            os.dup2(fd, target, inheritable=True)
            os.close(fd)
        os.environ.clear()
        os.environ.update(request.env)
        os.chdir(request.cwd)
        os.umask(request.umask)
        sys.argv = list(request.argv)
        _reopen_stdio()


def _peer(conn: socket.socket) -> tuple[int, int, int]:
    """The launcher's pid, uid and gid."""
    import struct

    return struct.unpack("3i", conn.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED,
                                               struct.calcsize("3i")))


def _terminal(pid: int) -> int:
    """The controlling terminal's device (``/proc/PID/stat``'s ``tty_nr``), 0 for none."""
    with open(f"/proc/{pid}/stat", encoding="ascii") as stat:
        return int(stat.read().rsplit(")", 1)[1].split()[4])


def _alike(peer: tuple[int, int, int]) -> bool:
    """Whether a child forked here is in the launcher's world: its user, its controlling
    terminal (none, in a run without one), its namespaces (a test's ``unshare -m`` mounts) and
    its root. Another session alone is alike: with no terminal a session changes nothing the
    dsh sees, and the launcher passes on the signals a test sends its process group."""
    pid, uid, gid = peer
    if (uid, gid) != (os.getuid(), os.getgid()):
        return False
    try:
        if _terminal(pid) != _terminal(os.getpid()):
            return False
        own = [os.readlink(f"/proc/self/{name}") for name in _NAMESPACES]
        return own == [os.readlink(f"/proc/{pid}/{name}") for name in _NAMESPACES]
    except OSError:
        return False


_NAMESPACES = ("root", "ns/mnt", "ns/pid", "ns/net", "ns/ipc", "ns/uts", "ns/user", "ns/cgroup")


def _dup_high(fd: int) -> int:
    import fcntl

    return fcntl.fcntl(fd, fcntl.F_DUPFD_CLOEXEC, 100)


def _reopen_stdio() -> None:
    """Standard streams over the launcher's descriptors, made as Python makes them at start."""
    import io

    def stream(fd: int, mode: str, old: io.TextIOWrapper | None) -> io.TextIOWrapper | None:
        try:
            os.fstat(fd)
        except OSError:
            return None
        encoding = old.encoding if old else "utf-8"
        errors = old.errors if old else "strict"
        raw = io.FileIO(fd, mode, closefd=False)
        buffered: io.BufferedIOBase = (io.BufferedReader(raw) if mode == "r"
                                       else io.BufferedWriter(raw))
        return io.TextIOWrapper(buffered, encoding=encoding, errors=errors,
                                line_buffering=mode == "w" and raw.isatty(),
                                write_through=fd == 2)

    sys.stdin = sys.__stdin__ = stream(0, "r", sys.__stdin__)  # type: ignore[misc,arg-type]
    sys.stdout = sys.__stdout__ = stream(1, "w", sys.__stdout__)  # type: ignore[misc,arg-type]
    sys.stderr = sys.__stderr__ = stream(2, "w", sys.__stderr__)  # type: ignore[misc,arg-type]


def _send(conn: socket.socket, message: bytes) -> None:
    try:
        conn.send(message)
    except OSError:
        pass


def _kill(pid: int) -> None:
    try:
        os.kill(pid, signal.SIGKILL)
    except ProcessLookupError:
        pass


_STATUS: list[int] = []  # a forked dsh's exit status, once known


def _skip_teardown() -> None:
    """Registered before any module's, so run after every other exit handler: a forked dsh
    whose status is known ends here, its streams flushed, without tearing down the modules it
    shares with the server (which writes on every shared page: ~0.09 CPU-s a dsh)."""
    if not _STATUS:
        return  # the server itself, or a dsh ended by Ctrl-C: Python's own ending
    try:
        for stream in (sys.stdout, sys.stderr):
            if stream is not None:
                stream.flush()
    except Exception:  # Python's own ending says what a failed flush says (and exits 120)
        return
    os._exit(_STATUS[0])


def _status(code: object) -> int:
    """The exit status ``sys.exit(code)`` gives."""
    if code is None:
        return 0
    return code & 0xFF if isinstance(code, int) else 1


def main() -> None:
    atexit.register(_skip_teardown)
    path = sys.argv[1]
    _preload()
    gc.collect()
    gc.freeze()  # the children's collections then leave the shared pages unwritten
    request = _Server(path).serve()
    if request is None:
        return
    from dsh_cli.cli import main as dsh

    try:
        result = dsh()  # as the console script does
    except SystemExit as end:
        _STATUS.append(_status(end.code))
        raise
    except KeyboardInterrupt:  # Python ends the process by SIGINT itself
        raise
    except BaseException:  # its traceback is printed before the exit handlers run
        _STATUS.append(1)
        raise
    _STATUS.append(_status(result))
    sys.exit(result)


if __name__ == "__main__":
    main()
