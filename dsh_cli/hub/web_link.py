"""The browser desk's link to its own hub: the desk protocol in process, for one human.

A hub's browser page is the web desk's (``desk/web/desk.py``'s ``PageDesk``: its inbox, its
feed, its holds), and a ``PageDesk`` reads servers through ``ServerLink``s. ``SelfLink`` is
one whose lines are a ``DeskStream`` of this hub process (``hub/desks.py``: the human's
teams' pending entries, read from the store, each change as the watch hears it) and whose
frames go to ``DeskDoor.apply``, the code ``POST /desk`` runs: the same claims, the same
checks, the same one conditional update, a losing answer ``NOT_PENDING``. Only HTTP is
left out. Frames are applied one at a time, in the order sent, and their replies (acks,
errors) join the events as a ``POST /desk``'s do at ``HubLink``.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable
from pathlib import Path

from dsh_cli.core.errors import HUB_UNREACHABLE
from dsh_cli.core.limits import FRAME_BYTES
from dsh_cli.desk.link import DeskLinks, QueuedLink, ServerLink
from dsh_cli.desk.protocol import (
    BadFrame,
    DeskError,
    Encodable,
    Readable,
    Wire,
    encode,
    prepare,
    read_frame,
)
from dsh_cli.hub.desks import DeskDoor, DeskStream
from dsh_cli.hub.records import HubStoreError, Token

__all__ = ["SelfLink", "SelfLinks"]

QUEUED_FRAMES = 64  # frames waiting their turn; past it one is refused at once
_END = b""


class SelfLink(QueuedLink):
    """One human's ``DeskStream`` in this process, and ``DeskDoor.apply`` for what is sent."""

    def __init__(self, door: DeskDoor, human: Token) -> None:
        super().__init__(Path(f"hub:{human.name}"))
        self.door = door
        self.human = human
        self.stream = DeskStream(door.hub, human)
        door.streams[self.stream.connection] = self.stream
        self._unsubscribe = door.hub.watch.subscribe(self.stream.heed)
        self._frames: asyncio.Queue[Readable] = asyncio.Queue(QUEUED_FRAMES)
        self._closed = False
        self._reading = asyncio.ensure_future(self._read())
        self._applying = asyncio.ensure_future(self._apply())

    @property
    def closed(self) -> bool:
        return self._closed

    def send_line(self, line: bytes) -> None:
        """One line made by ``protocol.encode``, applied in turn."""
        if self._closed:
            return
        try:
            if len(line) > FRAME_BYTES + 1:
                raise BadFrame(f"a frame is at most {FRAME_BYTES} bytes")
            frame = read_frame(line.rstrip(b"\n"))
        except BadFrame as error:
            self._said(DeskError(code=error.code, message=error.message))
            return
        try:
            self._frames.put_nowait(frame)
        except asyncio.QueueFull:
            self._said(DeskError(code=HUB_UNREACHABLE,
                                 message="the hub is not taking frames: one was dropped"))

    def _said(self, reply: Encodable) -> None:
        """A reply of our own, among the events (after what is queued)."""
        task = asyncio.ensure_future(self._lines.put(encode(reply)))
        task.add_done_callback(lambda done: done.cancelled() or done.exception())

    def close(self) -> None:
        """Stop the stream, let go of the claims made through it (as a desk hanging up)."""
        if self._closed:
            return
        self._closed = True
        self._reading.cancel()
        self._applying.cancel()
        self._unsubscribe()
        self.door.streams.pop(self.stream.connection, None)
        self.door.release_claims(self.stream)
        with contextlib.suppress(asyncio.QueueFull):
            self._lines.put_nowait(_END)

    async def _read(self) -> None:
        async for line in self.stream.lines():
            await self._lines.put(line)

    async def _apply(self) -> None:
        while True:
            frame = await self._frames.get()
            try:
                replies = await self.door.apply(frame, self.human, self.stream)
            except HubStoreError as error:  # the store is away: nothing changed, say so
                self.door.hub.report(f"{error.code}: {error.message}")
                replies = [DeskError(code=error.code, message=error.message)]
            for reply in replies:
                await self._lines.put(encode(reply))


class SelfLinks(DeskLinks):
    """The one ``SelfLink`` of a human's browser desk, in place of the directory's servers."""

    def __init__(self, on_event: Callable[[ServerLink, Wire], None],
                 on_closed: Callable[[ServerLink], None], *, door: DeskDoor,
                 human: Token) -> None:
        super().__init__(on_event, on_closed, directory=Path("/"), report=door.hub.report)
        self.door = door
        self.human = human

    async def run(self) -> None:
        prepare()
        link = SelfLink(self.door, self.human)
        self.links[link.path] = link
        try:
            await self._follow(link)
        finally:
            link.close()

    async def scan(self) -> None:
        """Nothing to scan: the one link is made by ``run``."""
