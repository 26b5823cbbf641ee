"""One process at a time records a session: an ``flock`` on a lock file per session.

A lock file rather than a table row with a pid and a start time, because the kernel
drops an ``flock`` when its process ends, however it ends (SIGKILL, a crash, a power
cut's reboot): a dead owner's lock is free at once, with no guess about whether a pid
is still alive and no race with pid reuse. The pid written into the file only names the
owner in the ``SESSION_BUSY`` message.

The files live beside the database in ``<stem>-locks/`` (``sessions-locks/``, 0700),
one per session, and an owner removes its file as it lets go. A process that opened the
file just before that would lock a removed file, so a taker checks that the file it
locked is still the one at the path, and otherwise tries again.
"""

from __future__ import annotations

import fcntl
import hashlib
import os
import re
from pathlib import Path

from dsh_cli.core.errors import STORE_ERROR, SessionBusy, StoreError

__all__ = ["SessionLock", "acquire", "locks_dir"]

_SAFE_ID = re.compile(r"[A-Za-z0-9_.-]{1,100}")
_TRIES = 20


def locks_dir(store: Path) -> Path:
    """Where the lock files of the store at ``store`` live."""
    return store.with_name(store.stem + "-locks")


class SessionLock:
    """A held session lock; ``release`` lets it go (also when the process dies)."""

    def __init__(self, fd: int, path: Path) -> None:
        self._fd: int | None = fd
        self.path = path

    def release(self) -> None:
        fd, self._fd = self._fd, None
        if fd is None:
            return
        try:
            os.unlink(self.path)  # while still held: see the module docstring
        except OSError:
            pass
        os.close(fd)


def acquire(store: Path, session_id: str) -> SessionLock:
    """The lock of ``session_id``; ``SessionBusy`` naming the owner while another holds it."""
    directory = locks_dir(store)
    name = session_id if _SAFE_ID.fullmatch(session_id) else hashlib.sha256(
        session_id.encode("utf-8", "replace")).hexdigest()
    path = directory / f"{name}.lock"
    try:
        directory.mkdir(mode=0o700, exist_ok=True)
        if directory.is_symlink():
            raise StoreError(f"session store {directory}: it is a symbolic link; dsh does not "
                             "follow links in its store", STORE_ERROR, store)
        for _ in range(_TRIES):
            fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600)
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                pid = _owner(fd)
                os.close(fd)
                raise SessionBusy(session_id, pid, store) from None
            if _still_there(fd, path):
                os.ftruncate(fd, 0)
                os.write(fd, f"{os.getpid()}\n".encode())
                return SessionLock(fd, path)
            os.close(fd)  # released and removed meanwhile: take the new file
    except OSError as error:
        raise StoreError(f"session store {path}: cannot lock the session: {error.strerror}",
                         STORE_ERROR, store) from None
    raise StoreError(f"session store {path}: cannot lock the session (it keeps changing "
                     "hands)", STORE_ERROR, store)


def _owner(fd: int) -> int:
    """The pid the owner wrote, or 0 while it has not written it yet."""
    try:
        return int(os.pread(fd, 32, 0).decode("ascii", "replace").strip() or 0)
    except (OSError, ValueError):
        return 0


def _still_there(fd: int, path: Path) -> bool:
    try:
        return os.fstat(fd).st_ino == os.stat(path, follow_symlinks=False).st_ino
    except FileNotFoundError:
        return False
