"""The 726-key storm on a 50-option list in a pseudo-terminal: dsh ask vs questionary.

↓49 ↑49 seven times, then ↓40 and enter, written at once as soon as the list is drawn;
timed from that first frame until the process has exited with option 41 as its answer.
dsh runs with the filter, folded descriptions and aligned columns in place (every option
has a description).
"""

from __future__ import annotations

import json

from bench.context import Context
from bench.proc import dsh_argv, python_argv, run_on_pty
from bench.table import Row, at_most

DOWN, UP = b"\x1b[B", b"\x1b[A"
STORM = (DOWN * 49 + UP * 49) * 7 + DOWN * 40  # 726 keys
BUDGET = 0.4
OPTIONS = 50

PEER = '''\
import sys
import questionary

labels = [f"option {n + 1}" for n in range(int(sys.argv[1]))]
print(questionary.select("Pick one?", choices=labels).ask())
'''


def measure(ctx: Context) -> list[Row]:
    import importlib.util

    if importlib.util.find_spec("questionary") is None:
        return [Row("key storm, 50 options, pty (questionary not installed)", "ms", [])]
    request = ctx.work / "storm.json"
    request.write_text(json.dumps({"questions": [{
        "id": "q1", "question": "Pick one?",
        "options": [{"label": f"option {n + 1}", "description": f"what option {n + 1} does"}
                    for n in range(OPTIONS)]}]}), encoding="utf-8")
    commands = {"dsh": dsh_argv("ask", str(request)),
                "questionary": python_argv(ctx.script("storm_peer.py", PEER), str(OPTIONS))}
    times: dict[str, list[float]] = {name: [] for name in commands}
    for _ in range(ctx.runs(5)):
        for name, argv in commands.items():
            result = run_on_pty(argv, ctx.env, expect=b"option 3", key=STORM + b"\r",
                                timeout=60)
            if result.status != 0 or b"option 41" not in result.output[-200:]:
                raise RuntimeError(f"{argv}: exit {result.status}: {result.output[-300:]!r}")
            times[name].append((result.exit - result.first_frame) * 1000)
    return [Row("key storm, 726 keys, 50 options, pty", "ms", times["dsh"],
                times["questionary"], "questionary", f"≤ {BUDGET} × peer", at_most(BUDGET))]
