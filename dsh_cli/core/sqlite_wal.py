"""SQLite's write-ahead log switched on so that it waits for a lock like every other write.

Both stores (the sessions' and the hub's) open their file with ``PRAGMA journal_mode = WAL``.
SQLite does not call the busy handler for that pragma: a process opening a new store while
another one holds its lock (migrating it) was told "database is locked" at once, whatever
the busy timeout (19 opens of 1,800, six threads at a time on fresh files). ``use_wal``
tries again until the busy timeout has passed.
"""

from __future__ import annotations

import sqlite3
import time

__all__ = ["use_wal"]

_FIRST_PAUSE = 0.001  # seconds; doubled up to _LAST_PAUSE: a migration takes milliseconds
_LAST_PAUSE = 0.05


def use_wal(connection: sqlite3.Connection, within: float) -> str:
    """``PRAGMA journal_mode = WAL``, tried again for ``within`` seconds while the file is
    locked; the journal mode it reports (another error, or the lock past that, is raised)."""
    deadline = time.monotonic() + within
    pause = _FIRST_PAUSE
    while True:
        try:
            return str(connection.execute("PRAGMA journal_mode = WAL").fetchone()[0])
        except sqlite3.OperationalError as error:
            if "locked" not in str(error).lower() or time.monotonic() + pause > deadline:
                raise
        time.sleep(pause)  # the holder is another process: nothing to wait on but time
        pause = min(pause * 2, _LAST_PAUSE)
