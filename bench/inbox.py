"""Keys in the attach inbox's list with 500 pending entries vs a screenful, one, one batch.

The real ``TerminalInbox`` (``dsh_cli/desk/inbox_terminal.py``) on prompt-toolkit pipe
input, rendered to a 100×24 VT100 that writes to /dev/null. The inbox holds 500 entries
from 50 servers (the limit of issue 35: 500 batches from 50 ``dsh mcp``), 15 (one
screenful: the same rows drawn as with 500) or one; the model and the UI are what is
timed, not the sockets. The fourth contender is what the desk showed before the inbox,
one batch at a time: the desk's question screen (``TerminalProvider(desk=True)``, the
terminal question UI) on one batch of that inbox. Latency: one key (↓ and ↑ in turn)
sent, timed until the screen has redrawn. Runs alternate, each in a fresh event loop, and
the ratios are paired.

Budgets (≤ 1.2×): against the screenful (what the length of the list costs a key) and
against the single batch's question screen (issue 35's "≤ 1.2× a single batch": the list
with 500 pending stays as quick as the one-batch desk was). Against one entry the ratio is
shown only: there the list draws 3 rows instead of 17 and a key moves nothing (the cursor
is on the only entry), so the renderer writes nothing; it reads about 1.25× (the rows
prompt-toolkit still visits), with 2 entries (a key moves) about 1.18×. Measured in
``docs/performance.md``.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import statistics
import time
from collections.abc import Callable
from typing import Any

from bench.context import Context
from bench.keys import running
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


# name -> (the coroutine showing it, a getter for its app, the key that closes it)
Shown = tuple[Any, Callable[[], Any], str]


def _inbox_list(entries: int, input: Any, output: Any) -> Shown:
    """The inbox list with ``entries`` pending from ``SERVERS`` servers."""
    from dsh_cli.desk.inbox import Inbox
    from dsh_cli.desk.inbox_terminal import TerminalInbox

    inbox = Inbox()
    links = [object() for _ in range(SERVERS)]
    for index in range(entries):
        inbox.add(links[index % SERVERS], _event(index))
    picker = TerminalInbox(input=input, output=output)
    return picker.pick(inbox), lambda: picker.app, "\x04"  # ctrl-d: the list closes


def _question_screen(entries: int, input: Any, output: Any) -> Shown:
    """One batch on the desk's question screen, as the desk opens it (``Desk._show``)."""
    from dsh_cli.core.errors import UserInteractionError
    from dsh_cli.interaction import AskContext, AskUserQuestionRequest
    from dsh_cli.providers.terminal import TerminalProvider

    event = _event(0)
    provider = TerminalProvider(input=input, output=output, desk=True)
    request = AskUserQuestionRequest.model_validate(
        {"questions": event["questions"], "rpc_id": event["rpc_id"], "declinable": False})

    async def shown() -> None:
        with contextlib.suppress(UserInteractionError):  # ctrl-d: handed back to the desk
            await provider.ask(AskContext(request, event["rpc_id"]))

    return shown(), lambda: provider.screen.app if provider.screen else None, "\x04"


async def key_latencies(show: Callable[[int, Any, Any], Shown], entries: int, keys: int
                     ) -> list[float]:
    """Per-key latencies (ms) on what ``show`` draws."""
    from prompt_toolkit.application import create_app_session
    from prompt_toolkit.data_structures import Size
    from prompt_toolkit.input import create_pipe_input
    from prompt_toolkit.output.vt100 import Vt100_Output

    with open(os.devnull, "w", encoding="utf-8") as sink, create_pipe_input() as pipe:
        output = Vt100_Output(sink, lambda: Size(rows=24, columns=100), term="xterm-256color",
                              enable_cpr=False)
        with create_app_session(input=pipe, output=output):
            coroutine, get_app, close = show(entries, pipe, output)
            task = asyncio.ensure_future(coroutine)
            app = await running(task, get_app)
            rendered = asyncio.Event()
            app.after_render += lambda _app: rendered.set()
            await asyncio.sleep(0.05)  # the first frame is drawn
            latencies = []
            for index in range(keys):
                rendered.clear()
                started = time.perf_counter()
                pipe.send_text(DOWN if index % 2 == 0 else UP)
                await asyncio.wait_for(rendered.wait(), 5)
                latencies.append((time.perf_counter() - started) * 1000)
            pipe.send_text(close)
            await asyncio.wait_for(task, 10)
    return latencies


