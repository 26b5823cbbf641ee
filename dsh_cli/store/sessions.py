"""Sessions, their messages, question batches and permission requests: queries and recording.

``record`` subscribes to the loop's event stream and writes each message, each question
batch and each permission request and decision as it happens, one transaction per event,
so whatever the model saw is on disk before its next call and a killed process loses
nothing.
"""

from __future__ import annotations

import json
import os
import secrets
import sqlite3
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from dsh_cli.core.clock import utc_stamp
from dsh_cli.core.conversation import assistant_message, message_of
from dsh_cli.core.decisions import DECISIONS
from dsh_cli.core.events import (
    Event,
    EventStream,
    PermissionRequested,
    PermissionResolved,
    QuestionRequested,
    QuestionResolved,
    UserMessage,
)
from dsh_cli.store.db import (
    BUSY_TIMEOUT,
    SessionNotFound,
    connect,
    transaction,
    translated,
)
from dsh_cli.store.migrations import migrate, title_of
from dsh_cli.store.ownership import SessionLock, acquire
from dsh_cli.store.resumable import resumable_batches

__all__ = [
    "PermissionRecord",
    "QuestionBatch",
    "SessionRecord",
    "SessionStore",
    "SessionSummary",
    "assistant_message",
]

_REQUEST_KEYS = ("questions", "source", "declinable", "review")  # what re-asks a batch
_OUTCOMES = ("answered", "cancelled", "declined", "aborted", "timeout")
_PERMISSION_OUTCOMES = ("decided", "cancelled", "aborted", "timeout")


# A session's columns for summaries; updated_at counts its last message (see append_message).
_SUMMARY = (
    "SELECT id, model, created_at, max(updated_at, coalesce((SELECT created_at FROM messages "
    "WHERE session_id = sessions.id ORDER BY id DESC LIMIT 1), '')) AS updated, title, "
    "agent, cwd"
)
KINDS = ("chat", "agent")  # a chat of dsh's own model, or an agent's `dsh mcp` session
_KIND_CLAUSE = {None: "", "chat": "WHERE agent IS NULL", "agent": "WHERE agent IS NOT NULL"}


def _selected(answer: Any, question_id: str, labels: list[str]) -> list[str]:
    """The labels a stored answer chose for ``question_id``, among those offered now."""
    items = answer.get("answers") if isinstance(answer, dict) else None
    for item in items if isinstance(items, list) else []:
        if isinstance(item, dict) and item.get("id") == question_id:
            selected = item.get("selected")
            return [label for label in selected if label in labels] \
                if isinstance(selected, list) else []
    return []


