"""The store's file: created private, WAL, and every bad state is one clear StoreError."""

from __future__ import annotations

import os
import sqlite3
import stat

import pytest

from dsh_cli.store import STORE_ERROR, SessionStore, StoreError
from dsh_cli.store.migrations import MIGRATIONS


def test_default_path_is_under_dsh_home_and_private(dsh_home):
    with SessionStore.open() as store:
        store.create_session("demo")
        assert store.path == dsh_home / "sessions.db"
    assert stat.S_IMODE(os.stat(dsh_home / "sessions.db").st_mode) == 0o600
    for name in ("sessions.db-wal", "sessions.db-shm"):
        if (dsh_home / name).exists():
            assert stat.S_IMODE(os.stat(dsh_home / name).st_mode) == 0o600


def test_creates_missing_directories_and_uses_wal(tmp_path):
    path = tmp_path / "a" / "b" / "sessions.db"
    with SessionStore.open(path) as store:
        store.create_session("demo")
    with sqlite3.connect(path) as raw:
        assert raw.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
        assert raw.execute("PRAGMA user_version").fetchone()[0] == len(MIGRATIONS)


def _one_line(error: StoreError, path) -> str:
    message = str(error)
    assert error.code == STORE_ERROR
    assert "\n" not in message
    assert str(path) in message
    return message


def test_not_a_database(tmp_path):
    path = tmp_path / "sessions.db"
    path.write_bytes(b"this is not sqlite at all, just some text " * 200)
    with pytest.raises(StoreError) as caught:
        SessionStore.open(path)
    assert "not a usable session database" in _one_line(caught.value, path)
    assert "move it aside" in str(caught.value)


def test_path_is_a_directory(tmp_path):
    path = tmp_path / "sessions.db"
    path.mkdir()
    with pytest.raises(StoreError) as caught:
        SessionStore.open(path)
    assert "directory" in _one_line(caught.value, path)


def test_directory_cannot_be_created(tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("x")
    path = blocker / "sessions.db"
    with pytest.raises(StoreError) as caught:
        SessionStore.open(path)
    assert "cannot create" in _one_line(caught.value, path)


def test_newer_schema_is_refused_untouched(tmp_path):
    path = tmp_path / "sessions.db"
    SessionStore.open(path).close()
    with sqlite3.connect(path) as raw:
        raw.execute(f"PRAGMA user_version = {len(MIGRATIONS) + 3}")
    with pytest.raises(StoreError) as caught:
        SessionStore.open(path)
    message = _one_line(caught.value, path)
    assert "newer dsh" in message and "upgrade dsh" in message
    with sqlite3.connect(path) as raw:
        assert raw.execute("PRAGMA user_version").fetchone()[0] == len(MIGRATIONS) + 3


def test_locked_by_another_process_beyond_the_busy_timeout(tmp_path):
    path = tmp_path / "sessions.db"
    with SessionStore.open(path) as store:
        session_id = store.create_session("demo")
    holder = sqlite3.connect(path, isolation_level=None)
    holder.execute("BEGIN IMMEDIATE")  # another dsh in the middle of a write
    try:
        with SessionStore.open(path, busy_timeout=0.05) as store:
            assert store.load_session(session_id).messages == []  # readers are not blocked
            with pytest.raises(StoreError) as caught:
                store.append_message(session_id, {"role": "user", "content": "hi"})
            assert "locked by another dsh" in _one_line(caught.value, path)
    finally:
        holder.execute("ROLLBACK")
        holder.close()
    with SessionStore.open(path) as store:
        assert store.load_session(session_id).messages == []


def test_locked_during_migration(tmp_path):
    path = tmp_path / "sessions.db"
    holder = sqlite3.connect(path, isolation_level=None)
    holder.execute("PRAGMA journal_mode = WAL")
    holder.execute("BEGIN IMMEDIATE")
    try:
        with pytest.raises(StoreError) as caught:
            SessionStore.open(path, busy_timeout=0.05)
        assert "locked" in _one_line(caught.value, path)
    finally:
        holder.execute("ROLLBACK")
        holder.close()


def test_read_only_store_writes_nothing(tmp_path):
    path = tmp_path / "sessions.db"
    with SessionStore.open(path) as store:
        session_id = store.create_session("demo")
        store.append_message(session_id, {"role": "user", "content": "first"})
        # what a read-only file or mount looks like to SQLite (the tests may run as root)
        store._db.execute("PRAGMA query_only = ON")
        with pytest.raises(StoreError) as caught:
            store.append_message(session_id, {"role": "user", "content": "second"})
        assert "read-only" in _one_line(caught.value, path)
        with pytest.raises(StoreError):
            store.create_session("demo")
        assert [m["content"] for m in store.load_session(session_id).messages] == ["first"]
        assert len(store.list_sessions()) == 1


def test_full_disk_leaves_nothing_half_written(tmp_path):
    path = tmp_path / "sessions.db"
    with SessionStore.open(path) as store:
        session_id = store.create_session("demo")
        before = store.load_session(session_id)
        pages = store._db.execute("PRAGMA page_count").fetchone()[0]
        store._db.execute(f"PRAGMA max_page_count = {pages + 1}")  # a disk with no room left
        with pytest.raises(StoreError) as caught:
            store.append_message(session_id, {"role": "user", "content": "x" * 100_000})
        assert "disk is full" in _one_line(caught.value, path)
        after = store.load_session(session_id)
        assert after.messages == [] and after.title is None
        assert after.updated_at == before.updated_at
        assert not store._db.in_transaction
        store._db.execute("PRAGMA max_page_count = 1073741823")
        store.append_message(session_id, {"role": "user", "content": "fits now"})
        assert store.load_session(session_id).title == "fits now"


def test_store_error_is_a_harness_error():
    from dsh_cli.interaction import HarnessError

    error = StoreError("nothing to continue")
    assert isinstance(error, HarnessError)
    assert error.to_dict() == {"name": "StoreError", "code": STORE_ERROR,
                               "message": "nothing to continue"}
