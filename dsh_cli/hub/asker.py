"""The serving hub's providers: an agent's question or permission request kept in the store.

``HubProvider`` (questions, on the hub's ``UserInteraction``) and ``HubPermissions``
(permission requests, on its ``PermissionGate``) write what they are asked into the
``HubStore`` as an entry: the ``question/requested`` (``permission/requested``) event as a
desk reads it, without ``rpc_id``, ``age`` and ``number``, labelled with who asks (the
agent token's name, the agent's name, machine and working directory) and the question's
timeout as its deadline (the store's clock decides it, one for every hub process, and the
audit says ``timeout`` by ``hub``). Then they wait, through ``HubWatch``, for the entry to
settle in any hub process; the settling desk frame stored with it is applied to this
process's own pending table under the call's ``rpc_id``, exactly as a frame from a desk
socket would be (``mcp_server/desks.py``: answered through the table). Nothing is refused
for want of a desk: the store holds the entry for the team until it is answered, withdrawn
or timed out. A call that ends first (the agent cancelled it or went, its session ended,
the hub is stopping) withdraws its entry: ``store.cancel(id, by=<agent token>)``.

An entry a call waits on names this process (its ``waiter``): if the process dies
(kill -9), another's sweep withdraws it (``HubWatch``). An async question's entry needs no
waiter: it is kept under its ticket (the store's ask key), so ``HubTickets`` lets the same
agent token fetch it with ``get_user_answer`` from any hub process.
"""

from __future__ import annotations

import asyncio
import contextlib
from typing import TYPE_CHECKING, Any

from dsh_cli.core.errors import (
    ASK_ABORTED,
    UNKNOWN_TICKET,
    PermissionRequestError,
    TicketError,
    UserInteractionError,
)
from dsh_cli.core.outcomes import Outcome
from dsh_cli.desk.protocol import (
    DeskAnswer,
    DeskCancel,
    DeskDecision,
    DeskDecline,
    DeskPermissionRequested,
    DeskQuestionRequested,
)
from dsh_cli.desk.protocol import kind as frame_kind
from dsh_cli.hub.records import Entry, EntryKind, HubStoreError
from dsh_cli.hub.routes import route, tool_of
from dsh_cli.interaction import AskContext, AskUserQuestionAnswer, UserInteraction
from dsh_cli.interaction.traits import AnsweredThroughTable, Concurrent
from dsh_cli.mcp_server.owned.work import Later
from dsh_cli.mcp_server.tickets import Tickets
from dsh_cli.permissions.pending import RemotePermissions

if TYPE_CHECKING:
    from dsh_cli.hub.context import HubContext
    from dsh_cli.interaction.pending import PendingQuestions
    from dsh_cli.permissions.vocabulary import PermissionDecision, PermissionRequest

__all__ = ["HubAsks", "HubPermissions", "HubProvider", "HubTickets"]

# what a desk's event carries that the entry does not: the desk is told them afresh
_PER_DESK = ("rpc_id", "age", "number")


class HubAsks:
    """The entries this process keeps for its waiting calls, and their withdrawal."""

    def __init__(self, hub: HubContext, sources: dict[str, dict[str, Any]]) -> None:
        self.hub = hub
        self.sources = sources  # who asks, by rpc_id (a permission's by call id)
        self._open: dict[str, str] = {}  # entry id -> the agent token that asked it
        self._withdrawing: set[asyncio.Task[None]] = set()  # held until done

    async def settle(self, kind: EntryKind, key: str | None, event: dict[str, Any],
                     deadline: float | None) -> Entry:
        """Keep ``event`` as an entry, wait for it to settle; withdrawn if the wait ends."""
        source = self.sources.get(key) if key is not None else None
        if source is None or not isinstance(source.get("token"), str):
            raise HubStoreError("the hub does not know which agent asks", ASK_ABORTED)
        batch = {name: value for name, value in event.items() if name not in _PER_DESK}
        batch["source"] = source
        token = source["token"]
        agent, machine = str(source.get("client") or ""), str(source.get("machine") or "")
        cwd = str(source.get("cwd") or "")
        team = route(self.hub.routes, agent, machine, cwd, tool_of(kind, batch))
        # an async question is fetched by its ticket (its rpc_id), from any hub process;
        # every other entry is waited on here, and withdrawn if this process dies
        later = kind == "question" and event.get("delivery") == "async"
        asking = asyncio.ensure_future(asyncio.to_thread(
            self.hub.store.ask, token=token, batch=batch, kind=kind, agent=agent,
            machine=machine, cwd=cwd, timeout=deadline, team=team,
            key=key if later else None, waited=not later))
        try:
            entry = await asyncio.shield(asking)
        except BaseException:
            # the call ended while the store kept it: what was kept is withdrawn once known
            asking.add_done_callback(lambda done: self._withdraw_kept(done, token))
            raise
        self._open[entry.id] = token
        try:
            settled = await self.hub.watch.settled(entry.id)
        except BaseException:
            if self._open.pop(entry.id, None) is not None:
                await asyncio.shield(self._withdraw(entry.id, token))
            raise
        self._open.pop(entry.id, None)
        return settled

    def _withdraw_kept(self, asking: asyncio.Future[Entry], token: str) -> None:
        if asking.cancelled() or asking.exception() is not None:
            return
        task = asyncio.ensure_future(self._withdraw(asking.result().id, token))
        self._withdrawing.add(task)
        task.add_done_callback(self._withdrawing.discard)

    async def _withdraw(self, entry_id: str, token: str) -> None:
        """The call ended first: no answer is taken for the entry after this."""
        try:
            await asyncio.to_thread(self.hub.store.cancel, entry_id, token)
        except HubStoreError as error:
            self.hub.report(f"{error.code}: {error.message}")

    async def close(self) -> None:
        """Withdraw every entry still open (the hub is stopping)."""
        for entry_id, token in list(self._open.items()):
            if self._open.pop(entry_id, None) is not None:
                await self._withdraw(entry_id, token)
        if self._withdrawing:
            await asyncio.wait(set(self._withdrawing))