def recall_digest(agent: str, cwd: str, question: dict[str, Any]) -> str | None:
    """What makes two questions "the same" for the last answer: the same agent in the same
    working directory asking the same header, text and options; None without options."""
    import hashlib

    options = question.get("options")
    if not options:
        return None
    key = [agent, cwd, question.get("header"), question.get("question"), options,
           bool(question.get("multi_select"))]
    text = json.dumps(key, ensure_ascii=False, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


def _working_directory() -> str:
    import os

    try:
        return os.getcwd()
    except OSError:  # removed under us: no directory, so nothing is recalled for it
        return ""


def _like_prefix(prefix: str) -> str:
    """A LIKE pattern matching ids that start with ``prefix`` (its wildcards escaped)."""
    escaped = prefix.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
    return escaped + "%"


def _now() -> str:
    return utc_stamp()


@dataclass(frozen=True)
class SessionSummary:
    """One line of ``dsh sessions list``."""

    id: str
    model: str
    created_at: str
    updated_at: str
    title: str | None
    agent: str | None = None  # the MCP client of an agent's session; None for a chat
    cwd: str | None = None  # where that agent's `dsh mcp` ran

    @property
    def kind(self) -> str:
        """``chat`` (dsh's own model talks) or ``agent`` (an agent asked through ``dsh mcp``)."""
        return "chat" if self.agent is None else "agent"

    def to_json(self) -> dict[str, Any]:
        return {"id": self.id, "created_at": self.created_at, "updated_at": self.updated_at,
                "model": self.model, "title": self.title, "kind": self.kind,
                "agent": self.agent, "cwd": self.cwd}

    @property
    def shown_title(self) -> str:
        """The title as people read it (``dsh sessions list``, ``/sessions``), unsanitised."""
        if self.title:
            return self.title
        return "(untitled)" if self.agent is None else "(no question asked yet)"

    @property
    def shown_who(self) -> str:
        """A chat's model, or the agent of a ``dsh mcp`` session and where it ran
        (``~`` for the home folder), as people read it; unsanitised."""
        if self.agent is None:
            return self.model
        if not self.cwd:
            return self.agent
        home = os.path.expanduser("~")
        cwd = self.cwd
        if home not in ("", "/") and (cwd == home or cwd.startswith(home + os.sep)):
            cwd = "~" + cwd[len(home):]
        return f"{self.agent} in {cwd}"


@dataclass(frozen=True)
class SessionRecord:
    """A stored session ready to resume: ``messages`` start with the system prompt, if any.

    ``pending_rpc_ids`` maps each tool call that has a question batch but no tool result
    (the batch was pending or interrupted when the process ended) to that batch's
    ``rpc_id``, so the loop re-asks it under the same id; ``pending_continuations`` maps
    those of them whose batch carries a continuation (what its asker needs to carry on,
    such as an MCP server's ``requestState``) to it.
    """

    id: str
    model: str
    created_at: str
    updated_at: str
    title: str | None
    messages: list[dict[str, Any]]
    pending_rpc_ids: dict[str, str] = field(default_factory=dict)
    pending_continuations: dict[str, dict[str, Any]] = field(default_factory=dict)
    system: str | None = None
    permissions: list[PermissionRecord] = field(default_factory=list)
    # async batches not yet in the conversation: ticket, call_id, request, outcome (or None)
    later: list[dict[str, Any]] = field(default_factory=list)
    agent: str | None = None  # an agent's `dsh mcp` session: no conversation to continue

    def to_json(self) -> dict[str, Any]:
        return {"id": self.id, "created_at": self.created_at, "updated_at": self.updated_at,
                "model": self.model, "title": self.title, "messages": self.messages,
                "permissions": [permission.to_json() for permission in self.permissions]}


@dataclass(frozen=True)
class PermissionRecord:
    """One permission request as stored, with its decision once there is one."""

    rpc_id: str
    call_id: str | None
    tool: str
    server: str | None
    arguments: Any
    hints: dict[str, bool]
    status: str  # pending, decided, cancelled, aborted, timeout
    decision: str | None
    message: str | None
    created_at: str
    resolved_at: str | None

    def to_json(self) -> dict[str, Any]:
        return {"rpc_id": self.rpc_id, "call_id": self.call_id, "tool": self.tool,
                "server": self.server, "arguments": self.arguments, "hints": self.hints,
                "status": self.status, "decision": self.decision, "message": self.message,
                "created_at": self.created_at, "resolved_at": self.resolved_at}


@dataclass(frozen=True)
class QuestionBatch:
    """One question batch as stored; ``request`` is ``{"questions": [...]}``, with ``source``,
    ``declinable`` and ``review`` when the asker set them (``AskUserQuestionRequest``'s JSON);
    ``continuation`` is the asker's opaque resume data, if it gave any."""

    rpc_id: str
    session_id: str
    call_id: str | None
    request: dict[str, Any]
    status: str
    answer: dict[str, Any] | None
    created_at: str
    updated_at: str
    resolved_at: str | None
    continuation: dict[str, Any] | None = None
    answered_by: str | None = None


@dataclass(frozen=True)
class AnsweredQuestion:
    """One batch of ``dsh history``: what was asked, how it ended, who answered and when."""

    rpc_id: str
    session_id: str
    agent: str
    request: dict[str, Any]
    status: str
    answer: dict[str, Any] | None
    answered_by: str | None
    created_at: str
    resolved_at: str | None
    code: str | None = None  # the error code it ended with, when it was not answered
    by_agent: bool = False  # asked by an agent through `dsh mcp` (at a desk)

    def to_json(self) -> dict[str, Any]:
        return {"rpc_id": self.rpc_id, "session_id": self.session_id, "agent": self.agent,
                "questions": self.request.get("questions", []), "status": self.status,
                "answer": self.answer, "answered_by": self.answered_by,
                "asked_at": self.created_at, "answered_at": self.resolved_at}


class SessionStore:
    """The SQLite session store; open with ``SessionStore.open()``, close when done."""

    def __init__(self, connection: sqlite3.Connection, path: Path) -> None:
        self.path = path
        self._db = connection
        self._lock = threading.RLock()  # a signal handler may write while the loop does
        self._frozen: set[str] = set()
        self._owned: dict[str, SessionLock] = {}

    @classmethod
    def open(cls, path: str | Path | None = None, *,
             busy_timeout: float = BUSY_TIMEOUT) -> SessionStore:
        """Open (creating, migrating) the store; default ``data_dir()/"sessions.db"``."""
        if path is None:
            from dsh_cli.config import data_dir

            path = data_dir() / "sessions.db"
        path = Path(path)
        connection = connect(path, busy_timeout=busy_timeout)
        try:
            migrate(connection, path)
        except BaseException:
            connection.close()
            raise
        return cls(connection, path)

    def close(self) -> None:
        with self._lock:
            for lock in self._owned.values():
                lock.release()
            self._owned.clear()
            self._db.close()

    def claim(self, session_id: str) -> str:
        """Own the session (by id or unique prefix) for this process; its full id.

        ``SessionBusy`` names the pid of a live process that owns it; a dead owner's
        claim is taken over (``store/ownership.py``). Released by ``close``.
        """
        session_id = self.resolve_id(session_id)
        with self._lock:
            if session_id not in self._owned:
                self._owned[session_id] = acquire(self.path, session_id)
        return session_id

    def release(self, session_id: str) -> None:
        """Let another process have the session (a claim that was not used after all)."""
        self._release(session_id)

    def _release(self, session_id: str) -> None:
        with self._lock:
            lock = self._owned.pop(session_id, None)
            if lock is not None:
                lock.release()

    def __enter__(self) -> SessionStore:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    # -- writing ---------------------------------------------------------------------

    def create_session(self, model: str, system: str | None = None, *,
                       agent: str | None = None, cwd: str | None = None) -> str:
        """A new empty session; its id. Only the model's name is kept, never a key; an
        agent's ``dsh mcp`` session names the agent and its working directory."""
        session_id = "s_" + secrets.token_hex(6)
        now = _now()
        with self._lock, transaction(self._db, self.path) as db:
            db.execute(
                "INSERT INTO sessions (id, model, system, title, created_at, updated_at, "
                "agent, cwd) VALUES (?, ?, ?, NULL, ?, ?, ?, ?)",
                (session_id, model, system, now, now, agent, cwd),
            )
        return session_id

    def append_message(self, session_id: str, message: dict[str, Any], *,
                       ticket: str | None = None) -> None:
        """Persist one OpenAI-format message at the end of the session; ``ticket``: the
        message carries that async batch's outcome, which is forgotten with it."""
        tool_calls = message.get("tool_calls")
        now = _now()
        with self._lock, transaction(self._db, self.path) as db:
            if ticket is not None:
                db.execute("DELETE FROM later_questions WHERE ticket = ?", (ticket,))
            db.execute(
                "INSERT INTO messages (session_id, role, content, tool_calls, tool_call_id, "
                "created_at) VALUES (?, ?, ?, ?, ?, ?)",
                (session_id, message["role"], message.get("content"),
                 json.dumps(tool_calls, ensure_ascii=False) if tool_calls else None,
                 message.get("tool_call_id"), now),
            )
            # the session row is left alone (one page less per commit): a session's
            # updated_at is read as the later of its own and its last message's time
            if message["role"] == "user" and isinstance(message.get("content"), str):
                db.execute("UPDATE sessions SET title = ? WHERE id = ? AND title IS NULL",
                           (title_of(message["content"]), session_id))

    def question_requested(self, session_id: str, event: QuestionRequested) -> None:
        """A batch was shown: a new pending row, or the same row again when re-asked.

        The continuation is written in the same transaction, before any UI shows the batch,
        so a crash while it is shown loses nothing a resume needs.
        """
        now = _now()
        stored = event.to_json()
        request = json.dumps({key: stored[key] for key in _REQUEST_KEYS if key in stored},
                             ensure_ascii=False)
        continuation = (None if event.continuation is None
                        else json.dumps(event.continuation, ensure_ascii=False))
        with self._lock, transaction(self._db, self.path) as db:
            db.execute(
                "INSERT INTO questions (rpc_id, session_id, call_id, request, status, answer, "
                "continuation, created_at, updated_at) "
                "VALUES (?, ?, ?, ?, 'pending', NULL, ?, ?, ?) "
                "ON CONFLICT (rpc_id) DO UPDATE SET status = 'pending', answer = NULL, "
                "answered_by = NULL, code = NULL, resolved_at = NULL, request = excluded.request, "
                "continuation = excluded.continuation, "
                "call_id = coalesce(excluded.call_id, call_id), updated_at = excluded.updated_at",
                (event.rpc_id, session_id, event.call_id, request, continuation, now, now),
            )
            # an agent's session has no user message: its first question is its title
            questions = stored.get("questions") or [{}]
            db.execute("UPDATE sessions SET title = ? WHERE id = ? AND title IS NULL "
                       "AND agent IS NOT NULL",
                       (title_of(str(questions[0].get("question") or "")), session_id))
            self._index_for_recall(db, session_id, event.rpc_id, stored.get("questions"))
            if event.delivery == "async":  # a resumed one is the same row, still open
                db.execute(
                    "INSERT OR IGNORE INTO later_questions (ticket, session_id, call_id, "
                    "request, outcome, created_at) VALUES (?, ?, ?, ?, NULL, ?)",
                    (event.rpc_id, session_id, event.call_id, request, now))
            db.execute("UPDATE sessions SET updated_at = ? WHERE id = ?", (now, session_id))

    def question_resolved(self, session_id: str, event: QuestionResolved) -> None:
        """A pending batch settled; an interrupted one keeps waiting for its resume."""
        status = event.outcome if event.outcome in _OUTCOMES else "aborted"
        answer = json.dumps(event.answer, ensure_ascii=False) if event.answer is not None else None
        now = _now()
        with self._lock, transaction(self._db, self.path) as db:
            db.execute(
                "UPDATE questions SET status = ?, answer = ?, answered_by = ?, code = ?, "
                "updated_at = ?, resolved_at = ? WHERE rpc_id = ? AND status = 'pending'",
                (status, answer, event.answered_by, event.code, now, now, event.rpc_id),
            )
            if status == "answered":
                db.execute("UPDATE answer_recall SET answered_at = ? WHERE rpc_id = ?",
                           (now, event.rpc_id))
            if status != "aborted":  # an aborted async batch stays open for the resume
                db.execute("UPDATE later_questions SET outcome = ? WHERE ticket = ? "
                           "AND outcome IS NULL",
                           (json.dumps(event.to_json(), ensure_ascii=False), event.rpc_id))
            db.execute("UPDATE sessions SET updated_at = ? WHERE id = ?", (now, session_id))

    def _index_for_recall(self, db: sqlite3.Connection, session_id: str, rpc_id: str,
                          questions: Any) -> None:
        """The batch's questions under their recall digests (``recall_digest``), unanswered."""
        db.execute("DELETE FROM answer_recall WHERE rpc_id = ?", (rpc_id,))
        row = db.execute("SELECT model FROM sessions WHERE id = ?", (session_id,)).fetchone()
        if row is None or not isinstance(questions, list):
            return
        cwd = _working_directory()
        rows = [(rpc_id, str(question.get("id")), digest) for question in questions
                if isinstance(question, dict)
                and (digest := recall_digest(row[0], cwd, question)) is not None]
        db.executemany("INSERT OR IGNORE INTO answer_recall (rpc_id, question_id, digest) "
                       "VALUES (?, ?, ?)", rows)

    def mark_interrupted(self, session_id: str) -> int:
        """Mark the session's pending batches interrupted-but-resumable; how many.

        Called as the process dies (SIGTERM, SIGHUP): from here on this store records
        nothing more for the session, so the aborts of the dying turn never reach the
        conversation and a resume re-asks the batch under the same ``rpc_id``.
        """
        with self._lock:
            self._frozen.add(session_id)
            with transaction(self._db, self.path) as db:
                cursor = db.execute(
                    "UPDATE questions SET status = 'interrupted', updated_at = ? "
                    "WHERE session_id = ? AND status = 'pending'",
                    (_now(), session_id),
                )
        return cursor.rowcount

    def record(self, events: EventStream, session_id: str) -> Callable[[], None]:
        """Persist the session's messages and question batches as the stream emits them.

        Returns the function that stops recording. A write that fails raises its
        ``StoreError`` into the emitter: losing the conversation silently is worse.
        Recording claims the session (``SessionBusy`` when another process has it) and
        stopping lets it go.
        """
        self._summary(session_id)  # SessionNotFound now, not at the first message
        self.claim(session_id)
        with self._lock:
            self._frozen.discard(session_id)

        def listener(event: Event) -> None:
            if session_id in self._frozen:
                return
            message = message_of(event)  # the very message the loop keeps for it
            if message is not None:
                ticket = event.ticket if isinstance(event, UserMessage) else None
                self.append_message(session_id, message, ticket=ticket)
            elif isinstance(event, QuestionRequested):
                self.question_requested(session_id, event)
            elif isinstance(event, QuestionResolved):
                self.question_resolved(session_id, event)
            elif isinstance(event, PermissionRequested):
                self.permission_requested(session_id, event)
            elif isinstance(event, PermissionResolved):
                self.permission_resolved(event)

        unsubscribe = events.subscribe(listener)

        def stop() -> None:
            unsubscribe()
            self._release(session_id)

        return stop

    def delete_session(self, session_id: str) -> str:
        """Remove a session (by id or unique prefix), its messages and question batches."""
        session_id = self.resolve_id(session_id)
        with self._lock, transaction(self._db, self.path) as db:
            cursor = db.execute("DELETE FROM sessions WHERE id = ?", (session_id,))
            if cursor.rowcount == 0:
                raise SessionNotFound(session_id, self.path)
        return session_id

    def set_model(self, session_id: str, model: str) -> None:
        """The model the session talks to from now on (``/model NAME``)."""
        with self._lock, transaction(self._db, self.path) as db:
            db.execute("UPDATE sessions SET model = ? WHERE id = ?", (model, session_id))

    def forget_if_empty(self, session_id: str) -> bool:
        """Remove the session if nothing was ever said or asked in it (a chat opened and
        left, a `/new` never used): ``dsh sessions list`` shows conversations only."""
        with self._lock, transaction(self._db, self.path) as db:
            cursor = db.execute(
                "DELETE FROM sessions WHERE id = ? "
                "AND NOT EXISTS (SELECT 1 FROM messages WHERE session_id = ?) "
                "AND NOT EXISTS (SELECT 1 FROM questions WHERE session_id = ?) "
                "AND NOT EXISTS (SELECT 1 FROM permissions WHERE session_id = ?)",
                (session_id, session_id, session_id, session_id))
        return cursor.rowcount > 0

    # -- reading ---------------------------------------------------------------------

    def resolve_id(self, session_id: str) -> str:
        """The full id of the session ``session_id`` names, exactly or by a unique prefix."""
        with self._lock, translated(self.path):
            if self._db.execute("SELECT 1 FROM sessions WHERE id = ?", (session_id,)).fetchone():
                return session_id
            for prefix in dict.fromkeys((session_id, "s_" + session_id)):
                rows = self._db.execute(
                    "SELECT id FROM sessions WHERE substr(id, 1, ?) = ? ORDER BY id LIMIT 11",
                    (len(prefix), prefix),
                ).fetchall()
                if len(rows) > 1:
                    more = ("…",) if len(rows) > 10 else ()
                    matches = tuple(row[0] for row in rows[:10]) + more
                    raise SessionNotFound(session_id, self.path, ambiguous=True,
                                          matches=matches)
                if rows:
                    return rows[0][0]
        raise SessionNotFound(session_id, self.path)

    def latest_session_id(self, kind: str | None = "chat") -> str | None:
        """The most recently updated session of ``kind`` (``--continue``: a chat), or None."""
        with self._lock, translated(self.path):
            row = self._db.execute(
                f"{_SUMMARY} FROM sessions {_KIND_CLAUSE[kind]} "
                "ORDER BY updated DESC, rowid DESC LIMIT 1"
            ).fetchone()
        return row[0] if row else None

    def list_sessions(self, kind: str | None = None) -> list[SessionSummary]:
        """Every session (of ``kind``, ``chat`` or ``agent``), most recently updated first."""
        with self._lock, translated(self.path):
            rows = self._db.execute(
                f"{_SUMMARY} FROM sessions {_KIND_CLAUSE[kind]} "
                "ORDER BY updated DESC, rowid DESC"
            ).fetchall()
        return [SessionSummary(*row) for row in rows]

    def load_session(self, session_id: str) -> SessionRecord:
        """The session (by id or unique prefix) with its messages and resumable batches."""
        session_id = self.resolve_id(session_id)
        with self._lock, translated(self.path):
            self._db.execute("BEGIN")  # one consistent snapshot of all three tables
            try:
                row = self._db.execute(
                    f"{_SUMMARY}, system FROM sessions WHERE id = ?", (session_id,)
                ).fetchone()
                rows = self._db.execute(
                    "SELECT role, content, tool_calls, tool_call_id, created_at FROM messages "
                    "WHERE session_id = ? ORDER BY id", (session_id,)
                ).fetchall()
                batches = self._db.execute(
                    "SELECT call_id, rpc_id, created_at, continuation FROM questions "
                    "WHERE session_id = ? AND call_id IS NOT NULL ORDER BY created_at, rowid",
                    (session_id,)
                ).fetchall()
                later = self._db.execute(
                    "SELECT ticket, call_id, request, outcome FROM later_questions "
                    "WHERE session_id = ? ORDER BY created_at, rowid", (session_id,)
                ).fetchall()
            finally:
                self._db.execute("COMMIT")
        if row is None:
            raise SessionNotFound(session_id, self.path)
        messages = [_message(*message[:4]) for message in rows]
        pending = resumable_batches(messages, [entry[4] for entry in rows],
                                    [batch[:3] for batch in batches])
        stored = {batch[1]: _json(batch[3]) for batch in batches}
        continuations = {call_id: stored[rpc_id] for call_id, rpc_id in pending.items()
                         if isinstance(stored.get(rpc_id), dict)}
        found, model, created_at, updated_at, title, agent, _cwd, system = row
        if system:
            messages.insert(0, {"role": "system", "content": system})
        return SessionRecord(found, model, created_at, updated_at, title, messages=messages,
                             pending_rpc_ids=pending, pending_continuations=continuations,
                             system=system,
                             permissions=self.permission_requests(found),
                             later=[_later_row(*entry) for entry in later], agent=agent)

    def question_batches(self, session_id: str) -> list[QuestionBatch]:
        """The session's question batches, oldest first."""
        with self._lock, translated(self.path):
            rows = self._db.execute(
                "SELECT rpc_id, session_id, call_id, request, status, answer, created_at, "
                "updated_at, resolved_at, continuation, answered_by FROM questions "
                "WHERE session_id = ? ORDER BY created_at, rowid", (session_id,)
            ).fetchall()
        return [
            QuestionBatch(rpc, sid, call, json.loads(request), status,
                          json.loads(answer) if answer else None, created, updated, resolved,
                          _json(continuation), by)
            for rpc, sid, call, request, status, answer, created, updated, resolved,
            continuation, by in rows
        ]

    def question_history(self, *, session: str | None = None, agent: str | None = None,
                         text: str | None = None, limit: int | None = None,
                         ) -> Iterator[AnsweredQuestion]:
        """Settled and pending batches of every session, oldest first, filtered, one at a
        time: memory holds one batch, however large the store.

        ``session`` is an id or its prefix, ``agent`` a substring of the session's model
        (``mcp:<client>`` for ``dsh mcp``), ``text`` a case-insensitive substring of the
        questions or the answer; ``limit`` keeps the newest that many. The store is not
        written while the iterator is open (it holds the store's lock).
        """
        clauses: list[str] = []
        params: list[Any] = []
        if session:
            clauses.append("q.session_id LIKE ? ESCAPE '\\'")
            params.append(_like_prefix(session))
        if agent:
            clauses.append("instr(lower(s.model), lower(?)) > 0")
            params.append(agent)
        if text:
            clauses.append("(instr(lower(q.request), lower(?)) > 0 "
                           "OR instr(lower(coalesce(q.answer, '')), lower(?)) > 0)")
            params.extend([text, text])
        where = f"WHERE {' AND '.join(clauses)}" if clauses else ""
        sql = ("SELECT q.rpc_id, q.session_id, s.model, q.request, q.status, q.answer, "
               "q.answered_by, q.created_at, q.resolved_at, q.code, s.agent IS NOT NULL AS "
               "by_agent, q.rowid AS at FROM questions q "
               f"JOIN sessions s ON s.id = q.session_id {where}")
        if limit is not None:  # the newest ``limit``, then read oldest first
            sql = f"SELECT * FROM ({sql} ORDER BY q.created_at DESC, q.rowid DESC LIMIT ?)"
            params.append(limit)
            sql += " ORDER BY created_at, at"
        else:
            sql += " ORDER BY q.created_at, q.rowid"
        with self._lock, translated(self.path):
            cursor = self._db.execute(sql, params)
            try:
                for (rpc, sid, model, request, status, answer, by, created, resolved, code,
                     agent, _) in cursor:
                    yield AnsweredQuestion(rpc, sid, model or "", json.loads(request), status,
                                           json.loads(answer) if answer else None, by, created,
                                           resolved, code, bool(agent))
            finally:
                cursor.close()

    def last_selections(self, request: Any, session_id: str | None = None
                        ) -> dict[str, list[str]]:
        """Per question id of ``request`` asked in ``session_id``, the labels chosen when the
        same agent in the same working directory last answered a question with the same
        header, text and options (``recall_digest``); nothing without a session."""
        return {question: labels for question, (labels, _, _) in
                self.last_answers(request, session_id).items()}

    def last_answers(self, request: Any, session_id: str | None = None
                     ) -> dict[str, tuple[list[str], str, str | None]]:
        """``last_selections`` with where each came from: (labels, its session, its time)."""
        found: dict[str, tuple[list[str], str, str | None]] = {}
        if session_id is None:
            return found
        with self._lock, translated(self.path):
            row = self._db.execute("SELECT model FROM sessions WHERE id = ?",
                                   (session_id,)).fetchone()
            if row is None:
                return found
            cwd = _working_directory()
            for question in request.questions:
                digest = recall_digest(row[0], cwd, question.to_json())
                if digest is None:
                    continue
                hit = self._db.execute(
                    "SELECT r.question_id, q.answer, q.session_id, r.answered_at "
                    "FROM answer_recall r JOIN questions q ON q.rpc_id = r.rpc_id "
                    "WHERE r.digest = ? AND r.answered_at IS NOT NULL "
                    "ORDER BY r.answered_at DESC, r.rowid DESC LIMIT 1", (digest,)).fetchone()
                if hit is None:
                    continue
                labels = [option.label for option in question.options or []]
                chosen = _selected(_json(hit[1]), hit[0], labels)
                if chosen:
                    found[question.id] = (chosen, hit[2], hit[3])
        return found

    # -- permission requests -----------------------------------------------------------

    def permission_requested(self, session_id: str, event: PermissionRequested) -> None:
        """A tool call waits for the human: a new pending row."""
        now = _now()
        with self._lock, transaction(self._db, self.path) as db:
            db.execute(
                "INSERT OR IGNORE INTO permissions (rpc_id, session_id, call_id, tool, server, "
                "arguments, hints, status, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, 'pending', ?)",
                (event.rpc_id, session_id, event.call_id, event.tool, event.server,
                 json.dumps(event.arguments, ensure_ascii=False, default=str),
                 json.dumps(event.hints), now),
            )
            db.execute("UPDATE sessions SET updated_at = ? WHERE id = ?", (now, session_id))

    def permission_resolved(self, event: PermissionResolved) -> None:
        """A pending request settled: the human's decision, or how it ended without one."""
        status = event.outcome if event.outcome in _PERMISSION_OUTCOMES else "aborted"
        decision = event.decision if event.decision in DECISIONS else None
        if status == "decided" and decision is None:
            status = "aborted"  # the CHECK would refuse it: record what is known
        with self._lock, transaction(self._db, self.path) as db:
            db.execute(
                "UPDATE permissions SET status = ?, decision = ?, message = ?, resolved_at = ? "
                "WHERE rpc_id = ? AND status = 'pending'",
                (status, decision, event.message, _now(), event.rpc_id),
            )

    def permission_requests(self, session_id: str) -> list[PermissionRecord]:
        """The session's permission requests and their decisions, oldest first."""
        with self._lock, translated(self.path):
            rows = self._db.execute(
                "SELECT rpc_id, call_id, tool, server, arguments, hints, status, decision, "
                "message, created_at, resolved_at FROM permissions WHERE session_id = ? "
                "ORDER BY created_at, rowid", (session_id,)
            ).fetchall()
        return [PermissionRecord(rpc, call, tool, server, _json(arguments), _json(hints) or {},
                                 status, decision, message, created, resolved)
                for rpc, call, tool, server, arguments, hints, status, decision, message,
                created, resolved in rows]

    def _summary(self, session_id: str) -> SessionSummary:
        with self._lock, translated(self.path):
            row = self._db.execute(f"{_SUMMARY} FROM sessions WHERE id = ?",
                                   (session_id,)).fetchone()
        if row is None:
            raise SessionNotFound(session_id, self.path)
        return SessionSummary(*row)


def _message(role: str, content: str | bytes | None, tool_calls: str | bytes | None,
             tool_call_id: str | None) -> dict[str, Any]:
    """A stored row as its message; a hand-edited row (a blob, broken JSON) still loads."""
    message: dict[str, Any] = {"role": role, "content": _text(content)}
    if tool_calls:
        try:
            message["tool_calls"] = json.loads(tool_calls)
        except (ValueError, RecursionError):
            message["tool_calls"] = _text(tool_calls)  # kept as stored; readers skip it
    if tool_call_id is not None:
        message["tool_call_id"] = tool_call_id
    return message


def _later_row(ticket: str, call_id: str | None, request: str, outcome: str | None
               ) -> dict[str, Any]:
    """A stored async batch; a hand-edited request that no longer parses asks nothing."""
    parsed = _json(request)
    return {"ticket": ticket, "call_id": call_id,
            "request": parsed if isinstance(parsed, dict) else {}, "outcome": _json(outcome)}


def _json(text: str | bytes | None) -> Any:
    """A stored JSON column; a hand-edited one that no longer parses reads as its text."""
    if text is None:
        return None
    try:
        return json.loads(text)
    except (ValueError, RecursionError):
        return _text(text)


def _text(value: str | bytes | None) -> str | None:
    return value.decode("utf-8", "replace") if isinstance(value, bytes) else value


