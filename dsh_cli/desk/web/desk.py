"""``WebDesk``: the inbox served to a browser on 127.0.0.1, answered through each server.

The desk is a proxy between the page and every ``dsh mcp``: an answer, a cancel, a
decline or a permission decision from the page goes to the server that asked, through
that batch's own link and naming the batch's ``session_id`` (the one ownership rule,
``core/ownership.py``, is the server's to check), and the page's reply is the server's own
``response/ack``. Opening an entry in a tab holds it (``desk/opened`` to its server,
which marks it taken at every other desk) while any tab's event stream has it open: the
last tab to go back to the list, or to close, releases it (``desk/released``); the other
desks' holds reach the list as ``taken``. A server that
does not reply within ``ACK_WAIT`` seconds, or goes away
meanwhile, is a 504 the page shows. The same token, cookie, Host, Origin and CSRF rules
as ``dsh web`` guard every request (``providers/web/app.py``'s ``Guard``).
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable
from pathlib import Path
from typing import Any, TextIO

from dsh_cli.core.errors import BAD_FRAME
from dsh_cli.core.limits import FRAME_BYTES
from dsh_cli.core.outcomes import Outcome
from dsh_cli.desk.client import GONE, DeskClient, DeskScreen, MakeLinks, Resolved
from dsh_cli.desk.hub_link import HubAddress
from dsh_cli.desk.inbox import Entry, Inbox
from dsh_cli.desk.link import ServerLink
from dsh_cli.desk.protocol import (
    BadFrame,
    DeskAck,
    DeskAnswer,
    DeskCancel,
    DeskDecision,
    DeskDecline,
    DeskError,
    DeskOpened,
    DeskPermissionResolved,
    DeskQuestionResolved,
    DeskReleased,
    Readable,
    encode,
    kind,
    read_page_frame,
)
from dsh_cli.desk.web.app import Refused
from dsh_cli.desk.web.feed import DeskFeed
from dsh_cli.interaction.pending import NOT_PENDING
from dsh_cli.providers.web.server import WebServer

__all__ = ["ACK_WAIT", "AGE_TICK", "PageDesk", "WebDesk"]

ACK_WAIT = 10.0  # seconds a server has to acknowledge what the page sent it
AGE_TICK = 5.0  # seconds between list refreshes while anything is pending (its ages)
# what the page may send a server (a desk has no conversation to discuss a batch in), and
# the page's holds: it opened an entry, or went back to the list
Forwarded = DeskAnswer | DeskCancel | DeskDecline | DeskDecision
Held = DeskOpened | DeskReleased


class PageDesk(DeskScreen):
    """Every server's pending entries as the page sees them, and what the page sends them;
    served by a ``WebDesk`` (``dsh attach --web``) or by a hub itself (``hub/web.py``)."""

    def __init__(self, *, report: Callable[[str], None], directory: Path | None = None,
                 hub: HubAddress | None = None, make_links: MakeLinks | None = None) -> None:
        links: dict[str, Any] = {} if make_links is not None \
            else {"report": report, "directory": directory}
        self.client = DeskClient(self, hub=hub, make_links=make_links, **links)
        self.inbox: Inbox = self.client.inbox
        self.feed = DeskFeed(self.inbox)
        # per server: the rpc_id of the one frame in flight and where its reply goes
        self._replies: dict[ServerLink, tuple[str, asyncio.Future[DeskAck | DeskError]]] = {}
        self._sending: dict[ServerLink, asyncio.Lock] = {}
        # page id -> the event streams (tabs) that have the entry open: held while any does
        self._holding: dict[str, set[str]] = {}
        self._renewing: dict[str, asyncio.Task[None]] = {}  # page id -> its hold's renewal
        self.feed.on_disconnect = self._connection_gone

    async def follow(self) -> None:
        """Follow every server (and keep the ages true) until cancelled; then close."""
        watching = asyncio.create_task(self.client.run(), name="dsh-desk-scan")
        ticking = asyncio.create_task(self._tick(), name="dsh-desk-ages")
        try:
            await asyncio.gather(watching, ticking)
        finally:
            for task in (watching, ticking):
                task.cancel()
            for task in (watching, ticking):
                with contextlib.suppress(asyncio.CancelledError, Exception):
                    await task
            await self.close()

    async def close(self) -> None:
        for page_rpc_id in list(self._renewing):
            self._let_go(page_rpc_id)
        self.feed.close()
        for _, slot in self._replies.values():
            if not slot.done():
                slot.set_exception(Refused(503, "the web desk is closing"))
        self._replies.clear()

    async def _tick(self) -> None:
        while True:
            await asyncio.sleep(AGE_TICK)
            if len(self.inbox) and self.feed.connections:
                self.feed.list_changed()

    # -- what the servers say -----------------------------------------------------------

    def added(self, entry: Entry) -> None:
        self.feed.entry_added(entry)

    def reason(self, link: ServerLink, event: Resolved) -> str:
        return str(event.outcome)

    def resolved(self, link: ServerLink, event: Resolved, entry: Entry | None) -> None:
        if entry is not None:
            self._let_go(self.feed.page_id(entry))
            self.feed.entry_removed(entry, event.to_json())

    def marked(self, entry: Entry) -> None:
        self.feed.list_changed()

    def reply(self, link: ServerLink, event: DeskAck | DeskError) -> None:
        if link in self._replies:
            waiting, slot = self._replies[link]
            if isinstance(event, DeskError) or event.rpc_id == waiting:
                del self._replies[link]
                if not slot.done():
                    slot.set_result(event)

    def gone(self, link: ServerLink, entries: list[Entry]) -> None:
        for entry in entries:
            self._let_go(self.feed.page_id(entry))
            resolved = DeskPermissionResolved if entry.kind == "permission" \
                else DeskQuestionResolved
            gone = resolved(rpc_id=entry.rpc_id, outcome=Outcome.ABORTED.event, message=GONE)
            self.feed.entry_removed(entry, gone.to_json())
        self._sending.pop(link, None)
        waiting = self._replies.pop(link, None)
        if waiting is not None and not waiting[1].done():
            waiting[1].set_exception(Refused(504, f"the dsh mcp that asked went away ({GONE})"))

    # -- what the page says -------------------------------------------------------------

    def entry(self, page_rpc_id: Any) -> Entry | None:
        """The entry a page id (``n<number>-<run>``) names, while it is pending."""
        return self.feed.numbered(page_rpc_id)

    async def respond(self, body: bytes) -> dict[str, Any]:
        """One frame from the page, through its batch's own server: the server's ack."""
        frame = _page_frame(body)
        page_rpc_id = frame.rpc_id
        entry = self.entry(page_rpc_id)
        if entry is None:
            return DeskAck(rpc_id=page_rpc_id, accepted=False, reason=NOT_PENDING,
                           message=f"no pending entry {page_rpc_id}").to_json()
        if isinstance(frame, Held):  # no ack: the other desks hear it from the server
            if frame.connection is None or not self.feed.live(frame.connection):
                raise Refused(400, f"{frame.type} names no open event stream of this desk "
                                   "(connection)", BAD_FRAME)
            self._hold(entry, page_rpc_id, frame.connection, isinstance(frame, DeskOpened))
            return DeskAck(rpc_id=page_rpc_id, accepted=True).to_json()
        line = encode(frame.model_copy(update={"rpc_id": entry.rpc_id}))
        if len(line) > FRAME_BYTES:  # the server would refuse it: say so now
            raise Refused(413, f"the frame is more than {FRAME_BYTES} bytes", BAD_FRAME)
        # one frame in flight per server: its reply (an ack, or an error, which names no
        # rpc_id) is then that frame's, whatever else is pending; a frame whose wait ran
        # out keeps its slot until its late reply comes, so no later frame is given it
        link = entry.link
        try:
            async with asyncio.timeout(ACK_WAIT), self._sending.setdefault(link, asyncio.Lock()):
                earlier = self._replies.get(link)
                if earlier is not None:
                    await asyncio.shield(earlier[1])
                if link.closed:
                    raise Refused(504, f"the dsh mcp that asked went away ({GONE})")
                slot: asyncio.Future[DeskAck | DeskError] = \
                    asyncio.get_running_loop().create_future()
                slot.add_done_callback(_retrieved)
                self._replies[link] = (entry.rpc_id, slot)
                link.send_line(line)
                reply = await asyncio.shield(slot)
        except TimeoutError:
            raise Refused(504, "the dsh mcp that asked did not reply") from None
        if isinstance(reply, DeskError):  # the server found the frame malformed after all
            raise Refused(400, reply.message or "the server refused the frame",
                          reply.code or BAD_FRAME)
        ack = {**reply.to_json(), "rpc_id": page_rpc_id}
        if isinstance(ack.get("message"), str):  # the page knows its own id, not the server's
            ack["message"] = ack["message"].replace(entry.rpc_id, page_rpc_id)
        return ack

    def _hold(self, entry: Entry, page_rpc_id: str, connection: str, opened: bool) -> None:
        """One tab opened (or left) the entry: its server hears of the first and the last."""
        holders = self._holding.get(page_rpc_id, set())
        if opened and not holders:
            self._renewing[page_rpc_id] = self.client.hold(entry)  # renewed while held
        if opened:
            self._holding[page_rpc_id] = holders | {connection}
        elif connection in holders:
            holders.discard(connection)
            if not holders:
                self._let_go(page_rpc_id)
                self.client.release(entry)

    def _let_go(self, page_rpc_id: str) -> None:
        """No tab holds the entry any more (or it settled): its renewal stops."""
        self._holding.pop(page_rpc_id, None)
        renewing = self._renewing.pop(page_rpc_id, None)
        if renewing is not None:
            renewing.cancel()

    def _connection_gone(self, connection: str) -> None:
        """A tab's event stream ended (closed, reloaded, offline): what it held is let go."""
        for page_rpc_id in [key for key, held in self._holding.items() if connection in held]:
            entry = self.entry(page_rpc_id)
            if entry is None:
                self._let_go(page_rpc_id)
            else:
                self._hold(entry, page_rpc_id, connection, False)


