"""Tasks on ``dsh mcp``: one SDK middleware that serves both eras' task surface.

The SDK (2.x) carries the task types of both eras but serves no task method, so this
layer does, in front of the low-level ``Server``: it adds ``capabilities.tasks`` to a
2025-11-25 ``initialize``, turns a ``tools/call`` that asks for a task (2025-11-25:
``params.task``; 2026-07-28: the extension in the request's ``_meta``) into a task whose
call runs apart from the request, and answers ``tasks/*``. Everything else passes through.
Whether a call becomes a task is the tool's to say (``work_for``, told whether the client
asked for one or only can take one): a call that answers as a plain result passes through.
The owner of a task is the client session: the ``Mcp-Session-Id`` over HTTP, the one
client of a stdio process; on the 2026-07-28 wire there is no session at all, so its tasks
share one owner and the unguessable task id is what keeps them apart (that wire has no
``tasks/list`` to enumerate them; its ``Mcp-Session-Id``, if any, decides nothing), and
neither era's tasks are reachable from the other. That shared owner has a cap of its own,
``TASKS_SESSIONLESS``, past which a new task is refused: one client never makes another's
kept task go. A server that knows who makes each request (a serving hub: the agent token)
names the owner of that wire's tasks instead (``sessionless_owner``), with the caps of any
one owner; its tasks of both eras are then that one owner's.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

from dsh_cli.core.limits import TASKS_SESSIONLESS
from dsh_cli.core.signal import AbortSignal
from dsh_cli.mcp_server.owned import SESSIONLESS_OWNER, request_owner
from dsh_cli.mcp_server.owned.work import Later, LaterWork
from dsh_cli.mcp_server.tasks import wire_2025_11_25, wire_2026_07_28
from dsh_cli.mcp_server.tasks.listen import METHOD as LISTEN
from dsh_cli.mcp_server.tasks.listen import TaskListeners
from dsh_cli.mcp_server.tasks.store import TaskError, Tasks, Work

if TYPE_CHECKING:
    from mcp.server import Server
    from mcp.server.context import CallNext, HandlerResult, ServerRequestContext

__all__ = ["OwnerOf", "Staged", "TaskLayer", "WorkFor", "close_tasks", "end_listeners",
           "install_tasks"]


@dataclass(frozen=True)
class Staged:
    """A call that becomes a task only once ``start`` has run: ``start`` returns the task's
    work, or a result that answers the call plainly (a refusal: no task); ``meta`` is the
    ``_meta`` of the task's creation result (read after ``start``), ``abandon`` undoes a
    start whose task could not be made; ``signal`` is what ``start`` asked under, and the
    task's own (one settlement: an answer that seals it leaves a cancel nothing to win)."""

    start: Callable[[], Awaitable[Work | HandlerResult]]
    signal: AbortSignal = field(default_factory=AbortSignal)
    meta: Callable[[], dict[str, Any]] = field(default=dict)
    abandon: Callable[[], None] = field(default=lambda: None)
    ticket: Callable[[], str | None] = field(default=lambda: None)  # the batch's, once started


class WorkFor(Protocol):
    """The call of tool ``name`` as a task (``Work``, or ``Staged``), or None to answer it
    plainly (any other name, or a call that must not become one); ``asked``: the client
    asked for a task (2025-11-25 ``params.task``), not only declared it takes them (2026)."""

    def __call__(self, ctx: ServerRequestContext[Any, Any], name: str, arguments: Any, *,
                 asked: bool) -> Work | Staged | None: ...

# the owner of a 2025-11-25 request (``owned.request_owner``), or None when an HTTP request
# names no session (``server.py``'s also closes the session's tasks when it ends); as
# ``sessionless_owner``, of a 2026-07-28 request, None: the wire's one owner
OwnerOf = Callable[["ServerRequestContext[Any, Any]"], str | None]

EXTENSION_VERSIONS = ("2026-07-28",)  # the protocol versions whose tasks are the extension


