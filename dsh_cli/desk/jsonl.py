"""``dsh attach --jsonl``: the desk for a program, speaking ``relay.md`` on stdin/stdout.

Every server's question events go to stdout as they come (``question/requested`` carries
``source: {client, cwd, pid}``); frames from stdin go to the server that owns the
``rpc_id``. ``questions/replay`` asks every server again. End of stdin closes the desk
and leaves every pending batch with its server for the next desk. Permission requests
(``approve_tool_use``) pass through the same way: ``permission/requested`` and
``permission/resolved`` out, ``permission/decision`` frames in (the server checks them).

The inbox (``desk/inbox.py``) is exposed too, the same list a human's desk shows: each
change is an ``inbox/changed`` event (``change``: ``added``, ``removed``, ``taken``,
``free``; the ``entry`` as ``Entry.to_json``; ``reason`` for a removal; ``pending``, the
count after it), and an ``inbox/list`` frame is answered with an ``inbox/list`` event
(``entries``, in arrival order). A program takes an entry for answering with a
``desk/opened`` frame (``rpc_id``) and gives it back with ``desk/released``; the other
desks' lists show it taken meanwhile, and end of stdin releases whatever was held. A hold
is a lease (``hold_seconds``, 30 s): the program renews it by sending ``desk/opened`` again.
"""

from __future__ import annotations

import asyncio
import contextlib
import sys
from typing import IO, Any

from dsh_cli.desk.inbox import Inbox, InboxChange
from dsh_cli.desk.link import DeskLinks, ServerLink
from dsh_cli.desk.protocol import (
    BadFrame,
    DeskAck,
    DeskAnswer,
    DeskCancel,
    DeskDecision,
    DeskError,
    DeskHello,
    DeskOpened,
    DeskPermissionRequested,
    DeskPermissionResolved,
    DeskQuestionRequested,
    DeskQuestionResolved,
    DeskReleased,
    DeskReplay,
    Encodable,
    InboxChanged,
    InboxList,
    InboxListRequest,
    Wire,
    encode,
    read_program_frame,
)
from dsh_cli.interaction.pending import NOT_PENDING
from dsh_cli.providers.line_reader import LineReader

__all__ = ["JsonlDesk"]

REQUESTED = (DeskQuestionRequested, DeskPermissionRequested)
RESOLVED = (DeskQuestionResolved, DeskPermissionResolved)


class JsonlDesk:
    """Multiplexes the servers' question events onto one JSON-lines stream."""

    def __init__(self, input: IO[Any] | int | None = None, output: IO[str] | None = None,
                 **links: Any) -> None:
        self.output = output or sys.stdout
        self._lines = LineReader(sys.stdin.buffer if input is None else input,
                                 errors="surrogateescape")
        self._owners: dict[str, ServerLink] = {}
        self._permissions: set[str] = set()  # the owned rpc_ids that are permission requests
        self.inbox = Inbox()
        self.inbox.subscribe(self._on_change)
        self.links = DeskLinks(self._on_event, self._on_closed, **links)

    async def run(self) -> int:
        watching = asyncio.create_task(self.links.run(), name="dsh-desk-scan")
        try:
            while True:
                line = await self._lines.readline()
                if line is None:
                    return 0
                if line.strip():
                    self._dispatch(line)
        finally:
            watching.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await watching
            self._lines.close()

    def write(self, event: Encodable) -> None:
        """One event as one flushed line, ASCII-escaped (a server's as it came)."""
        line = encode(event, ascii=True).decode("ascii")
        with contextlib.suppress(BrokenPipeError, ValueError, OSError):
            self.output.write(line)
            self.output.flush()

    def _on_change(self, change: InboxChange) -> None:
        self.write(InboxChanged(change=change.kind, entry=change.entry.to_json(self.inbox.now()),
                                reason=change.reason, pending=len(self.inbox)))

    def _on_event(self, link: ServerLink, event: Wire) -> None:
        if isinstance(event, DeskOpened | DeskReleased):
            self.inbox.mark(link, event.rpc_id, isinstance(event, DeskOpened))
        elif isinstance(event, DeskHello):
            return  # the link's own
        elif isinstance(event, REQUESTED):
            if self._owners.get(event.rpc_id) is link:
                return  # already announced (a replay racing the live event)
            self._owners[event.rpc_id] = link
            if isinstance(event, DeskPermissionRequested):
                self._permissions.add(event.rpc_id)
            self.write(event)
            self.inbox.add(link, event.to_json())  # after the event, so inbox/changed follows
        elif isinstance(event, RESOLVED):
            self._owners.pop(event.rpc_id, None)
            self._permissions.discard(event.rpc_id)
            self.write(event)
            decision = event.decision if isinstance(event, DeskPermissionResolved) else None
            self.inbox.remove(link, event.rpc_id, f"{decision or event.outcome} at the server")
        else:  # an ack, an error
            self.write(event)

    def _on_closed(self, link: ServerLink) -> None:
        for rpc_id, owner in list(self._owners.items()):
            if owner is link:  # the server is gone, and its agent with it
                del self._owners[rpc_id]
                if rpc_id in self._permissions:
                    self._permissions.discard(rpc_id)
                    self.write(DeskPermissionResolved(rpc_id=rpc_id, outcome="aborted"))
                else:
                    self.write(DeskQuestionResolved(rpc_id=rpc_id, outcome="aborted"))
        self.inbox.remove_link(link, "its dsh mcp went away")

    def _dispatch(self, line: str) -> None:
        try:
            frame = read_program_frame(line)
        except BadFrame as error:
            self.write(DeskError(code=error.code, message=error.message))
            return
        if isinstance(frame, InboxListRequest):
            now = self.inbox.now()
            self.write(InboxList(entries=[entry.to_json(now) for entry in self.inbox.entries()]))
        elif isinstance(frame, DeskReplay):
            for link in list(self.links.links.values()):
                link.send(DeskReplay())
        elif isinstance(frame, DeskOpened | DeskReleased):
            # only what the server reads: not the fields a program added
            self._route(frame.rpc_id, type(frame)(rpc_id=frame.rpc_id))
        elif isinstance(frame, DeskAnswer | DeskCancel | DeskDecision):  # as it is
            self._route(frame.rpc_id, frame)

    def _route(self, rpc_id: str, frame: Encodable) -> None:
        """A frame to the server that owns its ``rpc_id``; refused when none does."""
        owner = self._owners.get(rpc_id)
        if owner is None:
            what = "permission" if isinstance(frame, DeskDecision) else "question"
            self.write(DeskAck(rpc_id=rpc_id, accepted=False, reason=NOT_PENDING,
                               message=f"no pending {what} {rpc_id}"))
            return
        owner.send(frame)