class WebDesk(PageDesk):
    """Every server's pending entries, one browser page on 127.0.0.1; ``run`` until
    cancelled."""

    def __init__(self, *, host: str = "127.0.0.1", port: int = 0, open_browser: bool = False,
                 stderr: TextIO | None = None, directory: Path | None = None,
                 debug: bool | None = None, hub: HubAddress | None = None) -> None:
        self.server = WebServer(host=host, port=port, open_browser=open_browser,
                                stderr=stderr, debug=debug)
        super().__init__(report=lambda line: self.server.say(line + "\n"),
                         directory=directory, hub=hub)

    async def start(self) -> None:
        from dsh_cli.desk.web.app import create_desk_app  # starlette: only once serving

        await self.server.start(lambda secrets: create_desk_app(
            self.respond, self.feed, secrets, self.server.note))

    async def run(self) -> int:
        """Serve and follow every server until cancelled (ctrl-c); 0 when closed."""
        await self.start()
        await self.follow()
        return 0

    async def close(self) -> None:
        await super().close()
        await self.server.close()


def _retrieved(slot: asyncio.Future[Any]) -> None:
    """A slot whose frame stopped waiting (504) may fail later with nobody to hear it."""
    if not slot.cancelled():
        slot.exception()


def _page_frame(body: bytes) -> Forwarded | Held:
    """The page's frame (``FROM_PAGE``), or ``Refused`` (400, ``BAD_FRAME``) saying why."""
    holds = (kind(DeskOpened), kind(DeskReleased))
    frame: Readable | None = None
    try:
        frame = read_page_frame(body)
        said = frame.type
    except BadFrame as error:
        if error.frame_type not in holds:
            raise Refused(400, error.message, BAD_FRAME) from None
        said = error.frame_type
    if frame is None or (isinstance(frame, Held) and frame.connection is None):
        raise Refused(400, f"{said} takes rpc_id and connection (strings: the entry, and the "
                           "event stream of the tab that holds it)", BAD_FRAME)
    assert isinstance(frame, Forwarded | Held)  # FROM_PAGE's kinds
    return frame
