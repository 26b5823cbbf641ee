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

Events to a real descriptor go through a ``PipeWriter`` (``providers/pipe_writer.py``), so
a controller that stops reading never blocks the event loop. One that takes nothing for
``stall`` seconds while events wait (or closes its end) is gone: its input ends the way
end of stdin does, with the reason, so its pending batches are aborted. A line longer than
``MAX_FRAME_BYTES`` is not buffered: it is skipped to its newline and refused as
``BAD_FRAME``.

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
import math
from collections.abc import Mapping
from typing import IO, Any, Protocol

from dsh_cli.core.events import Event
from dsh_cli.core.json_lines import json_line
from dsh_cli.interaction import (
    ASK_ABORTED,
    AskContext,
    AskUserQuestionAnswer,
    UserInteraction,
    UserInteractionError,
)
from dsh_cli.interaction.traits import AnsweredThroughTable
from dsh_cli.permissions.pending import RemotePermissions
from dsh_cli.providers.frames import MAX_FRAME_BYTES, BadFrame, FrameDispatcher
from dsh_cli.providers.line_reader import LineReader, LineTooLong
from dsh_cli.providers.pipe_writer import DEFAULT_STALL, PipeWriter, descriptor_of

__all__ = ["PROTOCOL_EVENTS", "QUESTION_EVENTS", "JsonLinesRelay", "RelayProvider",
           "controller_timeout"]

# The events of relay.md; anything else on the stream (e.g. the store's user/message
# record, reasoning text) is not part of the protocol and is not written.
PROTOCOL_EVENTS = frozenset({
    "session/started", "assistant/delta", "assistant/message", "tool/started",
    "question/requested", "response/ack", "question/resolved", "tool/result",
    "permission/requested", "permission/resolved", "turn/completed", "error",
})
QUESTION_EVENTS = frozenset({"question/requested", "response/ack", "question/resolved", "error"})


def controller_timeout(environ: Mapping[str, str]) -> float:
    """``DSH_CONTROLLER_TIMEOUT`` seconds, or the default when unset or not a positive number."""
    try:
        seconds = float(environ.get("DSH_CONTROLLER_TIMEOUT", ""))
    except ValueError:
        return DEFAULT_STALL
    return seconds if seconds > 0 and math.isfinite(seconds) else DEFAULT_STALL


class Record(Protocol):
    """What the relay writes: an event, or a frame of a protocol spoken on the same stream
    (a desk's, ``desk/protocol.py``)."""

    def to_json(self) -> dict[str, Any]: ...


class RelayProvider(AnsweredThroughTable):
    """The relay's side of the seam: waits while the controller settles through the table."""

    # the provenance the store keeps with each answer, which comes through the table
    answered_through_table = "controller"

    def __init__(self, relay: JsonLinesRelay) -> None:
        self._relay = relay

    async def ask(self, context: AskContext) -> AskUserQuestionAnswer:
        await self._relay.eof.wait()
        raise UserInteractionError(self._relay.end_reason, ASK_ABORTED)


class JsonLinesRelay:
    """Events out as JSON lines, frames in; ``questions_only`` for ``dsh ask --jsonl``."""

    def __init__(self, ui: UserInteraction, input: IO[str] | IO[bytes] | int,
                 output: IO[str] | IO[bytes], *, questions_only: bool = False,
                 stall: float = DEFAULT_STALL) -> None:
        self.ui = ui
        self.output = output
        self.questions_only = questions_only
        self.stall = stall  # seconds a controller may leave events unread before it is gone
        self.provider = RelayProvider(self)
        self.permissions = RemotePermissions()
        self.eof = asyncio.Event()
        self.end_reason = "input closed"  # what a batch pending at the end is aborted with
        # undecodable bytes survive as surrogates so the frame can be refused, not guessed at
        self._lines = LineReader(input, errors="surrogateescape", max_line=MAX_FRAME_BYTES)
        self._pipe: PipeWriter | None = None
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
        fd = descriptor_of(self.output)
        if fd is not None:
            with contextlib.suppress(OSError, ValueError):
                self.output.flush()  # anything already buffered goes first, in order
            self._pipe = PipeWriter(fd, stall=self.stall, on_gone=self._controller_gone)
        self._unsubscribe = self.ui.events.subscribe(self._on_event)
        self._reader = asyncio.create_task(self._read_frames(), name="dsh-relay-reader")

    async def next_user_message(self) -> str | None:
        """The next queued ``user/message`` content; None once stdin has ended."""
        message = await self._messages.get()
        if message is None:
            self._messages.put_nowait(None)  # every later call sees the end too
        return message

    async def close(self) -> None:
        """Stop writing and reading; pending batches are the seam's to settle.

        Events still queued are flushed first: for up to ``stall`` seconds on a normal
        exit, for a moment only while a signal unwinds the process (it must end now).
        """
        if self._unsubscribe is not None:
            self._unsubscribe()
            self._unsubscribe = None
        if self._pipe is not None:
            task = asyncio.current_task()
            ending = task is not None and task.cancelling() > 0
            await self._pipe.flush(0.2 if ending else self.stall)
            self._pipe.close()  # its thread ends with it
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

    def write(self, event: Record) -> None:
        """One event as one flushed JSON line (ASCII-escaped, so no byte can split it)."""
        if self._output_broken:
            return
        line = json_line(event.to_json(), ascii_only=True)
        if self._pipe is not None:
            self._pipe.write(line.encode("ascii"))
            return
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

    def _controller_gone(self, reason: str) -> None:
        """The controller takes no more events: like end of stdin, with why."""
        self._output_broken = True
        if not self.eof.is_set():
            self.end_reason = f"the controller stopped reading ({reason})"
        self._end_of_input()

    async def _read_frames(self) -> None:
        try:
            while True:
                try:
                    line = await self._lines.readline()
                except LineTooLong as error:
                    self.write(BadFrame(f"a frame is at most {error.limit} bytes: the rest "
                                        "of this line is skipped").event())
                    continue
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