async def paired_key_latencies(show: Callable[[int, Any, Any], Shown], sizes: list[int],
                               keys: int) -> list[list[float]]:
    """Per-key latencies (ms) on what ``show`` draws for each of ``sizes``, the lists shown
    at once in one event loop, each on its own pipe and output, a key to each in turn
    (the order reversed every other key): the contenders' keys are microseconds apart, so
    a machine that slows down for a while slows them all, not the one whose round it was."""
    from prompt_toolkit.application import create_app_session
    from prompt_toolkit.data_structures import Size
    from prompt_toolkit.input import create_pipe_input
    from prompt_toolkit.output.vt100 import Vt100_Output

    with contextlib.ExitStack() as stack:
        shown: list[tuple[Any, Any, asyncio.Event, str]] = []
        for entries in sizes:
            sink = stack.enter_context(open(os.devnull, "w", encoding="utf-8"))
            pipe = stack.enter_context(create_pipe_input())
            output = Vt100_Output(sink, lambda: Size(rows=24, columns=100),
                                  term="xterm-256color", enable_cpr=False)
            with create_app_session(input=pipe, output=output):  # the app's task keeps it
                coroutine, get_app, close = show(entries, pipe, output)
                task = asyncio.ensure_future(coroutine)
            app = await running(task, get_app)
            rendered = asyncio.Event()
            app.after_render += lambda _app, rendered=rendered: rendered.set()
            shown.append((pipe, task, rendered, close))
        await asyncio.sleep(0.05)  # the first frames are drawn
        latencies: list[list[float]] = [[] for _ in sizes]
        turns = list(range(len(sizes)))
        for index in range(keys):
            for turn in turns if index % 4 < 2 else reversed(turns):  # ↓ and ↑ both ways
                pipe, _task, rendered, _close = shown[turn]
                rendered.clear()
                started = time.perf_counter()
                pipe.send_text(DOWN if index % 2 == 0 else UP)
                await asyncio.wait_for(rendered.wait(), 5)
                latencies[turn].append((time.perf_counter() - started) * 1000)
        for pipe, task, _rendered, close in shown:
            pipe.send_text(close)
            await asyncio.wait_for(task, 10)
    return latencies


def measure(ctx: Context) -> list[Row]:
    keys, rounds = (10, 1) if ctx.smoke else (200, 11)
    runs: dict[str, list[float]] = {"500": [], "15": [], "1": [], "batch": []}
    shows = {"500": (_inbox_list, 500), "15": (_inbox_list, 15), "1": (_inbox_list, 1),
             "batch": (_question_screen, 1)}
    for show, entries in shows.values():  # untimed: imports and first frames, not keys
        asyncio.run(key_latencies(show, entries, 4))
    for _ in range(ctx.runs(rounds)):
        for name, (show, entries) in shows.items():
            runs[name].append(statistics.median(asyncio.run(key_latencies(show, entries, keys))))
    many = runs["500"]
    return [Row("inbox keys, 500 entries from 50 servers vs 15: p50", "ms", many, runs["15"],
                "15 entries", f"≤ {BUDGET} × 15 entries", at_most(BUDGET), paired=True),
            Row("inbox keys, 500 entries vs 1 (17 rows drawn vs 3): p50", "ms", many, runs["1"],
                "1 entry", paired=True),
            Row("inbox keys, 500 entries vs one batch's question screen: p50", "ms", many,
                runs["batch"], "1 batch", f"≤ {BUDGET} × 1 batch", at_most(BUDGET),
                paired=True)]
