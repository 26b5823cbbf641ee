"""What every part of the store shares: its connection, file and lock, and how a column reads.

``StoreTables`` is the base of each aggregate's part of ``SessionStore`` (sessions,
``questions.QuestionLog``, ``permission_log.PermissionLog``): one connection, one file, one
lock that every write takes (a signal handler may write while the loop does).
"""

from __future__ import annotations

import json
import sqlite3
import threading
from pathlib import Path
from typing import Any

from dsh_cli.core.clock import utc_stamp

__all__ = ["StoreTables", "json_column", "now", "text_column"]


class StoreTables:
    """The connection, its file and the lock, as each part of the store uses them."""

    def __init__(self, connection: sqlite3.Connection, path: Path) -> None:
        self.path = path
        self._db = connection
        self._lock = threading.RLock()  # a signal handler may write while the loop does


def now() -> str:
    """The time a row is written: UTC, as every stored time is."""
    return utc_stamp()


def json_column(text: str | bytes | None) -> Any:
    """A stored JSON column; a hand-edited one that no longer parses reads as its text."""
    if text is None:
        return None
    try:
        return json.loads(text)
    except (ValueError, RecursionError):
        return text_column(text)


def text_column(value: str | bytes | None) -> str | None:
    """A stored text column; a blob written by hand reads as its UTF-8, bad bytes replaced."""
    return value.decode("utf-8", "replace") if isinstance(value, bytes) else value
