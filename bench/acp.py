"""How soon ``dsh acp`` answers: ``initialize`` vs a bare SDK agent, and its first text.

An editor starts its agent when a thread opens, so the agent is judged by the time from
its start to the ``initialize`` reply; the floor is an agent on the same SDK
(``agent-client-protocol``) that answers ``initialize`` and nothing else, started the same
way. Then the first text of a prompt, the agent already running (an editor keeps it): from
``session/prompt`` (after ``initialize`` and ``session/new``) to the first
``agent_message_chunk``, beside ``dsh run --jsonl`` started without a prompt, from its
``user/message`` frame (after ``session/started``) to its first ``assistant/delta``; both
with the same scripted model, the same agent loop behind two front doors. Start-up is not
in it: the SDK's import alone is seconds on a loaded 2-core machine and is the ready row's.
Each run is a fresh process, the two sides interleaved so a loaded machine slows both
alike. Budget: **≤ 1.1 ×** for both.
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
BARE_AGENT = """
import asyncio

from acp import PROTOCOL_VERSION, run_agent
from acp.schema import AgentCapabilities, InitializeResponse


class Bare:
    async def initialize(self, protocol_version, client_capabilities=None, client_info=None,
                         **kwargs):
        return InitializeResponse(protocol_version=PROTOCOL_VERSION,
                                  agent_capabilities=AgentCapabilities(load_session=True))


asyncio.run(run_agent(Bare()))
"""
INITIALIZE = {"jsonrpc": "2.0", "id": 0, "method": "initialize",
              "params": {"protocolVersion": 1, "clientCapabilities": {},
                         "clientInfo": {"name": "bench", "version": "1"}}}


def _send(process: subprocess.Popen[bytes], message: dict[str, object]) -> None:
    assert process.stdin is not None
    process.stdin.write(json.dumps(message).encode() + b"\n")
    process.stdin.flush()


def _until(process: subprocess.Popen[bytes], done: object) -> dict[str, object]:
    """The first stdout message for which ``done(message)`` is true."""
    assert process.stdout is not None
    while True:
        line = process.stdout.readline()
        if not line:
            raise RuntimeError("the agent's stdout ended early")
        message = json.loads(line)
        if done(message):  # type: ignore[operator]
            return message


def _ready(argv: list[str], env: dict[str, str]) -> float:
    """Milliseconds from the start of ``argv`` to its ``initialize`` reply."""
    started = time.perf_counter()
    process = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                               stderr=subprocess.DEVNULL, env=env)
    try:
        _send(process, INITIALIZE)  # sent at once, as editors do: it waits in the pipe
        _until(process, lambda m: m.get("id") == 0 and "result" in m)
        return (time.perf_counter() - started) * 1000
    finally:
        end_stdio_child(process)


def _acp_first_chunk(model: str, env: dict[str, str], cwd: str) -> float:
    """Milliseconds from ``session/prompt`` to the first ``agent_message_chunk``."""
    process = subprocess.Popen(dsh_argv("acp", "-m", model), stdin=subprocess.PIPE,
                               stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=env)
    try:
        _send(process, INITIALIZE)
        _until(process, lambda m: m.get("id") == 0)
        _send(process, {"jsonrpc": "2.0", "id": 1, "method": "session/new",
                        "params": {"cwd": cwd, "mcpServers": []}})
        reply = _until(process, lambda m: m.get("id") == 1)
        session = reply["result"]["sessionId"]  # type: ignore[index]
        started = time.perf_counter()
        _send(process, {"jsonrpc": "2.0", "id": 2, "method": "session/prompt",
                        "params": {"sessionId": session,
                                   "prompt": [{"type": "text", "text": "go"}]}})
        _until(process, lambda m: m.get("method") == "session/update"
               and m["params"]["update"]["sessionUpdate"] == "agent_message_chunk")
        return (time.perf_counter() - started) * 1000
    finally:
        end_stdio_child(process)


def _run_first_delta(model: str, env: dict[str, str]) -> float:
    """Milliseconds from a ``user/message`` frame to the first ``assistant/delta``."""
    process = subprocess.Popen(dsh_argv("run", "--jsonl", "-m", model),
                               stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                               stderr=subprocess.DEVNULL, env=env)
    try:
        _until(process, lambda m: m.get("type") == "session/started")
        started = time.perf_counter()
        _send(process, {"type": "user/message", "content": "go"})
        _until(process, lambda m: m.get("type") == "assistant/delta")
        return (time.perf_counter() - started) * 1000
    finally:
        end_stdio_child(process)


def measure(ctx: Context) -> list[Row]:
    bare = [sys.executable, str(ctx.script("acp_bare_agent.py", BARE_AGENT))]
    script = ctx.work / "acp-script.json"
    script.write_text(json.dumps({"turns": [{"content": "hello from the script"}]}))
    model = f"script:{script}"
    dsh_ready: list[float] = []
    bare_ready: list[float] = []
    acp_chunk: list[float] = []
    run_delta: list[float] = []
    for turn in range(ctx.runs(12)):
        pairs = [(dsh_argv("acp", "-m", "demo"), dsh_ready), (bare, bare_ready)]
        if turn % 2:  # each goes first half the time: neither gets the warmer cache
            pairs.reverse()
        for argv, into in pairs:
            into.append(_ready(argv, ctx.env))
        if turn % 2:
            run_delta.append(_run_first_delta(model, ctx.env))
            acp_chunk.append(_acp_first_chunk(model, ctx.env, str(ctx.work)))
        else:
            acp_chunk.append(_acp_first_chunk(model, ctx.env, str(ctx.work)))
            run_delta.append(_run_first_delta(model, ctx.env))
    return [
        Row("dsh acp ready: initialize answered", "ms", dsh_ready, bare_ready,
            "bare SDK agent", f"≤ {BUDGET} × floor", at_most(BUDGET), paired=True),
        Row("dsh acp: prompt to first agent_message_chunk", "ms", acp_chunk, run_delta,
            "dsh run --jsonl: user/message to first delta", f"≤ {BUDGET} ×", at_most(BUDGET),
            paired=True),
    ]
