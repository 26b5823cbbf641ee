"""The agent loop: stream a model turn, run its tool calls, repeat until it stops calling.

The loop knows nothing of UIs. Everything that happens is emitted on the event stream
(``dsh_cli.core.events``) as it happens, so the terminal renderer, the relay and the session
store each subscribe instead of re-deriving it. A cancelled turn (its abort signal set)
aborts the running tool call, records ``ABORTED_BEFORE_DISPATCH`` for the calls not yet
started, and raises ``TurnCancelled``: every tool call in the conversation keeps a result.
"""

from __future__ import annotations

import asyncio
import contextlib
from typing import Any

from dsh_cli.core.conversation import message_of, pending_tool_calls
from dsh_cli.core.events import (
    AssistantDelta,
    AssistantMessage,
    EventStream,
    ReasoningDelta,
    ToolResultEvent,
    ToolStarted,
    TurnCompleted,
    UserMessage,
)
from dsh_cli.core.limits import MODEL_CALLS as MAX_MODEL_CALLS
from dsh_cli.core.tasks import close_task
from dsh_cli.interaction import AbortSignal, HarnessError, UserInteraction
from dsh_cli.models.base import (
    ChatModel,
    Completion,
    ModelError,
    ModelToolCall,
)
from dsh_cli.models.base import ReasoningDelta as ModelReasoning
from dsh_cli.models.base import TextDelta as ModelText
from dsh_cli.tools import ToolContext, ToolRegistry, ToolResult

__all__ = ["INTERRUPTED_MARKER", "MAX_MODEL_CALLS", "AgentLoop", "TurnCancelled"]

# ends a reply stopped with ctrl-c, as stored: the next turn's model sees it was cut
INTERRUPTED_MARKER = "\n\n[interrupted by the user]"


class TurnCancelled(HarnessError):
    """The turn was cancelled by its owner; the conversation is left consistent."""

    def __init__(self, reason: str = "the turn was cancelled") -> None:
        super().__init__(reason, "TURN_CANCELLED")


