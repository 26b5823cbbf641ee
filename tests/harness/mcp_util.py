"""Driving ``dsh mcp`` with the real SDK client, and ``dsh attach --jsonl`` as a subprocess."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

from harness.dsh_under_test import DSH

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


async def server_socket(ceiling: float = CEILING) -> Path:
    """The desk socket of the one ``dsh mcp`` running, once it listens."""
    from dsh_cli.desk.channel import server_sockets

    for _ in range(int(ceiling / 0.05)):
        found = server_sockets()
        if found:
            return found[0]
        await asyncio.sleep(0.05)
    raise AssertionError("dsh mcp made no socket")


async def ask_once_linked(mcp, desk: JsonlDeskProcess, think: float = 0.0) -> dict[str, Any]:
    """Ask until the desk is linked (before, ``NO_PROVIDER`` comes at once); answer it there
    after ``think`` seconds."""
    requested = asyncio.ensure_future(desk.event("question/requested"))
    while True:
        call = asyncio.ensure_future(mcp.call_tool("ask_user_question", BATCH))
        await asyncio.wait({call, requested}, return_when=asyncio.FIRST_COMPLETED)
        if requested.done():
            break
        assert call.result().structured_content["error"]["code"] == "NO_PROVIDER"
        await asyncio.sleep(0.1)
    await asyncio.sleep(think)
    await desk.answer(requested.result(), [{"id": "db", "selected": ["SQLite"]}])
    result = await call
    assert result.structured_content == {"answers": [{"id": "db", "selected": ["SQLite"]}]}
    return requested.result()
