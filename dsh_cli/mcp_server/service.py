"""One ``ask_user_question`` call through ``dsh mcp``: validated, asked, recorded, answered.

The call goes through the same ``ToolRegistry`` and ``AskUserQuestionTool`` as the
model-facing tool, so decoding, validation, error codes and the result text are exactly
theirs. Around it: who asks (the batch's ``source``), progress while the human thinks,
and the session record (one session per ``dsh mcp`` process, created at the first call).

``delivery: "async"`` is checked as a waiting call is (a bad batch, or no desk to take it,
fails at once), then asked with no call waiting: the result is the ticket, and the batch's
own result (the one a waiting call would have returned) is kept in ``tickets`` for its
caller's session to fetch with ``get_user_answer``.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import json
import os
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any

from dsh_cli.core.errors import NO_PROVIDER, TicketError, UserInteractionError, format_line
from dsh_cli.core.events import AssistantMessage, ToolResultEvent
from dsh_cli.core.ids import mint_rpc_id
from dsh_cli.core.signal import AbortSignal
from dsh_cli.mcp_server.budget import BatchBudget, Held
from dsh_cli.mcp_server.tickets import TicketStore, unowned
from dsh_cli.tools.ask_user_question import MCP_DESCRIPTION, AskUserQuestionTool
from dsh_cli.tools.registry import ToolContext, ToolRegistry, ToolResult

if TYPE_CHECKING:
    from dsh_cli.interaction import AskUserQuestionRequest, UserInteraction
    from dsh_cli.store import SessionStore

__all__ = ["PROGRESS_INTERVAL", "TICKET_KIND", "AskService", "Progress"]

TOOL_NAME = "ask_user_question"
TICKET_KIND = "ask"  # the tickets ``get_user_answer`` fetches (``tickets.py`` holds others too)
PROGRESS_INTERVAL = 10.0  # seconds between progress notifications while a batch waits
WAITING = "waiting for the human at the dsh desk"

Progress = Callable[[float, float | None, str | None], Awaitable[None]]


class AskService:
    """Runs tool calls against one ``UserInteraction``; ``sources`` labels their batches."""

    def __init__(self, ui: UserInteraction, *, sources: dict[str, dict[str, Any]] | None = None,
                 store: SessionStore | None = None,
                 report: Callable[[str], None] | None = None,
                 tickets: TicketStore | None = None,
                 budget: BatchBudget | None = None) -> None:
        self.ui = ui
        self.budget = budget if budget is not None else BatchBudget()
        self.sources = sources if sources is not None else {}
        self.tickets = tickets if tickets is not None else TicketStore()
        self.registry = ToolRegistry([AskUserQuestionTool(submit=self._submit,
                                                          description=MCP_DESCRIPTION)])
        self._owners: dict[str, str | None] = {}  # call id -> its session (None: unknown)
        self._later: dict[str, asyncio.Future[Any]] = {}  # call id -> its async batch
        self.store = store
        self.session_id: str | None = None
        self._report = report or (lambda line: None)
        self._calls = itertools.count(1)
        self._stop_recording: Callable[[], None] | None = None

    def tool_spec(self) -> dict[str, Any]:
        """Name, description and input schema: the model-facing tool's, unchanged."""
        function = self.registry.get(TOOL_NAME).spec()["function"]  # type: ignore[union-attr]
        return function

    async def ask(self, arguments: Any, *, client: str | None, signal: AbortSignal,
                  progress: Progress | None = None, owner: str | None = "stdio") -> ToolResult:
        """Ask one batch for ``client`` in session ``owner`` (whose tickets an async one
        joins; None: not known, so an async one is refused); any failure is a result
        carrying its code."""
        self.open_session(client)
        call_id = f"mcp_{next(self._calls)}"
        rpc_id = mint_rpc_id()
        self.sources[rpc_id] = {"client": client, "cwd": os.getcwd(), "pid": os.getpid()}
        self._owners[call_id] = owner
        text = _arguments_text(arguments)
        self.emit(AssistantMessage("", [{"id": call_id, "name": TOOL_NAME, "arguments": text}]))
        try:  # weighed before anything is built of it
            held = self.budget.take(owner, len(text.encode("utf-8", "replace")))
        except TicketError as error:
            self._owners.pop(call_id, None)
            self.sources.pop(rpc_id, None)
            result = ToolResult.failure(error)
            self.emit(ToolResultEvent(call_id, TOOL_NAME, result.content, result.error))
            return result
        ticker = asyncio.ensure_future(_tick(progress)) if progress is not None else None
        try:
            ctx = ToolContext(user_interaction=self.ui, signal=signal, call_id=call_id,
                              session_id=self.session_id, rpc_id=rpc_id)
            result = await self.registry.execute(TOOL_NAME, arguments, ctx)
        finally:
            if ticker is not None:
                ticker.cancel()
            self._owners.pop(call_id, None)
            if rpc_id not in self.tickets:  # an async batch keeps its label while asked
                self.sources.pop(rpc_id, None)
            _release_when_done(held, self._later.pop(call_id, None))
        self.emit(ToolResultEvent(call_id, TOOL_NAME, result.content, result.error))
        return result

    def _submit(self, request: AskUserQuestionRequest, ctx: ToolContext) -> str:
        """An async batch: checked as a waiting one is, then asked with no call waiting."""
        assert ctx.rpc_id is not None and ctx.call_id is not None  # ``ask`` gives both
        self.ui.check_request(request)
        refusal = getattr(self.ui.provider, "refusal", None)
        why = refusal() if callable(refusal) else None
        if why is not None:  # a desk provider with no desk and no --wait: as a wait call
            raise UserInteractionError(why, NO_PROVIDER)
        owner = self._owners[ctx.call_id]
        if owner is None:
            raise unowned()
        self.tickets.admit(owner)
        # the batch outlives the call: its own signal, aborted only when its session ends
        own = AbortSignal()
        request = request.model_copy(update={"signal": own})
        task = asyncio.ensure_future(self._ask_later(request, ctx.rpc_id))
        self._later[ctx.call_id] = task
        self.tickets.add(ctx.rpc_id, owner, task,
                         abort=lambda: own.abort("the agent's session ended"), kind=TICKET_KIND)
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

    def mark_interrupted(self) -> None:
        """The process is ending (a signal): its pending batches are stored interrupted."""
        if self.store is None or self.session_id is None:
            return
        from dsh_cli.store import StoreError

        try:
            self.store.mark_interrupted(self.session_id)
        except StoreError as error:
            self._report(format_line(error.code, error.message))

    def close(self) -> None:
        if self._stop_recording is not None:
            self._stop_recording()
            self._stop_recording = None

    def open_session(self, client: str | None) -> None:
        """The process's session, at its first call (when the client's name is known)."""
        if self.store is None or self.session_id is not None:
            return
        from dsh_cli.store import StoreError

        try:
            self.session_id = self.store.create_session(f"mcp:{client or 'unknown'}")
            self._stop_recording = self.store.record(self.ui.events, self.session_id)
        except StoreError as error:
            self._report(format_line(error.code, f"{error.message} (batches are not recorded)"))
            self.store = None
            return
        self.ui.session_id = self.session_id
        self.ui.recall = self.store.last_selections  # a desk shows the last answer

    def emit(self, event: Any) -> None:
        """Put ``event`` on the stream the store records; a store failure is one line."""
        from dsh_cli.store import StoreError

        try:
            self.ui.events.emit(event)
        except StoreError as error:  # the answer still reaches the agent
            self._report(format_line(error.code, error.message))


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
