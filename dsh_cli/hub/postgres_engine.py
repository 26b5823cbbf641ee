"""The hub store on PostgreSQL (psycopg 3, the optional extra ``hub``): many hub processes.

Every process shares the same rows; a change committed by one is heard by the others on
the ``dsh_hub`` channel (``LISTEN``/``NOTIFY``, delivered only once its transaction
commits). psycopg is imported when a PostgreSQL store is opened, never before.
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit, urlunsplit

from dsh_cli.hub.engine import CHANNEL, decode_change, encode_change
from dsh_cli.hub.records import Change, HubStoreError

if TYPE_CHECKING:
    import psycopg

__all__ = ["PostgresEngine", "redact"]

# the advisory lock migrations hold (any constant shared by every dsh: "dshhub" in ASCII)
_SCHEMA_LOCK = 0x647368687562


def redact(url: str) -> str:
    """``url`` without its password, as it may be shown or logged."""
    try:
        parts = urlsplit(url)
        if parts.password is None:
            return url
        host = parts.hostname or ""
        netloc = f"{parts.username}:***@{host}" + (f":{parts.port}" if parts.port else "")
        return urlunsplit(parts._replace(netloc=netloc))
    except ValueError:
        return "a PostgreSQL URL that cannot be parsed"


def _psycopg() -> Any:
    try:
        import psycopg
    except ImportError:
        raise HubStoreError(
            "a PostgreSQL hub store needs psycopg 3: pip install 'dsh-cli[hub]'") from None
    return psycopg


class _PostgresTx:
    def __init__(self, cursor: psycopg.Cursor[Any]) -> None:
        self._cursor = cursor

    @staticmethod
    def _sql(sql: str) -> str:
        # the store's SQL is written with ``?``; it holds no ``%`` that psycopg would read
        assert "%" not in sql, sql
        return sql.replace("?", "%s")

    def run(self, sql: str, params: Sequence[Any] = ()) -> int:
        self._cursor.execute(self._sql(sql), tuple(params))  # type: ignore[arg-type]
        return self._cursor.rowcount

    def rows(self, sql: str, params: Sequence[Any] = ()) -> list[tuple[Any, ...]]:
        self._cursor.execute(self._sql(sql), tuple(params))  # type: ignore[arg-type]
        return list(self._cursor.fetchall())

    def has_table(self, name: str) -> bool:
        return bool(self.rows("SELECT to_regclass(?) IS NOT NULL", (name,))[0][0])

    def lock_schema(self) -> None:
        self.rows("SELECT pg_advisory_xact_lock(?)", (_SCHEMA_LOCK,))

    def notify(self, change: Change) -> None:
        self.rows("SELECT pg_notify(?, ?)", (CHANNEL, encode_change(change)))


class _PostgresListener:
    """A connection of its own that ``LISTEN``s on the channel."""

    def __init__(self, engine: PostgresEngine) -> None:
        self._engine = engine
        self._connection = engine.connect()
        with engine.translated():
            self._connection.execute(f"LISTEN {CHANNEL}")

    def wait(self, timeout: float) -> list[Change]:
        with self._engine.translated():
            heard = list(self._connection.notifies(timeout=timeout, stop_after=1))
            heard += list(self._connection.notifies(timeout=0.0))  # what came in the same breath
        changes = [decode_change(notice.payload) for notice in heard
                   if notice.channel == CHANNEL]
        return [change for change in changes if change is not None]

    def close(self) -> None:
        self._connection.close()


class PostgresEngine:
    """One PostgreSQL connection, shared by the threads of a hub process in turn."""

    dialect = "postgresql"

    def __init__(self, url: str) -> None:
        self.url = url
        self.where = redact(url)
        self._lock = threading.Lock()
        self._connection = self.connect()

    @contextlib.contextmanager
    def translated(self) -> Iterator[None]:
        """Turn psycopg's errors raised inside the block into one-line ``HubStoreError``s."""
        driver = _psycopg()
        try:
            yield
        except driver.Error as error:
            first = (str(error).strip().splitlines() or [type(error).__name__])[0]
            raise HubStoreError(f"hub store {self.where}: {first}") from None

    def connect(self) -> psycopg.Connection[Any]:
        driver = _psycopg()
        with self.translated():
            connection: psycopg.Connection[Any] = driver.connect(
                self.url, autocommit=True, application_name="dsh hub")
        return connection

    @contextlib.contextmanager
    def transaction(self, *, write: bool = False) -> Iterator[_PostgresTx]:
        # ``write`` needs nothing here: a row's conditional update waits for the one before
        with self._lock, self.translated():
            if self._connection.broken or self._connection.closed:
                self._connection = self.connect()  # the server restarted: one new connection
            with self._connection.transaction(), self._connection.cursor() as cursor:
                yield _PostgresTx(cursor)

    def listen(self) -> _PostgresListener:
        return _PostgresListener(self)

    def close(self) -> None:
        with self._lock:
            self._connection.close()
