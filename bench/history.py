"""A store of 12,000 batches (~680 MB) vs an empty one: a new batch reaching the desk, and
``dsh history``'s peak memory.

The full store is built in this process through ``SessionStore``'s own recording (the same
20 questions each time, by the same agent in the same directory, each batch with ~47 KB of
detail: the report's 12,000 batches, a little larger), once per run; every stored batch is
a recall hit, the lookup's worst case. Then, against it and against an empty store:

- a ``dsh mcp`` with a ``dsh attach --jsonl`` desk answering: the seconds from
  ``tools/call`` of a 20-question ``ask_user_question`` until the desk reads its
  ``question/requested`` (the last answer looked up on the way), median of ``BATCHES``;
- ``dsh history`` (no ``-n``) to a pipe: the child's peak resident memory.

Budget for both: **≤ 1.2 × the empty store** (before: 11 s to the desk, 1.6 GB for history).
"""

from __future__ import annotations

import asyncio
import json
import shutil
import statistics
import subprocess
import tempfile
import time
from pathlib import Path

from bench.context import Context
from bench.proc import dsh_argv, run
from bench.table import Row, at_most

FACTOR = 1.2
QUESTIONS = 20
BATCHES = 5  # timed per dsh mcp
STORED, DETAIL = 12_000, 47_000  # batches, and bytes of detail each: ~680 MB in all
BATCH = {"questions": [{"id": f"q{n}", "header": f"Step {n}", "question": f"Do step {n}?",
                        "options": [{"label": "Yes"}, {"label": "No"}]}
                       for n in range(QUESTIONS)]}
AGENT = "bench-agent"


def fill(home: Path, batches: int, detail: int) -> None:
    """``batches`` answered batches of BATCH, by ``mcp:AGENT`` in this directory."""
    from dsh_cli.core.events import QuestionRequested, QuestionResolved
    from dsh_cli.core.outcomes import Outcome
    from dsh_cli.interaction.vocabulary import AskUserQuestionRequest
    from dsh_cli.store import SessionStore

    questions = AskUserQuestionRequest.model_validate(BATCH).questions_json()
    padding = "x" * (detail // QUESTIONS)
    stored = [{**question, "detail": padding} for question in questions]
    answer = {"answers": [{"id": question["id"], "selected": ["Yes"]} for question in questions]}
    with SessionStore.open(home / "sessions.db") as store:
        session = store.create_session(f"mcp:{AGENT}")
        for n in range(batches):
            rpc_id = f"q_{n:016x}"
            store.question_requested(session, QuestionRequested(rpc_id, session, None, stored))
            store.question_resolved(session, QuestionResolved(rpc_id, Outcome.ANSWERED, answer,
                                                              "desk"))


async def _answer_all(desk: asyncio.subprocess.Process, seen: asyncio.Queue[float]) -> None:
    """Answer every batch the desk shows, noting when each arrived."""
    assert desk.stdout is not None and desk.stdin is not None
    async for line in desk.stdout:
        event = json.loads(line)
        if event["type"] == "question/requested":
            seen.put_nowait(time.perf_counter())
            frame = {"type": "question/answer", "rpc_id": event["rpc_id"],
                     "session_id": event["session_id"],
                     "answers": [{"id": q["id"], "selected": ["No"]}
                                 for q in event["questions"]]}
            desk.stdin.write(json.dumps(frame).encode() + b"\n")
            await desk.stdin.drain()


async def _to_the_desk(env: dict[str, str], batches: int) -> float:
    """Median seconds from ``tools/call`` until the desk reads the batch."""
    from mcp import Client, StdioServerParameters
    from mcp.types import Implementation

    desk = await asyncio.create_subprocess_exec(
        *dsh_argv("attach", "--jsonl"), env=env, stdin=subprocess.PIPE,
        stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    seen: asyncio.Queue[float] = asyncio.Queue()
    answering = asyncio.ensure_future(_answer_all(desk, seen))
    argv = dsh_argv("mcp", "--wait", "60")
    params = StdioServerParameters(command=argv[0], args=argv[1:], env=env)
    took = []
    try:
        async with Client(params, mode="legacy",
                          client_info=Implementation(name=AGENT, version="1")) as client:
            for _ in range(batches + 1):  # the first warms up (imports, the session)
                started = time.perf_counter()
                result = await client.call_tool("ask_user_question", BATCH)
                if result.is_error:
                    raise RuntimeError(f"ask_user_question: {result.content}")
                took.append(await asyncio.wait_for(seen.get(), 60) - started)
    finally:
        assert desk.stdin is not None
        desk.stdin.close()
        await asyncio.wait_for(desk.wait(), 30)
        answering.cancel()
    return statistics.median(took[1:])


def _home(name: str) -> Path:
    # short: the desk's Unix socket lives in DSH_HOME/run
    return Path(tempfile.mkdtemp(prefix=f"dsh-{name}-"))


def measure(ctx: Context) -> list[Row]:
    batches, detail = (20, 1_000) if ctx.smoke else (STORED, DETAIL)
    full, empty = _home("full"), _home("empty")
    try:
        fill(full, batches, detail)
        size = (full / "sessions.db").stat().st_size / 1e6
        envs = {home: dict(ctx.env, DSH_HOME=str(home)) for home in (full, empty)}
        desk: dict[Path, list[float]] = {full: [], empty: []}
        memory: dict[Path, list[float]] = {full: [], empty: []}
        for _ in range(ctx.runs(3)):
            for home in (empty, full):
                desk[home].append(asyncio.run(_to_the_desk(envs[home], 1 if ctx.smoke
                                                           else BATCHES)))
                done = run(dsh_argv("history"), envs[home])
                if done.status != 0:
                    raise RuntimeError(f"dsh history exited {done.status}")
                memory[home].append(done.max_rss_mb)
    finally:
        for home in (full, empty):
            shutil.rmtree(home, ignore_errors=True)
    label = f"{batches:,} stored batches ({size:,.0f} MB)"
    return [
        Row(f"history: a {QUESTIONS}-question batch reaches the desk, {label}", "s",
            desk[full], desk[empty], "empty store", f"≤ {FACTOR:g} × empty store (was 11 s)",
            at_most(FACTOR), paired=True),
        Row(f"history: dsh history peak memory, {label}", "MB", memory[full], memory[empty],
            "empty store", f"≤ {FACTOR:g} × empty store (was 1.6 GB)", at_most(FACTOR),
            paired=True),
    ]

