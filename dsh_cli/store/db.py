"""The store's SQLite connection: file mode, pragmas, and errors a user can act on.

Every ``sqlite3.Error`` leaving the store becomes a one-line ``StoreError`` that names
the file and says what to do; a traceback never reaches the user.
"""

from __future__ import annotations

import contextlib
import sqlite3
from collections.abc import Iterator
from pathlib import Path

from dsh_cli.core.errors import (
    SESSION_NOT_FOUND,
    STORE_ERROR,
    SessionNotFound,
    StoreError,
)
from dsh_cli.core.files import create_private_file
from dsh_cli.core.sqlite_wal import use_wal

__all__ = [
    "BUSY_TIMEOUT",
    "SESSION_NOT_FOUND",
    "STORE_ERROR",
    "SessionNotFound",
    "StoreError",
    "connect",
    "transaction",
    "translate",
    "translated",
]

BUSY_TIMEOUT = 5.0  # seconds another dsh may hold the write lock before we give up


def translate(error: sqlite3.Error, path: Path) -> StoreError:
    """A ``StoreError`` that names the file and the way out, from a driver error."""
    text = str(error).lower()
    if "locked" in text or "busy" in text:
        advice = "it is locked by another dsh process; try again when that one finishes"
    elif "not a database" in text or "malformed" in text or "disk image" in text:
        advice = "it is not a usable session database (corrupt?); move it aside to start afresh"
    elif "readonly" in text or "read-only" in text:
        advice = "it is read-only; fix its permissions (or those of its directory)"
    elif "full" in text:
        advice = "the disk is full; free some space and try again (nothing was half-written)"
    elif "unable to open" in text or "cannot open" in text:
        advice = "it cannot be opened; check that it is a readable file in a writable directory"
    else:
        advice = str(error)
    return StoreError(f"session store {path}: {advice}", STORE_ERROR, path)


@contextlib.contextmanager
def translated(path: Path) -> Iterator[None]:
    """Turn driver errors raised inside the block into ``StoreError``s."""
    try:
        yield
    except sqlite3.Error as error:
        raise translate(error, path) from None


# SQLite opens these beside the database; a link in any of them would send its writes on.
_STORE_FILES = ("", "-wal", "-shm", "-journal")


def _refuse_links(path: Path) -> None:
    """A store file that is a symbolic link (dangling or not) is refused, never followed:
    a dangling one would be created elsewhere, a live one would get dsh's tables."""
    for suffix in _STORE_FILES:
        candidate = path.with_name(path.name + suffix)
        if candidate.is_symlink():
            raise StoreError(
                f"session store {candidate}: it is a symbolic link, which dsh does not follow; "
                "replace it with the file itself (or set DSH_HOME elsewhere)", STORE_ERROR, path)


def _create_private(path: Path) -> None:
    """Create the file 0600 before SQLite does (its journal files copy this mode)."""
    try:
        create_private_file(path)
    except OSError as error:
        raise StoreError(
            f"session store {path}: cannot create it: {error.strerror}", STORE_ERROR, path
        ) from None


def connect(path: Path, *, busy_timeout: float = BUSY_TIMEOUT) -> sqlite3.Connection:
    """Open (creating 0600) the store at ``path`` with WAL, a busy timeout and foreign keys."""
    _refuse_links(path)
    if path.is_dir():
        raise StoreError(f"session store {path}: it is a directory, not a file", STORE_ERROR,
                         path)
    _create_private(path)
    with translated(path):
        # autocommit: every write is an explicit BEGIN IMMEDIATE ... COMMIT of its own
        connection = sqlite3.connect(
            path, timeout=busy_timeout, isolation_level=None, check_same_thread=False
        )
        try:
            connection.execute(f"PRAGMA busy_timeout = {int(busy_timeout * 1000)}")
            mode = use_wal(connection, busy_timeout)
            if mode.lower() != "wal":
                connection.execute("SELECT count(*) FROM sqlite_master").fetchone()
            connection.execute("PRAGMA synchronous = NORMAL")
            connection.execute("PRAGMA foreign_keys = ON")
        except BaseException:
            connection.close()
            raise
    return connection


@contextlib.contextmanager
def transaction(connection: sqlite3.Connection, path: Path) -> Iterator[sqlite3.Connection]:
    """One write transaction taken up front (so the busy timeout applies), all or nothing."""
    with translated(path):
        connection.execute("BEGIN IMMEDIATE")
        try:
            yield connection
            connection.execute("COMMIT")
        except BaseException:
            # SQLite may already have rolled back (a full disk does); never mask the cause
            if connection.in_transaction:
                with contextlib.suppress(sqlite3.Error):
                    connection.execute("ROLLBACK")
            raise
