"""``dsh mcp`` + ``dsh attach --jsonl`` round trips vs the bare SDK echo floor.

One ``mcp.Client`` (the official SDK, stdio) calls ``ask_user_question`` on ``dsh mcp``
N times in a row; a ``dsh attach --jsonl`` desk, driven by this process, answers each
``question/requested`` the moment it reads it. The floor is the same client calling the
one tool of a trivial ``MCPServer`` (``echo``) N times over stdio. A dsh round trip is two
processes more (the desk, the socket hop) plus validation and the session store writing
every call and answer, so the budget is a throughput ratio, not parity: **dsh ≥ 0.2 × the
floor** (a round trip costs at most five bare SDK calls; measured 0.23× on a loaded 2-core
machine, 0.8× in a smoke run).
"""

from __future__ import annotations

import asyncio
import json
import shutil
import subprocess
import sys
import tempfile
import time
from typing import Any

from bench.context import Context
from bench.proc import dsh_argv
from bench.table import Row, at_least

BUDGET = 0.2  # dsh round trips/s ≥ BUDGET × SDK echo calls/s
BATCH = {"questions": [{"id": "q1", "question": "Deploy?",
                        "options": [{"label": "yes"}, {"label": "no"}]}]}
ECHO_SERVER = """
from mcp.server.mcpserver import MCPServer

server = MCPServer("echo")


@server.tool()
def echo(text: str) -> str:
    return text


server.run()
"""


async def _calls(command: list[str], env: dict[str, str], calls: int, tool: str,
                 arguments: dict[str, Any]) -> float:
    """Seconds for ``calls`` sequential calls of ``tool`` (after a warm-up call)."""
    from mcp import Client, StdioServerParameters

    params = StdioServerParameters(command=command[0], args=command[1:], env=env)
    async with Client(params, mode="legacy") as client:
        result = await client.call_tool(tool, arguments)  # warm-up: imports, first session
        if result.is_error:
            raise RuntimeError(f"{tool}: {result.content}")
        started = time.perf_counter()
        for _ in range(calls):
            result = await client.call_tool(tool, arguments)
            if result.is_error:
                raise RuntimeError(f"{tool}: {result.content}")
        return time.perf_counter() - started


async def _desk_answers(desk: asyncio.subprocess.Process) -> None:
    """Answer every batch the desk shows, until it ends."""
    assert desk.stdout is not None and desk.stdin is not None
    async for line in desk.stdout:
        event = json.loads(line)
        if event["type"] == "question/requested":
            frame = {"type": "question/answer", "rpc_id": event["rpc_id"],
                     "session_id": event["session_id"],
                     "answers": [{"id": "q1", "selected": ["yes"]}]}
            desk.stdin.write(json.dumps(frame).encode() + b"\n")
            await desk.stdin.drain()


async def _dsh_rate(ctx: Context, calls: int) -> float:
    runtime = tempfile.mkdtemp(prefix="dsh-bench-")  # short: Unix socket paths are limited
    env = dict(ctx.env, DSH_HOME=runtime)  # the desk directory is DSH_HOME/run
    desk = await asyncio.create_subprocess_exec(
        *dsh_argv("attach", "--jsonl"), env=env, stdin=subprocess.PIPE,
        stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    answering = asyncio.ensure_future(_desk_answers(desk))
    try:
        seconds = await _calls(dsh_argv("mcp", "--wait", "30"), env, calls,
                               "ask_user_question", BATCH)
    finally:
        assert desk.stdin is not None
        desk.stdin.close()
        await asyncio.wait_for(desk.wait(), 30)
        answering.cancel()
        shutil.rmtree(runtime, ignore_errors=True)
    return calls / seconds


async def _floor_rate(ctx: Context, calls: int) -> float:
    server = ctx.script("mcp_echo_server.py", ECHO_SERVER)
    seconds = await _calls([sys.executable, str(server)], ctx.env, calls, "echo",
                           {"text": "yes"})
    return calls / seconds


def measure(ctx: Context) -> list[Row]:
    calls = 3 if ctx.smoke else 300
    dsh, floor = [], []
    for _ in range(ctx.runs(3)):
        floor.append(asyncio.run(_floor_rate(ctx, calls)))
        dsh.append(asyncio.run(_dsh_rate(ctx, calls)))
    return [Row(f"dsh mcp + attach --jsonl round trips, {calls:,} calls", "calls/s", dsh,
                floor, "SDK echo", f"≥ {BUDGET} × SDK echo", at_least(BUDGET))]
