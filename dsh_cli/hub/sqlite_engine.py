"""The hub store on SQLite (stdlib ``sqlite3``, WAL): one hub process, nothing to set up.

Changes are heard inside this process: SQLite has no NOTIFY, and a hub on SQLite is one
process by design (several processes sharing a store is what PostgreSQL is for). A commit by
another process (a ``dsh hub`` command, a script) is noticed by ``PRAGMA data_version`` when
a listener's wait ends empty, and heard as "re-read, changes may have been missed".
"""

from __future__ import annotations

import collections
import contextlib
import sqlite3
import threading
import time
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

from dsh_cli.core.files import create_private_file
from dsh_cli.core.sqlite_wal import use_wal
from dsh_cli.hub.records import Change, Heard, HubStoreError

__all__ = ["BUSY_TIMEOUT", "SqliteEngine"]

BUSY_TIMEOUT = 5.0  # seconds another connection may hold the write lock before a write fails
_HEARD = 10_000  # changes a listener that does not wait keeps; older ones are dropped


class _SqliteTx:
    def __init__(self, connection: sqlite3.Connection) -> None:
        self._connection = connection
        self.changes: list[Change] = []

    def run(self, sql: str, params: Sequence[Any] = ()) -> int:
        return self._connection.execute(sql, tuple(params)).rowcount

    def rows(self, sql: str, params: Sequence[Any] = ()) -> list[tuple[Any, ...]]:
        return list(self._connection.execute(sql, tuple(params)).fetchall())

    def has_table(self, name: str) -> bool:
        return bool(self.rows("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?",
                              (name,)))

    def now(self) -> float:
        return time.time()  # one hub process, one host: its clock is the store's

    def lock_schema(self) -> None:
        pass  # a write transaction (BEGIN IMMEDIATE) already excludes every other writer

    def notify(self, change: Change) -> None:
        self.changes.append(change)


class _LocalListener:
    """A listener inside this process: the engine hands it each committed change."""

    def __init__(self, engine: SqliteEngine, keep: int) -> None:
        self._engine = engine
        self._heard: collections.deque[Change] = collections.deque(maxlen=keep)
        self._missed = False
        self._ready = threading.Condition()

    def hear(self, changes: list[Change]) -> None:
        with self._ready:
            # past ``keep`` the oldest are dropped: the waiter is told to re-read the store
            self._missed |= len(self._heard) + len(changes) > (self._heard.maxlen or 0)
            self._heard.extend(changes)
            self._ready.notify_all()

    def wait(self, timeout: float) -> Heard:
        with self._ready:
            self._ready.wait_for(lambda: bool(self._heard) or self._missed, timeout)
        # outside the condition: the version is read under the engine's lock, which a
        # committing thread holds while it hands this listener its changes
        elsewhere = self._engine.changed_elsewhere(self)
        with self._ready:
            heard = Heard(tuple(self._heard), self._missed or elsewhere)
            self._heard.clear()
            self._missed = False
        return heard

    def close(self) -> None:
        self._engine.forget(self)


class SqliteEngine:
    """A SQLite file (created 0600) shared by the threads of one hub process."""

    dialect = "sqlite"

    def __init__(self, path: Path, *, busy_timeout: float = BUSY_TIMEOUT) -> None:
        self.path = path
        self.where = str(path)
        self._lock = threading.Lock()
        self._listeners: set[_LocalListener] = set()
        self._connection = self._connect(busy_timeout)
        self._versions: dict[_LocalListener, int] = {}  # data_version each listener last saw

    def _fail(self, advice: str) -> HubStoreError:
        return HubStoreError(f"hub store {self.path}: {advice}")

    def _connect(self, busy_timeout: float) -> sqlite3.Connection:
        for suffix in ("", "-wal", "-shm", "-journal"):
            if self.path.with_name(self.path.name + suffix).is_symlink():
                raise self._fail(f"{self.path.name + suffix} is a symbolic link, which dsh does "
                                 "not follow; replace it with the file itself")
        if self.path.is_dir():
            raise self._fail("it is a directory, not a file")
        try:
            create_private_file(self.path)
        except OSError as error:
            raise self._fail(f"cannot create it: {error.strerror}") from None
        with self._translated():
            connection = sqlite3.connect(self.path, timeout=busy_timeout, isolation_level=None,
                                         check_same_thread=False)
            try:
                connection.execute(f"PRAGMA busy_timeout = {int(busy_timeout * 1000)}")
                use_wal(connection, busy_timeout)
                connection.execute("PRAGMA synchronous = NORMAL")
            except BaseException:
                connection.close()
                raise
        return connection

    @contextlib.contextmanager
    def _translated(self) -> Iterator[None]:
        try:
            yield
        except sqlite3.Error as error:
            text = str(error).lower()
            if "locked" in text or "busy" in text:
                advice = "it is locked by another process; try again when that one finishes"
            elif "not a database" in text or "malformed" in text:
                advice = "it is not a usable hub database (corrupt?)"
            else:
                advice = str(error)
            raise self._fail(advice) from None

    @contextlib.contextmanager
    def transaction(self, *, write: bool = False) -> Iterator[_SqliteTx]:
        with self._lock, self._translated():
            connection = self._connection
            # a write takes the lock up front, so the busy timeout applies and no reader
            # turned writer can deadlock
            connection.execute("BEGIN IMMEDIATE" if write else "BEGIN")
            tx = _SqliteTx(connection)
            try:
                yield tx
                connection.execute("COMMIT")
            except BaseException:
                if connection.in_transaction:
                    with contextlib.suppress(sqlite3.Error):
                        connection.execute("ROLLBACK")
                raise
        if tx.changes:
            for listener in list(self._listeners):
                listener.hear(tx.changes)

    def listen(self) -> _LocalListener:
        listener = _LocalListener(self, _HEARD)
        self._listeners.add(listener)
        self._versions[listener] = self._data_version()
        return listener

    def forget(self, listener: _LocalListener) -> None:
        self._listeners.discard(listener)
        self._versions.pop(listener, None)

    def _data_version(self) -> int:
        """SQLite's count of commits by other connections (other processes) to the file."""
        with self._lock, self._translated():
            return int(self._connection.execute("PRAGMA data_version").fetchone()[0])

    def changed_elsewhere(self, listener: _LocalListener) -> bool:
        """Whether another process committed since ``listener`` last asked."""
        version = self._data_version()
        changed = self._versions.get(listener, version) != version
        self._versions[listener] = version
        return changed

    def close(self) -> None:
        with self._lock:
            self._connection.close()
