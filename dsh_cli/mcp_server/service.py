"""One ``ask_user_question`` call through ``dsh mcp``: validated, asked, recorded, answered.

The call goes through the same ``ToolRegistry`` and ``AskUserQuestionTool`` as the
model-facing tool, so decoding, validation, error codes and the result text are exactly
theirs. Around it: who asks (the batch's ``source``), progress while the human thinks,
and the session record (``session_record.py``: one session per ``dsh mcp`` process).

``delivery: "async"`` is checked as a waiting call is (a bad batch, or no desk to take it,
fails at once), then asked with no call waiting: the result is the ticket, and the batch's
own result (the one a waiting call would have returned) is kept in ``tickets`` for its
caller's session to fetch with ``get_user_answer``. An MCP task made of an async call
(``server.py``) waits for that result with ``outcome_of``, which says whose answer it is.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import json
import os
import time
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any

from dsh_cli.core.errors import (
    ASK_CANCELLED,
    TicketError,
)
from dsh_cli.core.events import AssistantMessage, QuestionResolved, ToolResultEvent
from dsh_cli.core.ids import mint_rpc_id
from dsh_cli.core.signal import AbortSignal
from dsh_cli.mcp_server.budget import BatchBudget, Held
from dsh_cli.mcp_server.session_record import SessionRecord
from dsh_cli.mcp_server.tickets import SESSION_ENDED, Tickets, unowned
from dsh_cli.tools.ask_user_question import MCP_DESCRIPTION, AskUserQuestionTool
from dsh_cli.tools.registry import ToolContext, ToolRegistry, ToolResult

if TYPE_CHECKING:
    from dsh_cli.interaction import AskUserQuestionRequest, UserInteraction

__all__ = ["PROGRESS_INTERVAL", "TICKET_KIND", "AskService", "Progress"]

TOOL_NAME = "ask_user_question"
TICKET_KIND = "ask"  # the tickets ``get_user_answer`` fetches (a fetch names its kind)
PROGRESS_INTERVAL = 10.0  # seconds between progress notifications while a batch waits
WAITING = "waiting for the human at the dsh desk"

Progress = Callable[[float, float | None, str | None], Awaitable[None]]


class AskService:
    """Runs tool calls against one ``UserInteraction``; ``sources`` labels their batches."""

    def __init__(self, ui: UserInteraction, *, sources: dict[str, dict[str, Any]] | None = None,
                 session: SessionRecord | None = None,
                 tickets: Tickets | None = None,
                 budget: BatchBudget | None = None) -> None:
        self.ui = ui
        self.budget = budget if budget is not None else BatchBudget()
        self.sources = sources if sources is not None else {}
        self.tickets = tickets if tickets is not None else Tickets()
        self.registry = ToolRegistry([AskUserQuestionTool(submit=self._submit,
                                                          description=MCP_DESCRIPTION)])
        self._owners: dict[str, str | None] = {}  # call id -> its session (None: unknown)
        self._told: set[str] = set()  # calls whose async batch a task will tell of
        # the async batches a task tells of (rpc_id), and who answered each, once known
        self._answerers: dict[str, str | None] = {}
        ui.events.subscribe(self._heard)
        self._later: dict[str, asyncio.Future[Any]] = {}  # call id -> its async batch
        self.session = session if session is not None else SessionRecord(ui)
        self._calls = itertools.count(1)

    def tool_spec(self) -> dict[str, Any]:
        """Name, description and input schema: the model-facing tool's, unchanged."""
        tool = self.registry.get(TOOL_NAME)
        assert tool is not None  # registered at construction, never removed
        function: dict[str, Any] = tool.spec()["function"]
        return function

    async def ask(self, arguments: Any, *, client: str | None, signal: AbortSignal,
                  progress: Progress | None = None, owner: str | None = "stdio",
                  told: bool = False, source: dict[str, Any] | None = None) -> ToolResult:
        """Ask one batch for ``client`` in session ``owner`` (whose tickets an async one
        joins; None: not known, so an async one is refused); any failure is a result
        carrying its code. ``told``: an async batch's outcome goes to ``outcome_of``.
        ``source``: who asks, as the desks show it (a hub's remote agent); else this
        process's client, working directory and pid."""
        self.session.open(client)
        call_id = f"mcp_{next(self._calls)}"
        rpc_id = mint_rpc_id()
        self.sources[rpc_id] = source if source is not None else {
            "client": client, "cwd": os.getcwd(), "pid": os.getpid()}
        self._owners[call_id] = owner
        if told:
            self._told.add(call_id)
        text = _arguments_text(arguments)
        try:  # weighed before the batch is built or its arguments are recorded
            held = self.budget.take(owner, len(text.encode("utf-8", "replace")))
        except TicketError as error:
            self._owners.pop(call_id, None)
            self._told.discard(call_id)
            self.sources.pop(rpc_id, None)
            result = ToolResult.failure(error)
            # the call is recorded without the arguments that were too big to hold
            self.session.emit(AssistantMessage("", [{"id": call_id, "name": TOOL_NAME,
                                                      "arguments": "{}"}]))
            self.session.emit(ToolResultEvent(call_id, TOOL_NAME, result.content, result.error))
            return result
        self.session.emit(AssistantMessage("", [{"id": call_id, "name": TOOL_NAME,
                                                 "arguments": text}]))
        ticker = asyncio.ensure_future(_tick(progress)) if progress is not None else None
        try:
            ctx = ToolContext(user_interaction=self.ui, signal=signal, call_id=call_id,
                              session_id=self.session.session_id, rpc_id=rpc_id)
            result = await self.registry.execute(TOOL_NAME, arguments, ctx)
        finally:
            if ticker is not None:
                ticker.cancel()
            self._owners.pop(call_id, None)
            self._told.discard(call_id)
            if rpc_id not in self.tickets:  # an async batch keeps its label while asked
                self.sources.pop(rpc_id, None)
            _release_when_done(held, self._later.pop(call_id, None))
        self.session.emit(ToolResultEvent(call_id, TOOL_NAME, result.content, result.error))
        return result

    def _submit(self, request: AskUserQuestionRequest, ctx: ToolContext) -> str:
        """An async batch: checked as a waiting one is, then asked with no call waiting."""
        assert ctx.rpc_id is not None and ctx.call_id is not None  # ``ask`` gives both
        self.ui.check_request(request)
        owner = self._owners[ctx.call_id]
        if owner is None:
            raise unowned()
        self.tickets.admit(owner)
        # the batch outlives the call: its own signal, aborted only when its session ends;
        # a told batch's is its task's (made for it, never the call's), so the first of an
        # answer and a tasks/cancel decides both the batch and the task
        own = ctx.signal if ctx.call_id in self._told else AbortSignal()
        request = request.model_copy(update={"signal": own})
        if ctx.call_id in self._told:  # before it is asked: an answers file answers at once
            self._answerers[ctx.rpc_id] = None
        task = asyncio.ensure_future(self._ask_later(request, ctx.rpc_id))
        self._later[ctx.call_id] = task
        self.tickets.add(ctx.rpc_id, owner, task, signal=own, kind=TICKET_KIND)
        return ctx.rpc_id

    async def _ask_later(self, request: AskUserQuestionRequest, rpc_id: str) -> ToolResult:
        """The async batch's result: what a waiting call would have returned."""
        try:
            answer = await self.ui.ask(request, rpc_id=rpc_id, delivery="async")
        except asyncio.CancelledError:
            raise
        except Exception as error:  # the seam's errors, as the registry makes them results
            return ToolResult.failure(error)
        finally:
            self.sources.pop(rpc_id, None)
        return ToolResult(answer.to_compact_json())

    async def outcome_of(self, ticket: str, owner: str, signal: AbortSignal,
                         ) -> tuple[ToolResult, str]:
        """The outcome of async batch ``ticket`` once it settles, and the sentence that says
        whose it is and when; ``signal`` (its MCP task cancelled) withdraws the batch."""
        try:
            held = self.tickets.get(ticket, owner, TICKET_KIND)
            aborted = asyncio.ensure_future(signal.wait())
            try:
                await asyncio.wait({held.outcome, aborted}, return_when=asyncio.FIRST_COMPLETED)
            finally:
                aborted.cancel()
            if not held.done:
                held.abort(SESSION_ENDED)  # the task was cancelled: the desk drops the batch
            await held.ended()
            self.tickets.mark_fetched(held)
            result: ToolResult = held.outcome.result()
            return result, told_as(ticket, result, self._answerers.get(ticket), time.time())
        finally:
            self._answerers.pop(ticket, None)

    def forget_told(self, ticket: str, owner: str) -> None:
        """A told batch whose task was never made: withdrawn, as its session's end would."""
        self._answerers.pop(ticket, None)
        with contextlib.suppress(TicketError):
            self.tickets.get(ticket, owner, TICKET_KIND).abort(SESSION_ENDED)

    def _heard(self, event: object) -> None:
        """Who answered a told batch (the desk, an answers file, …): its task says so."""
        if isinstance(event, QuestionResolved) and event.rpc_id in self._answerers:
            self._answerers[event.rpc_id] = event.answered_by


