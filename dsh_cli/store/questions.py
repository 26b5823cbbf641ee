"""The question log: each batch as it is shown and settled, read back for a resume,
``dsh history`` and the last answer to the same question (``recall_digest``).

An async batch is the same row, with ``delivery = 'async'``, its settled
``question/resolved`` in ``async_outcome``, and ``delivered_at`` stamped when that outcome
is in the conversation (``SessionStore.append_message``); until then a resume takes it up.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from dsh_cli.core.events import QuestionRequested, QuestionResolved
from dsh_cli.core.outcomes import Outcome
from dsh_cli.store.db import transaction, translated
from dsh_cli.store.migrations import title_of
from dsh_cli.store.rows import StoreTables
from dsh_cli.store.rows import json_column as _json
from dsh_cli.store.rows import now as _now

__all__ = ["UNDELIVERED", "AnsweredQuestion", "QuestionBatch", "QuestionLog", "recall_digest"]

_REQUEST_KEYS = ("questions", "source", "declinable", "review")  # what re-asks a batch
# an async batch whose outcome is not yet in the conversation: a resume takes it up
UNDELIVERED = "delivery = 'async' AND delivered_at IS NULL"
# a batch asked again: an async ask of one not open as async starts over with no outcome
# (SET reads the row as it was); the open one keeps its outcome, a "wait" ask leaves it
_ASKED_AGAIN = (
    "async_outcome = CASE WHEN excluded.delivery = 'async' AND NOT "
    "(delivery IS 'async' AND delivered_at IS NULL) THEN NULL ELSE async_outcome END, "
    "delivered_at = CASE WHEN excluded.delivery = 'async' THEN NULL ELSE delivered_at END, "
    "delivery = CASE WHEN excluded.delivery = 'async' THEN 'async' ELSE delivery END")


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
    """One batch of ``dsh history``: what was asked, how it ended, who answered and when;
    ``status`` is an ``Outcome``'s ``stored`` value, or ``pending``/``interrupted``."""

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
                "code": self.code, "answer": self.answer, "answered_by": self.answered_by,
                "asked_at": self.created_at, "answered_at": self.resolved_at}

    @property
    def outcome(self) -> Outcome | None:
        """How it ended; None while it is still open."""
        return Outcome.of_stored(self.status)


class QuestionLog(StoreTables):
    """The ``questions`` and ``answer_recall`` tables of the store."""

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
                "continuation, created_at, updated_at, delivery) "
                "VALUES (?, ?, ?, ?, 'pending', NULL, ?, ?, ?, ?) "
                "ON CONFLICT (rpc_id) DO UPDATE SET status = 'pending', answer = NULL, "
                "answered_by = NULL, code = NULL, resolved_at = NULL, request = excluded.request, "
                "continuation = excluded.continuation, "
                "call_id = coalesce(excluded.call_id, call_id), updated_at = excluded.updated_at, "
                f"{_ASKED_AGAIN}",
                (event.rpc_id, session_id, event.call_id, request, continuation, now, now,
                 event.delivery),
            )
            # an agent's session has no user message: its first question is its title
            questions = stored.get("questions") or [{}]
            db.execute("UPDATE sessions SET title = ? WHERE id = ? AND title IS NULL "
                       "AND agent IS NOT NULL",
                       (title_of(str(questions[0].get("question") or "")), session_id))
            self._index_for_recall(db, session_id, event.rpc_id, stored.get("questions"))
            db.execute("UPDATE sessions SET updated_at = ? WHERE id = ?", (now, session_id))

    def question_resolved(self, session_id: str, event: QuestionResolved) -> None:
        """A pending batch settled; an interrupted one keeps waiting for its resume."""
        outcome = event.outcome
        answer = json.dumps(event.answer, ensure_ascii=False) if event.answer is not None else None
        now = _now()
        with self._lock, transaction(self._db, self.path) as db:
            db.execute(
                "UPDATE questions SET status = ?, answer = ?, answered_by = ?, code = ?, "
                "updated_at = ?, resolved_at = ? WHERE rpc_id = ? AND status = 'pending'",
                (outcome.stored, answer, event.answered_by, event.code, now, now, event.rpc_id),
            )
            if outcome is Outcome.ANSWERED:
                db.execute("UPDATE answer_recall SET answered_at = ? WHERE rpc_id = ?",
                           (now, event.rpc_id))
            if outcome.closes_async:  # an aborted async batch stays open for the resume
                db.execute(f"UPDATE questions SET async_outcome = ? WHERE rpc_id = ? AND "
                           f"{UNDELIVERED} AND async_outcome IS NULL",
                           (json.dumps(event.to_json(), ensure_ascii=False), event.rpc_id))
            db.execute("UPDATE sessions SET updated_at = ? WHERE id = ?", (now, session_id))

    def _async_delivered(self, db: sqlite3.Connection, ticket: str, now: str) -> None:
        """The async batch's outcome is in the conversation (in ``db``'s open transaction):
        a resume no longer takes it up."""
        db.execute(f"UPDATE questions SET delivered_at = ? WHERE rpc_id = ? AND {UNDELIVERED}",
                   (now, ticket))

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

    def interrupt_pending(self, session_id: str) -> int:
        """Mark the session's pending batches interrupted-but-resumable; how many."""
        with self._lock, transaction(self._db, self.path) as db:
            cursor = db.execute(
                "UPDATE questions SET status = 'interrupted', updated_at = ? "
                "WHERE session_id = ? AND status = 'pending'",
                (_now(), session_id),
            )
        return cursor.rowcount
