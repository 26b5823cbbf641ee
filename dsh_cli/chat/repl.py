"""The chat loop: read a message, run a turn, show it as it streams, back to the prompt.

``ctrl-c`` while the model streams aborts the turn's ``AbortSignal`` (the loop keeps the
partial text and raises ``TurnCancelled``) and returns to the prompt; while a question is
shown it is a key of the question UI, which cancels the batch (the model is told
``ASK_CANCELLED`` and carries on). ``ctrl-d`` on an empty prompt, or ``/exit``, ends.
"""

from __future__ import annotations

import asyncio
import contextlib
import signal
import threading
from collections.abc import Iterator
from typing import Any, Protocol, TextIO

from dsh_cli.agent import TurnCancelled
from dsh_cli.chat.commands import EXIT, RESUMED, run_command
from dsh_cli.core.errors import report
from dsh_cli.interaction import AbortSignal, HarnessError
from dsh_cli.transcript import TranscriptRenderer

__all__ = ["ChatRepl", "Prompt"]


class Prompt(Protocol):
    async def read(self) -> str | None: ...


class ChatRepl:
    """One interactive conversation over a ``Runtime`` (``dsh_cli.runtime``)."""

    def __init__(self, runtime: Any, prompt: Prompt, renderer: TranscriptRenderer, *,
                 errors: TextIO, handle_sigint: bool = True) -> None:
        self.runtime = runtime
        self.prompt = prompt
        self.renderer = renderer
        self.errors = errors
        self.handle_sigint = handle_sigint
        self._turn_signal: AbortSignal | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        # draw pending async batches: at the start and after each turn (True); said they
        # wait (None) once after drawing (False)
        self._draw_later: bool | None = True

    async def run(self) -> int:
        """Until ctrl-d or ``/exit``; a resumed session first re-asks its pending batch."""
        self._loop = asyncio.get_running_loop()
        with self._sigint():
            if self.runtime.has_pending_calls:
                await self.turn(None)
            while True:
                await self._take_up_later()
                line = await self._read()
                if line is None:
                    return 0
                text = line.strip()
                if not text:
                    continue
                if not text.startswith("/"):
                    await self.turn(line)
                    continue
                outcome = await run_command(self, text)
                if outcome is EXIT:
                    return 0
                if outcome is RESUMED and self.runtime.has_pending_calls:
                    await self.turn(None)

    async def _take_up_later(self) -> None:
        """At the end of a turn: arrived async answers start a turn; open batches are drawn
        (terminal, plain) until the human leaves one pending for the prompt."""
        later = self.runtime.ui.later
        while True:
            if later.has_arrived():
                await self.turn(None)
                continue
            if self._draw_later and later.drawn_here() and later.open():
                self._draw_later = False
                if await later.show_open():
                    continue
            if self._draw_later is False and later.open():
                count = len(later.open())
                self.renderer.line(f"{count} async question{'s' if count > 1 else ''} "
                                   "pending: /answer (or f2) to answer, /pending to list",
                                   dim=True)
                self._draw_later = None  # said once until the next turn
            return

    async def _read(self) -> str | None:
        """The prompt's next line; an async outcome arriving meanwhile (a timeout, a web
        answer) ends the read with "" and the prompt keeps what was typed."""
        interrupt = getattr(self.prompt, "interrupt", None)
        if interrupt is None:
            return await self.prompt.read()
        from dsh_cli.interaction.later import ARRIVED

        line = await self.runtime.ui.later.next_input(self.prompt.read, interrupt=interrupt)
        return "" if line is ARRIVED else line

    async def turn(self, content: str | None) -> None:
        """One turn; a cancel or a model error is reported and the chat goes on."""
        self._draw_later = True
        self._turn_signal = AbortSignal()
        try:
            await self.runtime.loop.run_turn(content, self._turn_signal)
        except TurnCancelled:
            self.renderer.line("(turn cancelled)", dim=True)
        except HarnessError as error:
            self.renderer.finish()
            report(error, self.errors)
        finally:
            self._turn_signal = None
            self.renderer.finish()

    def interrupt(self) -> None:
        """ctrl-c outside a question UI: stop the running turn, if any."""
        if self._turn_signal is not None:
            self._turn_signal.abort("cancelled by the user (ctrl-c)")

    @contextlib.contextmanager
    def _sigint(self) -> Iterator[None]:
        """SIGINT stops the turn instead of the process.

        A plain Python handler (not ``loop.add_signal_handler``) because prompt-toolkit
        saves and restores the Python-level handler around each prompt and question UI;
        an asyncio one would be lost after the first of them.
        """
        if not self.handle_sigint or threading.current_thread() is not threading.main_thread():
            yield
            return
        loop = asyncio.get_running_loop()

        def on_sigint(signum: int, frame: Any) -> None:
            loop.call_soon_threadsafe(self.interrupt)

        previous = signal.signal(signal.SIGINT, on_sigint)
        try:
            yield
        finally:
            signal.signal(signal.SIGINT, previous)
