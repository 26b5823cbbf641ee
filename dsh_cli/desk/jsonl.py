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
import json
import sys
from typing import IO, Any

from dsh_cli.core.errors import BAD_FRAME
from dsh_cli.core.json_lines import json_line
from dsh_cli.desk.inbox import Inbox, InboxChange
from dsh_cli.desk.link import DeskLinks, ServerLink
from dsh_cli.interaction.pending import NOT_PENDING
from dsh_cli.providers.frames import (
    BadFrame,
    QuestionAnswerFrame,
    QuestionCancelFrame,
    QuestionsReplayFrame,
    parse_frame,
)
from dsh_cli.providers.line_reader import LineReader
from dsh_cli.providers.relay import QUESTION_EVENTS

__all__ = ["DESK_EVENTS", "JsonlDesk"]

DESK_EVENTS = QUESTION_EVENTS | {"permission/requested", "permission/resolved"}
REQUESTED = frozenset({"question/requested", "permission/requested"})
HOLDS = frozenset({"desk/opened", "desk/released"})
RESOLVED = frozenset({"question/resolved", "permission/resolved"})


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

    def write(self, event: dict[str, Any]) -> None:
        line = json_line(event, ascii_only=True)
        with contextlib.suppress(BrokenPipeError, ValueError, OSError):
            self.output.write(line)
            self.output.flush()

    def _on_change(self, change: InboxChange) -> None:
        event: dict[str, Any] = {"type": "inbox/changed", "change": change.kind,
                                 "entry": change.entry.to_json(self.inbox.now())}
        if change.reason is not None:
            event["reason"] = change.reason
        event["pending"] = len(self.inbox)
        self.write(event)

    def _on_event(self, link: ServerLink, event: dict[str, Any]) -> None:
        kind = event["type"]
        rpc_id = event.get("rpc_id")
        if kind in HOLDS:
            self.inbox.mark(link, rpc_id, kind == "desk/opened")
            return
        if kind not in DESK_EVENTS:
            return
        if kind in REQUESTED and isinstance(rpc_id, str):
            if self._owners.get(rpc_id) is link:
                return  # already announced (a replay racing the live event)
            self._owners[rpc_id] = link
            if kind == "permission/requested":
                self._permissions.add(rpc_id)
            self.write(event)
            self.inbox.add(link, event)  # after the event, so inbox/changed follows it
            return
        if kind in RESOLVED and isinstance(rpc_id, str):
            self._owners.pop(rpc_id, None)
            self._permissions.discard(rpc_id)
            self.write(event)
            self.inbox.remove(link, rpc_id, f"{event.get('decision') or event.get('outcome')} "
                                            "at the server")
            return
        self.write(event)

    def _on_closed(self, link: ServerLink) -> None:
        for rpc_id, owner in list(self._owners.items()):
            if owner is link:  # the server is gone, and its agent with it
                del self._owners[rpc_id]
                kind = "permission/resolved" if rpc_id in self._permissions else \
                    "question/resolved"
                self._permissions.discard(rpc_id)
                self.write({"type": kind, "rpc_id": rpc_id, "outcome": "aborted"})
        self.inbox.remove_link(link, "its dsh mcp went away")

    def _dispatch(self, line: str) -> None:
        decision = _desk_frame(line)
        if decision is not None and decision["type"] == "inbox/list":
            now = self.inbox.now()
            self.write({"type": "inbox/list",
                        "entries": [entry.to_json(now) for entry in self.inbox.entries()]})
            return
        if decision is not None and decision["type"] in HOLDS:
            if isinstance(decision.get("rpc_id"), str):
                self._route({"type": decision["type"], "rpc_id": decision["rpc_id"]})
            else:
                self.write({"type": "error", "code": BAD_FRAME,
                            "message": f"{decision['type']} takes rpc_id (a string)"})
            return
        if decision is not None:
            self._route(decision)
            return
        try:
            line.encode("utf-8")
            frame = parse_frame(line)
        except UnicodeEncodeError:
            self.write({"type": "error", "code": BAD_FRAME, "message": "a frame must be UTF-8"})
            return
        except BadFrame as error:
            self.write({"type": "error", "code": error.code, "message": error.message})
            return
        if isinstance(frame, QuestionsReplayFrame):
            for link in list(self.links.links.values()):
                link.send({"type": "questions/replay"})
            return
        if not isinstance(frame, QuestionAnswerFrame | QuestionCancelFrame):
            self.write({"type": "error", "code": BAD_FRAME,
                        "message": f"{frame.type} is not accepted by dsh attach"})
            return
        self._route(frame.model_dump())

    def _route(self, frame: dict[str, Any]) -> None:
        """A frame to the server that owns its ``rpc_id``; refused when none does."""
        rpc_id = frame.get("rpc_id")
        owner = self._owners.get(rpc_id) if isinstance(rpc_id, str) else None
        if owner is None:
            what = "permission" if frame["type"].startswith("permission/") else "question"
            self.write({"type": "response/ack", "rpc_id": rpc_id, "accepted": False,
                        "reason": NOT_PENDING, "message": f"no pending {what} {rpc_id}"})
            return
        owner.send(frame)


DESK_FRAMES = frozenset({"permission/decision", "inbox/list", *HOLDS})


def _desk_frame(line: str) -> dict[str, Any] | None:
    """A frame of the desk's own (``permission/decision``, ``inbox/list``, ``desk/opened``,
    ``desk/released``) as sent (its server validates a decision), else None."""
    try:
        frame = json.loads(line)
    except (ValueError, RecursionError):
        return None
    if isinstance(frame, dict) and frame.get("type") in DESK_FRAMES:
        return frame
    return None
