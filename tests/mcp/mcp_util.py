"""Driving ``dsh mcp`` with the real SDK client, and ``dsh attach --jsonl`` as a subprocess."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
from contextlib import asynccontextmanager
from typing import Any

from dsh_under_test import DSH

QUESTION = {"id": "db", "question": "Which database?",
            "options": [{"label": "PostgreSQL (Recommended)"}, {"label": "SQLite"}]}
BATCH = {"questions": [QUESTION]}
CEILING = 20.0  # generous: a broken server fails the test instead of hanging it


def client(*args: str, name: str = "test-agent", mode: str = "auto", cwd: str | None = None):
    """An ``mcp.Client`` that spawns ``dsh mcp ARGS`` over stdio."""
    from mcp import Client, StdioServerParameters
    from mcp.types import Implementation

    params = StdioServerParameters(command=DSH, args=["mcp", *args], env=dict(os.environ),
                                   cwd=cwd)
    return Client(params, mode=mode, client_info=Implementation(name=name, version="1.0"))


class JsonlDeskProcess:
    """``dsh attach --jsonl`` as a child: read its events, send it frames."""

    def __init__(self, process: asyncio.subprocess.Process) -> None:
        self.process = process

    async def event(self, kind: str | None = None) -> dict[str, Any]:
        """The next event (of ``kind``, skipping others)."""
        assert self.process.stdout is not None
        while True:
            line = await asyncio.wait_for(self.process.stdout.readline(), CEILING)
            assert line, "the desk ended early"
            event = json.loads(line)
            if kind is None or event["type"] == kind:
                return event

    async def send(self, frame: dict[str, Any]) -> None:
        assert self.process.stdin is not None
        self.process.stdin.write((json.dumps(frame) + "\n").encode())
        await self.process.stdin.drain()

    async def answer(self, requested: dict[str, Any], answers: list[dict[str, Any]]) -> None:
        await self.send({"type": "question/answer", "rpc_id": requested["rpc_id"],
                         "session_id": requested["session_id"], "answers": answers})

    async def close(self) -> int:
        if self.process.stdin is not None and not self.process.stdin.is_closing():
            self.process.stdin.close()
        return await asyncio.wait_for(self.process.wait(), CEILING)


@asynccontextmanager
async def jsonl_desk():
    process = await asyncio.create_subprocess_exec(
        DSH, "attach", "--jsonl", stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    desk = JsonlDeskProcess(process)
    try:
        yield desk
    finally:
        if process.returncode is None:
            process.kill()
            await process.wait()


def bounded(coro, ceiling: float = 60.0):
    """``asyncio.run`` with a ceiling, so a hang fails the test."""
    return asyncio.run(asyncio.wait_for(coro, ceiling))
