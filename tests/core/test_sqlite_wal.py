"""``use_wal`` waits for a lock SQLite's journal-mode pragma would fail on at once."""

from __future__ import annotations

import sqlite3
import threading

import pytest

from dsh_cli.core.sqlite_wal import use_wal


def _holding(tmp_path):
    """A new file (rollback journal) whose write lock a first connection holds."""
    holder = sqlite3.connect(tmp_path / "store.db", isolation_level=None,
                             check_same_thread=False)
    holder.execute("CREATE TABLE t (x)")
    holder.execute("BEGIN IMMEDIATE")
    holder.execute("INSERT INTO t VALUES (1)")
    opener = sqlite3.connect(tmp_path / "store.db", isolation_level=None,
                             check_same_thread=False)
    opener.execute("PRAGMA busy_timeout = 5000")
    return holder, opener


def test_the_pragma_alone_fails_at_once_whatever_the_busy_timeout(tmp_path):
    holder, opener = _holding(tmp_path)
    with pytest.raises(sqlite3.OperationalError, match="locked"):
        opener.execute("PRAGMA journal_mode = WAL")
    holder.execute("COMMIT")


def test_use_wal_tries_again_until_the_lock_is_let_go(tmp_path):
    holder, opener = _holding(tmp_path)
    tries: list[str] = []
    second = threading.Event()

    def traced(statement: str) -> None:
        if "journal_mode" in statement:
            tries.append(statement)
            if len(tries) == 2:  # the first try met the lock: let it go now
                second.set()

    def let_go() -> None:
        second.wait(10)
        holder.execute("COMMIT")

    opener.set_trace_callback(traced)
    releasing = threading.Thread(target=let_go)
    releasing.start()
    try:
        assert use_wal(opener, 10) == "wal"
    finally:
        second.set()
        releasing.join(10)
    assert len(tries) >= 2


def test_past_its_time_the_lock_is_raised(tmp_path):
    holder, opener = _holding(tmp_path)
    with pytest.raises(sqlite3.OperationalError, match="locked"):
        use_wal(opener, 0.05)
    holder.execute("COMMIT")
