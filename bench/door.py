"""The HTTP door's admission with 4,200 MCP tasks kept vs 100.

``dsh mcp --http``'s door (``TokenGate``) admits a request that opens a session only once
it has looked for room: at its session cap it asks of each session whether it ``holds``
work (an open task or ticket, an outcome not fetched). The door here is the real one, its
``holds`` the real server's (``server._later_work``: the one store the tickets and the task
layer keep their work in), in front of an app that is never reached: every one of the 100
sessions holds a task, so each admission looks at all of them and answers 503, the most
it ever does. Kept: one task per session, vs 32 per session (``TASKS_PER_SESSION``) and 1,000 of the
sessionless wire (``TASKS_SESSIONLESS``). Runs alternate, and the ratio is paired.
"""

from __future__ import annotations

import asyncio
import time
from types import SimpleNamespace
from typing import Any

from bench.context import Context
from bench.table import Row, at_most

BUDGET = 1.2
SESSIONS = 100


async def _admissions(count: int, per_session: int, sessionless: int) -> float:
    """Microseconds per refused admission with that many tasks kept."""
    from dsh_cli.mcp_server.http_door import TokenGate
    from dsh_cli.mcp_server.server import _later_work
    from dsh_cli.mcp_server.tasks.layer import SESSIONLESS_OWNER, TaskLayer
    from dsh_cli.mcp_server.tickets import Tickets

    never = asyncio.get_running_loop().create_future()

    async def work(signal: Any) -> dict[str, Any]:
        return await asyncio.shield(never)

    tickets = Tickets()
    layer = TaskLayer(lambda *args, **kwargs: None, tickets.store)
    for session in range(SESSIONS):
        for _ in range(per_session):
            layer.tasks.create(f"http:s{session}", work)
    for _ in range(sessionless):
        layer.tasks.create(SESSIONLESS_OWNER, work)
    server = SimpleNamespace(middleware=[layer])
    later = _later_work(server, tickets)  # type: ignore[arg-type]

    async def app(scope: Any, receive: Any, send: Any) -> None:
        raise AssertionError("the door is full: no request gets in")

    gate = TokenGate(app, "t", path="/mcp", host="127.0.0.1", max_sessions=SESSIONS,
                     holds=lambda session: later.holds(f"http:{session}"))
    for session in range(SESSIONS):
        gate.sessions[f"s{session}".encode()] = 0
    scope = {"type": "http", "method": "POST", "path": "/t/mcp", "headers": []}
    refused: list[int] = []

    async def send(message: dict[str, Any]) -> None:
        if message["type"] == "http.response.start":
            refused.append(message["status"])

    started = time.perf_counter()
    for _ in range(count):
        await gate(scope, None, send)
    elapsed = time.perf_counter() - started
    assert refused == [503] * count
    await layer.tasks.close(grace=0)
    return elapsed / count * 1_000_000


def measure(ctx: Context) -> list[Row]:
    count, rounds = (20, 1) if ctx.smoke else (500, 11)
    many: list[float] = []
    few: list[float] = []
    for _ in range(ctx.runs(rounds)):
        few.append(asyncio.run(_admissions(count, 1, 0)))
        many.append(asyncio.run(_admissions(count, 32, 1_000)))
    return [Row("HTTP door admission, 4,200 tasks kept", "µs", many, few, "100 kept",
                f"≤ {BUDGET} × 100 kept", at_most(BUDGET), paired=True)]
