"""Permission requests settled from outside the process: the relay and the browser.

``RemotePermissions`` is a permission provider that shows nothing itself: the gate
announces each request on the event stream (``permission/requested``) and a controller
answers it with a ``permission/decision`` frame, which lands in ``respond``. First valid
response wins; a bad one is refused and the request stays pending, as with questions. A
request belongs to the session the gate asked it in (``PermissionRequest.session_id``), and
a decision or cancel naming another is ``wrong-session`` (``core/ownership.py``).
One settlement decides, as in the question table (``interaction/pending.py``): the request's
abort signal settles it the moment it is aborted (a decision after that is ``not-pending``),
and a decision or dismissal seals the signal, so an abort that comes second (a
``tasks/cancel`` of ``approve_tool_use``'s task) is refused and the decision stands. The
signal is the request's own (a tool call's child, a task's): sealing it never stops its
owner aborting the work that follows.
Once the front door closes (stdin ended, the web host stopped) every pending request and
every later one ends ``ASK_ABORTED``: nobody is left to decide, and a run never hangs.
"""

from __future__ import annotations

import asyncio
from typing import Any

from dsh_cli.core.errors import ASK_ABORTED, ASK_CANCELLED, UserInteractionError
from dsh_cli.core.events import BAD_RESPONSE, NOT_PENDING, PermissionRequested, ResponseAck
from dsh_cli.core.limits import PERMISSION_MESSAGE_CHARACTERS as MAX_MESSAGE
from dsh_cli.core.ownership import refusal
from dsh_cli.permissions.vocabulary import DECISIONS, PermissionDecision, PermissionRequest

__all__ = ["BAD_RESPONSE", "NOT_PENDING", "RemotePermissions"]



class RemotePermissions:
    """Pending permission requests by ``rpc_id``, each awaiting a controller's decision."""

    def __init__(self) -> None:
        self._pending: dict[str, tuple[PermissionRequest, asyncio.Future[PermissionDecision]]] = {}
        self._closed: str | None = None

    def __len__(self) -> int:
        return len(self._pending)

    def requests(self) -> list[tuple[str, PermissionRequest]]:
        """The pending requests, oldest first (what a replay re-sends)."""
        return [(rpc_id, request) for rpc_id, (request, _) in self._pending.items()]

    def __contains__(self, rpc_id: object) -> bool:
        """Whether ``rpc_id`` names a request still waiting for its decision."""
        entry = self._pending.get(rpc_id) if isinstance(rpc_id, str) else None
        return entry is not None and not entry[1].done()

    def replay(self) -> list[PermissionRequested]:
        """``permission/requested`` for every pending request, same ids, oldest first."""
        return [PermissionRequested(rpc_id=rpc_id, session_id=request.session_id,
                                    call_id=request.call_id, tool=request.tool,
                                    server=request.server, arguments=request.arguments,
                                    hints=request.hints.to_json(),
                                    description=request.description)
                for rpc_id, request in self.requests() if rpc_id in self]

    async def decide(self, request: PermissionRequest, rpc_id: str) -> PermissionDecision:
        if self._closed is not None:
            raise UserInteractionError(self._closed, ASK_ABORTED)
        future: asyncio.Future[PermissionDecision] = asyncio.get_running_loop().create_future()
        self._pending[rpc_id] = (request, future)
        unhook = request.signal.on_abort(lambda reason: _settle(future, request, (
            UserInteractionError(f"the permission request was aborted ({reason})",
                                 ASK_ABORTED)))) if request.signal is not None else None
        try:
            return await future
        finally:
            if unhook is not None:
                unhook()
            self._pending.pop(rpc_id, None)

    def _claim(self, rpc_id: str, session_id: str | None
               ) -> asyncio.Future[PermissionDecision] | ResponseAck:
        """The decision a frame may settle, or why not (``not-pending``, ``wrong-session``)."""
        entry = self._pending.get(rpc_id)
        if entry is None or entry[1].done():
            return ResponseAck(rpc_id, False, NOT_PENDING, f"no pending permission {rpc_id}")
        return refusal(rpc_id, entry[0].session_id, session_id) or entry[1]

    def respond(self, rpc_id: str, decision: Any, message: Any = None,
                session_id: str | None = None) -> ResponseAck:
        """A controller's decision; refused (and still pending) when it does not fit."""
        future = self._claim(rpc_id, session_id)
        if isinstance(future, ResponseAck):
            return future
        if decision not in DECISIONS:
            return ResponseAck(rpc_id, False, BAD_RESPONSE,
                               f"decision must be one of {', '.join(DECISIONS)}")
        if message is not None and (not isinstance(message, str) or len(message) > MAX_MESSAGE):
            return ResponseAck(rpc_id, False, BAD_RESPONSE,
                               f"message must be a string of at most {MAX_MESSAGE} characters")
        _settle(future, self._pending[rpc_id][0],
                PermissionDecision(decision, (message or "").strip() or None))
        return ResponseAck(rpc_id, True)

    def cancel(self, rpc_id: str, session_id: str | None = None) -> ResponseAck:
        """The human dismissed the request from outside: ``ASK_CANCELLED``."""
        future = self._claim(rpc_id, session_id)
        if isinstance(future, ResponseAck):
            return future
        _settle(future, self._pending[rpc_id][0],
                UserInteractionError("the user dismissed the permission request", ASK_CANCELLED))
        return ResponseAck(rpc_id, True)

    def close(self, reason: str) -> None:
        """Nobody can decide any more: pending and later requests end ``ASK_ABORTED``."""
        self._closed = reason
        for request, future in self._pending.values():
            _settle(future, request, UserInteractionError(reason, ASK_ABORTED))


def _settle(future: asyncio.Future[PermissionDecision], request: PermissionRequest,
            outcome: PermissionDecision | BaseException) -> None:
    """Resolve a pending request once; decided, its signal is sealed (an abort comes second)."""
    if future.done():
        return
    if request.signal is not None:
        request.signal.seal()  # no-op once aborted: then the abort is this settlement
    if isinstance(outcome, BaseException):
        future.set_exception(outcome)
    else:
        future.set_result(outcome)
