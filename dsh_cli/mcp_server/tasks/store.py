"""The tasks of ``dsh mcp``: one tool call each, run apart from the request that made it.

A task belongs to one owner (the client session that created it: ``owned/owners.py``, the
tickets' rule too); every look-up names the owner, and a task of another owner is as unknown as
one that never was, so no client can read, list or cancel another's (the Python SDK's
experimental tasks were reachable from any session until python-sdk PR #2720 scoped them).
Its id is 256 random bits, so it cannot be guessed either. A task is kept ``ttl_ms`` from
its creation (cut to ``TASK_TTL_MAX_MS``); one still running then is withdrawn (its batch
aborted, so the desks drop it, and its watcher told) and forgotten. An owner of one client
session holds ``TASKS_PER_SESSION``, its own oldest ended task forgotten to make room; a
*shared* owner (every client of the sessionless 2026-07-28 wire) holds its own cap, and
since the tasks in it are different clients', none is forgotten for another: past the cap
a new task is refused. This module knows no protocol era: each era's wire
shape is in the module named by its date (``wire_2025_11_25.py``, ``wire_2026_07_28.py``:
the extension).
"""

from __future__ import annotations

import asyncio
import contextlib
import secrets
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from dsh_cli.core.limits import (
    OWNED_CLOSE_GRACE_SECONDS,
    TASK_TTL_DEFAULT_MS,
    TASK_TTL_MAX_MS,
    TASKS_PER_SESSION,
)
from dsh_cli.core.signal import AbortSignal
from dsh_cli.mcp_server.owned.work import end_with_grace

__all__ = ["POLL_INTERVAL_MS", "TERMINAL", "TaskError", "TaskRecord", "TaskStore", "Work",
           "iso_time"]

TERMINAL = frozenset({"completed", "failed", "cancelled"})
POLL_INTERVAL_MS = 1000  # what a client is told to poll at: a human answers in seconds
WAITING = "waiting for the human at the dsh desk"

# the tool call itself: given the task's abort signal, the CallToolResult as a wire dict
Work = Callable[[AbortSignal], Awaitable[dict[str, Any]]]
# told of each change of status (the era's status notification)
Watcher = Callable[["TaskRecord"], Awaitable[None]]


