"""``WebDesk``: the inbox served to a browser on 127.0.0.1, answered through each server.

The desk is a proxy between the page and every ``dsh mcp``: an answer, a cancel, a
decline or a permission decision from the page goes to the server that asked, through
that batch's own link and naming the batch's ``session_id`` (the one ownership rule,
``core/ownership.py``, is the server's to check), and the page's reply is the server's own
``response/ack``. Opening an entry on the page holds it (``desk/opened`` to its server,
which marks it taken at every other desk) and going back to the list releases it
(``desk/released``); the other desks' holds reach the list as ``taken``. A server that
does not reply within ``ACK_WAIT`` seconds, or goes away
meanwhile, is a 504 the page shows. The same token, cookie, Host, Origin and CSRF rules
as ``dsh web`` guard every request (``providers/web/app.py``'s ``Guard``).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections import deque
from collections.abc import Hashable
from pathlib import Path
from typing import Any, TextIO

from dsh_cli.desk.inbox import Entry, Inbox
from dsh_cli.desk.link import DeskLinks, ServerLink
from dsh_cli.desk.web.app import Refused
from dsh_cli.desk.web.feed import DeskFeed
from dsh_cli.interaction.pending import NOT_PENDING
from dsh_cli.providers.web.server import WebServer

__all__ = ["ACK_WAIT", "AGE_TICK", "DESK_FRAMES", "WebDesk"]

ACK_WAIT = 10.0  # seconds a server has to acknowledge what the page sent it
AGE_TICK = 5.0  # seconds between list refreshes while anything is pending (its ages)
# what the page may send a server: a desk has no conversation to discuss a batch in
DESK_FRAMES = frozenset({"question/answer", "question/cancel", "question/decline",
                         "permission/decision"})
# the page opened an entry, or went back to the list: the server tells the other desks
HOLDS = frozenset({"desk/opened", "desk/released"})
REQUESTED = frozenset({"question/requested", "permission/requested"})
RESOLVED = frozenset({"question/resolved", "permission/resolved"})
GONE = "its dsh mcp went away"


class WebDesk:
    """Every server's pending entries, one browser page; ``run`` until cancelled."""

    def __init__(self, *, port: int = 0, open_browser: bool = False,
                 stderr: TextIO | None = None, directory: Path | None = None,
                 debug: bool | None = None) -> None:
        self.inbox = Inbox()
        self.feed = DeskFeed(self.inbox)
        self.server = WebServer(host="127.0.0.1", port=port, open_browser=open_browser,
                                stderr=stderr, debug=debug)
        self.links = DeskLinks(self._on_event, self._on_closed,
                               report=lambda line: self.server.say(line + "\n"),
                               directory=directory)
        self._acks: dict[tuple[Hashable, str], deque[asyncio.Future[dict[str, Any]]]] = {}

    async def start(self) -> None:
        from dsh_cli.desk.web.app import create_desk_app  # starlette: only once serving

        await self.server.start(lambda secrets: create_desk_app(
            self.respond, self.feed, secrets, self.server.note))

    async def run(self) -> int:
        """Serve and follow every server until cancelled (ctrl-c); 0 when closed."""
        await self.start()
        watching = asyncio.create_task(self.links.run(), name="dsh-desk-scan")
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
        return 0

    async def close(self) -> None:
        self.feed.close()
        for waiting in self._acks.values():
            for future in waiting:
                if not future.done():
                    future.cancel()
        self._acks.clear()
        await self.server.close()

    async def _tick(self) -> None:
        while True:
            await asyncio.sleep(AGE_TICK)
            if len(self.inbox) and self.feed.connections:
                self.feed.list_changed()

    # -- what the servers say -----------------------------------------------------------

    def _on_event(self, link: ServerLink, event: dict[str, Any]) -> None:
        kind = event["type"]
        rpc_id = event.get("rpc_id")
        if kind in REQUESTED:
            entry = self.inbox.add(link, event)
            if entry is not None:
                self.feed.entry_added(entry)
        elif kind in RESOLVED:
            entry = self.inbox.remove(link, rpc_id, str(event.get("outcome")))
            if entry is not None:
                self.feed.entry_removed(entry, event)
        elif kind in HOLDS:
            if self.inbox.mark(link, rpc_id, kind == "desk/opened") is not None:
                self.feed.list_changed()
        elif kind == "response/ack" and isinstance(rpc_id, str):
            waiting = self._acks.get((link, rpc_id))
            if waiting:
                future = waiting.popleft()
                if not waiting:
                    del self._acks[(link, rpc_id)]
                if not future.done():
                    future.set_result(event)

    def _on_closed(self, link: ServerLink) -> None:
        for entry in self.inbox.remove_link(link, GONE):
            kind = "permission/resolved" if entry.kind == "permission" else "question/resolved"
            self.feed.entry_removed(entry, {"type": kind, "outcome": "aborted",
                                            "message": GONE})
        for key in [key for key in self._acks if key[0] is link]:
            for future in self._acks.pop(key):
                if not future.done():
                    future.cancel()

    # -- what the page says -------------------------------------------------------------

    def entry(self, page_rpc_id: Any) -> Entry | None:
        """The entry a page id (``n<number>-<run>``) names, while it is pending."""
        return self.feed.numbered(page_rpc_id)

    async def respond(self, body: bytes) -> dict[str, Any]:
        """One frame from the page, through its batch's own server: the server's ack."""
        frame = _desk_frame(body)
        page_rpc_id = frame["rpc_id"]
        entry = self.entry(page_rpc_id)
        if entry is None:
            return {"type": "response/ack", "rpc_id": page_rpc_id, "accepted": False,
                    "reason": NOT_PENDING, "message": f"no pending entry {page_rpc_id}"}
        if frame["type"] in HOLDS:  # no ack: the other desks hear it from the server
            entry.link.send({"type": frame["type"], "rpc_id": entry.rpc_id})
            return {"type": "response/ack", "rpc_id": page_rpc_id, "accepted": True}
        key = (entry.link, entry.rpc_id)
        future: asyncio.Future[dict[str, Any]] = asyncio.get_running_loop().create_future()
        self._acks.setdefault(key, deque()).append(future)
        entry.link.send({**frame, "rpc_id": entry.rpc_id})
        try:
            ack = await asyncio.wait_for(future, ACK_WAIT)
        except (TimeoutError, asyncio.CancelledError):
            waiting = self._acks.get(key)
            if waiting and future in waiting:
                waiting.remove(future)
            raise Refused(504, "the dsh mcp that asked did not reply") from None
        return {**ack, "rpc_id": self.feed.page_id(entry)}


def _desk_frame(body: bytes) -> dict[str, Any]:
    """The page's frame, checked only as far as routing needs: its server checks the rest."""
    try:
        frame = json.loads(body)
    except (ValueError, RecursionError):
        raise Refused(400, "a frame is one JSON object") from None
    if not isinstance(frame, dict) or frame.get("type") not in DESK_FRAMES | HOLDS:
        raise Refused(400, "the desk takes question/answer, question/cancel, "
                           "question/decline, permission/decision, desk/opened and "
                           "desk/released")
    if not isinstance(frame.get("rpc_id"), str):
        raise Refused(400, "a frame names its rpc_id (a string)")
    return frame