class AgentLoop:
    """One conversation with one model: ``run_turn`` per user message."""

    def __init__(
        self,
        *,
        model: ChatModel,
        tools: ToolRegistry,
        ui: UserInteraction,
        events: EventStream | None = None,
        system: str | None = None,
        messages: list[dict[str, Any]] | None = None,
        session_id: str | None = None,
        resume_rpc_ids: dict[str, str] | None = None,
        resume_continuations: dict[str, dict[str, Any]] | None = None,
        max_model_calls: int = MAX_MODEL_CALLS,
        agent: Any = None,
    ) -> None:
        self.model = model
        self.tools = tools
        self.ui = ui
        self.events = events or ui.events
        self.max_model_calls = max_model_calls
        self.agent = agent
        self.messages: list[dict[str, Any]] = []
        # rpc ids of batches that were pending when the session ended, by tool call id
        self._resume_rpc_ids: dict[str, str] = {}
        # what those batches' askers stored to carry on (an MCP call's requestState)
        self._resume_continuations: dict[str, dict[str, Any]] = {}
        self.reset(session_id, messages=messages, system=system, resume_rpc_ids=resume_rpc_ids,
                   resume_continuations=resume_continuations)

    @property
    def session_id(self) -> str | None:
        """The session of this conversation, held by the seam so question events name it."""
        return self.ui.session_id

    @property
    def system(self) -> str | None:
        """The system prompt, if the conversation has one."""
        first = self.messages[0] if self.messages else {}
        return first.get("content") if first.get("role") == "system" else None

    def reset(
        self,
        session_id: str | None = None,
        *,
        messages: list[dict[str, Any]] | None = None,
        system: str | None = None,
        resume_rpc_ids: dict[str, str] | None = None,
        resume_continuations: dict[str, dict[str, Any]] | None = None,
    ) -> None:
        """Start the conversation over: ``messages`` (a stored session's) or none.

        The system prompt is ``system``, else the one the conversation had; ``session_id``
        (when given) becomes the seam's; ``resume_rpc_ids`` maps a tool call left open to
        the ``rpc_id`` of its batch, so a resumed session re-asks it under the same id, and
        ``resume_continuations`` to what the batch's asker stored to carry on with.
        """
        system = system if system is not None else self.system
        self.messages = list(messages or [])
        if system and not (self.messages and self.messages[0].get("role") == "system"):
            self.messages.insert(0, {"role": "system", "content": system})
        if session_id is not None:
            self.ui.session_id = session_id
        self._resume_rpc_ids = dict(resume_rpc_ids or {})
        self._resume_continuations = dict(resume_continuations or {})

    def pending_tool_calls(self) -> list[ModelToolCall]:
        """Tool calls of the last assistant message that have no result yet (resume)."""
        return pending_tool_calls(self.messages)

    async def run_turn(self, content: str | None, signal: AbortSignal | None = None) -> str:
        """Add the user message (if any), run until the model answers without tools.

        With ``content`` None the loop first completes tool calls left without a result
        (a resumed session), then carries on. Before each model call the outcomes of async
        batches that have arrived are added as user messages naming their tickets
        (``interaction/later.py``); ``content`` None with such outcomes waiting is how an
        idle conversation takes them up. Returns the final assistant text.
        """
        signal = signal or AbortSignal()
        if content is not None:
            self._add(UserMessage(content))
        leftover = self.pending_tool_calls()
        if leftover:
            await self._run_tool_calls(leftover, signal)
        for _ in range(self.max_model_calls):
            if signal.aborted:
                raise TurnCancelled(signal.reason or "the turn was cancelled")
            await self.ui.later.collect()
            self.deliver_arrivals()
            completion = await self._model_turn(signal)
            if not completion.tool_calls:
                self.events.emit(TurnCompleted(self.session_id))
                return completion.content
            await self._run_tool_calls(completion.tool_calls, signal)
        raise ModelError(
            f"the model made {self.max_model_calls} calls in one turn without finishing",
            "TURN_LIMIT",
        )

    def deliver_arrivals(self) -> int:
        """Add the arrived async outcomes as user messages; how many."""
        arrived = self.ui.later.take_arrived()
        for ticket, content in arrived:
            self._add(UserMessage(content, ticket=ticket))
        return len(arrived)

    async def _model_turn(self, signal: AbortSignal) -> Completion:
        """Stream one assistant message; a cancel keeps the text that had arrived.

        The stream is consumed by one task raced once against the abort signal (not a
        race per chunk: that cost a fifth of the loop's overhead). A failed stream adds
        nothing to the conversation, so the next turn can simply retry.
        """
        parts: list[str] = []
        completion: Completion | None = None
        stream = self.model.stream(self._messages_for_model(), self.tools.specs())

        async def consume() -> None:
            nonlocal completion
            async for item in stream:
                if isinstance(item, ModelText):
                    parts.append(item.text)
                    self.events.emit(AssistantDelta(item.text))
                elif isinstance(item, ModelReasoning):
                    self.events.emit(ReasoningDelta(item.text))
                elif isinstance(item, Completion):
                    completion = item

        task = asyncio.ensure_future(consume())
        abort_wait = asyncio.ensure_future(signal.wait())
        try:
            await asyncio.wait({task, abort_wait}, return_when=asyncio.FIRST_COMPLETED)
            if not task.done():
                await close_task(task)
                self._record_partial("".join(parts), interrupted=True)
                raise TurnCancelled(signal.reason or "the turn was cancelled")
            try:
                task.result()
            except ModelError as error:  # a turn cut at the content cap keeps its text
                self._record_partial(error.partial or "")
                raise
        finally:
            abort_wait.cancel()
            await close_task(task)
            with contextlib.suppress(Exception):  # errors only: a stop is never swallowed
                await stream.aclose()  # type: ignore[attr-defined]
        if completion is None:
            raise ModelError("the model stream ended without a complete message")
        self._add(AssistantMessage(completion.content,
                                   [call.to_json() for call in completion.tool_calls]))
        return completion

    def _record_partial(self, text: str, *, interrupted: bool = False) -> None:
        """Keep what had arrived before a stream stopped, as a plain assistant message;
        a reply the user stopped ends with ``INTERRUPTED_MARKER``."""
        if not text:
            return
        self._add(AssistantMessage(text + (INTERRUPTED_MARKER if interrupted else ""), []))

    def set_model(self, model: ChatModel) -> None:
        """The model for the next turn on; the conversation so far is kept."""
        self.model = model

    def _messages_for_model(self) -> list[dict[str, Any]]:
        return list(self.messages)  # models must not change what they are given

    async def _run_tool_calls(self, calls: list[ModelToolCall], signal: AbortSignal) -> None:
        """One at a time, in order; after a cancel the rest get ``ABORTED_BEFORE_DISPATCH``."""
        for call in calls:
            self.events.emit(ToolStarted(call.id, call.name, call.arguments))
            # the call's own signal (its work may seal it), hooked to the turn's only while
            # the call runs: a turn of many calls keeps no listener per call on its signal
            with signal.scoped_child() as call_signal:
                ctx = ToolContext(
                    user_interaction=self.ui,
                    signal=call_signal,
                    agent=self.agent,
                    call_id=call.id,
                    session_id=self.session_id,
                    rpc_id=self._resume_rpc_ids.pop(call.id, None),
                    continuation=self._resume_continuations.pop(call.id, None),
                )
                # A cancelled task (the process is being stopped) records nothing: the call
                # stays open so a resumed session asks the same question again.
                result = await self.tools.execute(call.name, call.arguments, ctx)
            self._record_result(call, result)
        if signal.aborted:
            raise TurnCancelled(signal.reason or "the turn was cancelled")

    def _record_result(self, call: ModelToolCall, result: ToolResult) -> None:
        self._add(ToolResultEvent(call.id, call.name, result.content, result.error))

    def _add(self, event: UserMessage | AssistantMessage | ToolResultEvent) -> None:
        """Keep the event's message, then emit it: the store writes the same message."""
        self.messages.append(message_of(event))
        self.events.emit(event)
