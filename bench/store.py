"""The session store: append 10,000 messages through ``record``, then resume that session.

The measure is ``bench/bench_store.py``'s (the "store" helper's); budgets are absolute.
"""

from __future__ import annotations

from bench.context import Context
from bench.table import Row, below

APPEND_BUDGET, LOAD_BUDGET = 1.0, 0.2


def measure(ctx: Context) -> list[Row]:
    from bench import bench_store

    count = 30 if ctx.smoke else 10_000
    runs = [bench_store.measure(count) for _ in range(ctx.runs(5))]
    return [
        Row(f"store: append {count:,} messages", "s", [run[0] for run in runs],
            budget=f"≤ {APPEND_BUDGET:g} s", check=below(APPEND_BUDGET)),
        Row(f"store: resume a {count:,}-message session", "s", [run[1] for run in runs],
            budget=f"≤ {LOAD_BUDGET:g} s", check=below(LOAD_BUDGET)),
    ]
