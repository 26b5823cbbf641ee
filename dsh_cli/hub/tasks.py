"""The serving hub's MCP tasks: a task made at one hub process is read at any of them.

The task of an async question (the one question that becomes a task: ``server.py``) is
named after its batch's ticket (``task-`` and the ticket), and the ticket is its entry's ask
key in the hub's store (``asker.py``). So the same agent token's ``tasks/get``,
``tasks/result`` and ``tasks/cancel`` find it at every hub process, also after the process
that made it died (kill -9): a task this process does not hold is read from the store by
that key, for that token only (another token's read is "Task not found", as an id never
made). Its status is its entry's state: pending is ``working``; answered or timed out is
``completed`` with the result the making process's task holds (the answer, or the error it
ended with: ``ASK_CANCELLED``, ``ASK_TIMEOUT``); withdrawn is ``cancelled``. What is read is
a view of the stored entry, kept nowhere (each request reads the store again), so a task
read here costs this process nothing between requests; ``tasks/result`` waits for the
entry through ``HubWatch``. A cancel is the store's conditional update, so of an answer and
a cancel at two processes exactly one wins, once; the making process agrees (its own task,
whose batch the hub withdrew on that cancel, ends ``cancelled``, not completed with
``ASK_ABORTED``). On the 2026-07-28 wire (no sessions) the hub names the agent token the
owner too (``TaskLayer``'s ``sessionless_owner``), so the same holds there.

``tasks/list`` (2025-11-25) names the agent token's tasks at every hub process: this
process's that no ticket names (``approve_tool_use``'s, first), then its async questions
as the store keeps them, a page (``HUB_TASKS_PAGE``) of the ``(token, ask_key)`` index at a
time in key order, with an opaque cursor (the last key read); a task this process holds is
listed as it holds it.
"""

from __future__ import annotations

import asyncio
import base64
import binascii
import secrets
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, TypeVar

from dsh_cli.core.errors import ASK_ABORTED
from dsh_cli.core.limits import HUB_TASKS_PAGE
from dsh_cli.hub.records import Entry, HubStoreError, KeptAsk, NotPending
from dsh_cli.hub.tokens import NAME_CHARACTERS as KEY_CHARACTERS  # an ask key's most
from dsh_cli.mcp_server.owned.work import Later, LaterWork
from dsh_cli.mcp_server.tasks.store import KIND, TaskEnd, Tasks
from dsh_cli.mcp_server.tasks.wire_2025_11_25 import INVALID_PARAMS  # the list's wire

if TYPE_CHECKING:
    from dsh_cli.hub.context import HubContext

__all__ = ["TASK_PREFIX", "HubTasks", "StoredTask", "cursor_of", "kept_end", "key_after",
           "stored_end", "task_id_of", "ticket_of"]

TASK_PREFIX = "task-"
CALL_PREFIX = "call-"  # an agent token's task that no ticket names (``approve_tool_use``)
AGENT_OWNER = "agent:"  # a hub's owner of work: the agent token (``app.py``'s ``Asker``)
WITHDRAWN = "the question was withdrawn at the hub"
GONE = "the hub no longer keeps this task's question"
INTERNAL_ERROR = -32603

Read = TypeVar("Read")


def task_id_of(ticket: str) -> str:
    """The id of the task of async batch ``ticket``."""
    return TASK_PREFIX + ticket


def ticket_of(task_id: Any) -> str | None:
    """The ticket (the entry's ask key) a task id names, or None: none of a hub's."""
    if not isinstance(task_id, str) or not task_id.startswith(TASK_PREFIX):
        return None
    ticket = task_id[len(TASK_PREFIX):]
    return ticket if 0 < len(ticket) <= KEY_CHARACTERS else None


@dataclass(frozen=True, eq=False)
class StoredTask:
    """The view of a task read from the hub's store: its entry, token and ticket."""

    entry_id: str
    token: str
    ticket: str

    def withdraw(self, record: Later, *, stopping: bool) -> None:
        """Never called: a stored task is kept in no ``LaterWork``, so no owner's end
        reaches it (its entry stays the agent's, at every hub process)."""


def stored_end(entry: Entry, ticket: str) -> TaskEnd:
    """Where the task of settled entry ``entry`` stands: as its making process's ended."""
    from dsh_cli.hub.asker import stored_outcome
    from dsh_cli.mcp_server.get_user_answer import outcome_result
    from dsh_cli.mcp_server.server import told_wire
    from dsh_cli.mcp_server.service import told_as

    at = entry.resolved_at if entry.resolved_at is not None else entry.created_at
    if entry.withdrawn:
        return TaskEnd("cancelled", WITHDRAWN, at=at)
    result = outcome_result(stored_outcome(entry, ticket))
    return TaskEnd("completed", None, result=told_wire(result, told_as(ticket, result, None, at),
                                                       ticket), at=at)


def cursor_of(key: str) -> str:
    """The opaque ``tasks/list`` cursor after ask key ``key``."""
    return base64.urlsafe_b64encode(key.encode()).decode()


def key_after(cursor: Any) -> str | None:
    """The ask key a cursor of ``cursor_of`` names, or None: no cursor of this hub's."""
    if not isinstance(cursor, str) or len(cursor) > 4 * KEY_CHARACTERS:
        return None
    try:
        key = base64.b64decode(cursor.encode("ascii"), altchars=b"-_", validate=True).decode()
    except (ValueError, binascii.Error, UnicodeError):
        return None
    return key if ticket_of(task_id_of(key)) is not None else None


