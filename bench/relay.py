"""Relay round trips: ``dsh run --jsonl`` with a scripted model asking N batches.

The model asks ``PER_TURN`` batches in a row per user message (the loop allows 50 model
calls a turn), then answers; the controller answers each ``question/requested`` the moment
it reads it and sends the next ``user/message`` after each ``turn/completed``. The clock
runs from the first question to the last ``turn/completed``. Everything a real run does
happens: the agent loop, the seam, the relay and the store recording every message.
"""

from __future__ import annotations

import json
import subprocess

from bench.context import Context
from bench.controller import control
from bench.floors import echo_floor
from bench.proc import dsh_argv
from bench.table import Row, at_least

# The old absolute budget (1,000 batches/s) over a bare echo's 19,000/s on a quiet 2-core
# machine: dsh must keep at least that share of what the pipes themselves allow.
FLOOR_SHARE = 0.05
PER_TURN = 40
QUESTION = {"id": "q1", "question": "Deploy?",
            "options": [{"label": "yes"}, {"label": "no"}]}


def _script(ctx: Context, batches: int) -> str:
    ask = {"tool_calls": [{"name": "ask_user_question",
                           "arguments": {"questions": [QUESTION]}}]}
    turns = []
    for start in range(0, batches, PER_TURN):
        turns += [ask] * min(PER_TURN, batches - start) + [{"content": "done"}]
    path = ctx.work / f"relay-{batches}.json"
    path.write_text(json.dumps({"turns": turns}), encoding="utf-8")
    return str(path)


def round_trips(ctx: Context, batches: int) -> float:
    """Batches per second over one run."""
    argv = dsh_argv("run", "--jsonl", "--model", f"script:{_script(ctx, batches)}", "go")
    process = subprocess.Popen(argv, env=ctx.env, stdin=subprocess.PIPE,
                               stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    return control(process, batches, more=True)


def measure(ctx: Context) -> list[Row]:
    batches = 3 if ctx.smoke else 1_000
    rates, floors = [], []
    for _ in range(ctx.runs(3)):  # alternating, so load on the machine hits both alike
        rates.append(round_trips(ctx, batches))
        floors.append(echo_floor(batches))
    return [Row(f"relay round trips, {batches:,} batches", "batches/s", rates, floors,
                "bare JSON-lines echo", f"≥ {FLOOR_SHARE:g} × floor (was ≥ 1,000/s)",
                at_least(FLOOR_SHARE))]
