"""The tasks of ``dsh mcp``: the view of work fetched later that ``tasks/*`` reads, and its rules.

A task is a ``Later`` record (``owned/work.py``, the one store of work fetched later, the
tickets' too) of ``kind`` "task": one tool call, run apart from the request that made it,
whose outcome is where it ended (``TaskEnd``: completed with the call's result, failed,
cancelled); until then it is ``working``. It belongs to one owner (the client session that
created it: ``owned/owners.py``, the tickets' rule too); every look-up names the owner, and a
task of another owner is as unknown as one that never was, so no client can read, list or
cancel another's (the Python SDK's experimental tasks were reachable from any session until
python-sdk PR #2720 scoped them). Its id is 256 random bits, so it cannot be guessed either
(a serving hub names an agent token's task after its batch's ticket, to find it at any hub
process: ``hub/tasks.py``).
A task is kept ``ttl_ms`` from its creation (cut to ``TASK_TTL_MAX_MS``), on a timer; one
still running then is withdrawn (its batch aborted, so the desks drop it, and its watcher
told) and forgotten. An owner of one client session holds ``TASKS_PER_SESSION``, its own
oldest ended task forgotten to make room; a *shared* owner (every client of the sessionless
2026-07-28 wire) holds its own cap, and since the tasks in it are different clients', none
is forgotten for another: past the cap a new task is refused. This module knows no protocol
era: each era's wire shape is in the module named by its date (``wire_2025_11_25.py``,
``wire_2026_07_28.py``: the extension).
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
from dsh_cli.mcp_server.owned.work import Later, LaterWork

__all__ = ["KIND", "POLL_INTERVAL_MS", "TERMINAL", "TaskEnd", "TaskError", "Tasks", "Work",
           "iso_time", "standing", "ttl_ms"]

KIND = "task"
TERMINAL = frozenset({"completed", "failed", "cancelled"})
POLL_INTERVAL_MS = 1000  # what a client is told to poll at: a human answers in seconds
WAITING = "waiting for the human at the dsh desk"
STOPPED = "dsh mcp stopped"

# the tool call itself: given the task's abort signal, the CallToolResult as a wire dict
Work = Callable[[AbortSignal], Awaitable[dict[str, Any]]]
# told of each change of status (the era's status notification)
Watcher = Callable[[Later], Awaitable[None]]


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


@dataclass(frozen=True)
class TaskEnd:
    """Where a task stands: its status, the message, and what it ended with, since ``at``."""

    status: str
    message: str | None
    result: dict[str, Any] | None = None  # a completed task's CallToolResult
    error: dict[str, Any] | None = None  # a failed task's JSON-RPC error
    at: float = field(default_factory=time.time)  # by the wall clock, as a wire writes it


def standing(record: Later) -> TaskEnd:
    """Where task ``record`` stands: its end, or ``working`` since it was made."""
    if record.done:
        end: TaskEnd = record.outcome.result()
        return end
    return TaskEnd("working", WAITING, at=record.made)


def ttl_ms(record: Later) -> int:
    """A task's time to live in milliseconds, as both eras write it."""
    return round((record.ttl or 0) * 1000)


