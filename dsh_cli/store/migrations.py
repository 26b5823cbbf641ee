"""The store's schema as an ordered list of migrations; ``PRAGMA user_version`` counts them.

Append new migrations at the end and never edit one that has shipped: a store records
how many it has applied, and a store that counts more than this dsh knows came from a
newer dsh, which we refuse rather than guess at.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable
from pathlib import Path

from dsh_cli.store.db import StoreError, transaction, translated

__all__ = ["MIGRATIONS", "TITLE_LENGTH", "migrate", "schema_version", "title_of"]

Migration = Callable[[sqlite3.Connection], None]
MIGRATIONS: list[Migration] = []
TITLE_LENGTH = 60


def migration(function: Migration) -> Migration:
    MIGRATIONS.append(function)
    return function


def title_of(content: str) -> str:
    """A session's title: its first user message on one line, truncated."""
    line = " ".join(content.split())
    return line if len(line) <= TITLE_LENGTH else line[: TITLE_LENGTH - 1].rstrip() + "…"


@migration
def m001_sessions_and_messages(db: sqlite3.Connection) -> None:
    db.execute("""
        CREATE TABLE sessions (
            id TEXT PRIMARY KEY,
            model TEXT NOT NULL,
            system TEXT,
            created_at TEXT NOT NULL,
            updated_at TEXT NOT NULL
        )""")
    db.execute("""
        CREATE TABLE messages (
            id INTEGER PRIMARY KEY,
            session_id TEXT NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
            role TEXT NOT NULL,
            content TEXT,
            tool_calls TEXT,
            tool_call_id TEXT,
            created_at TEXT NOT NULL
        )""")
    db.execute("CREATE INDEX messages_by_session ON messages(session_id, id)")


@migration
def m002_session_titles(db: sqlite3.Connection) -> None:
    db.execute("ALTER TABLE sessions ADD COLUMN title TEXT")
    db.execute("CREATE INDEX sessions_by_update ON sessions(updated_at)")
    rows = db.execute("""
        SELECT session_id, content FROM messages
        WHERE id IN (SELECT min(id) FROM messages WHERE role = 'user' GROUP BY session_id)
    """).fetchall()
    db.executemany("UPDATE sessions SET title = ? WHERE id = ?",
                   [(title_of(content or ""), session_id) for session_id, content in rows])


@migration
def m003_question_batches(db: sqlite3.Connection) -> None:
    db.execute("""
        CREATE TABLE questions (
            rpc_id TEXT PRIMARY KEY,
            session_id TEXT NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
            call_id TEXT,
            request TEXT NOT NULL,
            status TEXT NOT NULL CHECK (status IN (
                'pending', 'answered', 'cancelled', 'aborted', 'timeout', 'interrupted')),
            answer TEXT,
            created_at TEXT NOT NULL,
            updated_at TEXT NOT NULL,
            resolved_at TEXT
        )""")
    db.execute("CREATE INDEX questions_by_session ON questions(session_id, status)")


@migration
def m004_permission_requests(db: sqlite3.Connection) -> None:
    db.execute("""
        CREATE TABLE permissions (
            rpc_id TEXT PRIMARY KEY,
            session_id TEXT NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
            call_id TEXT,
            tool TEXT NOT NULL,
            server TEXT,
            arguments TEXT NOT NULL,
            hints TEXT NOT NULL,
            status TEXT NOT NULL CHECK (status IN (
                'pending', 'decided', 'cancelled', 'aborted', 'timeout')),
            decision TEXT CHECK (decision IN (
                'allow_once', 'allow_session', 'allow_always', 'deny')),
            message TEXT,
            created_at TEXT NOT NULL,
            resolved_at TEXT
        )""")
    db.execute("CREATE INDEX permissions_by_session ON permissions(session_id, created_at)")