class TaskLayer:
    """A ``Server.middleware`` entry: the task surface, over the tasks of ``later`` (the
    server's one store of work fetched later, its tickets' too; None: one of its own), read
    through ``view`` (``Tasks``; a serving hub's reads its store too)."""

    def __init__(self, work_for: WorkFor, later: LaterWork | None = None, *,
                 required: frozenset[str] = frozenset(),
                 stamp: Callable[[], dict[str, Any]] | None = None,
                 owner_of: OwnerOf | None = None,
                 sessionless_owner: OwnerOf | None = None,
                 view: Callable[..., Tasks] = Tasks) -> None:
        self.work_for = work_for
        # a server without ``session_owner``'s (the conformance fixtures): no end hook
        self.owner_of = owner_of or request_owner
        self.sessionless_owner = sessionless_owner or (lambda ctx: None)
        # the sessionless wire's tasks are many clients': none is forgotten for another's
        self.tasks = view(later, shared={SESSIONLESS_OWNER: TASKS_SESSIONLESS})
        self.required = required  # tools that run only as tasks (dsh's own: none)
        self.stamp = stamp  # the server's identity, for a 2026 result's ``_meta``
        self.listeners = TaskListeners()  # 2026 ``subscriptions/listen`` streams

    async def __call__(self, ctx: ServerRequestContext[Any, Any],
                       call_next: CallNext) -> HandlerResult:
        method, params = ctx.method, ctx.params if isinstance(ctx.params, Mapping) else {}
        if method == "initialize":
            return _with_capability(await call_next(ctx))
        if ctx.protocol_version in EXTENSION_VERSIONS:
            return await self._serve_2026_07_28(ctx, call_next, method, dict(params))
        if ctx.protocol_version == wire_2025_11_25.ERA:
            return await self._serve_2025_11_25(ctx, call_next, method, dict(params))
        return await call_next(ctx)

    async def _serve_2025_11_25(self, ctx: ServerRequestContext[Any, Any],
                                call_next: CallNext, method: str,
                                params: dict[str, Any]) -> HandlerResult:
        owner = self.owner_of(ctx)
        if owner is None and (method in wire_2025_11_25.METHODS or (
                method == "tools/call" and isinstance(params.get("task"), Mapping))):
            from mcp.shared.exceptions import MCPError

            # fail closed: a task no session owns could be read by any client
            raise MCPError(-32600, f"{method}: this HTTP request names no MCP session "
                                   "(Mcp-Session-Id), so no task can be its own")
        if owner is None:
            return await call_next(ctx)
        if method == "tools/call" and isinstance(params.get("task"), Mapping):
            made = await self._create(ctx, params, owner, params["task"].get("ttl"),
                                      _status_notifier(ctx), asked=True)
            if isinstance(made, tuple):
                return wire_2025_11_25.create_result(*made)
            return made if made is not None else await call_next(ctx)
        if method == "tools/call" and params.get("name") in self.required:
            from mcp.shared.exceptions import MCPError

            raise MCPError(-32601, f"tool {params['name']!r} runs only as a task")
        if method == "tasks/get":
            return await wire_2025_11_25.get(self.tasks, owner, params)
        if method == "tasks/result":
            return await wire_2025_11_25.result(self.tasks, owner, params)
        if method == "tasks/list":
            return await wire_2025_11_25.list_tasks(self.tasks, owner, params)
        if method == "tasks/cancel":
            return await wire_2025_11_25.cancel(self.tasks, owner, params)
        return await call_next(ctx)

    async def _serve_2026_07_28(self, ctx: ServerRequestContext[Any, Any],
                                call_next: CallNext, method: str,
                                params: dict[str, Any]) -> HandlerResult:
        declared = wire_2026_07_28.declared(ctx.meta)
        owner = self.sessionless_owner(ctx) or SESSIONLESS_OWNER
        if method == "tools/call" and declared:
            made = await self._create(ctx, params, owner, None,
                                      self._tell_listeners, asked=False)
            if isinstance(made, tuple):
                return self._stamped(wire_2026_07_28.create_result(*made))
            if made is not None:
                return made
        if method == "tools/call" and params.get("name") in self.required:
            raise wire_2026_07_28.missing_capability()
        if method in wire_2026_07_28.METHODS:
            if not declared:
                raise wire_2026_07_28.missing_capability()
            if method == "tasks/cancel":
                return self._stamped(await wire_2026_07_28.cancel(
                    self.tasks, owner, params, _headers(ctx)))
            serve = {"tasks/get": wire_2026_07_28.get,
                     "tasks/update": wire_2026_07_28.update}[method]
            return self._stamped(await serve(self.tasks, owner, params, _headers(ctx)))
        if method == LISTEN and declared:
            return await self.listeners.serve(ctx, self.tasks, owner, params)
        return await call_next(ctx)  # tasks/result and tasks/list are gone: -32601

    async def _tell_listeners(self, record: Later) -> None:
        self.listeners.changed(record)

    def _stamped(self, result: dict[str, Any]) -> dict[str, Any]:
        """A 2026 result carries the server's identity in ``_meta``, as the SDK's own do."""
        if self.stamp is None:
            return result
        return {**result, "_meta": {**(result.get("_meta") or {}),
                                    "io.modelcontextprotocol/serverInfo": self.stamp()}}

    async def _create(self, ctx: ServerRequestContext[Any, Any], params: dict[str, Any],
                      owner: str, ttl: Any, watcher: Any, *, asked: bool,
                      ) -> tuple[Later, dict[str, Any]] | HandlerResult | None:
        """A task for the call and its creation result's ``_meta``; a result that already
        answers it (a staged call refused); or None: it is served as ever, without a task."""
        from mcp.shared.exceptions import MCPError

        name, arguments = params.get("name"), params.get("arguments")
        if not isinstance(name, str) or not isinstance(arguments, dict | None):
            return None
        found = self.work_for(ctx, name, arguments if arguments is not None else {},
                              asked=asked)
        if found is None:
            return None
        staged = found if isinstance(found, Staged) else None
        if staged is not None:
            started = await staged.start()
            if not callable(started):
                return started
            found = started
        assert not isinstance(found, Staged)
        try:
            record = self.tasks.create(owner, found, ttl_ms=ttl, watcher=watcher,
                                       signal=staged.signal if staged is not None else None,
                                       ticket=staged.ticket() if staged is not None else None)
        except TaskError as error:
            if staged is not None:
                staged.abandon()
            raise MCPError(error.code, error.message) from None
        return record, staged.meta() if staged is not None else {}


