"""A turn of the agent loop with 100 async question batches pending vs one with none.

The turns are the real ``AgentLoop`` over the real seam; the model is in-process and
streams the same ~225-character reply in 10-character chunks each turn, so the loop's own
cost is all that is timed (a network model would only hide a difference). The batches
wait on a provider that shows nothing itself (the relay's, the web's), as in
``dsh run --jsonl``. Runs alternate, none / 100 pending, each in a fresh event loop (the
batches' memory is the pending run's alone), and the ratio is paired.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator
from typing import Any

from bench.context import Context
from bench.table import Row, at_most

BUDGET = 1.05
REPLY = "The quick brown fox jumps over the lazy dog. " * 5


class _Model:
    """The same reply every call, streamed in chunks."""

    name = "bench"

    async def stream(self, messages: list[dict[str, Any]],
                     tools: list[dict[str, Any]]) -> AsyncIterator[Any]:
        from dsh_cli.models.base import Completion, TextDelta

        for start in range(0, len(REPLY), 10):
            yield TextDelta(REPLY[start:start + 10])
        yield Completion(content=REPLY, tool_calls=[])


class _Waits:
    async def ask(self, context: Any) -> Any:
        await asyncio.get_running_loop().create_future()


async def _turns(turns: int, pending: int) -> float:
    """Microseconds per turn with ``pending`` async batches open."""
    from dsh_cli.agent import AgentLoop
    from dsh_cli.interaction import AskUserQuestionItem, AskUserQuestionRequest, UserInteraction
    from dsh_cli.tools import AskUserQuestionTool, ToolRegistry

    ui = UserInteraction()
    ui.register_provider(_Waits())
    for index in range(pending):
        ui.later.submit(AskUserQuestionRequest(questions=[AskUserQuestionItem(
            id="q", question=f"question {index}?", options=[{"label": "A"}, {"label": "B"}])]))
    await asyncio.sleep(0)  # every batch is being asked before the timing starts
    loop = AgentLoop(model=_Model(), tools=ToolRegistry([AskUserQuestionTool()]), ui=ui)
    await loop.run_turn("warm up")
    started = time.perf_counter()
    for index in range(turns):
        loop.reset()
        await loop.run_turn(f"message {index}")
    elapsed = time.perf_counter() - started
    assert len(ui.later.open()) == pending
    return elapsed / turns * 1_000_000


def measure(ctx: Context) -> list[Row]:
    # many short pairs: on a shared 2-core machine a long block drifts more than it measures
    turns, rounds = (20, 1) if ctx.smoke else (300, 31)
    with_pending: list[float] = []
    none: list[float] = []
    for _ in range(ctx.runs(rounds)):
        none.append(asyncio.run(_turns(turns, 0)))
        with_pending.append(asyncio.run(_turns(turns, 100)))
    return [Row("agent loop turn, 100 async batches pending", "µs", with_pending, none,
                "none pending", f"≤ {BUDGET} × none pending", at_most(BUDGET), paired=True)]