@migration
def m005_declined_questions(db: sqlite3.Connection) -> None:
    """A batch may end ``declined`` (elicitation); SQLite changes a CHECK by a rebuild."""
    db.execute("""
        CREATE TABLE questions_new (
            rpc_id TEXT PRIMARY KEY,
            session_id TEXT NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
            call_id TEXT,
            request TEXT NOT NULL,
            status TEXT NOT NULL CHECK (status IN (
                'pending', 'answered', 'cancelled', 'declined', 'aborted', 'timeout',
                'interrupted')),
            answer TEXT,
            created_at TEXT NOT NULL,
            updated_at TEXT NOT NULL,
            resolved_at TEXT
        )""")
    db.execute("INSERT INTO questions_new SELECT rpc_id, session_id, call_id, request, status, "
               "answer, created_at, updated_at, resolved_at FROM questions")
    db.execute("DROP TABLE questions")
    db.execute("ALTER TABLE questions_new RENAME TO questions")
    db.execute("CREATE INDEX questions_by_session ON questions(session_id, status)")


@migration
def m006_question_continuations(db: sqlite3.Connection) -> None:
    """What the asker of a batch needs to carry on after a resume (an MCP call's
    ``requestState``): an opaque JSON object, written with the batch before it is shown."""
    db.execute("ALTER TABLE questions ADD COLUMN continuation TEXT")


@migration
def m007_async_questions(db: sqlite3.Connection) -> None:
    """Async batches (``delivery: "async"``) until their outcome is in the conversation:
    ``outcome`` is their ``question/resolved`` once settled, NULL while open; the row goes
    in the transaction that writes the user message carrying the outcome."""
    db.execute("""
        CREATE TABLE later_questions (
            ticket TEXT PRIMARY KEY,
            session_id TEXT NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
            call_id TEXT,
            request TEXT NOT NULL,
            outcome TEXT,
            created_at TEXT NOT NULL
        )""")
    db.execute("CREATE INDEX later_by_session ON later_questions(session_id, created_at)")


@migration
def m008_answer_provenance(db: sqlite3.Connection) -> None:
    """Who answered a batch (terminal, plain, web, desk, ...); older rows stay NULL."""
    db.execute("ALTER TABLE questions ADD COLUMN answered_by TEXT")


@migration
def m009_agent_sessions(db: sqlite3.Connection) -> None:
    """Who a session is: NULL ``agent`` for a chat, else the MCP client that asked through
    ``dsh mcp``, with the working directory it was started in. Older agent sessions are
    known by the ``mcp:<client>`` their model column holds."""
    db.execute("ALTER TABLE sessions ADD COLUMN agent TEXT")
    db.execute("ALTER TABLE sessions ADD COLUMN cwd TEXT")
    db.execute("UPDATE sessions SET agent = substr(model, 5) WHERE substr(model, 1, 4) = 'mcp:'")


@migration
def m010_question_end_codes(db: sqlite3.Connection) -> None:
    """The error code of a batch that ended without an answer (``ASK_DISCUSS``,
    ``NO_PROVIDER``, …), so ``dsh history`` tells a discussed batch or one nobody could
    answer from an aborted one; older rows stay NULL."""
    db.execute("ALTER TABLE questions ADD COLUMN code TEXT")


@migration
def m011_answer_recall(db: sqlite3.Connection) -> None:
    """The last answer's index: per question of a batch, a digest of who asked it (the
    session's agent, its working directory) and what it was (header, text, options), and
    when its batch was answered. Older batches have no row: their asker's directory is not
    known, so they are never offered as a last answer."""
    db.execute("""
        CREATE TABLE answer_recall (
            rpc_id TEXT NOT NULL REFERENCES questions(rpc_id) ON DELETE CASCADE,
            question_id TEXT NOT NULL,
            digest TEXT NOT NULL,
            answered_at TEXT,
            PRIMARY KEY (rpc_id, question_id)
        )""")
    db.execute("CREATE INDEX answer_recall_by_digest ON answer_recall(digest, answered_at)")


