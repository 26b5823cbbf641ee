"""One ``ask_user_question`` call through ``dsh mcp``: validated, asked, recorded, answered.

The call goes through the same ``ToolRegistry`` and ``AskUserQuestionTool`` as the
model-facing tool, so decoding, validation, error codes and the result text are exactly
theirs. Around it: who asks (the batch's ``source``), progress while the human thinks,
and the session record (one session per ``dsh mcp`` process, created at the first call).
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import json
import os
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any

from dsh_cli.core.errors import format_line
from dsh_cli.core.events import AssistantMessage, ToolResultEvent
from dsh_cli.core.ids import mint_rpc_id
from dsh_cli.core.signal import AbortSignal
from dsh_cli.tools.ask_user_question import AskUserQuestionTool
from dsh_cli.tools.registry import ToolContext, ToolRegistry, ToolResult

if TYPE_CHECKING:
    from dsh_cli.interaction import UserInteraction
    from dsh_cli.store import SessionStore

__all__ = ["PROGRESS_INTERVAL", "AskService", "Progress"]

TOOL_NAME = "ask_user_question"
PROGRESS_INTERVAL = 10.0  # seconds between progress notifications while a batch waits
WAITING = "waiting for the human at the dsh desk"

Progress = Callable[[float, float | None, str | None], Awaitable[None]]


class AskService:
    """Runs tool calls against one ``UserInteraction``; ``sources`` labels their batches."""

    def __init__(self, ui: UserInteraction, *, sources: dict[str, dict[str, Any]] | None = None,
                 store: SessionStore | None = None,
                 report: Callable[[str], None] | None = None) -> None:
        self.ui = ui
        self.sources = sources if sources is not None else {}
        self.registry = ToolRegistry([AskUserQuestionTool(later=False)])
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
                  progress: Progress | None = None) -> ToolResult:
        """Ask one batch for ``client``; any failure is a result carrying its code."""
        self.open_session(client)
        call_id = f"mcp_{next(self._calls)}"
        rpc_id = mint_rpc_id()
        self.sources[rpc_id] = {"client": client, "cwd": os.getcwd(), "pid": os.getpid()}
        self.emit(AssistantMessage("", [{"id": call_id, "name": TOOL_NAME,
                                          "arguments": _arguments_text(arguments)}]))
        ticker = asyncio.ensure_future(_tick(progress)) if progress is not None else None
        try:
            ctx = ToolContext(user_interaction=self.ui, signal=signal, call_id=call_id,
                              session_id=self.session_id, rpc_id=rpc_id)
            result = await self.registry.execute(TOOL_NAME, arguments, ctx)
        finally:
            if ticker is not None:
                ticker.cancel()
            self.sources.pop(rpc_id, None)
        self.emit(ToolResultEvent(call_id, TOOL_NAME, result.content, result.error))
        return result

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