def _seconds_left(context: AskContext) -> float | None:
    deadline = context.deadline
    if deadline is None:
        return None
    return max(0.001, deadline.remaining(asyncio.get_running_loop().time()))


def _question_event(context: AskContext, announced: dict[str, Any]) -> dict[str, Any]:
    """The batch as the desk hub writes it (``mcp_server/desk_hub.py``), source added later."""
    return DeskQuestionRequested(
        rpc_id=context.rpc_id, session_id=announced.get("session_id"),
        call_id=announced.get("call_id"), questions=announced.get("questions"),
        declinable=announced.get("declinable", False), review=announced.get("review", False),
        delivery=announced.get("delivery", "wait"),
        last_answers=context.last_answers or None,
        last_answered=context.last_answered or None).to_json()


def _not_answered(entry: Entry, what: str = "question") -> UserInteractionError:
    """The error of an entry that left pending without a desk's frame."""
    if entry.timed_out:
        return Outcome.TIMED_OUT.error(f"the {what} timed out at the hub")
    return Outcome.ABORTED.error(f"the {what} was {entry.state} at the hub")


class HubProvider(AnsweredThroughTable, Concurrent):
    """Questions kept in the hub's store; the stored answer settles the pending table."""

    answered_through_table = "desk"  # a human at a desk, through the hub
    concurrent = True  # every entry is in the team's inbox at once

    def __init__(self, asks: HubAsks, ui: UserInteraction, *,
                 timeout: float | None = None) -> None:
        self.asks = asks
        self.ui = ui
        self.timeout = timeout  # the entry's deadline when the call gives none of its own

    async def ask(self, context: AskContext) -> AskUserQuestionAnswer:
        pending = self.ui.pending.get(context.rpc_id)
        if pending is None:
            raise Outcome.ABORTED.error("the question was settled before the hub kept it")
        event = _question_event(context, pending.announcement().to_json())
        try:
            entry = await self.asks.settle("question", context.rpc_id, event,
                                           _seconds_left(context) or self.timeout)
        except HubStoreError as error:
            raise UserInteractionError(error.message, error.code) from None
        if not entry.answered:
            raise _not_answered(entry)
        _apply(self.ui.pending, context.rpc_id, entry.answer or {})
        await asyncio.get_running_loop().create_future()  # the seam ends this wait
        raise AssertionError("unreachable")


def _apply(table: PendingQuestions, rpc_id: str, frame: dict[str, Any]) -> None:
    """A stored desk frame through the pending table, as from a desk socket; or the error."""
    session, kind = frame.get("session_id"), frame.get("type")
    if kind == frame_kind(DeskAnswer):
        ack = table.respond(rpc_id, frame.get("answers"), session)
    elif kind == frame_kind(DeskCancel):
        ack = table.cancel(rpc_id, session)
    elif kind == frame_kind(DeskDecline):
        ack = table.decline(rpc_id, session)
    else:
        raise Outcome.ABORTED.error(f"the hub's answer is no question frame ({kind!r})")
    if not ack.accepted:  # the desk side validates first: only a store written by hand
        raise Outcome.ABORTED.error(f"the hub's answer was refused: {ack.message}")


