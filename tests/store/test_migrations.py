"""Migrations: an ordered list of functions, applied once, data kept from the first schema."""

from __future__ import annotations

import re
import sqlite3

import pytest

from dsh_cli.core.outcomes import Outcome
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


def test_an_older_stores_discussed_and_unanswerable_batches_read_as_what_they_were(tmp_path):
    """Before m012 a discussed batch, or one nobody could answer, was stored ``aborted`` with
    its code beside it; after it the status is the outcome's own, other rows keep theirs,
    and the answers' recall index (which the rebuild would cascade away) is kept."""
    path = tmp_path / "v11.db"
    _store_at(path, 11)  # the last schema that stored a discussed batch as aborted
    stamp = "2025-01-01T00:00:00Z"
    with sqlite3.connect(path) as db:
        db.execute("PRAGMA foreign_keys = ON")
        db.execute("INSERT INTO sessions (id, model, created_at, updated_at) "
                   "VALUES ('s_old', 'demo', ?, ?)", (stamp, stamp))
        for rpc_id, status, code in (("q_talk", "aborted", "ASK_DISCUSS"),
                                     ("q_nobody", "aborted", "NO_PROVIDER"),
                                     ("q_abort", "aborted", "ASK_ABORTED"),
                                     ("q_older", "aborted", None),
                                     ("q_done", "answered", None),
                                     ("q_open", "interrupted", None)):
            db.execute("INSERT INTO questions (rpc_id, session_id, request, status, code, "
                       "created_at, updated_at, continuation, answered_by) VALUES "
                       "(?, 's_old', '{\"questions\": []}', ?, ?, ?, ?, '{\"k\": 1}', 'plain')",
                       (rpc_id, status, code, stamp, stamp))
        db.execute("INSERT INTO answer_recall VALUES ('q_done', 'db', 'digest', ?)", (stamp,))
    with SessionStore.open(path) as store:
        statuses = {item.rpc_id: (item.status, item.code, item.outcome)
                    for item in store.question_history()}
        [done] = [batch for batch in store.question_batches("s_old") if batch.rpc_id == "q_done"]
    assert statuses == {
        "q_talk": ("discussed", "ASK_DISCUSS", Outcome.DISCUSSED),
        "q_nobody": ("no_provider", "NO_PROVIDER", Outcome.NO_PROVIDER),
        "q_abort": ("aborted", "ASK_ABORTED", Outcome.ABORTED),
        "q_older": ("aborted", None, Outcome.ABORTED),
        "q_done": ("answered", None, Outcome.ANSWERED),
        "q_open": ("interrupted", None, None)}
    assert (done.continuation, done.answered_by) == ({"k": 1}, "plain")
    with sqlite3.connect(path) as db:
        assert db.execute("SELECT rpc_id, digest FROM answer_recall").fetchall() == [
            ("q_done", "digest")]
        assert db.execute("PRAGMA foreign_key_check").fetchall() == []


def test_the_stored_status_admits_exactly_the_outcomes_and_the_open_states(tmp_path):
    """The CHECK of ``questions.status`` is the vocabulary's ``stored`` values: a new
    ``Outcome`` needs a migration, and every one the vocabulary has can be stored."""
    path = tmp_path / "s.db"
    SessionStore.open(path).close()
    with sqlite3.connect(path) as db:
        [sql] = db.execute("SELECT sql FROM sqlite_master WHERE name = 'questions'").fetchone()
    allowed = set(re.findall(r"'(\w+)'", sql.split("status TEXT NOT NULL CHECK", 1)[1]
                             .split(")", 1)[0]))
    assert allowed == {"pending", "interrupted"} | {outcome.stored for outcome in Outcome}


def test_an_async_batch_is_one_row_of_questions_and_later_questions_is_gone(tmp_path):
    path = tmp_path / "s.db"
    SessionStore.open(path).close()
    with sqlite3.connect(path) as db:
        tables = {row[0] for row in db.execute("SELECT name FROM sqlite_master")}
        columns = {row[1] for row in db.execute("PRAGMA table_info(questions)")}
    assert "later_questions" not in tables and "later_by_session" not in tables
    assert {"delivery", "async_outcome", "delivered_at"} <= columns


def test_an_older_stores_async_batches_move_into_questions_by_their_ticket(tmp_path):
    """At m013 each ``later_questions`` row becomes its batch's ``delivery``/``async_outcome``
    (open and settled alike); a batch with no such row (a "wait" one, or async and already
    delivered) is left out of a resume, and the answers' recall index is untouched."""
    path = tmp_path / "v12.db"
    _store_at(path, 12)
    stamp = "2026-01-01T00:00:00Z"
    outcome = '{"type": "question/resolved", "rpc_id": "q_done", "outcome": "answered"}'
    with sqlite3.connect(path) as db:
        db.execute("PRAGMA foreign_keys = ON")
        db.execute("INSERT INTO sessions (id, model, created_at, updated_at) "
                   "VALUES ('s_old', 'demo', ?, ?)", (stamp, stamp))
        for rpc_id, status in (("q_open", "aborted"), ("q_done", "answered"),
                               ("q_sync", "answered")):
            db.execute("INSERT INTO questions (rpc_id, session_id, call_id, request, status, "
                       "created_at, updated_at) VALUES (?, 's_old', ?, "
                       "'{\"questions\": []}', ?, ?, ?)", (rpc_id, "c_" + rpc_id, status,
                                                          stamp, stamp))
        for ticket, stored in (("q_open", None), ("q_done", outcome)):
            db.execute("INSERT INTO later_questions (ticket, session_id, call_id, request, "
                       "outcome, created_at) VALUES (?, 's_old', ?, '{\"questions\": []}', ?, ?)",
                       (ticket, "c_" + ticket, stored, stamp))
        db.execute("INSERT INTO answer_recall VALUES ('q_done', 'db', 'digest', ?)", (stamp,))
    with SessionStore.open(path) as store:
        later = store.load_session("s_old").later
    assert [(row["ticket"], row["call_id"], row["outcome"]) for row in later] == [
        ("q_open", "c_q_open", None),
        ("q_done", "c_q_done", {"type": "question/resolved", "rpc_id": "q_done",
                                "outcome": "answered"})]
    with sqlite3.connect(path) as db:
        assert db.execute("SELECT rpc_id, delivery, delivered_at FROM questions "
                          "ORDER BY rpc_id").fetchall() == [
            ("q_done", "async", None), ("q_open", "async", None), ("q_sync", None, None)]
        assert db.execute("SELECT rpc_id FROM answer_recall").fetchall() == [("q_done",)]
        assert db.execute("PRAGMA foreign_key_check").fetchall() == []
