"""``dsh attach --jsonl``: the desk for a program, speaking ``relay.md`` on stdin/stdout.

Every server's question events go to stdout as they come (``question/requested`` carries
``source: {client, cwd, pid}``); frames from stdin go to the server that owns the
``rpc_id``. ``questions/replay`` asks every server again. End of stdin closes the desk
and leaves every pending batch with its server for the next desk.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import sys
from typing import IO, Any

from dsh_cli.core.errors import BAD_FRAME
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

__all__ = ["JsonlDesk"]


class JsonlDesk:
    """Multiplexes the servers' question events onto one JSON-lines stream."""

    def __init__(self, input: IO[Any] | int | None = None, output: IO[str] | None = None,
                 **links: Any) -> None:
        self.output = output or sys.stdout
        self._lines = LineReader(sys.stdin.buffer if input is None else input,
                                 errors="surrogateescape")
        self._owners: dict[str, ServerLink] = {}
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
        line = json.dumps(event, ensure_ascii=True, separators=(",", ":")) + "\n"
        with contextlib.suppress(BrokenPipeError, ValueError, OSError):
            self.output.write(line)
            self.output.flush()

    def _on_event(self, link: ServerLink, event: dict[str, Any]) -> None:
        kind = event["type"]
        if kind not in QUESTION_EVENTS:
            return
        rpc_id = event.get("rpc_id")
        if kind == "question/requested" and isinstance(rpc_id, str):
            if self._owners.get(rpc_id) is link:
                return  # already announced (a replay racing the live event)
            self._owners[rpc_id] = link
        elif kind == "question/resolved" and isinstance(rpc_id, str):
            self._owners.pop(rpc_id, None)
        self.write(event)

    def _on_closed(self, link: ServerLink) -> None:
        for rpc_id, owner in list(self._owners.items()):
            if owner is link:  # the server is gone, and its agent with it
                del self._owners[rpc_id]
                self.write({"type": "question/resolved", "rpc_id": rpc_id, "outcome": "aborted"})

    def _dispatch(self, line: str) -> None:
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
        owner = self._owners.get(frame.rpc_id)
        if owner is None:
            self.write({"type": "response/ack", "rpc_id": frame.rpc_id, "accepted": False,
                        "reason": NOT_PENDING, "message": f"no pending question {frame.rpc_id}"})
            return
        owner.send(frame.model_dump())
