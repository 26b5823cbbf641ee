"""``JsonLinesRelay``: a controlling program answers over JSON lines (``spec/relay.md``).

The relay writes every protocol event of ``ui.events`` to ``output`` as one flushed JSON
line and reads frames from ``input``. Each line goes to the ``FrameDispatcher`` the web host
uses too (``providers/frames.py``): answers and cancels reach the pending table
(``ui.pending``), which settles the batch first-wins; the relay writes the events the
dispatcher returns (the ``response/ack``, or an ``error`` for a bad frame), and the seam
then emits ``question/resolved``. The relay's provider therefore only waits: it gives up
with ``ASK_ABORTED`` ("input closed") when stdin ends, which is how a batch pending at end
of input is aborted.

Permission requests go the same way through their own table: ``relay.permissions`` is the
session's permission provider (register it on the ``PermissionGate``, whose events stream
must be ``ui.events``); ``permission/decision`` frames settle it, and at end of input its
pending requests are aborted too.

    relay = JsonLinesRelay(ui, input=sys.stdin, output=sys.stdout)
    ui.register_provider(relay.provider)
    gate.register_provider(relay.permissions)   # a gate built with events=ui.events
    await relay.start()
    ...
    await relay.close()
"""

from __future__ import annotations

import asyncio
import contextlib
import io
import json
from typing import IO, Any

from dsh_cli.core.events import Event
from dsh_cli.interaction import (
    ASK_ABORTED,
    AskContext,
    AskUserQuestionAnswer,
    UserInteraction,
    UserInteractionError,
)
from dsh_cli.permissions.pending import RemotePermissions
from dsh_cli.providers.frames import BadFrame, FrameDispatcher
from dsh_cli.providers.line_reader import LineReader

__all__ = ["PROTOCOL_EVENTS", "QUESTION_EVENTS", "JsonLinesRelay", "RelayProvider"]

# The events of relay.md; anything else on the stream (e.g. the store's user/message
# record, reasoning text) is not part of the protocol and is not written.
PROTOCOL_EVENTS = frozenset({
    "session/started", "assistant/delta", "assistant/message", "tool/started",
    "question/requested", "response/ack", "question/resolved", "tool/result",
    "permission/requested", "permission/resolved", "turn/completed", "error",
})
QUESTION_EVENTS = frozenset({"question/requested", "response/ack", "question/resolved", "error"})


class RelayProvider:
    """The relay's side of the seam: waits while the controller settles through the table."""

    def __init__(self, relay: JsonLinesRelay) -> None:
        self._relay = relay

    async def ask(self, context: AskContext) -> AskUserQuestionAnswer:
        await self._relay.eof.wait()
        raise UserInteractionError("input closed", ASK_ABORTED)


class JsonLinesRelay:
    """Events out as JSON lines, frames in; ``questions_only`` for ``dsh ask --jsonl``."""

    def __init__(self, ui: UserInteraction, input: IO[str] | IO[bytes] | int,
                 output: IO[str] | IO[bytes], *, questions_only: bool = False) -> None:
        self.ui = ui
        self.output = output
        self.questions_only = questions_only
        self.provider = RelayProvider(self)
        self.permissions = RemotePermissions()
        self.eof = asyncio.Event()
        # undecodable bytes survive as surrogates so the frame can be refused, not guessed at
        self._lines = LineReader(input, errors="surrogateescape")
        self._messages: asyncio.Queue[str | None] = asyncio.Queue()
        # dsh ask takes no user/message: without a hook the dispatcher refuses it
        self._frames = FrameDispatcher(
            ui.pending, None if questions_only else self._messages.put_nowait,
            None if questions_only else self.permissions)
        self._unsubscribe: Any = None
        self._reader: asyncio.Task[None] | None = None
        self._output_broken = False

    async def start(self) -> None:
        """Write events from now on and start reading frames."""
        if self._reader is not None:
            return
        self._unsubscribe = self.ui.events.subscribe(self._on_event)
        self._reader = asyncio.create_task(self._read_frames(), name="dsh-relay-reader")

    async def next_user_message(self) -> str | None:
        """The next queued ``user/message`` content; None once stdin has ended."""
        message = await self._messages.get()
        if message is None:
            self._messages.put_nowait(None)  # every later call sees the end too
        return message

    async def close(self) -> None:
        """Stop writing and reading; pending batches are the seam's to settle."""
        if self._unsubscribe is not None:
            self._unsubscribe()
            self._unsubscribe = None
        self._lines.close()
        if self._reader is not None:
            self._reader.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._reader
            self._reader = None

    def _on_event(self, event: Event) -> None:
        allowed = QUESTION_EVENTS if self.questions_only else PROTOCOL_EVENTS
        if event.type in allowed:
            self.write(event)

    def write(self, event: Event) -> None:
        """One event as one flushed JSON line (ASCII-escaped, so no byte can split it)."""
        if self._output_broken:
            return
        line = json.dumps(event.to_json(), ensure_ascii=True, separators=(",", ":")) + "\n"
        try:
            if isinstance(self.output, io.RawIOBase | io.BufferedIOBase):
                self.output.write(line.encode("ascii"))
            else:
                self.output.write(line)  # type: ignore[call-overload]
            self.output.flush()
        except (BrokenPipeError, ValueError, OSError):
            # The controller stopped reading: nothing more can reach it, and the run
            # must not fail on that; end of stdin is what ends the conversation.
            self._output_broken = True

    async def _read_frames(self) -> None:
        try:
            while True:
                line = await self._lines.readline()
                if line is None:
                    break
                if line.strip():
                    self._dispatch(line)
        finally:
            self._end_of_input()

    def _end_of_input(self) -> None:
        if not self.eof.is_set():
            self.eof.set()
            self.permissions.close("input closed")
            self._messages.put_nowait(None)

    def _dispatch(self, line: str) -> None:
        try:
            replies = self._frames.dispatch(line)
        except BadFrame as error:
            replies = [error.event()]
        for event in replies:
            self.write(event)
