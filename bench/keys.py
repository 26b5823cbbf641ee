"""Keys on 3- and 1,000-option lists through prompt-toolkit pipe input, rendered to a VT100.

Three contenders, each a real prompt-toolkit application on the same pipe and output:
dsh's terminal question UI (asked through a ``UserInteraction``), questionary's
``select`` (the peer) and a bare prompt-toolkit list that renders only the visible rows
(the floor). Latency: one key sent, timed until the app has redrawn. Throughput: a burst
of keys, then enter, timed until the app has returned.
"""

from __future__ import annotations

import asyncio
import os
import statistics
import time
from collections.abc import Callable
from typing import Any

from bench.context import Context
from bench.table import Row, at_least, at_most

DOWN, UP, ENTER = "\x1b[B", "\x1b[A", "\r"
# The old absolute budgets (p50 ≤ 1 ms, p95 ≤ 2 ms, ≥ 10,000 keys/s) over the bare
# floor's reference figures (0.69 ms, 1.03 ms, 13,570 keys/s: performance.md), as ratios
# to the floor measured in the same run: a loaded machine slows both alike.
P50_FACTOR, P95_FACTOR, KEYS_SHARE = 1.45, 1.95, 0.74
PEER_FACTOR = 3.0
VISIBLE = 18  # rows the bare floor draws

# name -> factory(labels, input, output) -> (the coroutine asking, a getter for the app)
Starter = Callable[[list[str], Any, Any], tuple[Any, Callable[[], Any]]]


def _start_dsh(labels: list[str], input: Any, output: Any) -> tuple[Any, Callable[[], Any]]:
    from dsh_cli.interaction import AskContext, AskUserQuestionRequest
    from dsh_cli.providers.terminal import TerminalProvider

    # The provider itself: the seam caps a model's batch at 50 options, the UI has no cap.
    provider = TerminalProvider(input=input, output=output)
    request = AskUserQuestionRequest.model_validate({"questions": [{
        "id": "q1", "question": "Pick one?", "options": [{"label": x} for x in labels]}]})
    asking = provider.ask(AskContext(request, "q_bench"))
    return asking, lambda: provider.screen.app if provider.screen else None


def _start_questionary(labels: list[str], input: Any, output: Any
                       ) -> tuple[Any, Callable[[], Any]]:
    import questionary

    question = questionary.select("Pick one?", choices=labels, input=input, output=output)
    return question.application.run_async(), lambda: question.application


