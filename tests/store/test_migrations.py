"""Migrations: an ordered list of functions, applied once, data kept from the first schema."""

from __future__ import annotations

import sqlite3

import pytest

from dsh_cli.store import SessionStore, StoreError
from dsh_cli.store.migrations import MIGRATIONS, migrate, schema_version, title_of


def _store_at(path, version: int) -> None:
    """A store as an older dsh left it: only the first ``version`` migrations applied."""
    db = sqlite3.connect(path, isolation_level=None)
    migrate(db, path, MIGRATIONS[:version])
    db.close()


def test_migrations_are_an_ordered_list_of_named_functions():
    names = [step.__name__ for step in MIGRATIONS]
    assert names == sorted(names)
    assert all(name.startswith(f"m{index + 1:03d}_") for index, name in enumerate(names))


def test_a_fresh_store_gets_every_migration(tmp_path):
    path = tmp_path / "s.db"
    SessionStore.open(path).close()
    with sqlite3.connect(path) as db:
        assert schema_version(db) == len(MIGRATIONS)
        tables = {row[0] for row in db.execute("SELECT name FROM sqlite_master")}
    assert {"sessions", "messages", "questions"} <= tables


def test_upgrade_from_the_first_schema_keeps_data_and_backfills_titles(tmp_path):
    path = tmp_path / "s.db"
    _store_at(path, 1)
    with sqlite3.connect(path) as db:
        db.execute("INSERT INTO sessions VALUES ('s_old', 'deepseek-chat', 'be brief', "
                   "'2024-01-01T00:00:00.000Z', '2024-01-01T00:00:01.000Z')")
        db.executemany(
            "INSERT INTO messages (session_id, role, content, tool_calls, tool_call_id, "
            "created_at) VALUES ('s_old', ?, ?, ?, ?, '2024-01-01T00:00:00.500Z')",
            [("user", "first   question\nspanning lines", None, None),
             ("assistant", "", '[{"id": "c1", "type": "function", "function": '
                               '{"name": "t", "arguments": "{}"}}]', None),
             ("tool", "done", None, "c1"),
             ("user", "second question", None, None)],
        )
    with SessionStore.open(path) as store:
        record = store.load_session("s_old")
        assert record.title == "first question spanning lines"
        assert record.system == "be brief"
        assert [m["role"] for m in record.messages] == ["system", "user", "assistant", "tool",
                                                        "user"]
        assert record.messages[2]["tool_calls"][0]["id"] == "c1"
        assert record.pending_rpc_ids == {}
        assert store.question_batches("s_old") == []  # the table the first schema lacked
        new = store.create_session("demo")
        assert store.latest_session_id() == new
    with sqlite3.connect(path) as db:
        assert schema_version(db) == len(MIGRATIONS)


def test_upgrade_from_each_older_version(tmp_path):
    for version in range(len(MIGRATIONS)):
        path = tmp_path / f"v{version}.db"
        _store_at(path, version)
        with SessionStore.open(path) as store:
            session_id = store.create_session("demo")
            store.append_message(session_id, {"role": "user", "content": "hi"})
            assert store.load_session(session_id).title == "hi"


def test_migrating_twice_is_a_no_op(tmp_path):
    path = tmp_path / "s.db"
    SessionStore.open(path).close()
    db = sqlite3.connect(path, isolation_level=None)
    assert migrate(db, path) == len(MIGRATIONS)
    assert schema_version(db) == len(MIGRATIONS)
    db.close()


def test_a_failing_migration_leaves_the_store_as_it_was(tmp_path):
    path = tmp_path / "s.db"
    _store_at(path, 1)

    def broken(db):
        db.execute("CREATE TABLE half_done (x)")
        raise sqlite3.OperationalError("simulated failure")

    db = sqlite3.connect(path, isolation_level=None)
    with pytest.raises(StoreError, match="simulated failure"):
        migrate(db, path, [*MIGRATIONS[:1], broken])
    assert schema_version(db) == 1
    tables = {row[0] for row in db.execute("SELECT name FROM sqlite_master")}
    assert "half_done" not in tables
    db.close()


def test_title_is_one_line_and_truncated():
    assert title_of("  hello\n\tworld  ") == "hello world"
    long = title_of("word " * 40)
    assert len(long) == 60 and long.endswith("…") and "\n" not in long


def test_answer_provenance_column_added_to_an_older_store_reads_as_unknown(tmp_path):
    path = tmp_path / "v6.db"
    _store_at(path, 7)  # the last schema without answered_by
    with sqlite3.connect(path) as db:
        db.execute("INSERT INTO sessions (id, model, created_at, updated_at) "
                   "VALUES ('s_old', 'demo', '2025-01-01T00:00:00Z', '2025-01-01T00:00:00Z')")
        db.execute("INSERT INTO questions (rpc_id, session_id, request, status, answer, "
                   "created_at, updated_at, resolved_at) VALUES ('q_old', 's_old', "
                   "'{\"questions\": []}', 'answered', '{\"answers\": []}', "
                   "'2025-01-01T00:00:00Z', '2025-01-01T00:00:00Z', '2025-01-01T00:00:01Z')")
    with SessionStore.open(path) as store:
        [item] = store.question_history()
        [batch] = store.question_batches("s_old")
    assert item.rpc_id == "q_old" and item.status == "answered"
    assert item.answered_by is None and batch.answered_by is None
    assert item.resolved_at == "2025-01-01T00:00:01Z"


def test_an_older_stores_mcp_sessions_read_as_agents_and_are_never_continued(tmp_path):
    path = tmp_path / "v8.db"
    _store_at(path, 8)  # the last schema without sessions.agent
    with sqlite3.connect(path) as db:
        for session_id, model, stamp in (("s_chat", "demo", "2025-01-01T00:00:00Z"),
                                         ("s_agent", "mcp:Claude Code", "2025-01-02T00:00:00Z")):
            db.execute("INSERT INTO sessions (id, model, created_at, updated_at) "
                       "VALUES (?, ?, ?, ?)", (session_id, model, stamp, stamp))
    with SessionStore.open(path) as store:
        agent, chat = store.list_sessions()
        assert (agent.id, agent.kind, agent.agent, agent.cwd) == (
            "s_agent", "agent", "Claude Code", None)
        assert (chat.kind, chat.agent) == ("chat", None)
        assert store.latest_session_id() == "s_chat"
        assert store.latest_session_id(None) == "s_agent"
