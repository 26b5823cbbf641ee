"""The session store: append 10,000 messages through ``record``, then resume that session.

The measure is ``bench/bench_store.py``'s; the floor writes and reads the same messages with
bare ``sqlite3`` in the same run (``bench/floors.py``). The old absolute budgets (1 s, 0.2 s)
are shown beside as information.
"""

from __future__ import annotations

from bench.context import Context
from bench.floors import sqlite_floor
from bench.table import Row, at_most

# dsh does more per message than the floor (the session row, the tool calls' JSON, the
# event decoding; on load the pending batches and tool calls): about 1.9x and 1.8-3.8x
# on a 2-core machine. 3x and 5x keep room and still show a regression.
APPEND_FACTOR, LOAD_FACTOR = 3.0, 5.0


def measure(ctx: Context) -> list[Row]:
    from bench import bench_store
    from dsh_cli.core.conversation import message_of

    count = 30 if ctx.smoke else 10_000
    messages = [message_of(event) for event in bench_store._events(count)]
    runs, floors = [], []
    for _ in range(ctx.runs(5)):
        runs.append(bench_store.measure(count))
        floors.append(sqlite_floor(messages))
    return [
        Row(f"store: append {count:,} messages", "s", [run[0] for run in runs],
            [floor[0] for floor in floors], "bare sqlite3",
            f"≤ {APPEND_FACTOR:g} × floor (was ≤ 1 s)", at_most(APPEND_FACTOR)),
        Row(f"store: resume a {count:,}-message session", "s", [run[1] for run in runs],
            [floor[1] for floor in floors], "bare sqlite3",
            f"≤ {LOAD_FACTOR:g} × floor (was ≤ 0.2 s)", at_most(LOAD_FACTOR)),
    ]