def _headers(ctx: ServerRequestContext[Any, Any]) -> Mapping[str, str] | None:
    request = ctx.request
    headers = getattr(request, "headers", None)
    return headers if isinstance(headers, Mapping) else None


def _with_capability(result: HandlerResult) -> HandlerResult:
    """A 2025-11-25 ``InitializeResult`` says which requests may be tasks."""
    if isinstance(result, dict) and result.get("protocolVersion") == wire_2025_11_25.ERA:
        capabilities = dict(result.get("capabilities") or {})
        capabilities["tasks"] = wire_2025_11_25.CAPABILITY
        return {**result, "capabilities": capabilities}
    return result


def _status_notifier(ctx: ServerRequestContext[Any, Any],
                     ) -> Callable[[Later], Awaitable[None]]:
    """``notifications/tasks/status`` on the session's own stream (not the ended request's)."""
    from mcp.types import TaskStatusNotification, TaskStatusNotificationParams

    session = ctx.session

    async def notify(record: Later) -> None:
        params = TaskStatusNotificationParams.model_validate(
            wire_2025_11_25.status_params(record))
        await session.send_notification(TaskStatusNotification(params=params))  # type: ignore[arg-type]

    return notify


def install_tasks(server: Server[Any], work_for: WorkFor, *,
                  required: frozenset[str] = frozenset(),
                  owner_of: OwnerOf | None = None, later: LaterWork | None = None,
                  sessionless_owner: OwnerOf | None = None,
                  view: Callable[..., Tasks] = Tasks) -> TaskLayer:
    """Serve tasks on ``server``: its middleware, and the extension in ``server/discover``;
    its tasks are kept in ``later`` (the server's one store; None: one of their own) and
    read through ``view``; ``sessionless_owner`` names a 2026-07-28 request's owner."""
    layer = TaskLayer(work_for, later, required=required, owner_of=owner_of,
                      sessionless_owner=sessionless_owner,
                      stamp=lambda: server.server_info_stamp, view=view)
    server.middleware.append(layer)
    server.extensions[wire_2026_07_28.EXTENSION] = {}
    return layer


def end_listeners(server: Server[Any]) -> None:
    """The server is stopping: its listen streams end now, before the transport waits on them."""
    for layer in server.middleware:
        if isinstance(layer, TaskLayer):
            layer.listeners.close()


async def close_tasks(server: Server[Any]) -> None:
    """The server is stopping: its live tasks are withdrawn (their batches aborted)."""
    end_listeners(server)
    for layer in server.middleware:
        if isinstance(layer, TaskLayer):
            await layer.tasks.close()