def _start_floor(labels: list[str], input: Any, output: Any) -> tuple[Any, Callable[[], Any]]:
    """The least a list prompt can do: a highlight, and only the rows that fit drawn."""
    from prompt_toolkit.application import Application
    from prompt_toolkit.key_binding import KeyBindings
    from prompt_toolkit.layout import FormattedTextControl, Layout, Window

    state = {"at": 0}

    def text() -> list[tuple[str, str]]:
        at = state["at"]
        top = max(0, min(at - VISIBLE // 2, len(labels) - VISIBLE))
        rows = [("", "? Pick one?\n")]
        for index in range(top, min(top + VISIBLE, len(labels))):
            style = "reverse" if index == at else ""
            rows.append((style, f" {'»' if index == at else ' '} {labels[index]}\n"))
        return rows

    keys = KeyBindings()

    @keys.add("down", eager=True)
    def _down(event: Any) -> None:
        state["at"] = (state["at"] + 1) % len(labels)

    @keys.add("up", eager=True)
    def _up(event: Any) -> None:
        state["at"] = (state["at"] - 1) % len(labels)

    @keys.add("enter", eager=True)
    def _enter(event: Any) -> None:
        event.app.exit(result=labels[state["at"]])

    app: Any = Application(layout=Layout(Window(FormattedTextControl(text, focusable=True),
                                                dont_extend_height=True)),
                           key_bindings=keys, full_screen=False, input=input, output=output)
    return app.run_async(), lambda: app


def _starters() -> dict[str, Starter]:
    """The contenders; the peer only when the ``bench`` extra (questionary) is installed."""
    import importlib.util

    starters: dict[str, Starter] = {"dsh": _start_dsh, "bare": _start_floor}
    if importlib.util.find_spec("questionary") is not None:
        starters["questionary"] = _start_questionary
    return starters



async def running(task: asyncio.Future[Any], get_app: Callable[[], Any]) -> Any:
    """The application ``get_app`` names once it runs; why ``task`` ended, if it ended first."""
    app = None
    for _ in range(500):
        app = get_app()
        if (app is not None and app.is_running) or task.done():
            break
        await asyncio.sleep(0.01)
    if task.done():
        task.result()  # raises why it ended
    assert app is not None, "the application never started"
    return app

async def _drive(start: Starter, options: int, latency_keys: int, burst_keys: int
                 ) -> tuple[list[float], float]:
    """Per-key latencies (ms) and the burst's keys/s for one contender."""
    from prompt_toolkit.application import create_app_session
    from prompt_toolkit.data_structures import Size
    from prompt_toolkit.input import create_pipe_input
    from prompt_toolkit.output.vt100 import Vt100_Output

    labels = [f"option {index + 1}" for index in range(options)]
    moves = [DOWN, UP] if options < 10 else [DOWN]  # short lists: back and forth
    with open(os.devnull, "w", encoding="utf-8") as sink, create_pipe_input() as pipe:
        output = Vt100_Output(sink, lambda: Size(rows=24, columns=80), term="xterm-256color",
                              enable_cpr=False)
        with create_app_session(input=pipe, output=output):
            coroutine, get_app = start(labels, pipe, output)
            task = asyncio.ensure_future(coroutine)
            rendered = asyncio.Event()
            app = await running(task, get_app)
            app.after_render += lambda _app: rendered.set()
            await asyncio.sleep(0.05)  # the first frame is drawn
            latencies = []
            for index in range(latency_keys):
                rendered.clear()
                started = time.perf_counter()
                pipe.send_text(moves[index % len(moves)])
                await asyncio.wait_for(rendered.wait(), 5)
                latencies.append((time.perf_counter() - started) * 1000)
            burst = "".join(moves[i % len(moves)] for i in range(burst_keys))
            started = time.perf_counter()
            pipe.send_text(burst + ENTER)
            await asyncio.wait_for(task, 60)
            rate = (burst_keys + 1) / (time.perf_counter() - started)
    return latencies, rate


def _percentile(values: list[float], fraction: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(fraction * (len(ordered) - 1)))]


def measure(ctx: Context) -> list[Row]:
    rows: list[Row] = []
    starters = _starters()
    peer = "questionary" if "questionary" in starters else "questionary (not installed)"
    latency_keys, burst_keys = (5, 20) if ctx.smoke else (300, 600)
    for options in (3, 1000):
        p50: dict[str, list[float]] = {name: [] for name in (*starters, "questionary")}
        p95: dict[str, list[float]] = {name: [] for name in (*starters, "questionary")}
        rate: dict[str, list[float]] = {name: [] for name in (*starters, "questionary")}
        for _ in range(ctx.runs(3)):
            for name, start in starters.items():
                latencies, keys_per_s = asyncio.run(
                    _drive(start, options, latency_keys, burst_keys))
                p50[name].append(statistics.median(latencies))
                p95[name].append(_percentile(latencies, 0.95))
                rate[name].append(keys_per_s)
        label = f"keys, {options:,} options"
        big = options == 1000
        judged = big and bool(rate["questionary"])
        rows += [
            Row(f"{label}: p50 vs bare floor", "ms", p50["dsh"], p50["bare"], "bare pt",
                f"≤ {P50_FACTOR:g} × floor (was ≤ 1 ms)" if big else "",
                at_most(P50_FACTOR) if big else None),
            Row(f"{label}: p50 vs questionary", "ms", p50["dsh"], p50["questionary"],
                peer),
            Row(f"{label}: p95 vs bare floor", "ms", p95["dsh"], p95["bare"], "bare pt",
                f"≤ {P95_FACTOR:g} × floor (was ≤ 2 ms)" if big else "",
                at_most(P95_FACTOR) if big else None),
            Row(f"{label}: p95 vs questionary", "ms", p95["dsh"], p95["questionary"],
                peer),
            Row(f"{label}: keys/s vs bare floor", "keys/s", rate["dsh"], rate["bare"], "bare pt",
                f"≥ {KEYS_SHARE:g} × floor (was ≥ 10,000/s)" if big else "",
                at_least(KEYS_SHARE) if big else None),
            Row(f"{label}: keys/s vs questionary", "keys/s", rate["dsh"], rate["questionary"],
                peer, f"≥ {PEER_FACTOR:g} × peer" if big else "",
                at_least(PEER_FACTOR) if judged else None),
        ]
    return rows
