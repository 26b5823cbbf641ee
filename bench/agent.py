"""The agent loop against a local OpenAI-compatible server vs the bare SDK making the same calls.

The exchanges themselves are ``bench/bench_agent_loop.py``'s (the "model" helper's): this
module runs its rounds, keeping every round's figure so the table can show min and max,
with the fake server in a process of its own. In the measuring process its thread would
take the GIL from the client at every chunk, and whichever client does more Python work
between reads would pay for the server's time too.
"""

from __future__ import annotations

import asyncio
import subprocess
import sys
from pathlib import Path

from bench.context import Context
from bench.table import Row, at_most

ROOT = Path(__file__).resolve().parent.parent
SERVER = f"""
import sys
sys.path.insert(0, {str(ROOT)!r})
from bench import bench_agent_loop
server = bench_agent_loop._fake_server()
print(server.base_url, flush=True)
sys.stdin.read()  # until the benchmark closes our stdin
server.close()
"""


def _server() -> tuple[subprocess.Popen[str], str]:
    """The fake OpenAI-compatible server in a child process, and its base URL."""
    process = subprocess.Popen([sys.executable, "-c", SERVER], stdin=subprocess.PIPE,
                               stdout=subprocess.PIPE, text=True)
    assert process.stdout is not None
    return process, process.stdout.readline().strip()


def measure(ctx: Context) -> list[Row]:
    from bench import bench_agent_loop as exchanges

    count, rounds = (2, 1) if ctx.smoke else (100, 5)
    rows = []
    server, base_url = _server()
    try:
        for history in (False, True):
            ms: dict[str, list[float]] = {"dsh": [], "create": [], "post": []}
            for _ in range(ctx.runs(rounds)):
                for how in ("create", "post"):
                    seconds = asyncio.run(exchanges._sdk_exchanges(
                        base_url, count, history, how))
                    ms[how].append(seconds / count * 1000)
                seconds = asyncio.run(exchanges._dsh_exchanges(base_url, count, history))
                ms["dsh"].append(seconds / count * 1000)
            # the floor is the faster of the SDK's two ways, judged by median
            peer = min(("create", "post"), key=lambda how: sorted(ms[how])[len(ms[how]) // 2])
            chat = "growing chat" if history else "fresh chat"
            rows.append(Row(f"agent loop per exchange, {chat}", "ms", ms["dsh"], ms[peer],
                            f"SDK {peer}", f"≤ {exchanges.BUDGET} × SDK",
                            at_most(exchanges.BUDGET)))
    finally:
        assert server.stdin is not None
        server.stdin.close()
        server.wait(10)
    return rows