class Tasks:
    """Every task of one ``dsh mcp`` process, by owner, with their caps and expiry, in
    ``store``."""

    def __init__(self, store: LaterWork | None = None, *, per_owner: int = TASKS_PER_SESSION,
                 ttl_max_ms: int = TASK_TTL_MAX_MS,
                 shared: dict[str, int] | None = None) -> None:
        self.store = store if store is not None else LaterWork()
        self.per_owner = per_owner
        self.ttl_max_ms = ttl_max_ms
        self.shared = shared or {}  # owner -> cap, for owners that are many clients at once
        self._tally = self.store.tally(self)
        # notices under way, and sealed tasks past their TTL awaiting their end (kept from GC)
        self._telling: set[asyncio.Future[None]] = set()

    def ttl_for(self, requested: Any) -> int:
        """The TTL a task gets: the client's, when a positive integer, cut to the maximum."""
        if isinstance(requested, int) and not isinstance(requested, bool) and requested > 0:
            return min(requested, self.ttl_max_ms)
        return min(TASK_TTL_DEFAULT_MS, self.ttl_max_ms)

    def create(self, owner: str, work: Work, *, ttl_ms: Any = None,
               watcher: Watcher | None = None, signal: AbortSignal | None = None,
               ticket: str | None = None) -> Later:
        """A new running task of ``owner``; ``TaskError`` when its cap is full of live ones
        (of a shared owner: of any, for each is kept its whole time to live). ``signal``: the
        one its work was already started under (a batch asked before its task was made), so
        an answer that seals it decides the task too; ``ticket``: that batch's (``id_for``)."""
        held = self._tally.held(owner)
        if owner in self.shared and held >= self.shared[owner]:
            raise TaskError(-32600, f"too many tasks kept ({self.shared[owner]:,}, for every "
                                    "client of this wire together): each is kept until its "
                                    "time to live runs out")
        if owner not in self.shared and held >= self.per_owner:
            finished = [task for task in self.owned(owner) if task.done]
            if not finished:
                raise TaskError(-32600, f"too many tasks in progress ({self.per_owner}): "
                                        "wait for one to end or cancel one")
            self.forget(min(finished, key=lambda task: standing(task).at))
        loop = asyncio.get_running_loop()
        seconds = self.ttl_for(ttl_ms) / 1000
        record = self.store.add(Later(
            self.id_for(owner, ticket), owner, KIND, self, loop.create_future(),
            self.store.clock(), seconds, signal or AbortSignal(), watcher=watcher))
        record.timer = loop.call_later(seconds, self.expire, record)
        record.work = asyncio.ensure_future(self._run(record, work))
        return record

    def id_for(self, owner: str, ticket: str | None) -> str:
        """A new task's id: 256 random bits (a hub's names an agent token's task of an async
        batch after its ``ticket``, so that another hub process finds it in its store)."""
        return secrets.token_urlsafe(32)

    def get(self, owner: str, task_id: Any) -> Later | None:
        """``owner``'s task ``task_id``; another owner's is None, as an unknown one is."""
        record = self.store.get(task_id, owner)
        return record if record is not None and record.view is self else None

    # What a ``tasks/*`` request reads, lists, waits on and cancels: this process's tasks
    # (``get``, ``owned``, ``ended``, ``cancel``); a serving hub's also reads what its
    # store keeps of a task made at another hub process (``hub/tasks.py``).

    async def find(self, owner: str, task_id: Any) -> Later | None:
        """``owner``'s task ``task_id`` as a request reads it; None: not found."""
        return self.get(owner, task_id)

    async def ended(self, record: Later) -> None:
        """Wait for a found task's end; a cancelled wait leaves the task running."""
        await record.ended()

    async def cancel_found(self, record: Later) -> bool:
        """``tasks/cancel`` of a found task: ``cancel``'s answer."""
        return self.cancel(record)

    async def completed(self, record: Later, result: dict[str, Any]) -> TaskEnd:
        """Where a task whose work returned ``result`` ends: completed with it."""
        return TaskEnd("completed", None, result=result)

    async def listed(self, owner: str, cursor: Any) -> tuple[list[Later], str | None]:
        """``tasks/list``: a page of ``owner``'s tasks from ``cursor``, and the next page's
        cursor (None: the last); one process's are few, all in one page."""
        return self.owned(owner), None

    def owned(self, owner: str) -> list[Later]:
        """``owner``'s tasks, the oldest first."""
        return [record for record in self.store.of(owner) if record.view is self]

    def holds(self, owner: str) -> bool:
        """Whether ``owner`` has a task running, or one whose end it has not been handed
        (the store's count, of its tickets too)."""
        return self.store.holds(owner)

    def mark_fetched(self, record: Later) -> None:
        """The task's end was handed to its client (a result, or a get once it ended)."""
        self.store.mark_fetched(record)

    def cancel(self, record: Later, reason: str = "the agent cancelled the task") -> bool:
        """Cancel a live task (its batch is aborted); False when it had ended, or when its
        outcome came first (its batch was answered: the signal is sealed, and it completes)."""
        if record.done or not record.abort(reason):
            return False  # the abort settles the batch first-wins, in the pending table
        self._end(record, TaskEnd("cancelled", reason))
        self._tell(record)
        return True

    def expire(self, record: Later) -> None:
        """Its TTL ran out: a live task is withdrawn (its watcher told, as of a cancel), and
        forgotten; one whose outcome came first (its signal sealed, the result still being
        recorded) is forgotten only once it has ended, so a look-up meanwhile finds it."""
        if self.cancel(record, "the task's time to live ran out") or record.done:
            self.forget(record)
            return

        async def once_ended() -> None:
            await record.ended()
            self.forget(record)

        ending = asyncio.ensure_future(once_ended())
        self._telling.add(ending)
        ending.add_done_callback(self._telling.discard)

    def forget(self, record: Later) -> None:
        self.store.forget(record)

    def withdraw(self, record: Later, *, stopping: bool) -> None:
        """A live task's owner went away (cancelled, told) or the server stops (cancelled
        as it stands, untold: nobody is left to hear)."""
        if not stopping:
            self.cancel(record, "the client's session ended")
            return
        self._end(record, TaskEnd("cancelled", STOPPED))
        record.abort(STOPPED)

    async def close_owner(self, owner: str, grace: float = OWNED_CLOSE_GRACE_SECONDS) -> None:
        """``owner``'s client session ended: its live tasks are withdrawn, all of its tasks
        forgotten (nobody else may reach them); their work gets ``grace`` to end."""
        await self.store.end(self.owned(owner), stopping=False, grace=grace)

    async def close(self, grace: float = OWNED_CLOSE_GRACE_SECONDS) -> None:
        """The process is ending: every live task is withdrawn; its work gets ``grace``
        seconds to end (its batch aborted, recorded), then is cancelled."""
        await self.store.end([record for record in self.store if record.view is self],
                             stopping=True, grace=grace)

    async def _run(self, record: Later, work: Work) -> None:
        assert record.signal is not None  # ``create`` gives every task one
        try:
            result = await work(record.signal)
        except asyncio.CancelledError:
            self._end(record, TaskEnd("cancelled", STOPPED))
            record.signal.abort(STOPPED)
            raise
        except Exception as error:  # a fault of dsh's own: the task failed (a protocol error)
            if self._end(record, TaskEnd(
                    "failed", f"{type(error).__name__}: {error}",
                    error={"code": -32603, "message": f"internal error: {error}"})):
                self._tell(record)
            return
        if self._end(record, await self.completed(record, result)):
            self._tell(record)

    @staticmethod
    def _end(record: Later, end: TaskEnd) -> bool:
        """Move to a terminal status once; False when the task had already ended."""
        if record.done:
            return False
        record.outcome.set_result(end)
        return True

    def _tell(self, record: Later) -> None:
        """The watcher learns of the new status, without holding up who changed it."""
        if record.watcher is None:
            return

        async def tell(watcher: Watcher) -> None:
            with contextlib.suppress(Exception):  # a client gone away loses only the notice
                await watcher(record)

        telling = asyncio.ensure_future(tell(record.watcher))
        self._telling.add(telling)
        telling.add_done_callback(self._telling.discard)
