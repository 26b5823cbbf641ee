"""The desk channel: where ``dsh mcp`` servers listen and how ``dsh attach`` finds them.

Each ``dsh mcp`` listens on its own Unix socket ``mcp-PID.sock`` in the desk directory, a
0700 directory holding 0600 sockets. The directory is derived from the uid, never from
variables an agent may strip from its servers' environment (Codex drops
``XDG_RUNTIME_DIR``): ``/run/user/UID/dsh/`` when ``/run/user/UID`` is the user's own
directory, else ``/tmp/dsh-UID/``; ``DSH_HOME`` isolates (``DSH_HOME/run/``). A directory
there that is not a real directory of this uid (another user's, a symlink) is refused,
never used. Both ends refuse a peer of another uid (``SO_PEERCRED``): the file modes keep
other users out, the check keeps them out even when the modes were loosened. Over a
connection the server speaks ``relay.md``'s question events and the desk sends its frames,
one JSON object per line.
"""

from __future__ import annotations

import os
import socket
import stat
import struct
from pathlib import Path

from dsh_cli.core.errors import DESK_DIR_REFUSED, HarnessError

__all__ = [
    "SOCKET_GLOB",
    "DeskDirRefused",
    "PeerRefused",
    "check_peer",
    "desk_dir",
    "listen",
    "next_number",
    "peer_uid",
    "runtime_dir",
    "server_sockets",
    "socket_path",
]

SOCKET_GLOB = "mcp-*.sock"


class PeerRefused(Exception):
    """The other end of a desk connection belongs to another user."""

    def __init__(self, uid: int | None) -> None:
        super().__init__(f"refused a desk peer of uid {uid} (this is uid {os.getuid()})")
        self.uid = uid


class DeskDirRefused(HarnessError):
    """The desk directory exists but is not this user's own directory: it is not used."""

    def __init__(self, path: Path, why: str) -> None:
        from dsh_cli.core.home import dsh_home

        home = dsh_home()
        mine = home is not None and path.is_relative_to(home)
        fix = "remove it" if mine else "remove it, or set DSH_HOME for a desk of your own"
        super().__init__(f"{path} {why}; {fix}", DESK_DIR_REFUSED)
        self.path = path


RUN_USER = Path("/run/user")  # systemd-logind's per-user runtime directories
SHARED_TMP = Path("/tmp")  # not $TMPDIR: agents pass it or not, and both ends must agree


def _own_directory(path: Path, uid: int) -> bool:
    try:
        found = path.lstat()
    except OSError:
        return False
    return stat.S_ISDIR(found.st_mode) and found.st_uid == uid


def runtime_dir(*, uid: int | None = None, run_user: Path = RUN_USER,
                tmp: Path = SHARED_TMP) -> Path:
    """The directory of the desk sockets, the same in every environment (not created here)."""
    from dsh_cli.core.home import home_run_dir

    under_home = home_run_dir()
    if under_home is not None:
        return under_home
    uid = os.getuid() if uid is None else uid
    if _own_directory(run_user / str(uid), uid):
        return run_user / str(uid) / "dsh"
    return tmp / f"dsh-{uid}"


def desk_dir(path: Path | None = None, *, uid: int | None = None) -> Path:
    """``path`` (default ``runtime_dir()``) made ready: created 0700, or refused if not ours."""
    path = path or runtime_dir(uid=uid)
    uid = os.getuid() if uid is None else uid
    path.parent.mkdir(parents=True, exist_ok=True)
    try:
        path.mkdir(mode=0o700)
    except FileExistsError:
        pass  # made earlier, or by someone else meanwhile: checked below either way
    found = path.lstat()
    if stat.S_ISLNK(found.st_mode):
        raise DeskDirRefused(path, "is a symlink, not a directory")
    if not stat.S_ISDIR(found.st_mode):
        raise DeskDirRefused(path, "is not a directory")
    if found.st_uid != uid:
        raise DeskDirRefused(path, f"is owned by uid {found.st_uid}, not {uid}")
    if found.st_mode & 0o077:
        path.chmod(0o700)
    return path


def next_number(directory: Path) -> int | None:
    """The next entry number every desk shows, shared by every ``dsh mcp`` of the user: a
    counter file in the desk directory, read and written under a lock; None when it cannot
    be (the desks then number the entry themselves)."""
    import fcntl

    try:
        descriptor = os.open(directory / "numbers", os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW,
                             0o600)
    except OSError:
        return None
    try:
        fcntl.flock(descriptor, fcntl.LOCK_EX)
        said = os.pread(descriptor, 32, 0).strip()
        number = int(said) + 1 if said.isdigit() and len(said) < 16 else 1
        os.ftruncate(descriptor, 0)
        os.pwrite(descriptor, b"%d\n" % number, 0)
        return number
    except OSError:
        return None
    finally:
        os.close(descriptor)  # lets the lock go


def socket_path(pid: int | None = None) -> Path:
    """The socket ``dsh mcp`` with process id ``pid`` listens on."""
    return runtime_dir() / f"mcp-{os.getpid() if pid is None else pid}.sock"


def listen(path: Path | None = None) -> socket.socket:
    """A listening Unix socket at ``path`` (default ``socket_path()``), mode 0600."""
    path = path or socket_path()
    desk_dir(path.parent)
    path.unlink(missing_ok=True)  # our own pid's socket: left by a process that died
    server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    old_mask = os.umask(0o177)  # no moment at which the socket is open to others
    try:
        server.bind(str(path))
    finally:
        os.umask(old_mask)
    path.chmod(0o600)
    server.listen(16)
    return server


def peer_uid(sock: socket.socket) -> int | None:
    """The uid of the process at the other end of a Unix socket (None when unknown)."""
    try:
        data = sock.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, struct.calcsize("3i"))
    except (AttributeError, OSError):
        return None
    _pid, uid, _gid = struct.unpack("3i", data)
    return int(uid)


def check_peer(uid: int | None, own_uid: int | None = None) -> None:
    """Raise ``PeerRefused`` unless ``uid`` is this process's own uid."""
    if uid is None or uid != (os.getuid() if own_uid is None else own_uid):
        raise PeerRefused(uid)


def server_sockets(directory: Path | None = None) -> list[Path]:
    """The server sockets in the runtime directory, oldest first."""
    directory = directory or runtime_dir()
    try:
        found = [path for path in directory.glob(SOCKET_GLOB) if path.is_socket()]
    except OSError:
        return []

    def started(path: Path) -> float:
        try:
            return path.stat().st_mtime
        except OSError:
            return 0.0

    return sorted(found, key=started)
