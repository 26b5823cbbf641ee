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

from dsh_cli.core.outcomes import Outcome
from dsh_cli.desk.client import DeskClient, DeskScreen, Requested, Resolved
from dsh_cli.desk.inbox import InboxChange
from dsh_cli.desk.link import ServerLink
from dsh_cli.desk.protocol import (
    BadFrame,
    DeskAck,
    DeskAnswer,
    DeskCancel,
    DeskDecision,
    DeskError,
    DeskOpened,
    DeskPermissionResolved,
    DeskQuestionResolved,
    DeskReleased,
    DeskReplay,
    Encodable,
    InboxChanged,
    InboxList,
    InboxListRequest,
    encode,
    read_program_frame,
)
from dsh_cli.interaction.pending import NOT_PENDING
from dsh_cli.providers.line_reader import LineReader

__all__ = ["JsonlDesk"]


class JsonlDesk(DeskScreen):
    """The desk client's events and inbox on one JSON-lines stream, its frames routed."""

    def __init__(self, input: IO[Any] | int | None = None, output: IO[str] | None = None,
                 **links: Any) -> None:
        self.output = output or sys.stdout
        self._lines = LineReader(sys.stdin.buffer if input is None else input,
                                 errors="surrogateescape")
        self.client = DeskClient(self, **links)
        self.inbox = self.client.inbox
        self.inbox.subscribe(self._on_change)

    async def run(self) -> int:
        watching = asyncio.create_task(self.client.run(), name="dsh-desk-scan")
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

    # -- what the servers say (DeskScreen) ----------------------------------------------

    def requested(self, link: ServerLink, event: Requested) -> None:
        self.write(event)  # before the inbox's change, which follows it

    def resolving(self, link: ServerLink, event: Resolved) -> None:
        self.write(event)

    def reason(self, link: ServerLink, event: Resolved) -> str:
        decision = event.decision if isinstance(event, DeskPermissionResolved) else None
        return f"{decision or event.outcome} at the server"

    def reply(self, link: ServerLink, event: DeskAck | DeskError) -> None:
        self.write(event)

    def leaving(self, link: ServerLink, owned: dict[str, bool]) -> None:
        for rpc_id, permission in owned.items():  # the server is gone, and its agent with it
            resolved = DeskPermissionResolved if permission else DeskQuestionResolved
            self.write(resolved(rpc_id=rpc_id, outcome=Outcome.ABORTED.event))

    # -- what the program says ----------------------------------------------------------

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
            self.client.replay()
        elif isinstance(frame, DeskOpened | DeskReleased):
            # only what the server reads: not the fields a program added
            self._route(frame.rpc_id, type(frame)(rpc_id=frame.rpc_id))
        elif isinstance(frame, DeskAnswer | DeskCancel | DeskDecision):  # as it is
            self._route(frame.rpc_id, frame)

    def _route(self, rpc_id: str, frame: Encodable) -> None:
        """A frame to the server that owns its ``rpc_id``; refused when none does."""
        owner = self.client.owner(rpc_id)
        if owner is None:
            what = "permission" if isinstance(frame, DeskDecision) else "question"
            self.write(DeskAck(rpc_id=rpc_id, accepted=False, reason=NOT_PENDING,
                               message=f"no pending {what} {rpc_id}"))
            return
        owner.send(frame)
