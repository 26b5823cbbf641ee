"""``notifications/tasks`` over ``subscriptions/listen`` (2026-07-28, SEP-2663 over SEP-2575).

A client that declared the tasks extension opens a listen stream naming the tasks it wants
to hear of, ``params.notifications.taskIds``; on the 2026 wire the task id is the only
proof of a task being the caller's, so naming it is the entitlement, and a stream hears of
no other task. The ack (the stream's first frame) echoes the ids honoured (the ones that
exist now); a named task that has already ended gets its final notification right after
the ack, so a task that ends between ``tools/call`` and ``subscriptions/listen`` is not
missed; after that, one notification per status change. A stream ends, with the listen
result as its last frame, once every task it named has ended and been told (a stream that
names no task ends after its ack), or when the server stops; it is cut when its client goes
or lets ``BACKLOG`` changes pile up unread. At most ``STREAMS`` are open at once: past it a
new listen is refused, so a client holding streams it never reads holds that many
descriptors, not one per request. Each named task still running is also followed by the
stream itself, waiting for its end (``Tasks.ended``) while the stream is open: a task this
process reads but does not hold (a serving hub's task made at another hub process, a view
of its store: ``hub/tasks.py``) has no watcher to tell the streams, nor has one made on
the other era's wire (a hub's agent token owns both); an end heard twice is told once.
Each notification is the task's
``DetailedTask`` (the ``tasks/get`` shape, result or error inlined), stamped with the
subscription id. dsh publishes no list changes, so no other filter field is honoured.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from dsh_cli.core.limits import TASK_LISTEN_BACKLOG as BACKLOG
from dsh_cli.core.limits import TASK_LISTEN_STREAMS as STREAMS
from dsh_cli.core.limits import TASKS_PER_SESSION
from dsh_cli.mcp_server.owned.work import Later
from dsh_cli.mcp_server.tasks.store import Tasks
from dsh_cli.mcp_server.tasks.wire_2026_07_28 import INVALID_PARAMS, detailed

if TYPE_CHECKING:
    from mcp.server.context import ServerRequestContext

__all__ = ["METHOD", "NOTIFICATION", "STREAMS", "TaskListeners"]

METHOD = "subscriptions/listen"
NOTIFICATION = "notifications/tasks"
SUBSCRIPTION_ID = "io.modelcontextprotocol/subscriptionId"
INVALID_REQUEST = -32600


async def _follow(tasks: Tasks, record: Later, queue: asyncio.Queue[Later | None]) -> None:
    """Tell one stream the end of a named task, once it comes (a backlog that full is a
    stream being cut: the room left is its end's)."""
    await tasks.ended(record)
    if queue.qsize() < BACKLOG:
        queue.put_nowait(record)


class _Frame:
    """A wire notification in the shape the SDK's ``send_notification`` dumps."""

    def __init__(self, method: str, params: dict[str, Any]) -> None:
        self.method, self.params = method, params

    def model_dump(self, **_: Any) -> dict[str, Any]:
        return {"method": self.method, "params": self.params}


class TaskListeners:
    """The open listen streams, each with the task ids it named."""

    def __init__(self, *, most: int = STREAMS) -> None:
        self.most = most
        self._streams: dict[object, tuple[frozenset[str], asyncio.Queue[Later | None]]] = {}

    def changed(self, record: Later) -> None:
        """A task's status changed: every stream that named it hears of it."""
        for token, (ids, queue) in list(self._streams.items()):
            if record.id in ids:
                if queue.qsize() >= BACKLOG:  # a client that stopped reading: its stream ends
                    self.end(token)
                else:
                    queue.put_nowait(record)

    def end(self, token: object) -> None:
        """One stream ends once it has sent what it holds (the ``None`` at its end)."""
        stream = self._streams.pop(token, None)
        if stream is not None:
            stream[1].put_nowait(None)  # there is always room: the backlog leaves one

    def close(self) -> None:
        """Every stream ends, with the listen result as its last frame (the server stops)."""
        for token in list(self._streams):
            self.end(token)

    async def serve(self, ctx: ServerRequestContext[Any, Any], tasks: Tasks, owner: str,
                    params: Mapping[str, Any]) -> dict[str, Any]:
        """One listen stream: the ack, ended tasks' final status, then each change."""
        from mcp.shared.exceptions import MCPError

        subscription = ctx.request_id
        wanted = params.get("notifications")
        ids = wanted.get("taskIds") if isinstance(wanted, Mapping) else None
        if subscription is None or not isinstance(ids, list) or len(ids) > TASKS_PER_SESSION \
                or not all(isinstance(task_id, str) for task_id in ids):
            raise MCPError(INVALID_PARAMS, "subscriptions/listen needs notifications.taskIds: "
                                           f"up to {TASKS_PER_SESSION} task ids")
        if len(self._streams) >= self.most:
            raise MCPError(INVALID_REQUEST, f"{len(self._streams)} subscriptions/listen streams "
                                            f"are open already (at most {self.most}): "
                                            "poll tasks/get, or listen once one has ended")
        records = [record for task_id in dict.fromkeys(ids)
                   if (record := await tasks.find(owner, task_id)) is not None]
        meta = {SUBSCRIPTION_ID: subscription}
        queue: asyncio.Queue[Later | None] = asyncio.Queue(BACKLOG + 1)
        token = object()
        self._streams[token] = (frozenset(record.id for record in records), queue)
        following = [asyncio.ensure_future(_follow(tasks, record, queue))
                     for record in records if not record.done]
        for record in records:
            if record.done:
                queue.put_nowait(record)
        try:
            await self._send(ctx, "notifications/subscriptions/acknowledged",
                             {"notifications": {"taskIds": [r.id for r in records]},
                              "_meta": meta})
            unended = {record.id for record in records}  # until each is told ended
            while unended and (record := await queue.get()) is not None:
                if record.id not in unended:  # its end, heard twice, was told already
                    continue
                task = {key: value for key, value in detailed(record).items()
                        if key != "resultType"}
                await self._send(ctx, NOTIFICATION, {**task, "_meta": meta})
                if record.done:
                    unended.discard(record.id)
        finally:
            self._streams.pop(token, None)
            for follower in following:
                follower.cancel()
        return {"_meta": meta}

    @staticmethod
    async def _send(ctx: ServerRequestContext[Any, Any], method: str,
                    params: dict[str, Any]) -> None:
        # the extension's notification is no SDK type; the session dumps what it is given
        await ctx.session.send_notification(_Frame(method, params),  # type: ignore[arg-type]
                                            related_request_id=ctx.request_id)
