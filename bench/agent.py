"""The agent loop against a local OpenAI-compatible server vs the bare SDK making the same calls.

The exchanges themselves are ``bench/bench_agent_loop.py``'s (the "model" helper's): this
module only runs its rounds and keeps every round's figure, so the table can show min and max.
"""

from __future__ import annotations

import asyncio

from bench.context import Context
from bench.table import Row, at_most


def measure(ctx: Context) -> list[Row]:
    from bench import bench_agent_loop as exchanges

    count, rounds = (2, 1) if ctx.smoke else (100, 5)
    rows = []
    server = exchanges._fake_server()
    try:
        for history in (False, True):
            ms: dict[str, list[float]] = {"dsh": [], "create": [], "post": []}
            for _ in range(ctx.runs(rounds)):
                for how in ("create", "post"):
                    seconds = asyncio.run(exchanges._sdk_exchanges(
                        server.base_url, count, history, how))
                    ms[how].append(seconds / count * 1000)
                seconds = asyncio.run(exchanges._dsh_exchanges(server.base_url, count, history))
                ms["dsh"].append(seconds / count * 1000)
            # the floor is the faster of the SDK's two ways, judged by median
            peer = min(("create", "post"), key=lambda how: sorted(ms[how])[len(ms[how]) // 2])
            chat = "growing chat" if history else "fresh chat"
            rows.append(Row(f"agent loop per exchange, {chat}", "ms", ms["dsh"], ms[peer],
                            f"SDK {peer}", f"≤ {exchanges.BUDGET} × SDK",
                            at_most(exchanges.BUDGET)))
    finally:
        server.close()
    return rows
