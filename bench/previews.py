"""Option previews in the terminal UI: the first frame and scrolling keys, each against the
same question without a preview, on the same pipe input and a 120x40 VT100 output.

First frame: from the ask to the first write of the question. Keys: a burst of ``J``/``K`` (a
preview scrolled a page a key) against ↓/↑ on the plain list, then enter, in ms per key.
A third row asks what the preview's length costs: the 200-line preview's first frame
against one whose preview is only the lines a frame shows (so both draw as many cells).
Each round drives the three back to back, after a collection: the ratios are paired.
"""

from __future__ import annotations

import asyncio
import gc
import statistics
import time
from typing import Any

from bench.context import Context
from bench.table import Row, at_most

FRAME_FACTOR, KEYS_FACTOR = 1.1, 1.2
PREVIEW = "\n".join(f"{n:03d}    port = {8000 + n}  # line {n} of the config" for n in range(200))
SHOWN = 13  # the preview lines a 120x40 frame shows (PREVIEW_ROWS, its marker aside)
SHORT = "\n".join(PREVIEW.split("\n")[:SHOWN])
DOWN, UP, ENTER = "\x1b[B", "\x1b[A", "\r"


class _Sink:
    """A VT100 output's stream that notes when the question text is first written."""

    def __init__(self) -> None:
        self.first: float | None = None

    def write(self, data: str) -> int:
        if self.first is None and "Which config" in data:
            self.first = time.perf_counter()
        return len(data)

    def flush(self) -> None:
        pass

    def isatty(self) -> bool:
        return False


def _request(preview: str | None) -> Any:
    from dsh_cli.interaction import AskUserQuestionRequest

    options = [{"label": f"Config {n}", "preview": preview}
               for n in range(3)]
    return AskUserQuestionRequest.model_validate({"questions": [{
        "id": "cfg", "question": "Which config?", "options": options}]})


async def _drive(preview: str | None, keys: int) -> tuple[float, float]:
    """The first frame's ms and the burst's ms per key for one question."""
    from prompt_toolkit.application import create_app_session
    from prompt_toolkit.data_structures import Size
    from prompt_toolkit.input import create_pipe_input
    from prompt_toolkit.output.vt100 import Vt100_Output

    from dsh_cli.interaction import AskContext
    from dsh_cli.providers.terminal import TerminalProvider

    sink = _Sink()
    request = _request(preview)
    with create_pipe_input() as pipe:
        output = Vt100_Output(sink, lambda: Size(rows=40, columns=120),  # type: ignore[arg-type]
                              term="xterm-256color", enable_cpr=False)
        with create_app_session(input=pipe, output=output):
            provider = TerminalProvider(input=pipe, output=output)
            started = time.perf_counter()
            task = asyncio.ensure_future(provider.ask(AskContext(request, "q_bench")))
            while sink.first is None and not task.done():
                await asyncio.sleep(0.001)
            assert sink.first is not None, "the question was never drawn"
            frame = (sink.first - started) * 1000
            await asyncio.sleep(0.05)
            moves = ["J", "K"] if preview is not None else [DOWN, UP]  # each key a real redraw
            burst = "".join(moves[i % len(moves)] for i in range(keys))
            started = time.perf_counter()
            pipe.send_text(burst + ENTER)
            await asyncio.wait_for(task, 60)
            per_key = (time.perf_counter() - started) * 1000 / (keys + 1)
    return frame, per_key


def measure(ctx: Context) -> list[Row]:
    keys = 20 if ctx.smoke else 600
    kinds = {"none": None, "long": PREVIEW, "short": SHORT}
    frames: dict[str, list[float]] = {kind: [] for kind in kinds}
    per_key: dict[str, list[float]] = {kind: [] for kind in kinds}
    for _ in range(ctx.runs(31)):
        for kind, preview in kinds.items():
            gc.collect()  # the last drive's garbage is not collected in this one's frame
            frame, key = asyncio.run(_drive(preview, keys if kind != "short" else 0))
            frames[kind].append(frame)
            per_key[kind].append(key)
    rows = [
        Row("first frame, a 200-line preview vs none", "ms", frames["long"], frames["none"],
            "no preview", f"≤ {FRAME_FACTOR:g} × none", at_most(FRAME_FACTOR), paired=True),
        Row("first frame, a 200-line preview vs the 13 lines it shows", "ms", frames["long"],
            frames["short"], "13-line preview", f"≤ {FRAME_FACTOR:g} × short",
            at_most(FRAME_FACTOR), paired=True),
        Row("keys scrolling a preview vs a plain list", "ms/key", per_key["long"],
            per_key["none"], "plain list", f"≤ {KEYS_FACTOR:g} × plain", at_most(KEYS_FACTOR),
            paired=True),
    ]
    print("#   first frame medians: " + " / ".join(
        f"{kind} {statistics.median(frames[kind]):.2f}" for kind in kinds) + " ms", flush=True)
    return rows
