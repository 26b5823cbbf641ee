"""How soon ``dsh mcp`` answers ``initialize`` and ``tools/list`` vs a bare SDK server.

Agents send their first model request once their servers are up, and some wait only so
long (``claude -p`` 5 s, then it goes on without them), so a server is judged by the time
from its start to each answer. Each run starts a fresh process and writes the JSON-RPC
lines itself, no client library in between; the floor is the SDK's low-level ``Server``
(the layer ``dsh mcp`` is built on) with one tool, started the same way, interleaved with
dsh so a loaded machine slows both alike. Budget: **≤ 1.1 × the floor** for both answers.
"""

from __future__ import annotations

import json
import subprocess
import sys
import time

from bench.context import Context
from bench.proc import dsh_argv, end_stdio_child
from bench.table import Row, at_most

BUDGET = 1.1
BARE_SERVER = """
import anyio
from mcp.server import Server
from mcp.server.stdio import stdio_server
from mcp.types import ListToolsResult, Tool


async def list_tools(ctx, params):
    return ListToolsResult(tools=[Tool(name="ask", description="Ask the human.",
                                       input_schema={"type": "object"})])


async def main():
    server = Server("bare", on_list_tools=list_tools)
    async with stdio_server() as (read, write):
        await server.run(read, write, server.create_initialization_options())


anyio.run(main)
"""
INITIALIZE = {"jsonrpc": "2.0", "id": 1, "method": "initialize",
              "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                         "clientInfo": {"name": "bench", "version": "1"}}}
INITIALIZED = {"jsonrpc": "2.0", "method": "notifications/initialized"}
TOOLS_LIST = {"jsonrpc": "2.0", "id": 2, "method": "tools/list"}


def _send(process: subprocess.Popen[bytes], message: dict[str, object]) -> None:
    assert process.stdin is not None
    process.stdin.write(json.dumps(message).encode() + b"\n")
    process.stdin.flush()


def _answer(process: subprocess.Popen[bytes], rpc_id: int) -> None:
    assert process.stdout is not None
    line = process.stdout.readline()
    reply = json.loads(line) if line else {}
    if reply.get("id") != rpc_id or "result" not in reply:
        raise RuntimeError(f"no answer to request {rpc_id}: {line[:200]!r}")


def _ready(argv: list[str], env: dict[str, str]) -> tuple[float, float]:
    """Milliseconds from the start of ``argv`` to its ``initialize`` and ``tools/list`` answers."""
    started = time.perf_counter()
    process = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                               stderr=subprocess.DEVNULL, env=env)
    try:
        _send(process, INITIALIZE)  # sent at once, as agents do: it waits in the pipe
        _answer(process, 1)
        initialized = (time.perf_counter() - started) * 1000
        _send(process, INITIALIZED)
        _send(process, TOOLS_LIST)
        _answer(process, 2)
        listed = (time.perf_counter() - started) * 1000
    finally:
        end_stdio_child(process)
    return initialized, listed


def measure(ctx: Context) -> list[Row]:
    bare = [sys.executable, str(ctx.script("mcp_bare_server.py", BARE_SERVER))]
    dsh = dsh_argv("mcp")
    dsh_init: list[float] = []
    dsh_list: list[float] = []
    bare_init: list[float] = []
    bare_list: list[float] = []
    sides = [(dsh, dsh_init, dsh_list), (bare, bare_init, bare_list)]
    for _ in range(ctx.runs(16)):
        sides.reverse()  # each goes first half the time: neither gets the warmer cache
        for argv, init, listed in sides:
            first, second = _ready(argv, ctx.env)
            init.append(first)
            listed.append(second)
    return [
        Row("dsh mcp ready: initialize answered", "ms", dsh_init, bare_init,
            "bare SDK Server", f"≤ {BUDGET} × floor", at_most(BUDGET)),
        Row("dsh mcp ready: tools/list answered", "ms", dsh_list, bare_list,
            "bare SDK Server", f"≤ {BUDGET} × floor", at_most(BUDGET)),
    ]
