"""The server's side of the desk channel: desks connect, get the batches, answer them.

Every connected desk gets a ``JsonLinesRelay`` (question events only) over its socket, so
answers and cancels reach the pending table exactly as they do from ``dsh ask --jsonl``:
first valid response wins, a bad one leaves the batch pending. ``question/requested``
carries the batch's ``source`` (who asks). A desk that goes away leaves its batch pending
for the next one, which asks for a replay and gets it under the same ``rpc_id``.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import socket
import struct
from collections.abc import Callable
from pathlib import Path
from typing import IO, Any, ClassVar, cast

from dsh_cli.core.errors import NO_PROVIDER, UserInteractionError
from dsh_cli.core.events import Event, QuestionRequested
from dsh_cli.desk.channel import PeerRefused, check_peer, listen, peer_uid, socket_path
from dsh_cli.interaction import (
    AskContext,
    AskUserQuestionAnswer,
    UserInteraction,
)
from dsh_cli.providers.relay import JsonLinesRelay

__all__ = ["NO_DESK", "DeskHello", "DeskHub", "DeskProvider", "SourcedQuestionRequested"]

NO_DESK = "no one is at the dsh desk: run `dsh attach` in a terminal"
SEND_TIMEOUT = 5.0  # a desk that stops reading is dropped, never waited on forever


class SourcedQuestionRequested(QuestionRequested):
    """``question/requested`` as a desk sees it: its ``source`` is ``{client, cwd, pid}``."""


class DeskHello(Event):
    """The first line on every desk connection: which server this is, its browser URL."""

    type: ClassVar[str] = "desk/hello"
    pid: int
    cwd: str
    web_url: str | None = None


class _DeskRelay(JsonLinesRelay):
    """The relay over one desk socket; it labels each batch with who asks."""

    def __init__(self, ui: UserInteraction, sock: socket.socket, output: IO[bytes],
                 sources: dict[str, dict[str, Any]]) -> None:
        super().__init__(ui, input=sock.fileno(), output=output, questions_only=True)
        self._sources = sources

    def write(self, event: Event) -> None:
        if isinstance(event, QuestionRequested) and not isinstance(event, SourcedQuestionRequested):
            source = self._sources.get(event.rpc_id, {"client": None, "cwd": os.getcwd(),
                                                      "pid": os.getpid()})
            event = SourcedQuestionRequested(event.rpc_id, event.session_id, event.call_id,
                                             event.questions, source, event.declinable,
                                             event.review)
        super().write(event)


class DeskHub:
    """Listens on this server's socket and relays the batches to every desk attached."""

    def __init__(self, ui: UserInteraction, *, relay_questions: bool = True,
                 web_url: str | None = None, report: Callable[[str], None] | None = None,
                 path: Path | None = None) -> None:
        self.ui = ui
        self.sources: dict[str, dict[str, Any]] = {}
        self.relay_questions = relay_questions
        self.web_url = web_url
        self.path = path or socket_path()
        self._report = report or (lambda line: None)
        self._listener: socket.socket | None = None
        self._accepting: asyncio.Task[None] | None = None
        self._desks: set[asyncio.Task[None]] = set()
        self._connected = 0
        self._changed = asyncio.Event()

    @property
    def connected(self) -> int:
        """How many desks are attached right now."""
        return self._connected

    async def start(self) -> None:
        self._listener = listen(self.path)
        self._listener.setblocking(False)
        self._accepting = asyncio.create_task(self._accept(), name="dsh-desk-accept")

    async def wait_for_desk(self, seconds: float) -> bool:
        """True once a desk is attached, False when ``seconds`` pass without one."""
        loop = asyncio.get_running_loop()
        end = loop.time() + seconds
        while not self._connected:
            left = end - loop.time()
            if left <= 0:
                return False
            self._changed.clear()
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._changed.wait(), left)
        return True

    async def close(self) -> None:
        """Stop listening, drop every desk, remove the socket file."""
        if self._accepting is not None:
            self._accepting.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._accepting
        for task in list(self._desks):
            task.cancel()
        for task in list(self._desks):
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await task
        if self._listener is not None:
            self._listener.close()
            self._listener = None
            with contextlib.suppress(OSError):
                self.path.unlink()

    async def _accept(self) -> None:
        loop = asyncio.get_running_loop()
        assert self._listener is not None
        while True:
            conn, _ = await loop.sock_accept(self._listener)
            try:
                check_peer(peer_uid(conn))
            except PeerRefused as refused:
                self._report(str(refused))
                conn.close()
                continue
            task = asyncio.create_task(self._serve(conn), name="dsh-desk")
            self._desks.add(task)
            task.add_done_callback(self._desks.discard)

    async def _serve(self, conn: socket.socket) -> None:
        """One desk, until it hangs up; its pending batches stay for the next desk."""
        conn.setblocking(True)  # read by the relay's thread, written in small lines
        seconds, micro = int(SEND_TIMEOUT), int((SEND_TIMEOUT % 1) * 1e6)
        conn.setsockopt(socket.SOL_SOCKET, socket.SO_SNDTIMEO, struct.pack("ll", seconds, micro))
        output = cast("IO[bytes]", conn.makefile("wb", buffering=0))  # a raw SocketIO
        relay = _DeskRelay(self.ui, conn, output, self.sources)
        relay.write(DeskHello(os.getpid(), os.getcwd(), self.web_url))
        self._connected += 1
        self._changed.set()
        try:
            if self.relay_questions:
                await relay.start()
                await relay.eof.wait()
            else:
                await _until_closed(conn)
        finally:
            self._connected -= 1
            self._changed.set()
            await relay.close()
            with contextlib.suppress(OSError):
                conn.shutdown(socket.SHUT_RDWR)  # ends the relay thread's blocking read
            output.close()
            conn.close()


async def _until_closed(conn: socket.socket) -> None:
    """Wait for a desk that only listens (a ``--web`` server relays no batches) to leave."""
    loop = asyncio.get_running_loop()
    closed = loop.create_future()

    def readable() -> None:
        try:
            data = conn.recv(4096, socket.MSG_DONTWAIT)
        except BlockingIOError:
            return
        except OSError:
            data = b""
        if not data and not closed.done():
            closed.set_result(None)

    loop.add_reader(conn.fileno(), readable)
    try:
        await closed
    finally:
        loop.remove_reader(conn.fileno())


class DeskProvider:
    """Answers come from a desk through the pending table; with no desk, ``NO_PROVIDER``."""

    def __init__(self, hub: DeskHub, *, wait: float = 0.0,
                 alert: Callable[[], None] | None = None) -> None:
        self.hub = hub
        self.wait = wait
        self._alert = alert

    async def ask(self, context: AskContext) -> AskUserQuestionAnswer:
        if not self.hub.connected:
            if self.wait > 0 and self._alert is not None:
                self._alert()
            if self.wait <= 0 or not await self.hub.wait_for_desk(self.wait):
                raise UserInteractionError(NO_DESK, NO_PROVIDER)
        await asyncio.get_running_loop().create_future()  # a desk settles it, or the seam does
        raise AssertionError("unreachable")