# who answered (a provider's ``answered_by``), as the task's result tells the model
ANSWERERS = {"desk": "the human at their dsh desk", "web": "the human on dsh's web page",
             "answers file": "the human, through the answers file given to dsh mcp"}


def told_as(ticket: str, result: ToolResult, answered_by: str | None, when: float) -> str:
    """The sentence before an async batch's outcome: whose answer it is, when, which ticket."""
    stamp = time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime(when))
    who = ANSWERERS.get(answered_by or "desk", f"the human ({answered_by})")
    if not result.is_error:
        return (f"This is the human's answer to your question (ticket {ticket}), given by "
                f"{who} at {stamp}:")
    if result.error is not None and result.error.get("code") == ASK_CANCELLED:
        return (f"The human dismissed your question (ticket {ticket}) without answering, "
                f"at {stamp}:")
    return f"Your question (ticket {ticket}) ended without the human's answer at {stamp}:"


def _release_when_done(held: Held, later: asyncio.Future[Any] | None) -> None:
    """A waiting call's bytes go back now; an async batch's when its batch ends."""
    if later is None or later.done():
        held.release()
    else:
        later.add_done_callback(lambda _: held.release())


def _arguments_text(arguments: Any) -> str:
    if isinstance(arguments, str):
        return arguments
    with contextlib.suppress(TypeError, ValueError):
        return json.dumps(arguments, ensure_ascii=False, separators=(",", ":"))
    return str(arguments)


async def _tick(progress: Progress) -> None:
    """Progress while the batch waits: at once, then every ``PROGRESS_INTERVAL`` seconds."""
    loop = asyncio.get_running_loop()
    start = loop.time()
    while True:
        with contextlib.suppress(Exception):  # a client that cannot take it loses nothing
            await progress(round(loop.time() - start, 1), None, WAITING)
        await asyncio.sleep(PROGRESS_INTERVAL)