def kept_end(ask: KeptAsk) -> TaskEnd | None:
    """Where the task of kept ask ``ask`` stands, as ``stored_end`` says it (without the
    result, which a list does not show); None: working."""
    at = ask.resolved_at if ask.resolved_at is not None else ask.created_at
    if ask.state == "pending":
        return None
    if ask.withdrawn:
        return TaskEnd("cancelled", WITHDRAWN, at=at)
    return TaskEnd("completed", None, at=at)


class HubTasks(Tasks):
    """This process's tasks, and an agent's tasks made at another hub process (which may
    have died), read from the store by their ticket for the same agent token only."""

    def __init__(self, hub: HubContext, store: LaterWork | None = None, *,
                 page: int = HUB_TASKS_PAGE, **options: Any) -> None:
        super().__init__(store, **options)
        self.hub = hub
        self.page = page

    def id_for(self, owner: str, ticket: str | None) -> str:
        """An agent token's task is found by its owner and its ticket (64 random bits, as
        the ticket itself), one no ticket names by its id (256 bits, ``call-``: never a
        ticket's); a sessionless one's id stays its only key (256 bits)."""
        if owner.startswith(AGENT_OWNER):
            return task_id_of(ticket) if ticket is not None else \
                CALL_PREFIX + secrets.token_urlsafe(32)
        return super().id_for(owner, ticket)

    async def listed(self, owner: str, cursor: Any) -> tuple[list[Later], str | None]:
        """An agent token's tasks: this process's that no ticket names (on the first page),
        then a page of its async questions in the store, from ``cursor``."""
        from mcp.shared.exceptions import MCPError

        if not owner.startswith(AGENT_OWNER):
            return await super().listed(owner, cursor)
        after = "" if cursor is None else key_after(cursor)
        if after is None:
            raise MCPError(INVALID_PARAMS, "tasks/list: invalid cursor")
        token = owner[len(AGENT_OWNER):]
        kept = await self._read(self.hub.store.kept_asks, token, after, self.page + 1)
        records = [record for record in self.owned(owner)
                   if not record.id.startswith(TASK_PREFIX)] if cursor is None else []
        loop = asyncio.get_running_loop()
        for ask in kept[:self.page]:
            held = self.get(owner, task_id_of(ask.key))
            if held is None:
                outcome: asyncio.Future[TaskEnd] = loop.create_future()
                if (end := kept_end(ask)) is not None:
                    outcome.set_result(end)
                held = Later(task_id_of(ask.key), owner, KIND,
                             StoredTask(ask.entry_id, token, ask.key), outcome,
                             self.store.clock(), made=ask.created_at)
            records.append(held)
        following = cursor_of(kept[self.page - 1].key) if len(kept) > self.page else None
        return records, following

    async def find(self, owner: str, task_id: Any) -> Later | None:
        record = await super().find(owner, task_id)
        ticket = ticket_of(task_id)
        if record is not None or ticket is None or not owner.startswith(AGENT_OWNER):
            return record
        token = owner[len(AGENT_OWNER):]
        entry = await self._read(self.hub.store.by_key, token, ticket)
        if entry is None or entry.kind != "question" or entry.batch.get("delivery") != "async":
            return None
        outcome: asyncio.Future[TaskEnd] = asyncio.get_running_loop().create_future()
        if entry.state != "pending":
            outcome.set_result(stored_end(entry, ticket))
        # a view of the entry, never kept: the next request reads the store again
        return Later(task_id, owner, KIND, StoredTask(entry.id, token, ticket), outcome,
                     self.store.clock(), made=entry.created_at)

    async def ended(self, record: Later) -> None:
        view = record.view
        if not isinstance(view, StoredTask):
            await super().ended(record)
            return
        if not record.done:
            entry = await self.hub.watch.settled(view.entry_id)
            _end(record, stored_end(entry, view.ticket))

    async def cancel_found(self, record: Later) -> bool:
        view = record.view
        if not isinstance(view, StoredTask):
            return await super().cancel_found(record)
        if record.done:
            return False
        cancelled = await self._read(self.hub.store.cancel, view.entry_id, view.token)
        if not isinstance(cancelled, NotPending):
            _end(record, stored_end(cancelled, view.ticket))
            return True
        entry = await self._read(self.hub.store.get, view.entry_id)  # its end came first
        _end(record, stored_end(entry, view.ticket) if entry is not None else TaskEnd(
            "failed", GONE, error={"code": INTERNAL_ERROR, "message": GONE}))
        return False

    async def completed(self, record: Later, result: dict[str, Any]) -> TaskEnd:
        """A task of this process whose batch ended ``ASK_ABORTED`` because its entry was
        withdrawn at the hub (its agent cancelled the task at another hub process) ends
        ``cancelled``, as that process said; any other end is as ``Tasks``'."""
        error = (result.get("structuredContent") or {}).get("error")
        ticket = ticket_of(record.id)
        if (result.get("isError") and isinstance(error, dict)
                and error.get("code") == ASK_ABORTED and ticket is not None
                and record.owner.startswith(AGENT_OWNER)):
            try:
                entry = await asyncio.to_thread(self.hub.store.by_key,
                                                record.owner[len(AGENT_OWNER):], ticket)
            except HubStoreError as failure:
                self.hub.report(f"{failure.code}: {failure.message}")
                entry = None
            if entry is not None and entry.withdrawn:
                return TaskEnd("cancelled", WITHDRAWN)
        return await super().completed(record, result)

    @staticmethod
    async def _read(read: Callable[..., Read], *args: Any) -> Read:
        """A store call off the event loop; a store that fails is the request's error."""
        from mcp.shared.exceptions import MCPError

        try:
            return await asyncio.to_thread(read, *args)
        except HubStoreError as error:
            raise MCPError(INTERNAL_ERROR, f"{error.code}: {error.message}") from None


def _end(record: Later, end: TaskEnd) -> None:
    if not record.done:
        record.outcome.set_result(end)