def stored_outcome(entry: Entry, ticket: str) -> AskUserQuestionAnswer | BaseException:
    """A settled async entry's outcome, exactly as the asking process's batch ended: its
    frame applied through a pending table of its own (the same validation), or the error."""
    from pydantic import ValidationError

    from dsh_cli.interaction.pending import PendingQuestions
    from dsh_cli.interaction.vocabulary import AskUserQuestionRequest

    if not entry.answered:
        return _not_answered(entry)
    batch = entry.batch
    try:
        request = AskUserQuestionRequest.model_validate(
            {"questions": batch.get("questions"), "declinable": batch.get("declinable") is True})
    except ValidationError:
        return Outcome.ABORTED.error("the hub's entry holds no valid question batch")
    session = batch.get("session_id")
    table = PendingQuestions(session if isinstance(session, str) else None)
    pending = table.register(request, rpc_id=ticket)
    try:
        _apply(table, ticket, entry.answer or {})
    except UserInteractionError as error:
        return error
    refused = pending.outcome.exception()
    return refused if refused is not None else pending.outcome.result()


class HubTickets(Tickets):
    """This process's tickets, and an agent's async questions asked at another hub process
    (which may have died): a ticket unknown here is read from the store by its ask key,
    for the same agent token only (another's reads ``UNKNOWN_TICKET``, as here)."""

    def __init__(self, hub: HubContext) -> None:
        super().__init__()
        self.hub = hub

    async def wait(self, ticket_id: str, owner: str, seconds: float,
                   kind: str | None = None) -> Later:
        try:
            return await super().wait(ticket_id, owner, seconds, kind)
        except TicketError as error:
            if error.code != UNKNOWN_TICKET or not owner.startswith("agent:"):
                raise
            entry = await asyncio.to_thread(self.hub.store.by_key, owner[len("agent:"):],
                                            ticket_id)
            if entry is None or entry.kind != "question":
                raise
        if entry.state == "pending" and seconds > 0:
            with contextlib.suppress(TimeoutError):
                entry = await asyncio.wait_for(self.hub.watch.settled(entry.id), seconds)
        from dsh_cli.mcp_server.get_user_answer import outcome_result

        outcome: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        if entry.state != "pending":  # the result the asking process's ticket would hold
            outcome.set_result(outcome_result(stored_outcome(entry, ticket_id)))
        # a view of the stored entry, never kept here: each fetch reads the store again
        return Later(ticket_id, owner, kind or "", self, outcome, self.store.clock())


class HubPermissions:
    """Permission requests kept in the hub's store; the stored decision settles them."""

    def __init__(self, asks: HubAsks, *, timeout: float | None = None) -> None:
        self.asks = asks
        self.timeout = timeout  # the gate's: the entry's deadline
        self.table = RemotePermissions()

    async def decide(self, request: PermissionRequest, rpc_id: str) -> PermissionDecision:
        decided = asyncio.ensure_future(self.table.decide(request, rpc_id))
        await asyncio.sleep(0)  # pending in the table now: a decision can land
        event = DeskPermissionRequested(
            rpc_id=rpc_id, session_id=request.session_id, call_id=request.call_id,
            tool=request.tool, server=request.server, arguments=request.arguments,
            hints=request.hints.to_json(), description=request.description).to_json()
        settling = asyncio.ensure_future(
            self.asks.settle("permission", request.call_id, event, self.timeout))
        try:
            await asyncio.wait({decided, settling}, return_when=asyncio.FIRST_COMPLETED)
            if not decided.done():
                self._apply(rpc_id, settling.result())
            return await decided
        except HubStoreError as error:
            raise PermissionRequestError(error.message, error.code) from None
        finally:
            for task in (settling, decided):
                if not task.done():
                    task.cancel()
                    await asyncio.wait({task})

    def _apply(self, rpc_id: str, entry: Entry) -> None:
        """The stored decision through the table, as a desk's frame would come."""
        if not entry.answered:
            error = _not_answered(entry, "permission request")
            raise PermissionRequestError(error.message, error.code)
        frame = entry.answer or {}
        if frame.get("type") != frame_kind(DeskDecision):
            raise PermissionRequestError(
                f"the hub's answer is no permission decision ({frame.get('type')!r})",
                ASK_ABORTED)
        ack = self.table.respond(rpc_id, frame.get("decision"), frame.get("message"),
                                 frame.get("session_id"))
        if not ack.accepted:
            raise PermissionRequestError(f"the hub's decision was refused: {ack.message}",
                                         ASK_ABORTED)
