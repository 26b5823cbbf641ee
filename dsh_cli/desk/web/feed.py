"""The web desk's feed: the inbox as the page sees it, fanned out to every browser.

The page of ``dsh web`` keys what is pending by ``rpc_id`` (and its drafts in the tab's
storage); two servers may mint the same one, so the desk gives each entry the page's own
id, ``n<number>-<run>`` (its inbox number, never reused while the desk runs, and a random
word of this desk run, so a desk restarted on the same port never names another batch
with an id a tab saw), and translates back when the page answers. Each
entry's event reaches the page dressed as ``dsh web``'s events are (``shown``, from
``providers/web/shown.py``) plus ``shown.asker``, who asks; every change to the list also
sends ``inbox/list``, the whole list worded (who, what, age, kind, taken), and so does a
tick while anything is pending, so the ages stay true: built only while a browser is
connected, and queued once per browser (the latest replaces the one not yet read).
"""

from __future__ import annotations

import asyncio
import re
import secrets
from collections.abc import Callable
from typing import Any

from dsh_cli.core.limits import DESK_QUEUED_EVENTS
from dsh_cli.desk.inbox import Entry, Inbox, age_text
from dsh_cli.desk.protocol import InboxList, kind
from dsh_cli.interaction import PendingQuestions
from dsh_cli.providers.web.feed import EventFeed

__all__ = ["INBOX_LIST", "PAGE_ID", "DeskFeed"]

INBOX_LIST = kind(InboxList)
PAGE_ID = re.compile(r"n(?P<number>[0-9]{1,18})-(?P<run>[0-9a-f]{6})", re.ASCII)


class DeskFeed(EventFeed):
    """``EventFeed`` whose replay is the inbox: its entries, then the list."""

    def __init__(self, inbox: Inbox) -> None:
        super().__init__(PendingQuestions())  # nothing is asked here: the servers hold it
        self.inbox = inbox
        self.shown: dict[str, dict[str, Any]] = {}  # page id -> the entry's dressed event
        self.run = secrets.token_hex(3)
        # each open event stream's id (sent in its replay/done), which the page's holds name
        self._connections: dict[asyncio.Queue[dict[str, Any] | None], str] = {}
        self.on_disconnect: Callable[[str], object] | None = None

    def page_id(self, entry: Entry) -> str:
        """The entry's id on the page: unique to this desk run, whatever its server minted."""
        return f"n{entry.number}-{self.run}"

    def numbered(self, page_rpc_id: Any) -> Entry | None:
        """The pending entry a page id names, if any."""
        if not isinstance(page_rpc_id, str):
            return None
        # ASCII digits only (str.isdigit takes "²", which int refuses, and reads "١" as 1),
        # and few enough that int never refuses them
        found = PAGE_ID.fullmatch(page_rpc_id)
        if found is None or found["run"] != self.run:
            return None
        return self.inbox.numbered(int(found["number"]))

    def entry_added(self, entry: Entry) -> None:
        event = {**entry.event, "rpc_id": self.page_id(entry)}
        event.pop("last_answers", None)
        if entry.kind == "permission":
            event["scope"] = "input"  # what a desk grants: this input where the agent runs
        dressed = self.text.add(event, _last_answers(entry.event))
        shown = dict(dressed.get("shown") or {})
        shown["asker"] = f"{entry.who.line()} · {entry.kind}"
        # the card is headed by the agent that asks (its name already safe), not by dsh
        name = f"{entry.who.agent} via {entry.who.server}" if entry.who.server \
            else entry.who.agent
        shown["kicker"] = f"{name} asks" + (" permission" if entry.kind == "permission" else "")
        if entry.kind != "permission":
            shown["form"] = entry.kind == "form"
        dressed["shown"] = shown
        self.shown[self.page_id(entry)] = dressed
        self._send(dressed)
        self.list_changed()

    def entry_removed(self, entry: Entry, resolved: dict[str, Any]) -> None:
        self.shown.pop(self.page_id(entry), None)
        self._send(self.text.add({**resolved, "rpc_id": self.page_id(entry)}))
        self.list_changed()

    def list_changed(self) -> None:
        if self._clients:  # nobody to tell: a list is built for a browser only
            self._send(self.listing())

    def listing(self) -> dict[str, Any]:
        """``inbox/list``: every entry as the page lists it, in the inbox's order."""
        now = self.inbox.now()
        return InboxList(entries=[{
            "id": self.page_id(entry), "kind": entry.kind, "who": entry.who.line(),
            "what": entry.what, "age": age_text(entry.age(now)), "taken": entry.taken,
            "delivery": entry.delivery,
        } for entry in self.inbox.entries()]).to_json()

    def replay(self) -> list[dict[str, Any]]:
        return [self.shown[self.page_id(entry)] for entry in self.inbox.entries()
                if self.page_id(entry) in self.shown]

    def live(self, connection: str) -> bool:
        """True while the event stream ``connection`` names is open."""
        return connection in self._connections.values()

    def _queue(self) -> asyncio.Queue[dict[str, Any] | None]:
        return _Stream()

    def _replay_done(self, queue: asyncio.Queue[dict[str, Any] | None], pending: list[str]
                     ) -> dict[str, Any]:
        connection = secrets.token_hex(8)
        if not self._closed:
            self._connections[queue] = connection
        return {**super()._replay_done(queue, pending), "connection": connection}

    def disconnect(self, queue: asyncio.Queue[dict[str, Any] | None]) -> None:
        super().disconnect(queue)
        connection = self._connections.pop(queue, None)
        if connection is not None and self.on_disconnect is not None:
            self.on_disconnect(connection)  # a tab closed, reloaded or offline: its holds end

    def connect(self) -> Any:
        queue = super().connect()
        if not self._closed:
            queue.put_nowait(self.listing())
        return queue

    def _send(self, data: dict[str, Any]) -> None:
        for queue in list(self._clients):
            if queue.qsize() >= DESK_QUEUED_EVENTS:
                # a browser this far behind is ended: it reconnects and gets the replay
                self._clients.discard(queue)
                if isinstance(queue, _Stream):
                    queue.end()
                continue
            queue.put_nowait(data)


def _last_answers(event: dict[str, Any]) -> dict[str, list[str]] | None:
    """The last answers a server sent with a batch (labels per question id), if any."""
    given = event.get("last_answers")
    if not isinstance(given, dict):
        return None
    return {str(key): [str(label) for label in value] for key, value in given.items()
            if isinstance(value, list)}


_LISTING: dict[str, Any] = {"type": INBOX_LIST}  # where a browser's latest list waits


class _Stream(asyncio.Queue[dict[str, Any] | None]):
    """One browser's queue, holding one ``inbox/list`` at most: a newer one replaces it (at
    the end, after the events it lists), so a browser that stops reading (a phone asleep)
    costs one list however many changes and ticks it sleeps through."""

    def _init(self, maxsize: int) -> None:
        super()._init(maxsize)
        self._listing: dict[str, Any] | None = None

    def _put(self, item: dict[str, Any] | None) -> None:
        if item is not None and item is not _LISTING and item.get("type") == INBOX_LIST:
            if self._listing is not None:
                self._queue.remove(_LISTING)  # type: ignore[attr-defined]
            self._listing = item
            item = _LISTING
        super()._put(item)

    def end(self) -> None:
        """Drop what is queued; the stream ends at its next read."""
        self._queue.clear()  # type: ignore[attr-defined]
        self._listing = None
        self.put_nowait(None)

    def _get(self) -> dict[str, Any] | None:
        item: dict[str, Any] | None = super()._get()
        if item is _LISTING:
            item, self._listing = self._listing, None
        return item