class TaskError(Exception):
    """A task refused: ``code`` is the JSON-RPC error code the client gets."""

    def __init__(self, code: int, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message


def iso_time(epoch: float) -> str:
    """ISO 8601 in UTC to the millisecond, as both eras' ``createdAt`` are written."""
    moment = datetime.fromtimestamp(epoch, tz=UTC)
    return moment.isoformat(timespec="milliseconds").replace("+00:00", "Z")


@dataclass(eq=False)
class TaskRecord:
    """One task: who owns it, where it stands, and what it ended with."""

    task_id: str
    owner: str
    tool: str
    ttl_ms: int
    created: float = field(default_factory=time.time)
    updated: float = 0.0
    status: str = "working"
    status_message: str | None = WAITING
    result: dict[str, Any] | None = None  # a completed task's CallToolResult
    error: dict[str, Any] | None = None  # a failed task's JSON-RPC error
    signal: AbortSignal = field(default_factory=AbortSignal)
    done: asyncio.Event = field(default_factory=asyncio.Event)
    watcher: Watcher | None = None
    runner: asyncio.Task[None] | None = None
    expiry: asyncio.TimerHandle | None = None
    fetched: bool = False  # its end was handed to the client (a result, or a get once ended)

    def __post_init__(self) -> None:
        self.updated = self.updated or self.created

    @property
    def terminal(self) -> bool:
        return self.status in TERMINAL

    def settle(self, status: str, message: str | None, *, result: dict[str, Any] | None = None,
               error: dict[str, Any] | None = None) -> bool:
        """Move to a terminal ``status`` once; False when the task had already ended."""
        if self.terminal:
            return False
        self.status, self.status_message = status, message
        self.result, self.error = result, error
        self.updated = time.time()
        self.done.set()
        return True


class TaskStore:
    """Every task of one ``dsh mcp`` process, by owner, with their caps and expiry."""

    def __init__(self, *, per_owner: int = TASKS_PER_SESSION,
                 ttl_max_ms: int = TASK_TTL_MAX_MS,
                 shared: dict[str, int] | None = None) -> None:
        self.per_owner = per_owner
        self.ttl_max_ms = ttl_max_ms
        self.shared = shared or {}  # owner -> cap, for owners that are many clients at once
        self._tasks: dict[str, TaskRecord] = {}
        self._of: dict[str, dict[str, TaskRecord]] = {}  # owner -> its tasks, oldest first
        # owner -> its tasks whose end it has not been handed: counted, so the HTTP door
        # asks ``holds`` of every session at each admission in constant time per session
        self._unfetched: dict[str, int] = {}
        # notices under way, and sealed tasks past their TTL awaiting their end (kept from GC)
        self._telling: set[asyncio.Future[None]] = set()

    def ttl_for(self, requested: Any) -> int:
        """The TTL a task gets: the client's, when a positive integer, cut to the maximum."""
        if isinstance(requested, int) and not isinstance(requested, bool) and requested > 0:
            return min(requested, self.ttl_max_ms)
        return min(TASK_TTL_DEFAULT_MS, self.ttl_max_ms)

    def create(self, owner: str, tool: str, work: Work, *, ttl_ms: Any = None,
               watcher: Watcher | None = None, signal: AbortSignal | None = None
               ) -> TaskRecord:
        """A new running task of ``owner``; ``TaskError`` when its cap is full of live ones
        (of a shared owner: of any, for each is kept its whole time to live). ``signal``: the
        one its work was already started under (a batch asked before its task was made), so
        an answer that seals it decides the task too."""
        held = len(self._of.get(owner, {}))
        if owner in self.shared and held >= self.shared[owner]:
            raise TaskError(-32600, f"too many tasks kept ({self.shared[owner]:,}, for every "
                                    "client of this wire together): each is kept until its "
                                    "time to live runs out")
        if owner not in self.shared and held >= self.per_owner:
            finished = [task for task in self.owned(owner) if task.terminal]
            if not finished:
                raise TaskError(-32600, f"too many tasks in progress ({self.per_owner}): "
                                        "wait for one to end or cancel one")
            self.forget(min(finished, key=lambda task: task.updated))
        record = TaskRecord(secrets.token_urlsafe(32), owner, tool, self.ttl_for(ttl_ms),
                            watcher=watcher, signal=signal or AbortSignal())
        self._tasks[record.task_id] = record
        self._of.setdefault(owner, {})[record.task_id] = record
        self._unfetched[owner] = self._unfetched.get(owner, 0) + 1
        loop = asyncio.get_running_loop()
        record.expiry = loop.call_later(record.ttl_ms / 1000, self.expire, record)
        record.runner = asyncio.ensure_future(self._run(record, work))
        return record

    def get(self, owner: str, task_id: Any) -> TaskRecord | None:
        """``owner``'s task ``task_id``; another owner's is None, as an unknown one is."""
        record = self._tasks.get(task_id) if isinstance(task_id, str) else None
        return record if record is not None and record.owner == owner else None

    def owned(self, owner: str) -> list[TaskRecord]:
        """``owner``'s tasks, the oldest first."""
        return list(self._of.get(owner, {}).values())

    def holds(self, owner: str) -> bool:
        """Whether ``owner`` has a task running, or one whose end it has not been handed
        (a task is handed its end only once it has ended: one count says both)."""
        return owner in self._unfetched

    def mark_fetched(self, record: TaskRecord) -> None:
        """The task's end was handed to its client (a result, or a get once it ended)."""
        if not record.terminal or record.fetched:
            return
        record.fetched = True
        if self._tasks.get(record.task_id) is record:
            self._uncount(record.owner)

    def cancel(self, record: TaskRecord, reason: str = "the agent cancelled the task") -> bool:
        """Cancel a live task (its batch is aborted); False when it had ended, or when its
        outcome came first (its batch was answered: the signal is sealed, and it completes)."""
        if record.terminal or not record.signal.abort(reason):
            return False  # the abort settles the batch first-wins, in the pending table
        record.settle("cancelled", reason)
        self._tell(record)
        return True

    def expire(self, record: TaskRecord) -> None:
        """Its TTL ran out: a live task is withdrawn (its watcher told, as of a cancel), and
        forgotten; one whose outcome came first (its signal sealed, the result still being
        recorded) is forgotten only once it has ended, so a look-up meanwhile finds it."""
        if self.cancel(record, "the task's time to live ran out") or record.terminal:
            self.forget(record)
            return

        async def once_ended() -> None:
            await record.done.wait()
            self.forget(record)

        ending = asyncio.ensure_future(once_ended())
        self._telling.add(ending)
        ending.add_done_callback(self._telling.discard)

    def forget(self, record: TaskRecord) -> None:
        if record.expiry is not None:
            record.expiry.cancel()
        if self._tasks.pop(record.task_id, None) is None:
            return
        mine = self._of.get(record.owner, {})
        mine.pop(record.task_id, None)
        if not mine:
            self._of.pop(record.owner, None)
        if not record.fetched:
            self._uncount(record.owner)

    def _uncount(self, owner: str) -> None:
        left = self._unfetched.get(owner, 0) - 1
        if left > 0:
            self._unfetched[owner] = left
        else:
            self._unfetched.pop(owner, None)

    async def close_owner(self, owner: str, grace: float = OWNED_CLOSE_GRACE_SECONDS) -> None:
        """``owner``'s client session ended: its live tasks are withdrawn, all of its tasks
        forgotten (nobody else may reach them); their work gets ``grace`` to end."""
        running = [record.runner for record in self.owned(owner)
                   if record.runner is not None and not record.runner.done()]
        for record in self.owned(owner):
            self.cancel(record, "the client's session ended")
            self.forget(record)
        await end_with_grace(running, grace)

    async def close(self, grace: float = OWNED_CLOSE_GRACE_SECONDS) -> None:
        """The process is ending: every live task is withdrawn; its work gets ``grace``
        seconds to end (its batch aborted, recorded), then is cancelled."""
        running = [record.runner for record in self._tasks.values()
                   if record.runner is not None and not record.runner.done()]
        for record in list(self._tasks.values()):
            if not record.terminal:
                record.settle("cancelled", "dsh mcp stopped")
                record.signal.abort("dsh mcp stopped")
            self.forget(record)
        await end_with_grace(running, grace)

    async def _run(self, record: TaskRecord, work: Work) -> None:
        try:
            result = await work(record.signal)
        except asyncio.CancelledError:
            record.settle("cancelled", "dsh mcp stopped")
            record.signal.abort("dsh mcp stopped")
            raise
        except Exception as error:  # a fault of dsh's own: the task failed (a protocol error)
            if record.settle("failed", f"{type(error).__name__}: {error}",
                             error={"code": -32603, "message": f"internal error: {error}"}):
                self._tell(record)
            return
        if record.settle("completed", None, result=result):
            self._tell(record)

    def _tell(self, record: TaskRecord) -> None:
        """The watcher learns of the new status, without holding up who changed it."""
        if record.watcher is None:
            return

        async def tell(watcher: Watcher) -> None:
            with contextlib.suppress(Exception):  # a client gone away loses only the notice
                await watcher(record)

        telling = asyncio.ensure_future(tell(record.watcher))
        self._telling.add(telling)
        telling.add_done_callback(self._telling.discard)
