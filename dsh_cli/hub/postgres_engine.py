"""The hub store on PostgreSQL (psycopg 3, the optional extra ``hub``): many hub processes.

Every process shares the same rows; a change committed by one is heard by the others on
the ``dsh_hub`` channel (``LISTEN``/``NOTIFY``, delivered only once its transaction
commits). psycopg is imported when a PostgreSQL store is opened, never before.
"""

from __future__ import annotations

import contextlib
import threading
import time
from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit, urlunsplit

from dsh_cli.hub.engine import CHANNEL, decode_change, encode_change
from dsh_cli.hub.records import Change, Heard, HubStoreError

if TYPE_CHECKING:
    import psycopg

__all__ = ["CONNECT_SECONDS", "RETRY_SECONDS", "PostgresEngine", "redact"]

# the advisory lock migrations hold (any constant shared by every dsh: "dshhub" in ASCII)
_SCHEMA_LOCK = 0x647368687562
# how long opening a connection may take before it is a STORE_ERROR (a URL's own
# connect_timeout wins)
CONNECT_SECONDS = 10
# a listener whose server is away tries again after this long (or its wait's timeout)
RETRY_SECONDS = 1.0


def redact(url: str) -> str:
    """``url`` without its password, as it may be shown or logged."""
    try:
        parts = urlsplit(url)
        if parts.password is not None:
            host = parts.hostname or ""
            netloc = f"{parts.username}:***@{host}" + (f":{parts.port}" if parts.port else "")
            url = urlunsplit(parts._replace(netloc=netloc))
        # libpq also takes the password as a query parameter: ``?password=...``
        base, mark, query = url.partition("?")
        return base + mark + "&".join(
            "password=***" if field.split("=", 1)[0] == "password" else field
            for field in query.split("&")) if mark else url
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
        self._cursor.execute(self._sql(sql), tuple(params))
        return self._cursor.rowcount

    def rows(self, sql: str, params: Sequence[Any] = ()) -> list[tuple[Any, ...]]:
        self._cursor.execute(self._sql(sql), tuple(params))
        return list(self._cursor.fetchall())

    def has_table(self, name: str) -> bool:
        return bool(self.rows("SELECT to_regclass(?) IS NOT NULL", (name,))[0][0])

    def now(self) -> float:
        # the server's clock, not this host's: leases and deadlines written by hub
        # processes on different hosts compare against one time however those drift
        return float(self.rows("SELECT extract(epoch FROM clock_timestamp())")[0][0])

    def lock_schema(self) -> None:
        self.rows("SELECT pg_advisory_xact_lock(?)", (_SCHEMA_LOCK,))

    def notify(self, change: Change) -> None:
        self.rows("SELECT pg_notify(?, ?)", (CHANNEL, encode_change(change)))


class _PostgresListener:
    """A connection of its own that ``LISTEN``s on the channel, taken again when lost."""

    def __init__(self, engine: PostgresEngine) -> None:
        self._engine = engine
        self._connection: psycopg.Connection[Any] | None = None
        self._listen()

    def _listen(self) -> None:
        connection = self._engine.connect()
        try:
            with self._engine.translated():
                connection.execute(f"LISTEN {CHANNEL}")
        except BaseException:
            connection.close()
            raise
        self._connection = connection

    def _lost(self) -> None:
        if self._connection is not None:
            self._connection.close()
        self._connection = None

    def wait(self, timeout: float) -> Heard:
        """The changes heard; ``missed`` when the connection was lost (the server restarted):
        what was committed meanwhile was never heard, so the caller re-reads the store.

        ``missed`` comes once the listener is listening again (or could not be), so a
        re-read after it misses nothing: what commits after the re-read is heard.
        """
        driver = _psycopg()
        connection = self._connection
        if connection is None or connection.broken:
            return self._listen_again(timeout)
        try:
            heard = list(connection.notifies(timeout=timeout, stop_after=1))
            heard += list(connection.notifies(timeout=0.0))  # what came in the same breath
        except driver.OperationalError:
            return self._listen_again(timeout)
        changes = [decode_change(notice.payload) for notice in heard
                   if notice.channel == CHANNEL]
        return Heard(tuple(change for change in changes if change is not None))

    def _listen_again(self, timeout: float) -> Heard:
        self._lost()
        try:
            self._listen()
        except HubStoreError:
            time.sleep(min(timeout, RETRY_SECONDS))  # the server is still away: next wait
        return Heard((), missed=True)

    def close(self) -> None:
        self._lost()


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
            from dsh_cli.core.sanitize import sanitize_line

            # the server's words (and the host the URL named) reach a terminal: one safe line
            first = (str(error).strip().splitlines() or [type(error).__name__])[0]
            raise HubStoreError(sanitize_line(f"hub store {self.where}: {first}")) from None

    def connect(self) -> psycopg.Connection[Any]:
        driver = _psycopg()
        with self.translated():
            # libpq waits for an unreachable server as long as TCP does unless told
            wait = {} if "connect_timeout" in self.url else {"connect_timeout": CONNECT_SECONDS}
            connection: psycopg.Connection[Any] = driver.connect(
                self.url, autocommit=True, application_name="dsh hub", **wait)
        return connection

    @contextlib.contextmanager
    def transaction(self, *, write: bool = False) -> Iterator[_PostgresTx]:
        # ``write`` needs nothing here: a row's conditional update waits for the one before
        with self._lock, self.translated(), contextlib.ExitStack() as stack:
            self._begin(stack)
            yield _PostgresTx(stack.enter_context(self._connection.cursor()))

    def _begin(self, stack: contextlib.ExitStack) -> None:
        """``BEGIN`` on a live connection. One lost since the last transaction (the server
        restarted, or dropped it) is replaced, once: nothing of this transaction was sent
        on it, so beginning again on a new one cannot do anything twice."""
        driver = _psycopg()
        if not (self._connection.broken or self._connection.closed):
            try:
                stack.enter_context(self._connection.transaction())
                return
            except driver.OperationalError:
                if not self._connection.broken:
                    raise
        self._connection.close()
        self._connection = self.connect()
        stack.enter_context(self._connection.transaction())

    def listen(self) -> _PostgresListener:
        return _PostgresListener(self)

    def close(self) -> None:
        with self._lock:
            self._connection.close()
