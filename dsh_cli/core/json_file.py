"""Private JSON files (mode 0600): read refusing what is not ours, changed under a lock.

The approvals, the trusted projects and the MCP logins are each one JSON document that
several dsh processes change at once (two desks, ``dsh mcp``, ``dsh permissions rm``). A
change is read-modify-write under an exclusive ``flock`` of a lock file beside it
(``.NAME.lock``: the document itself is replaced, so a lock on it would lock the old one),
written to a temporary file in the same directory, fsynced and renamed over it: a reader
without the lock sees the old document or the new one, never half of one.

Reading refuses, with one ``PrivateFileError`` that names the file, anything dsh did not
write: a symbolic link (never followed), a FIFO or device (opened non-blocking, so it never
hangs), a file of another user or one others may read or change, a file over
``PRIVATE_FILE_BYTES`` (judged by ``fstat`` before a byte is read), and torn or corrupt
JSON. A refused file is never taken as empty, so nothing is written over it.
"""

from __future__ import annotations

import contextlib
import errno
import json
import os
import stat
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from dsh_cli.core.errors import PrivateFileError
from dsh_cli.core.limits import PRIVATE_FILE_BYTES

__all__ = ["LOCK_WAIT", "locked", "read", "update", "write"]

LOCK_WAIT = 10.0  # seconds a change waits for another process's before it gives up
_POLL = 0.01  # seconds between tries of a lock another process holds


def read(path: Path, *, cap: int = PRIVATE_FILE_BYTES) -> Any:
    """The document in ``path``, None when there is no file; ``PrivateFileError`` if refused."""
    flags = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC
    try:
        descriptor = os.open(path, flags)
    except FileNotFoundError:
        return None
    except OSError as error:
        raise _refused(path, error) from None
    try:  # judged before the descriptor becomes a file object, which refuses a directory
        found = os.fstat(descriptor)
        _check(path, found)
    except BaseException:
        os.close(descriptor)
        raise
    with os.fdopen(descriptor, "rb") as file:
        if found.st_size > cap:
            raise PrivateFileError(path, _too_big(found.st_size, cap))
        try:
            data = file.read(cap + 1)  # it may have grown since fstat
        except OSError as error:
            raise PrivateFileError(path, f"cannot be read: {error.strerror}") from None
    if len(data) > cap:
        raise PrivateFileError(path, _too_big(len(data), cap))
    try:
        return json.loads(data)
    except (ValueError, RecursionError) as error:
        detail = (f"{error.msg} at line {error.lineno} column {error.colno}"
                  if isinstance(error, json.JSONDecodeError) else "nested too deeply")
        raise PrivateFileError(path, f"is not valid JSON (torn or corrupt: {detail}); "
                                     "move it away or fix it") from None


def write(path: Path, document: Any) -> None:
    """Replace ``path`` with ``document`` atomically, mode 0600 from its first byte."""
    import tempfile

    text = json.dumps(document, indent=2, sort_keys=True) + "\n"
    try:
        _ensure_directory(path.parent)
        handle, temporary = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp",
                                             dir=path.parent)  # 0600 whatever the umask
    except OSError as error:
        raise PrivateFileError(path, f"cannot be written: {error.strerror}") from None
    try:
        with os.fdopen(handle, "w", encoding="utf-8") as file:
            file.write(text)
            file.flush()
            os.fsync(file.fileno())
        os.replace(temporary, path)
    except OSError as error:
        with contextlib.suppress(OSError):
            os.unlink(temporary)
        raise PrivateFileError(path, f"cannot be written: {error.strerror}") from None
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temporary)
        raise
    _sync_directory(path.parent)


@contextlib.contextmanager
def locked(path: Path, *, wait: float = LOCK_WAIT) -> Iterator[None]:
    """Hold the exclusive lock of ``path`` (its ``.NAME.lock``) for one read-modify-write."""
    import fcntl

    lock = path.with_name(f".{path.name}.lock")
    flags = os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC
    try:
        _ensure_directory(path.parent)
        descriptor = os.open(lock, flags, 0o600)
    except OSError as error:
        if error.errno == errno.ELOOP:
            raise _refused(lock, error) from None
        raise PrivateFileError(path, f"cannot be locked for writing: {error.strerror}") from None
    try:
        _check(lock, os.fstat(descriptor), private=False)
        deadline = time.monotonic() + wait
        while True:
            try:
                fcntl.flock(descriptor, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if time.monotonic() >= deadline:
                    raise PrivateFileError(path, f"is being changed by another process "
                                                 f"(its lock was held for {wait:g} s)") from None
                time.sleep(_POLL)
        yield
    finally:
        os.close(descriptor)  # closing releases the lock


def update(path: Path, change: Callable[[Any], Any], *,
           cap: int = PRIVATE_FILE_BYTES) -> Any:
    """Under the lock: ``change(document or None)``; a result that is not None is written."""
    with locked(path):
        changed = change(read(path, cap=cap))
        if changed is not None:
            write(path, changed)
        return changed


def _check(path: Path, found: os.stat_result, *, private: bool = True) -> None:
    if not stat.S_ISREG(found.st_mode):
        raise PrivateFileError(path, f"is not a regular file ({_kind(found.st_mode)}); "
                                     "remove it")
    if found.st_uid != os.getuid():
        raise PrivateFileError(path, f"belongs to uid {found.st_uid}, not to this user "
                                     f"(uid {os.getuid()}); remove it")
    if private and found.st_mode & 0o077:
        raise PrivateFileError(path, f"may be read or changed by others (mode "
                                     f"{stat.S_IMODE(found.st_mode):04o}); run chmod 600 on it")


def _refused(path: Path, error: OSError) -> PrivateFileError:
    if error.errno == errno.ELOOP:
        return PrivateFileError(path, "is a symbolic link, which dsh does not follow; "
                                      "put the file itself there")
    return PrivateFileError(path, f"cannot be read: {error.strerror}")


def _too_big(size: int, cap: int) -> str:
    return f"is {size} bytes, more than the {cap} a dsh file may hold; move it away"


def _kind(mode: int) -> str:
    kinds = ((stat.S_ISFIFO, "a FIFO"), (stat.S_ISDIR, "a directory"),
             (stat.S_ISSOCK, "a socket"), (stat.S_ISCHR, "a device"), (stat.S_ISBLK, "a device"))
    return next((name for test, name in kinds if test(mode)), "not a file")


def _ensure_directory(directory: Path) -> None:
    directory.mkdir(mode=0o700, parents=True, exist_ok=True)


def _sync_directory(directory: Path) -> None:
    """Make the rename itself durable (best effort: not every file system allows it)."""
    with contextlib.suppress(OSError):
        descriptor = os.open(directory, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
        try:
            os.fsync(descriptor)
        finally:
            os.close(descriptor)
