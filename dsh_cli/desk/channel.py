"""The desk channel: where ``dsh mcp`` servers listen and how ``dsh attach`` finds them.

Each ``dsh mcp`` listens on its own Unix socket ``mcp-PID.sock`` in the user's runtime
directory (``$XDG_RUNTIME_DIR/dsh/``, else ``DSH_HOME/run/`` or the data directory's
``run/``), a 0700 directory holding 0600 sockets. Both ends refuse a peer of another uid
(``SO_PEERCRED``): the file modes keep other users out, the check keeps them out even
when the modes were loosened. Over a connection the server speaks ``relay.md``'s question
events and the desk sends its frames, one JSON object per line.
"""

from __future__ import annotations

import os
import socket
import struct
from pathlib import Path

__all__ = [
    "SOCKET_GLOB",
    "PeerRefused",
    "check_peer",
    "listen",
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


def runtime_dir() -> Path:
    """The directory of the desk sockets (not created here)."""
    xdg = os.environ.get("XDG_RUNTIME_DIR")
    if xdg:
        return Path(xdg) / "dsh"
    home = os.environ.get("DSH_HOME")
    if home:
        return Path(home) / "run"
    from dsh_cli.config import data_dir

    return data_dir() / "run"


def socket_path(pid: int | None = None) -> Path:
    """The socket ``dsh mcp`` with process id ``pid`` listens on."""
    return runtime_dir() / f"mcp-{os.getpid() if pid is None else pid}.sock"


def _private_dir(path: Path) -> None:
    """Create the runtime directory 0700; an existing one is tightened to 0700."""
    path.mkdir(parents=True, exist_ok=True, mode=0o700)
    if path.stat().st_mode & 0o077:
        path.chmod(0o700)


def listen(path: Path | None = None) -> socket.socket:
    """A listening Unix socket at ``path`` (default ``socket_path()``), mode 0600."""
    path = path or socket_path()
    _private_dir(path.parent)
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
    return uid


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
