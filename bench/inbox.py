"""Keys in the attach inbox's list with 500 pending entries vs a screenful, and vs one.

The real ``TerminalInbox`` (``dsh_cli/desk/inbox_terminal.py``) on prompt-toolkit pipe
input, rendered to a VT100 that writes to /dev/null. The inbox holds 500 entries from 50
servers (the limit of issue 35: 500 batches from 50 ``dsh mcp``), 15 (one screenful: the
same rows drawn as with 500) or one; the model and the UI are what is timed, not the
sockets. Latency: one key (↓ and ↑ in turn) sent, timed until the list has redrawn. Runs
alternate, each in a fresh event loop, and the ratios are paired.

The budget (≤ 1.2×) is against the screenful: what the length of the list costs a key.
Against one entry the ratio is shown as well: there prompt-toolkit draws 3 rows instead
of 17, and drawing, not the list, is most of a key's time (the profile: ``renderer`` and
``copy_line``), so that ratio measures the rows on screen, not the 500 entries.
"""

from __future__ import annotations

import asyncio
import os
import statistics
import time
from typing import Any

from bench.context import Context
from bench.table import Row, at_most

BUDGET = 1.2
DOWN, UP = "\x1b[B", "\x1b[A"
SERVERS = 50


def _event(index: int) -> dict[str, Any]:
    return {"type": "question/requested", "rpc_id": f"q_{index:04d}", "session_id": "s",
            "questions": [{"id": "db", "header": "DB",
                           "question": f"Which database for service {index}?",
                           "options": [{"label": "PostgreSQL"}, {"label": "SQLite"}]}],
            "source": {"client": "Claude Code", "cwd": f"/srv/app-{index % SERVERS}",
                       "pid": 1000 + index % SERVERS}}


async def _latencies(entries: int, keys: int) -> list[float]:
    """Per-key latencies (ms) in the list with ``entries`` pending."""
    from prompt_toolkit.application import create_app_session
    from prompt_toolkit.data_structures import Size
    from prompt_toolkit.input import create_pipe_input
    from prompt_toolkit.output.vt100 import Vt100_Output

    from dsh_cli.desk.inbox import Inbox
    from dsh_cli.desk.inbox_terminal import TerminalInbox

    inbox = Inbox()
    links = [object() for _ in range(SERVERS)]
    for index in range(entries):
        inbox.add(links[index % SERVERS], _event(index))
    with open(os.devnull, "w", encoding="utf-8") as sink, create_pipe_input() as pipe:
        output = Vt100_Output(sink, lambda: Size(rows=24, columns=100), term="xterm-256color",
                              enable_cpr=False)
        with create_app_session(input=pipe, output=output):
            picker = TerminalInbox(input=pipe, output=output)
            task = asyncio.ensure_future(picker.pick(inbox))
            for _ in range(500):
                if (picker.app is not None and picker.app.is_running) or task.done():
                    break
                await asyncio.sleep(0.01)
            assert picker.app is not None, "the list never started"
            rendered = asyncio.Event()
            picker.app.after_render += lambda _app: rendered.set()
            await asyncio.sleep(0.05)  # the first frame is drawn
            latencies = []
            for index in range(keys):
                rendered.clear()
                started = time.perf_counter()
                pipe.send_text(DOWN if index % 2 == 0 else UP)
                await asyncio.wait_for(rendered.wait(), 5)
                latencies.append((time.perf_counter() - started) * 1000)
            pipe.send_text("\x04")  # ctrl-d: the list closes
            await asyncio.wait_for(task, 10)
    return latencies


def measure(ctx: Context) -> list[Row]:
    keys, rounds = (10, 1) if ctx.smoke else (200, 11)
    one: list[float] = []
    screenful: list[float] = []
    many: list[float] = []
    for _ in range(ctx.runs(rounds)):
        screenful.append(statistics.median(asyncio.run(_latencies(15, keys))))
        many.append(statistics.median(asyncio.run(_latencies(500, keys))))
        one.append(statistics.median(asyncio.run(_latencies(1, keys))))
    return [Row("inbox keys, 500 entries from 50 servers vs 15: p50", "ms", many, screenful,
                "15 entries", f"≤ {BUDGET} × 15 entries", at_most(BUDGET), paired=True),
            Row("inbox keys, 500 entries vs 1 (17 rows drawn vs 3): p50", "ms", many, one,
                "1 entry", paired=True)]
