"""The web desk's feed: the inbox as the page sees it, fanned out to every browser.

The page of ``dsh web`` keys what is pending by ``rpc_id`` (and its drafts in the tab's
storage); two servers may mint the same one, so the desk gives each entry the page's own
id, ``n<number>-<run>`` (its inbox number, never reused while the desk runs, and a random
word of this desk run, so a desk restarted on the same port never names another batch
with an id a tab saw), and translates back when the page answers. Each
entry's event reaches the page dressed as ``dsh web``'s events are (``shown``, from
``providers/web/shown.py``) plus ``shown.asker``, who asks; every change to the list also
sends ``inbox/list``, the whole list worded (who, what, age, kind, taken), and so does a
tick while anything is pending, so the ages stay true.
"""

from __future__ import annotations

import secrets
from typing import Any

from dsh_cli.desk.inbox import Entry, Inbox, age_text
from dsh_cli.interaction import PendingQuestions
from dsh_cli.providers.web.feed import EventFeed

__all__ = ["INBOX_LIST", "DeskFeed"]

INBOX_LIST = "inbox/list"


class DeskFeed(EventFeed):
    """``EventFeed`` whose replay is the inbox: its entries, then the list."""

    def __init__(self, inbox: Inbox) -> None:
        super().__init__(PendingQuestions())  # nothing is asked here: the servers hold it
        self.inbox = inbox
        self.shown: dict[str, dict[str, Any]] = {}  # page id -> the entry's dressed event
        self.run = secrets.token_hex(3)

    def page_id(self, entry: Entry) -> str:
        """The entry's id on the page: unique to this desk run, whatever its server minted."""
        return f"n{entry.number}-{self.run}"

    def numbered(self, page_rpc_id: Any) -> Entry | None:
        """The pending entry a page id names, if any."""
        if not isinstance(page_rpc_id, str):
            return None
        number, _, run = page_rpc_id.removeprefix("n").partition("-")
        if run != self.run or not number.isdigit():
            return None
        return self.inbox.numbered(int(number))

    def entry_added(self, entry: Entry) -> None:
        event = {**entry.event, "rpc_id": self.page_id(entry)}
        event.pop("last_answers", None)
        if entry.kind == "permission":
            event["scope"] = "input"  # what a desk grants: this input where the agent runs
        dressed = self.text.add(event, _last_answers(entry.event))
        shown = dict(dressed.get("shown") or {})
        shown["asker"] = f"{entry.who.line()} · {entry.kind}"
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
        self._send(self.listing())

    def listing(self) -> dict[str, Any]:
        """``inbox/list``: every entry as the page lists it, in arrival order."""
        now = self.inbox.now()
        return {"type": INBOX_LIST, "entries": [{
            "id": self.page_id(entry), "kind": entry.kind, "who": entry.who.line(),
            "what": entry.what, "age": age_text(entry.age(now)), "taken": entry.taken,
            "delivery": entry.delivery,
        } for entry in self.inbox.entries()]}

    def replay(self) -> list[dict[str, Any]]:
        return [self.shown[self.page_id(entry)] for entry in self.inbox.entries()
                if self.page_id(entry) in self.shown]

    def connect(self) -> Any:
        queue = super().connect()
        if not self._closed:
            queue.put_nowait(self.listing())
        return queue

    def _send(self, data: dict[str, Any]) -> None:
        for queue in self._clients:
            queue.put_nowait(data)


def _last_answers(event: dict[str, Any]) -> dict[str, list[str]] | None:
    """The last answers a server sent with a batch (labels per question id), if any."""
    given = event.get("last_answers")
    if not isinstance(given, dict):
        return None
    return {str(key): [str(label) for label in value] for key, value in given.items()
            if isinstance(value, list)}
