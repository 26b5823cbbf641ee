"""The desk client: every ``dsh mcp`` of the user and what they ask, with no screen.

``DeskClient`` is what the terminal, plain, ``--jsonl`` and web desks share. It links to
every server (``link.py``), keeps the ``Inbox`` of their pending entries, and acts on each
server event (``desk/protocol.py``) the same way for all of them: a request is added once
(a replay racing the live event is dropped), a resolution removes it, another desk's hold
marks it, a server that goes away takes its entries with it. ``owner`` routes an ``rpc_id``
to the server that asked it (with ``hub``, one hub stands for every server: ``hub_link.py``);
``hold`` keeps an entry open at its server (renewed) and ``release`` gives it back.

A desk is a ``DeskScreen``: it hears the inbox's changes (``client.inbox.subscribe``) and
the hooks below, and draws, writes or serves them its own way.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

from dsh_cli.desk.hub_link import HUB_GONE, HubAddress, HubLink, HubLinks
from dsh_cli.desk.inbox import Entry, Inbox
from dsh_cli.desk.link import DeskLinks, ServerLink, hold
from dsh_cli.desk.protocol import (
    DeskAck,
    DeskError,
    DeskHello,
    DeskOpened,
    DeskPermissionRequested,
    DeskPermissionResolved,
    DeskQuestionRequested,
    DeskQuestionResolved,
    DeskReleased,
    DeskReplay,
    Wire,
)

__all__ = ["GONE", "DeskClient", "DeskScreen", "MakeLinks", "Requested", "Resolved"]

GONE = "its dsh mcp went away"
Requested = DeskQuestionRequested | DeskPermissionRequested
Resolved = DeskQuestionResolved | DeskPermissionResolved
# what makes a desk's links, given where their events and closings go
MakeLinks = Callable[[Callable[[ServerLink, Wire], None], Callable[[ServerLink], None]],
                     DeskLinks]


class DeskScreen:
    """What a desk does beyond the inbox: each hook is called as its event is acted on."""

    def hello(self, link: ServerLink, hello: DeskHello) -> None:
        """A server said who it is (its browser URL, if it has a page)."""

    def requested(self, link: ServerLink, event: Requested) -> None:
        """A new request, just before it is added to the inbox."""

    def added(self, entry: Entry) -> None:
        """A request's entry, just added."""

    def resolving(self, link: ServerLink, event: Resolved) -> None:
        """A request settled at its server, just before its entry is removed."""

    def reason(self, link: ServerLink, event: Resolved) -> str:
        """Why the entry leaves the inbox (the removal's ``reason``), before it is removed."""
        return f"{event.outcome} at the server"

    def resolved(self, link: ServerLink, event: Resolved, entry: Entry | None) -> None:
        """A request settled at its server; ``entry`` was removed (None: not listed here)."""

    def marked(self, entry: Entry) -> None:
        """Another desk opened or released ``entry`` (``entry.taken`` says which)."""

    def reply(self, link: ServerLink, event: DeskAck | DeskError) -> None:
        """A server's reply to a frame this desk sent."""

    def leaving(self, link: ServerLink, owned: dict[str, bool]) -> None:
        """A server went away: the rpc_ids it asked (True: a permission request), just
        before its entries are removed."""

    def gone(self, link: ServerLink, entries: list[Entry]) -> None:
        """A server went away: the entries removed with it."""


class DeskClient:
    """Links to every server, the inbox of what they ask, routing by ``rpc_id``, holds."""

    def __init__(self, screen: DeskScreen, *, hub: HubAddress | None = None,
                 make_links: MakeLinks | None = None, **links: Any) -> None:
        self.screen = screen
        self.inbox = Inbox()
        # one hub (``dsh attach --hub``), every dsh mcp in the runtime directory, or the
        # links ``make_links`` gives (a hub's own browser desk: its store, in process)
        if make_links is not None:
            self.links = make_links(self._on_event, self._on_closed)
        elif hub is None:
            self.links = DeskLinks(self._on_event, self._on_closed, **links)
        else:
            self.links = HubLinks(self._on_event, self._on_closed, hub=hub, **links)
        # the server that asked each pending rpc_id (the latest, if two minted the same)
        self._owners: dict[str, ServerLink] = {}
        self._permissions: set[str] = set()  # the owned rpc_ids that are permission requests

    async def run(self) -> None:
        """Find and follow every server until cancelled."""
        await self.links.run()

    def owner(self, rpc_id: str) -> ServerLink | None:
        """The server that asked ``rpc_id``, while it is pending."""
        return self._owners.get(rpc_id)

    def replay(self) -> None:
        """Ask every server to announce what is pending again."""
        for link in list(self.links.links.values()):
            link.send(DeskReplay())

    def hold(self, entry: Entry) -> asyncio.Task[None]:
        """Hold ``entry`` open at its server, renewed until the task is cancelled."""
        return hold(entry.link, entry.rpc_id)

    def release(self, entry: Entry) -> None:
        """Give ``entry`` back: every other desk may take it again."""
        entry.link.send(DeskReleased(rpc_id=entry.rpc_id))

    def _on_event(self, link: ServerLink, event: Wire) -> None:
        if isinstance(event, DeskHello):
            self.screen.hello(link, event)
        elif isinstance(event, DeskQuestionRequested | DeskPermissionRequested):
            if self._owners.get(event.rpc_id) is link:
                return  # already announced (a replay racing the live event)
            self._owners[event.rpc_id] = link
            if isinstance(event, DeskPermissionRequested):
                self._permissions.add(event.rpc_id)
            self.screen.requested(link, event)
            entry = self.inbox.add(link, event.to_json())
            if entry is not None:
                self.screen.added(entry)
        elif isinstance(event, DeskQuestionResolved | DeskPermissionResolved):
            self._owners.pop(event.rpc_id, None)
            self._permissions.discard(event.rpc_id)
            self.screen.resolving(link, event)
            removed = self.inbox.remove(link, event.rpc_id, self.screen.reason(link, event))
            self.screen.resolved(link, event, removed)
        elif isinstance(event, DeskOpened | DeskReleased):
            # a hub names who holds it (``by``); a dsh mcp's desks are anonymous
            by = (event.model_extra or {}).get("by") if isinstance(event, DeskOpened) else None
            marked = self.inbox.mark(link, event.rpc_id, isinstance(event, DeskOpened), by)
            if marked is not None:
                self.screen.marked(marked)
        elif isinstance(event, DeskAck | DeskError):
            self.screen.reply(link, event)

    def _on_closed(self, link: ServerLink) -> None:
        owned = {rpc_id: rpc_id in self._permissions
                 for rpc_id, owner in self._owners.items() if owner is link}
        for rpc_id in owned:  # the server is gone, and its agent with it
            del self._owners[rpc_id]
            self._permissions.discard(rpc_id)
        self.screen.leaving(link, owned)
        gone = HUB_GONE if isinstance(link, HubLink) else GONE
        self.screen.gone(link, self.inbox.remove_link(link, gone))
