"""The session store: sessions and their messages, and the store as one object.

``SessionStore`` is the sessions' part (create, append, load, list, claim) joined with the
question log (``questions.py``) and the permission log (``permission_log.py``); ``record``
subscribes the recorder (``recorder.py``) to the loop's event stream, so whatever the model
saw is on disk before its next call and a killed process loses nothing.
"""

from __future__ import annotations

import json
import os
import secrets
import sqlite3
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from dsh_cli.core.conversation import assistant_message
from dsh_cli.core.events import EventStream
from dsh_cli.store.db import (
    BUSY_TIMEOUT,
    SessionNotFound,
    connect,
    transaction,
    translated,
)
from dsh_cli.store.migrations import migrate, title_of
from dsh_cli.store.permission_log import PermissionLog, PermissionRecord
from dsh_cli.store.questions import (
    UNDELIVERED,
    AnsweredQuestion,
    QuestionBatch,
    QuestionLog,
    recall_digest,
)
from dsh_cli.store.recorder import recorder
from dsh_cli.store.resumable import resumable_batches
from dsh_cli.store.rows import json_column as _json
from dsh_cli.store.rows import now as _now
from dsh_cli.store.rows import text_column as _text
from dsh_cli.store.session_lock import SessionLock, acquire

__all__ = [
    "AnsweredQuestion",
    "PermissionRecord",
    "QuestionBatch",
    "SessionRecord",
    "SessionStore",
    "SessionSummary",
    "assistant_message",
    "recall_digest",
]


# A session's columns for summaries; updated_at counts its last message (see append_message).
_SUMMARY = (
    "SELECT id, model, created_at, max(updated_at, coalesce((SELECT created_at FROM messages "
    "WHERE session_id = sessions.id ORDER BY id DESC LIMIT 1), '')) AS updated, title, "
    "agent, cwd"
)
KINDS = ("chat", "agent")  # a chat of dsh's own model, or an agent's `dsh mcp` session
_KIND_CLAUSE = {None: "", "chat": "WHERE agent IS NULL", "agent": "WHERE agent IS NOT NULL"}


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


class SessionStore(QuestionLog, PermissionLog):
    """The SQLite session store; open with ``SessionStore.open()``, close when done."""

    def __init__(self, connection: sqlite3.Connection, path: Path) -> None:
        super().__init__(connection, path)
        self.frozen: set[str] = set()  # marked interrupted: not recorded any more
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
                self._async_delivered(db, ticket, now)
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

    def mark_interrupted(self, session_id: str) -> int:
        """Mark the session's pending batches interrupted-but-resumable; how many.

        Called as the process dies (SIGTERM, SIGHUP): from here on this store records
        nothing more for the session, so the aborts of the dying turn never reach the
        conversation and a resume re-asks the batch under the same ``rpc_id``.
        """
        with self._lock:
            self.frozen.add(session_id)
            return self.interrupt_pending(session_id)

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
            self.frozen.discard(session_id)

        unsubscribe = events.subscribe(recorder(self, session_id))

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
                    return str(rows[0][0])
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
                    "SELECT rpc_id, call_id, request, async_outcome FROM questions "
                    f"WHERE session_id = ? AND {UNDELIVERED} ORDER BY created_at, rowid",
                    (session_id,)
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


