"""The permission log: each permission request as it waits, and the decision it got."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from dsh_cli.core.decisions import DECISIONS
from dsh_cli.core.events import PermissionRequested, PermissionResolved
from dsh_cli.core.outcomes import PERMISSION_ENDINGS, Outcome
from dsh_cli.store.db import transaction, translated
from dsh_cli.store.rows import StoreTables
from dsh_cli.store.rows import json_column as _json
from dsh_cli.store.rows import now as _now

__all__ = ["PermissionLog", "PermissionRecord"]

_PERMISSION_OUTCOMES = ("decided", *PERMISSION_ENDINGS)


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


class PermissionLog(StoreTables):
    """The ``permissions`` table of the store."""

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
        aborted = Outcome.ABORTED.event
        status = event.outcome if event.outcome in _PERMISSION_OUTCOMES else aborted
        decision = event.decision if event.decision in DECISIONS else None
        if status == "decided" and decision is None:
            status = aborted  # the CHECK would refuse it: record what is known
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
