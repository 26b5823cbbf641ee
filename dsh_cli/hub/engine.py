"""The two things the hub store needs of a database engine, as one typed interface.

``HubStore`` writes its SQL once, with ``?`` placeholders, against ``Engine`` and ``Tx``;
``sqlite_engine`` and ``postgres_engine`` carry it to SQLite or PostgreSQL, and a
``Listener`` hears the ``Change``s other connections (other hub processes, on PostgreSQL)
commit.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from contextlib import AbstractContextManager
from typing import Any, Protocol

from dsh_cli.hub.records import AUDIT_ACTIONS, Change, Heard

__all__ = ["CHANNEL", "Engine", "Listener", "Tx", "decode_change", "encode_change"]

CHANNEL = "dsh_hub"  # PostgreSQL's NOTIFY channel every hub process listens on


class Tx(Protocol):
    """One transaction: all of it commits, or none of it (and no ``notify`` is heard)."""

    def run(self, sql: str, params: Sequence[Any] = ()) -> int:
        """Execute a statement; the number of rows it changed."""
        ...

    def rows(self, sql: str, params: Sequence[Any] = ()) -> list[tuple[Any, ...]]:
        """Execute a query; its rows."""
        ...

    def has_table(self, name: str) -> bool:
        """Whether the store has a table of this name."""
        ...

    def now(self) -> float:
        """The store's clock, seconds since the epoch: the one every hub process reads."""
        ...

    def lock_schema(self) -> None:
        """Hold the lock that makes migrating once, across processes, safe."""
        ...

    def notify(self, change: Change) -> None:
        """Tell every listener of this store about ``change``, once this transaction commits."""
        ...


class Listener(Protocol):
    """Hears the changes committed to a store, by this process or (PostgreSQL) another."""

    def wait(self, timeout: float) -> Heard:
        """The changes heard, waiting up to ``timeout`` seconds for the first."""
        ...

    def close(self) -> None:
        ...


class Engine(Protocol):
    """A connection to one hub store."""

    dialect: str  # "sqlite" or "postgresql": which SQL a migration runs
    where: str  # the store, as it may be shown (a URL without its password)

    def transaction(self, *, write: bool = False) -> AbstractContextManager[Tx]:
        """A transaction; ``write`` takes the write lock up front (SQLite)."""
        ...

    def listen(self) -> Listener:
        ...

    def close(self) -> None:
        ...


def encode_change(change: Change) -> str:
    """A change as a NOTIFY payload (well under PostgreSQL's 8000 bytes: ids and a name)."""
    return json.dumps({"event": change.event, "id": change.entry_id, "replica": change.replica},
                      separators=(",", ":"))


def decode_change(payload: str) -> Change | None:
    """A payload heard on the channel as a ``Change``; None for one that is not ours."""
    try:
        data = json.loads(payload)
    except ValueError:
        return None
    if not isinstance(data, dict):
        return None
    event, entry_id, replica = data.get("event"), data.get("id"), data.get("replica")
    if event not in AUDIT_ACTIONS or not isinstance(entry_id, str) or not isinstance(
            replica, str):
        return None
    return Change(event, entry_id, replica)