@migration
def m012_question_outcomes(db: sqlite3.Connection) -> None:
    """A batch's status is its ``Outcome``'s ``stored`` value (``core/outcomes.py``): a
    discussed batch is ``discussed`` and one nobody could answer ``no_provider``, no longer
    ``aborted`` with the code beside it; older rows are read by that code. SQLite changes a
    CHECK by a rebuild, and dropping the table would cascade to the answers' recall index,
    so that is kept aside and put back."""
    db.execute("""
        CREATE TABLE questions_new (
            rpc_id TEXT PRIMARY KEY,
            session_id TEXT NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
            call_id TEXT,
            request TEXT NOT NULL,
            status TEXT NOT NULL CHECK (status IN (
                'pending', 'interrupted', 'answered', 'cancelled', 'declined', 'timeout',
                'discussed', 'aborted', 'no_provider')),
            answer TEXT,
            created_at TEXT NOT NULL,
            updated_at TEXT NOT NULL,
            resolved_at TEXT,
            continuation TEXT,
            answered_by TEXT,
            code TEXT
        )""")
    columns = ("rpc_id, session_id, call_id, request, status, answer, created_at, updated_at, "
               "resolved_at, continuation, answered_by, code")
    db.execute(f"INSERT INTO questions_new ({columns}) SELECT "
               f"{columns.replace('status', _STATUS_BY_CODE)} FROM questions")
    db.execute("CREATE TEMP TABLE recall_kept AS SELECT * FROM answer_recall")
    db.execute("DROP TABLE questions")
    db.execute("ALTER TABLE questions_new RENAME TO questions")
    db.execute("CREATE INDEX questions_by_session ON questions(session_id, status)")
    db.execute("INSERT INTO answer_recall SELECT * FROM recall_kept")
    db.execute("DROP TABLE temp.recall_kept")



@migration
def m013_async_batches_in_questions(db: sqlite3.Connection) -> None:
    """An async batch is one row of ``questions``, no longer a second in m007's
    ``later_questions``: ``delivery`` is how it was asked (``wait`` or ``async``; NULL on
    older rows), ``async_outcome`` its ``question/resolved`` once settled, ``delivered_at``
    when that outcome went into the conversation (where m007 deleted its row). An older
    async batch already delivered had no row left, so it reads as NULL. Columns are added,
    not the table rebuilt: nothing cascades to ``answer_recall``."""
    db.execute("ALTER TABLE questions ADD COLUMN delivery TEXT")
    db.execute("ALTER TABLE questions ADD COLUMN async_outcome TEXT")
    db.execute("ALTER TABLE questions ADD COLUMN delivered_at TEXT")
    db.execute("UPDATE questions SET delivery = 'async', async_outcome = "
               "(SELECT outcome FROM later_questions WHERE ticket = questions.rpc_id) "
               "WHERE rpc_id IN (SELECT ticket FROM later_questions)")
    db.execute("DROP TABLE later_questions")  # its index goes with it
    # a resume reads the session's undelivered async batches: only those are indexed
    db.execute("CREATE INDEX questions_undelivered ON questions(session_id, created_at) "
               "WHERE delivery = 'async' AND delivered_at IS NULL")

# an older row's status, read with the code it ended with (m012)
_STATUS_BY_CODE = ("CASE WHEN status = 'aborted' AND code = 'ASK_DISCUSS' THEN 'discussed' "
                   "WHEN status = 'aborted' AND code = 'NO_PROVIDER' THEN 'no_provider' "
                   "ELSE status END")


def schema_version(db: sqlite3.Connection) -> int:
    return int(db.execute("PRAGMA user_version").fetchone()[0])


def migrate(db: sqlite3.Connection, path: Path, migrations: list[Migration] | None = None) -> int:
    """Apply the migrations this store lacks, all in one transaction; the new version."""
    migrations = MIGRATIONS if migrations is None else migrations
    if _check(db, path, migrations) == len(migrations):
        return len(migrations)  # the common case takes no write lock
    with transaction(db, path):
        version = _check(db, path, migrations)  # another dsh may have migrated meanwhile
        for step in migrations[version:]:
            step(db)
        db.execute(f"PRAGMA user_version = {len(migrations)}")
    return len(migrations)


def _check(db: sqlite3.Connection, path: Path, migrations: list[Migration]) -> int:
    with translated(path):
        version = schema_version(db)
    if version > len(migrations):
        raise StoreError(
            f"session store {path}: it was written by a newer dsh (schema {version}, this dsh "
            f"knows {len(migrations)}); upgrade dsh, or move the file aside",
            path=path,
        )
    return version
